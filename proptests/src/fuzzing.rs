//! Entry points for the fuzz targets in `fuzz/`.
//!
//! Each function takes the fuzzer's bytes, drives one layer of acp-proto through its public
//! API, and panics when an invariant breaks. They live here, not in acp-proto, so that the
//! core's public surface is the protocol; they are always compiled, so the targets cannot rot
//! and a normal `cargo test` replays the committed corpus through them on stable. `cargo fuzz`
//! sets `cfg(fuzzing)`; nothing here depends on it.
//!
//! | function | drives | checks |
//! |---|---|---|
//! | [`framer`] | arbitrary bytes in arbitrary chunks, with a fuzzed frame limit | no panic; every byte accounted for (frames, terminators, blank lines, skipped bytes, buffered); frames never contain LF or exceed the limit; the buffer stays bounded |
//! | [`envelope`] | one frame | no panic; every valid message re-encodes and parses back to the same message |
//! | [`typed`] | JSON into the typed decoder of a table row's params or result | no panic; decode → encode → decode → encode is stable |
//! | [`connection`] | one `Connection` (either side) fed bytes (raw or protocol templates), EOFs, timer ticks with fuzzed steps, and application commands; with feature `unstable_protocol_v2`, bit 1 of the first byte makes it speak v1 and v2 (an agent: an `Acceptor`; a client: one that offers v2, a `Connection<Client, V2>`, see `link`), with v2 templates and commands (`fuzzing_v2`) | no panic; every emitted frame is a valid message; never more responses for an id than requests with it; after settling, exactly one per request except dropped duplicates; no event after `Closed`; no busy loop; bounded memory; v2: each turn ends at most once, its stamps are contiguous and none comes after its end |
//! | [`attach`] | lines of frames, each with a first byte saying who sends it, through `acp_proto::attach`: a host's hub, two guests, an attaching client (feature `unstable_session_attach`) | no panic; what the hub sends is JSON or the input passed through; a guest not attached hears only error answers; at most `MAX_GUESTS` guests; an attacher's request is JSON |
//! | [`resume`] | one frame's text through `acp_proto::resume` (feature `unstable_resumable_transport`): the cursor stamp and every reader | no panic; a stamped message equals the parsed message with its cursor put in its envelope's `_meta` (each object of a batch) and reads back that cursor; what is not stamped is unchanged; a resume request, its answer and a turn-state map read back whole from what their writers make; at most `MAX_TURNS` turns |
//! | [`observer`] | one `acp_proto::observer::Observer` with small limits, fed frames from either peer: raw bytes, or frames built from a small ACP vocabulary (requests, answers, session announcements, prompts, v1 stop reasons, v2 acknowledgements and `state_update`s, `session/cancel`, batches) over a few ids and sessions | no panic; every bound of `Limits` holds after each frame; counters only grow; a frame's kind, method and id are what `Observer::read` says of it alone; an answer reports the request it closed, which is then no longer open; `no_turn_open` agrees with `turns` |

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;

use acp_proto::framer::{FrameEvent, Framer};
use acp_proto::jsonrpc::{self, Incoming, RequestId};
use acp_proto::methods::{METHODS, Method, Request, Response};
use acp_proto::types::*;
use acp_proto::{AgentRequest, ClientRequest, Config, InboundId, Instant, Notification, OutboundId, RpcError, Side};

use crate::link::{Event, Link as Connection};

pub use crate::fuzzing_attach::attach;
pub use crate::fuzzing_observer::{observer, observer_run};
pub use crate::fuzzing_resume::resume;

/// Reads decisions from the fuzzer's bytes; zeros once they run out.
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }
    pub(crate) fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
    pub(crate) fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }
    pub(crate) fn take(&mut self, n: usize) -> &'a [u8] {
        let start = self.pos.min(self.data.len());
        let end = start.saturating_add(n).min(self.data.len());
        self.pos = self.pos.saturating_add(n);
        &self.data[start..end]
    }
    fn rest(&mut self) -> &'a [u8] {
        self.take(usize::MAX)
    }
}

