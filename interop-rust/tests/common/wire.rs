//! Raw ACP v2 frames over a pipe, built and decoded with `acp_proto::v2`, for the wire-level
//! interop tests against the official SDK's v2 peers.
//!
//! Every frame the peer sends is decoded with our types (the envelope of its kind, params or
//! result typed by method) and re-encoded; every frame we send is decoded with the SDK's v2 type
//! of that message and re-encoded. Where a re-encoding differs from the JSON on the wire (a key
//! lost, added or changed), or a frame does not decode, a *difference* is recorded as a line:
//!
//! `<from>→<to> <method> <json path>: <lost|added|changed|undecodable …>`
//!
//! where `sdk→ours` means our types read the SDK's frame and `ours→sdk` the SDK's types read
//! ours. Array indexes are written `[]`. Each test ends with [`assert_differences`]: the set seen
//! must be the set the test names, and every one of them must be judged in
//! `interop-rust/KNOWN_DIFFERENCES.md`, so a new difference (or a fixed one) fails.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;

use acp_proto::v2::RequestId;
use acp_proto::v2::envelope::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest, ClientResponse,
    ProtocolLevelNotification,
};
use agent_client_protocol::v2::schema as sdk;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

use super::within;

/// The judged list the differences are checked against.
pub const KNOWN_DIFFERENCES: &str = include_str!("../../KNOWN_DIFFERENCES.md");

/// A frame from the peer, decoded with our types.
#[derive(Debug)]
pub enum Frame<Req, Notif, Resp> {
    /// A request.
    Request(Req),
    /// A notification.
    Notification(Notif),
    /// A `$/…` protocol-level notification.
    Protocol(ProtocolLevelNotification),
    /// A response to one of our requests.
    Response(Resp),
    /// A frame our types did not decode (recorded as a difference).
    Undecodable(Value),
}

/// A frame from an agent.
pub type FromAgent = Frame<AgentRequest, AgentNotification, AgentResponse>;
/// A frame from a client.
pub type FromClient = Frame<ClientRequest, ClientNotification, ClientResponse>;

/// One end of a pipe speaking newline-delimited JSON-RPC.
pub struct Wire {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
    /// Our requests not yet answered: id (as JSON text) to method.
    pending: HashMap<String, String>,
    /// Every difference seen, in order.
    pub differences: Vec<String>,
    /// Every frame received, as sent.
    pub received: Vec<Value>,
}

impl Wire {
    /// Our end of `io`.
    pub fn new(io: DuplexStream) -> Wire {
        let (reader, writer) = tokio::io::split(io);
        let lines = BufReader::new(reader).lines();
        Wire { lines, writer, pending: HashMap::new(), differences: Vec::new(), received: Vec::new() }
    }

    async fn write(&mut self, envelope: &impl Serialize) {
        let mut value = serde_json::to_value(envelope).expect("our envelopes encode");
        let Value::Object(fields) = &mut value else { panic!("an envelope is an object") };
        fields.insert("jsonrpc".into(), "2.0".into());
        let mut line = serde_json::to_string(&value).expect("encodes");
        line.push('\n');
        within("write", self.writer.write_all(line.as_bytes())).await.expect("pipe open");
    }

    /// Sends a frame as it is (for a frame no v2 type describes, like a v1 answer).
    pub async fn send_json(&mut self, frame: &Value) {
        let mut line = serde_json::to_string(frame).expect("encodes");
        line.push('\n');
        within("write", self.writer.write_all(line.as_bytes())).await.expect("pipe open");
    }

    /// The next frame as JSON; `None` at the end of the stream.
    pub async fn read(&mut self) -> Option<Value> {
        let line = within("read", self.lines.next_line()).await.expect("pipe readable")?;
        let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        self.received.push(value.clone());
        Some(value)
    }

    /// Decodes `value` as `T` (ours), re-encodes, records differences; `None` if it did not decode.
    fn ours<T: Serialize + std::fmt::Debug>(
        &mut self,
        method: &str,
        value: &Value,
        decode: impl FnOnce(Value) -> Result<T, String>,
    ) -> Option<T> {
        match decode(value.clone()) {
            Ok(typed) => {
                unknowns(&format!("sdk→ours {method}"), &format!("{typed:?}"), &mut self.differences);
                let mut back = serde_json::to_value(&typed).expect("our types encode");
                if let Value::Object(fields) = &mut back {
                    fields.insert("jsonrpc".into(), "2.0".into());
                }
                diff(&format!("sdk→ours {method}"), "", value, &back, &mut self.differences);
                Some(typed)
            }
            Err(e) => {
                self.differences.push(format!("sdk→ours {method}: undecodable ({e})"));
                None
            }
        }
    }