/// Fuzz target `framer`: arbitrary bytes in arbitrary chunks.
pub fn framer(data: &[u8]) {
    let mut r = Reader::new(data);
    let max = usize::from(r.byte()) + 1;
    let mut framer = Framer::new(max);
    let mut frames = 0u64;
    let mut bytes_in = 0u64;
    let mut check = |ev: FrameEvent<'_>| {
        if let FrameEvent::Frame(f) = ev {
            assert!(!f.is_empty() && f.len() <= max, "frame of {} bytes with limit {max}", f.len());
            assert!(!f.contains(&b'\n'));
            frames += 1;
        }
        ControlFlow::Continue(())
    };
    while !r.done() {
        let n = usize::from(r.byte() % 64) + 1;
        let chunk = r.take(n);
        assert_eq!(framer.push(chunk, &mut check), chunk.len());
        bytes_in += chunk.len() as u64;
        assert!(framer.buffered() <= max + 1, "buffer {} over the limit {max}", framer.buffered());
    }
    let s = framer.stats();
    assert_eq!(s.consumed, bytes_in);
    assert_eq!(
        s.consumed,
        s.frame_bytes + s.newline_bytes + s.blank_bytes + s.skipped_bytes + framer.buffered() as u64,
        "bytes lost or invented: {s:?}"
    );
    framer.finish(&mut check);
    assert_eq!(framer.stats().frames, frames);
}

/// Fuzz target `envelope`: one frame through the envelope parser and encoder.
pub fn envelope(data: &[u8]) {
    // JSON the grammar accepts but `serde_json::Value` cannot hold (a number beyond f64, such
    // as 1e400) is valid input that the typed layer refuses with -32602; nothing to re-encode.
    if serde_json::from_slice::<Value>(data).is_err() {
        let _ = jsonrpc::parse(data);
        return;
    }
    let mut out = Vec::new();
    match jsonrpc::parse(data) {
        Incoming::Request { id, method, params } => {
            let params: Option<Value> = params.map(raw_value);
            jsonrpc::encode_request(&mut out, &id, &method, params.as_ref()).expect("a parsed message re-encodes");
            match jsonrpc::parse(strip(&out)) {
                Incoming::Request { id: id2, method: m2, params: p2 } => {
                    assert_eq!((id, method), (id2, m2));
                    assert_eq!(params, p2.map(raw_value));
                }
                other => panic!("request re-parsed as {other:?}"),
            }
        }
        Incoming::Notification { method, params } => {
            let params: Option<Value> = params.map(raw_value);
            jsonrpc::encode_notification(&mut out, &method, params.as_ref()).expect("re-encodes");
            match jsonrpc::parse(strip(&out)) {
                Incoming::Notification { method: m2, params: p2 } => {
                    assert_eq!(method, m2);
                    assert_eq!(params, p2.map(raw_value));
                }
                other => panic!("notification re-parsed as {other:?}"),
            }
        }
        Incoming::Response { id, outcome } => {
            let outcome = outcome.map(raw_value);
            match &outcome {
                Ok(v) => jsonrpc::encode_result(&mut out, &id, v).expect("re-encodes"),
                Err(e) => jsonrpc::encode_error(&mut out, &id, e),
            }
            match jsonrpc::parse(strip(&out)) {
                Incoming::Response { id: id2, outcome: o2 } => {
                    assert_eq!(id, id2);
                    assert_eq!(outcome, o2.map(raw_value));
                }
                other => panic!("response re-parsed as {other:?}"),
            }
        }
        Incoming::Invalid { error, .. } => {
            // The answer to an invalid frame is itself a valid message.
            jsonrpc::encode_error(&mut out, &RequestId::Null, &error);
            assert!(matches!(jsonrpc::parse(strip(&out)), Incoming::Response { .. }));
        }
        _ => {}
    }
}

fn raw_value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).expect("a raw value the parser accepted is JSON")
}

fn strip(frame: &[u8]) -> &[u8] {
    assert_eq!(frame.last(), Some(&b'\n'));
    assert_eq!(frame.iter().filter(|b| **b == b'\n').count(), 1, "exactly one newline per frame");
    &frame[..frame.len() - 1]
}