    /// Reads the next frame as a client reads an agent's.
    pub async fn next_from_agent(&mut self) -> Option<FromAgent> {
        let value = self.read().await?;
        Some(self.classify(
            value,
            |v| serde_json::from_value(v).map_err(|e| e.to_string()),
            |v| serde_json::from_value(v).map_err(|e| e.to_string()),
            |v, m| AgentResponse::decode(v, m).map_err(|e| e.to_string()),
        ))
    }

    /// Reads the next frame as an agent reads a client's.
    pub async fn next_from_client(&mut self) -> Option<FromClient> {
        let value = self.read().await?;
        Some(self.classify(
            value,
            |v| serde_json::from_value(v).map_err(|e| e.to_string()),
            |v| serde_json::from_value(v).map_err(|e| e.to_string()),
            |v, m| ClientResponse::decode(v, m).map_err(|e| e.to_string()),
        ))
    }

    fn classify<Req: Serialize + Debug, Notif: Serialize + Debug, Resp: Serialize + Debug>(
        &mut self,
        value: Value,
        request: impl FnOnce(Value) -> Result<Req, String>,
        notification: impl FnOnce(Value) -> Result<Notif, String>,
        response: impl FnOnce(Value, &str) -> Result<Resp, String>,
    ) -> Frame<Req, Notif, Resp> {
        let method = value.get("method").and_then(Value::as_str).map(str::to_owned);
        let frame = match (method, value.get("id")) {
            (Some(m), Some(_)) => self.ours(&m, &value, request).map(Frame::Request),
            (Some(m), None) if m.starts_with("$/") => {
                let decode = |v| serde_json::from_value(v).map_err(|e: serde_json::Error| e.to_string());
                self.ours(&m, &value, decode).map(Frame::Protocol)
            }
            (Some(m), None) => self.ours(&m, &value, notification).map(Frame::Notification),
            (None, id) => {
                let key = id.map(Value::to_string).unwrap_or_default();
                let m =
                    self.pending.remove(&key).unwrap_or_else(|| panic!("a response to no request of ours: {value}"));
                self.ours(&format!("{m} (result)"), &value, |v| response(v, &m)).map(Frame::Response)
            }
        };
        frame.unwrap_or(Frame::Undecodable(value))
    }

    /// Sends a client request of ours (checked against the SDK's type of its params).
    pub async fn client_request(&mut self, request: ClientRequest) {
        self.sdk_check_out(request.params.wire(), &request.params);
        self.pending.insert(serde_json::to_string(&request.id).expect("id"), request.params.wire().to_owned());
        self.write(&request).await;
    }

    /// Sends an agent request of ours.
    pub async fn agent_request(&mut self, request: AgentRequest) {
        self.sdk_check_out(request.params.wire(), &request.params);
        self.pending.insert(serde_json::to_string(&request.id).expect("id"), request.params.wire().to_owned());
        self.write(&request).await;
    }

    /// Sends a client notification of ours.
    pub async fn client_notification(&mut self, notification: ClientNotification) {
        self.sdk_check_out(notification.params.wire(), &notification.params);
        self.write(&notification).await;
    }

    /// Sends an agent notification of ours.
    pub async fn agent_notification(&mut self, notification: AgentNotification) {
        self.sdk_check_out(notification.params.wire(), &notification.params);
        self.write(&notification).await;
    }

    /// Sends our answer to a client request of `method`.
    pub async fn agent_response(&mut self, method: &str, response: AgentResponse) {
        if let Ok(result) = &response.outcome {
            self.sdk_check_out(&format!("{method} (result)"), result);
        }
        self.write(&response).await;
    }

    /// Sends our answer to an agent request of `method`.
    pub async fn client_response(&mut self, method: &str, response: ClientResponse) {
        if let Ok(result) = &response.outcome {
            self.sdk_check_out(&format!("{method} (result)"), result);
        }
        self.write(&response).await;
    }

    /// Decodes our params (or result) with the SDK's v2 type of `method` and records where the
    /// SDK's re-encoding differs (see [`sdk_reads`]).
    fn sdk_check_out(&mut self, method: &str, params: &impl Serialize) {
        let ours = serde_json::to_value(params).expect("our params encode");
        sdk_reads(method, &ours, &mut self.differences);
    }
}

/// Decodes `ours` (params, or with ` (result)` after the method a result) with the SDK's v2 type
/// of `method`, re-encodes, and records each difference as `ours→sdk <method> …`.
pub fn sdk_reads(method: &str, ours: &Value, out: &mut Vec<String>) {
    let back = match method {
        "initialize" => sdk_echo::<sdk::InitializeRequest>(ours),
        "initialize (result)" => sdk_echo::<sdk::InitializeResponse>(ours),
        "session/new" => sdk_echo::<sdk::NewSessionRequest>(ours),
        "session/new (result)" => sdk_echo::<sdk::NewSessionResponse>(ours),
        "session/prompt" => sdk_echo::<sdk::PromptRequest>(ours),
        "session/prompt (result)" => sdk_echo::<sdk::PromptResponse>(ours),
        "session/cancel" => sdk_echo::<sdk::CancelSessionNotification>(ours),
        "tool_call/cancel" => sdk_echo::<sdk::CancelToolCallRequest>(ours),
        "tool_call/cancel (result)" => sdk_echo::<sdk::CancelToolCallResponse>(ours),
        "session/update" => sdk_echo::<sdk::UpdateSessionNotification>(ours),
        "session/request_permission" => sdk_echo::<sdk::RequestPermissionRequest>(ours),
        "session/request_permission (result)" => sdk_echo::<sdk::RequestPermissionResponse>(ours),
        other => Err(format!("no SDK type mapped for `{other}` in wire::sdk_reads")),
    };
    match back {
        Ok((back, debug)) => {
            diff(&format!("ours→sdk {method}"), "", ours, &back, out);
            unknowns(&format!("ours→sdk {method}"), &debug, out);
        }
        Err(e) => out.push(format!("ours→sdk {method}: undecodable ({e})")),
    }
}

/// The SDK's re-encoding of `value` as a `T`, and the typed value's `Debug` text.
fn sdk_echo<T: DeserializeOwned + Serialize + std::fmt::Debug>(value: &Value) -> Result<(Value, String), String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    Ok((serde_json::to_value(&typed).map_err(|e| e.to_string())?, format!("{typed:?}")))
}

/// Records the values a side decoded without knowing them: both keep an unknown variant
/// verbatim (the SDK as `Other(Other…)`, ours as `Unknown(…)`), so the
/// re-encoding is the same but the receiver does not understand it. Found in the typed
/// value's `Debug` text, named by the field that holds it and the marker with the word after it.
fn unknowns(label: &str, debug: &str, out: &mut Vec<String>) {
    const JSON: [&str; 6] = ["String", "Number", "Object", "Array", "Bool", "Null"];
    for marker in ["Other(", "Unknown(", "Other {"] {
        for (at, _) in debug.match_indices(marker) {
            let after = &debug[at + marker.len()..];
            let word: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if JSON.contains(&word.as_str()) {
                continue; // a free-form JSON value (`ErrorData::Other`, …), not an unknown variant
            }
            let kind = marker.trim_end_matches(['(', '{', ' ']);
            out.push(format!("{label} {}: kept as unknown ({kind} {word})", holder(&debug[..at]).trim_end()));
        }
    }
}

/// The field or variant that holds a value whose `Debug` text starts after `before`.
fn holder(before: &str) -> String {
    let mut before = before;
    loop {
        let trimmed = before.trim_end_matches([' ', ':', '(', '[', ',']);
        match trimmed.strip_suffix("Some") {
            Some(rest) => before = rest,
            None => {
                let ident: String = trimmed.chars().rev().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                return ident.chars().rev().collect();
            }
        }
    }
}

/// Records where `back` (a re-encoding) differs from `sent`, under `label`.
pub fn diff(label: &str, path: &str, sent: &Value, back: &Value, out: &mut Vec<String>) {
    match (sent, back) {
        (Value::Object(a), Value::Object(b)) => diff_objects(label, path, a, b, out),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (x, y) in a.iter().zip(b) {
                diff(label, &format!("{path}[]"), x, y, out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(format!("{label} {}: changed ({a} → {b})", display(path))),
    }
}

fn diff_objects(label: &str, path: &str, a: &Map<String, Value>, b: &Map<String, Value>, out: &mut Vec<String>) {
    for (k, x) in a {
        let at = format!("{path}.{k}");
        match b.get(k) {
            Some(y) => diff(label, &at, x, y, out),
            None => out.push(format!("{label} {}: lost", display(&at))),
        }
    }
    for k in b.keys().filter(|k| !a.contains_key(*k)) {
        out.push(format!("{label} {}: added", display(&format!("{path}.{k}"))));
    }
}

fn display(path: &str) -> &str {
    if path.is_empty() { "." } else { path.trim_start_matches('.') }
}

/// Asserts that the differences seen are exactly `expected` (as sets), and that each is judged in
/// `KNOWN_DIFFERENCES.md` (a table row that starts with it in backquotes).
pub fn assert_differences(seen: &[String], expected: &[&str]) {
    let seen: BTreeSet<&str> = seen.iter().map(String::as_str).collect();
    let expected: BTreeSet<&str> = expected.iter().copied().collect();
    let judged = |d: &str| KNOWN_DIFFERENCES.contains(&format!("| `{d}` |"));
    let unjudged: Vec<&&str> = seen.iter().filter(|d| !judged(d)).collect();
    assert!(unjudged.is_empty(), "differences not judged in KNOWN_DIFFERENCES.md: {unjudged:#?}");
    assert_eq!(seen, expected, "the differences seen (left) are not the ones this test names (right)");
}

/// A request id.
pub fn id(n: i64) -> RequestId {
    serde_json::from_value(n.into()).expect("an integer is a request id")
}