/// Fuzz target `typed`: JSON into the typed decoder of a table row's params or result.
pub fn typed(data: &[u8]) {
    let mut r = Reader::new(data);
    let row = &METHODS[usize::from(r.byte()) % METHODS.len()];
    let as_result = r.byte() % 2 == 1 && row.result.is_some();
    let Ok(text) = std::str::from_utf8(r.rest()) else { return };
    let Ok(raw) = serde_json::from_str::<Box<RawValue>>(text) else { return };
    let receiver = if row.received_by(Side::Agent) { Side::Agent } else { Side::Client };
    let encode = |raw: &RawValue| -> Option<String> {
        if as_result {
            let requester = receiver.peer();
            let r = Response::decode_result(requester, Some(row.method), raw).ok()?;
            Some(serde_json::to_string(&r).expect("a decoded result encodes"))
        } else if row.kind == acp_proto::methods::Kind::Request {
            let r = Request::decode(receiver, row.wire, Some(raw)).ok()?;
            Some(serde_json::to_string(&r).expect("decoded params encode"))
        } else if row.method == Method::CancelRequest {
            let n: CancelRequestNotification = serde_json::from_str(raw.get()).ok()?;
            Some(serde_json::to_string(&n).expect("encodes"))
        } else {
            let n = Notification::decode(receiver, row.wire, Some(raw)).ok()?;
            Some(serde_json::to_string(&n).expect("decoded params encode"))
        }
    };
    let Some(first) = encode(&raw) else { return };
    let again = RawValue::from_string(first.clone()).expect("encoded JSON is JSON");
    let second = encode(&again).unwrap_or_else(|| panic!("{}: re-decoding failed for {first}", row.wire));
    assert_eq!(first, second, "{}: decode/encode is not stable", row.wire);
}

/// Frames the connection target can inject, so that the fuzzer gets past the handshake.
fn template(r: &mut Reader<'_>, side: Side, outbound: &[OutboundId]) -> Vec<u8> {
    let id = u64::from(r.byte() % 8);
    let out_id = outbound.get(usize::from(r.byte()) % outbound.len().max(1)).map_or(1, |o| o.wire());
    let s = format!("s{}", r.byte() % 3);
    let line = match (side, r.byte() % 10) {
        (Side::Agent, 0) => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{{"fs":{{"readTextFile":true}},"terminal":true}}}}}}"#
        ),
        (Side::Agent, 1) => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"/","mcpServers":[]}}}}"#)
        }
        (Side::Agent, 2 | 3) => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{s}","prompt":[]}}}}"#
        ),
        (Side::Agent, 4) => format!(r#"{{"jsonrpc":"2.0","method":"session/cancel","params":{{"sessionId":"{s}"}}}}"#),
        (Side::Client, 0) => format!(
            r#"{{"jsonrpc":"2.0","id":{out_id},"result":{{"protocolVersion":1,"agentCapabilities":{{"loadSession":true}}}}}}"#
        ),
        (Side::Client, 1) => format!(r#"{{"jsonrpc":"2.0","id":{out_id},"result":{{"sessionId":"{s}"}}}}"#),
        (Side::Client, 2) => format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{s}","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"x"}}}}}}}}"#
        ),
        (Side::Client, 3) => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/request_permission","params":{{"sessionId":"{s}","toolCall":{{"toolCallId":"t"}},"options":[{{"optionId":"a","name":"A","kind":"allow_once"}}]}}}}"#
        ),
        (Side::Client, 4) => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"fs/read_text_file","params":{{"sessionId":"{s}","path":"/x"}}}}"#
        ),
        (_, 5) => format!(r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{id}}}}}"#),
        (_, 6) => format!(r#"{{"jsonrpc":"2.0","id":{out_id},"error":{{"code":-32800,"message":"x"}}}}"#),
        (_, 7) => format!(r#"{{"jsonrpc":"2.0","id":{out_id},"result":{{"stopReason":"end_turn"}}}}"#),
        (_, 8) => format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"_x/y","params":[1]}}"#),
        _ => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{}}}}"#),
    };
    let mut line = line.into_bytes();
    line.push(b'\n');
    line
}

/// A minimal valid result for a request, as an application would answer.
fn answer(request: &Request) -> Result<Response, RpcError> {
    Ok(match request {
        Request::Client(ClientRequest::Initialize(i)) => initialize_answer(i).into(),
        Request::Client(ClientRequest::NewSession(_)) => NewSessionResponse::new("s0").into(),
        Request::Client(ClientRequest::Prompt(_)) => PromptResponse::new(StopReason::EndTurn).into(),
        Request::Agent(AgentRequest::RequestPermission(_)) => {
            RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled).into()
        }
        Request::Agent(AgentRequest::ReadTextFile(_)) => ReadTextFileResponse::new("x").into(),
        _ => return Err(RpcError::internal_error("fuzz")),
    })
}

/// The agent's `initialize` answer. With the `unstable` features it advertises the gate of
/// every unstable client → agent request (generic over the table, see `sim::unstable`), so
/// that seeds reach their handlers, unless the client's `_meta` says
/// `"acpFuzzNoUnstable": true` (then they are refused `-32601`, as in a stable build, which
/// does not know the methods).
fn initialize_answer(request: &InitializeRequest) -> InitializeResponse {
    let mut r = InitializeResponse::new(ProtocolVersion::V1);
    let refuse = request.meta.as_ref().is_some_and(|m| m.get("acpFuzzNoUnstable") == Some(&Value::Bool(true)));
    if !refuse {
        crate::sim::unstable::advertise_with(&mut r.agent_capabilities, || true);
    }
    r
}

/// What one input of the `connection` target did ([`connection_run`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionRun {
    /// The protocol version the handshake negotiated, if it completed.
    pub protocol_version: Option<u16>,
    /// v2 requests and notifications the application received.
    pub v2_events: usize,
    /// v2 turns that ended (client side).
    pub turns_ended: usize,
    /// Of those, the turns ended by their session's close or delete.
    pub turns_closed: usize,
    /// v2 batch arrays the machine took apart.
    pub batches: u64,
}

/// What the connection target's application saw: `Closed`, and (v2) the turns.
#[derive(Default)]
struct Status {
    closed: bool,
    /// The input ended while the connection was open: every request read is owed an answer
    /// (unless the last line closed it: an unsupported protocol version).
    eof_while_open: bool,
    /// The connection closed on an unsupported protocol version.
    unsupported: bool,
    run: ConnectionRun,
    #[cfg(feature = "unstable_protocol_v2")]
    turns: crate::fuzzing_v2::TurnCheck,
}

/// A request the connection target's application holds.
enum Inbound {
    V1(Request),
    #[cfg(feature = "unstable_protocol_v2")]
    V2(acp_proto::v2::Request),
}

/// Answers `request` as an application would.
fn respond(conn: &mut Connection, now: Instant, id: InboundId, request: &Inbound) {
    match request {
        Inbound::V1(r) => {
            let _ = conn.respond::<acp_proto::V1>(now, id, answer(r));
        }
        #[cfg(feature = "unstable_protocol_v2")]
        Inbound::V2(r) => {
            let _ = conn.respond::<acp_proto::V2>(now, id, crate::fuzzing_v2::answer_v2(r));
        }
    }
}

/// The versions the connection target speaks (`v2`: only with the feature).
fn versions(v2: bool) -> Vec<ProtocolVersion> {
    #[cfg(feature = "unstable_protocol_v2")]
    if v2 {
        return vec![ProtocolVersion::V1, ProtocolVersion::V2];
    }
    let _ = v2;
    vec![ProtocolVersion::V1]
}

#[cfg(feature = "unstable_protocol_v2")]
use crate::fuzzing_v2::{notify_v2, send_v2, template_v2};

/// Per-id accounting of requests read and responses written by one connection.
#[derive(Default)]
struct Accounting {
    mirror: Option<Framer>,
    requests: BTreeMap<RequestId, u64>,
    responses: BTreeMap<RequestId, u64>,
    total_requests: u64,
    total_responses: u64,
    /// v2: batch arrays read, and the requests among their entries (counted apart from
    /// `total_requests`: a v2 connection takes an array apart, a v1 one refuses it whole).
    arrays: u64,
    array_requests: u64,
}

/// The entries of a batch array line (taken apart by a v2 machine only).
#[cfg(feature = "unstable_protocol_v2")]
fn batch_entries(frame: &[u8]) -> Option<Vec<&[u8]>> {
    crate::fuzzing_v2::batch_entries(frame)
}

/// Without v2 no machine takes an array apart: it is one invalid frame.
#[cfg(not(feature = "unstable_protocol_v2"))]
fn batch_entries(_: &[u8]) -> Option<Vec<&[u8]>> {
    None
}

/// The id a frame's answer carries, when it is a request (or an invalid one) with a usable id.
fn answerable_id(frame: &[u8]) -> Option<RequestId> {
    match jsonrpc::parse(frame) {
        Incoming::Request { id, .. } | Incoming::Invalid { id, .. } if id != RequestId::Null => Some(id),
        _ => None,
    }
}

impl Accounting {
    fn consumed(&mut self, bytes: &[u8], max: usize) {
        let mirror = self.mirror.get_or_insert_with(|| Framer::new(max));
        let mut ids = Vec::new();
        let mut batched: Vec<RequestId> = Vec::new();
        let mut arrays = 0;
        mirror.push(bytes, |ev| {
            if let FrameEvent::Frame(f) = ev {
                if let Some(entries) = batch_entries(f) {
                    arrays += 1;
                    batched.extend(entries.into_iter().filter_map(answerable_id));
                    return ControlFlow::Continue(());
                }
                ids.extend(answerable_id(f));
            }
            ControlFlow::Continue(())
        });
        self.arrays += arrays;
        self.array_requests += batched.len() as u64;
        for id in batched {
            *self.requests.entry(id).or_default() += 1;
        }
        for id in ids {
            *self.requests.entry(id).or_default() += 1;
            self.total_requests += 1;
        }
    }

    /// Checks that every request read was answered, dropped as a duplicate or is in flight.
    /// Batch entries count when the machine took every array apart, and bound the count when
    /// it refused some whole (v1, over the limits).
    fn check_totals(&self, conn: &Connection) {
        let settled = self.total_responses + conn.stats().duplicate_ids + conn.inbound_in_flight() as u64;
        let taken_apart = conn.stats().batches;
        if taken_apart == 0 {
            assert_eq!(self.total_requests, settled, "requests read vs answered");
        } else if taken_apart == self.arrays {
            assert_eq!(self.total_requests + self.array_requests, settled, "requests read vs answered (batches)");
        } else {
            let range = self.total_requests..=self.total_requests + self.array_requests;
            assert!(range.contains(&settled), "requests read {range:?} vs answered {settled}");
        }
    }

    fn emitted(&mut self, bytes: &[u8]) {
        for frame in bytes.split(|b| *b == b'\n').filter(|f| !f.is_empty()) {
            if let Some(entries) = batch_entries(frame) {
                // An answer array: each entry is a response (an empty array fails below).
                for entry in entries {
                    assert!(matches!(jsonrpc::parse(entry), Incoming::Response { .. }), "a batch answers only");
                    self.emitted(entry);
                }
                continue;
            }
            match jsonrpc::parse(frame) {
                Incoming::Response { id: RequestId::Null, .. } => {}
                Incoming::Response { id, .. } => {
                    let n = self.responses.entry(id.clone()).or_default();
                    *n += 1;
                    self.total_responses += 1;
                    assert!(
                        *n <= self.requests.get(&id).copied().unwrap_or(0),
                        "more responses than requests for {id}"
                    );
                }
                Incoming::Request { .. } | Incoming::Notification { .. } => {}
                other => panic!("emitted an invalid frame {other:?}: {}", String::from_utf8_lossy(frame)),
            }
        }
    }
}

/// Fuzz target `connection`: one machine fed bytes, EOFs, ticks and commands.
pub fn connection(data: &[u8]) {
    let _ = connection_run(data);
}

/// [`connection`], returning what the input did (for the corpus tests).
pub fn connection_run(data: &[u8]) -> ConnectionRun {
    let mut r = Reader::new(data);
    let first = r.byte();
    let side = if first.is_multiple_of(2) { Side::Agent } else { Side::Client };
    // Bit 1 of the first byte: the machine speaks v1 and v2 (with the feature).
    let v2 = cfg!(feature = "unstable_protocol_v2") && first & 2 != 0;
    let config = Config::default()
        .with_max_frame_len(2048)
        .with_max_inbound(8)
        .with_max_pending_outbound(8)
        .with_outbound_budget(8 * 1024)
        .with_max_events(16)
        .with_max_held_bytes(4096)
        .with_cancel_grace(Duration::from_millis(50))
        .with_turn_cancel_grace(Duration::from_millis(80));
    let max = config.max_frame_len;
    let mut now = Instant::ZERO;
    let mut conn = Connection::new(side, config, &versions(v2), now);
    let mut acct = Accounting::default();
    let mut inbound: Vec<(InboundId, Inbound)> = Vec::new();
    let mut outbound: Vec<OutboundId> = Vec::new();
    let mut st = Status::default();
    let mut ops = 0;
    while !r.done() && ops < 256 {
        ops += 1;
        match r.byte() % 9 {
            0 | 1 => {
                let len = usize::from(r.byte());
                let bytes = r.take(len).to_vec();
                feed(&mut conn, &mut acct, now, &bytes, max, &mut inbound, &mut outbound, &mut st);
            }
            #[cfg(feature = "unstable_protocol_v2")]
            2 | 3 if v2 => {
                let line = template_v2(&mut r, side, &outbound);
                feed(&mut conn, &mut acct, now, &line, max, &mut inbound, &mut outbound, &mut st);
            }
            2 | 3 => {
                let line = template(&mut r, side, &outbound);
                feed(&mut conn, &mut acct, now, &line, max, &mut inbound, &mut outbound, &mut st);
            }
            4 => {
                now += Duration::from_millis(u64::from(r.u16() % 200));
                conn.handle_timeout(now);
                drain(&mut conn, &mut acct, &mut inbound, &mut outbound, &mut st);
                assert!(conn.poll_timeout().is_none_or(|t| t > now), "busy loop");
            }
            5 if !inbound.is_empty() => {
                let (id, request) = inbound.remove(usize::from(r.byte()) % inbound.len());
                respond(&mut conn, now, id, &request);
            }
            #[cfg(feature = "unstable_protocol_v2")]
            6 if v2 => {
                let deadline = (r.byte().is_multiple_of(2)).then(|| now + Duration::from_millis(u64::from(r.byte())));
                outbound.extend(send_v2(&mut conn, now, side, r.byte(), deadline));
            }
            6 => {
                let deadline = (r.byte().is_multiple_of(2)).then(|| now + Duration::from_millis(u64::from(r.byte())));
                let request: Request = match (side, r.byte() % 4) {
                    (Side::Client, 0) => InitializeRequest::new(ProtocolVersion::V1).into(),
                    (Side::Client, 1) => NewSessionRequest::new("/", vec![]).into(),
                    (Side::Client, _) => PromptRequest::new("s0", vec![]).into(),
                    (Side::Agent, 0) => ReadTextFileRequest::new("s0", "/x").into(),
                    (Side::Agent, _) => RequestPermissionRequest::new("s0", ToolCallUpdate::new("t"), vec![]).into(),
                };
                if let Ok(id) = conn.send_request::<acp_proto::V1>(now, request, deadline) {
                    outbound.push(id);
                }
            }
            7 if !outbound.is_empty() => {
                let id = outbound[usize::from(r.byte()) % outbound.len()];
                let _ = conn.cancel_request(now, id);
            }
            // Only a client cancels a turn, and only an agent sends updates: the other side's
            // messages do not compile (`Connection<R, P>`), so the target does not try them.
            7 if side == Side::Client => {
                let _ = conn.cancel_turn(now, &SessionId::from("s0"));
            }
            _ if r.byte().is_multiple_of(8) => {
                st.eof_while_open |= !conn.is_closed();
                conn.handle_eof(now);
                if let Some(m) = acct.mirror.as_mut() {
                    m.finish(|_| ControlFlow::Continue(()));
                }
            }
            _ if side == Side::Client => {}
            #[cfg(feature = "unstable_protocol_v2")]
            _ if v2 => notify_v2(&mut conn, now, r.byte()),
            _ => {
                let n = SessionNotification::new(
                    "s0",
                    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new("x")))),
                );
                let _ = conn.send_notification::<acp_proto::V1>(now, n);
            }
        }
        drain(&mut conn, &mut acct, &mut inbound, &mut outbound, &mut st);
        assert!(conn.memory_estimate() < 1 << 20, "memory estimate {}", conn.memory_estimate());
    }
    // Settle: answer everything, fire every deadline.
    for _ in 0..64 {
        for (id, request) in std::mem::take(&mut inbound) {
            respond(&mut conn, now, id, &request);
        }
        if let Some(t) = conn.poll_timeout() {
            now = t;
            conn.handle_timeout(now);
        }
        drain(&mut conn, &mut acct, &mut inbound, &mut outbound, &mut st);
        if inbound.is_empty() && conn.poll_timeout().is_none() {
            break;
        }
    }
    // Open, or closed after the end of input (a half-close answers what it read before:
    // module `half_close`): every request read was answered.
    if !conn.is_closed() || (st.eof_while_open && !st.unsupported) {
        acct.check_totals(&conn);
    }
    st.run.batches = conn.stats().batches;
    st.run
}

#[allow(clippy::too_many_arguments)]
fn feed(
    conn: &mut Connection,
    acct: &mut Accounting,
    now: Instant,
    bytes: &[u8],
    max: usize,
    inbound: &mut Vec<(InboundId, Inbound)>,
    outbound: &mut Vec<OutboundId>,
    st: &mut Status,
) {
    let mut fed = 0;
    for _ in 0..bytes.len() + 2 {
        if fed == bytes.len() {
            break;
        }
        // Input after close or after the end of input is consumed and ignored: not read.
        let was_closed = conn.is_closed() || conn.input_ended();
        let n = conn.handle_input(now, &bytes[fed..]);
        if !was_closed {
            acct.consumed(&bytes[fed..fed + n], max);
        }
        fed += n;
        drain(conn, acct, inbound, outbound, st);
    }
    // Input may pause only on requests in flight (the application answers them later),
    // deferred behind a full output (taken later), or (v2) on the answers held for batches
    // whose requests are in flight: never otherwise once events are drained.
    let batch_held = conn.stats().batches > 0 && conn.inbound_in_flight() > 0;
    let waits_for_answers =
        conn.inbound_in_flight() >= conn.config().max_inbound || conn.deferred_requests() > 0 || batch_held;
    assert!(fed == bytes.len() || waits_for_answers, "input stalled although every event was drained");
}

fn drain(
    conn: &mut Connection,
    acct: &mut Accounting,
    inbound: &mut Vec<(InboundId, Inbound)>,
    outbound: &mut Vec<OutboundId>,
    st: &mut Status,
) {
    let mut buf = Vec::new();
    let _ = conn.poll_transmit(&mut buf);
    acct.emitted(&buf);
    while let Some(event) = conn.poll_event() {
        assert!(!st.closed, "event after Closed: {event:?}");
        match event {
            Event::Request { id, request } => inbound.push((id, Inbound::V1(request))),
            #[cfg(feature = "unstable_protocol_v2")]
            Event::RequestV2 { id, request } => {
                st.run.v2_events += 1;
                inbound.push((id, Inbound::V2(request)))
            }
            #[cfg(feature = "unstable_protocol_v2")]
            Event::NotificationV2 { turn, .. } => {
                st.run.v2_events += 1;
                if let Some(stamp) = turn {
                    st.turns.stamped(stamp);
                }
            }
            #[cfg(feature = "unstable_protocol_v2")]
            Event::TurnEnded { turn, reason, .. } => {
                st.run.turns_ended += 1;
                st.run.turns_closed += usize::from(reason == acp_proto::TurnEndReason::SessionClosed);
                st.turns.ended(turn)
            }
            Event::HandshakeCompleted(n) => st.run.protocol_version = Some(n.protocol_version.0),
            Event::Outcome { id, .. } => {
                let pos = outbound.iter().position(|o| *o == id).expect("one outcome per outbound request");
                outbound.remove(pos);
            }
            Event::Closed { reason } => {
                st.closed = true;
                st.unsupported = matches!(reason, acp_proto::CloseReason::UnsupportedProtocolVersion { .. });
            }
            _ => {}
        }
    }
    assert!(!conn.is_closed() || outbound.is_empty(), "closed with outcomes missing");
}
