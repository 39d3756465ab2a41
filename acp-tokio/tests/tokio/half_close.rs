//! End of input is a half-close (acp-proto's module `half_close`), over a real duplex pipe: an
//! agent answers the requests that arrived just before its input ended (`printf '<request>\n'
//! | agent`), tells their handlers, answers `-32800` for a handler that never finishes once
//! the grace passed, and only then does `serve` resolve; a peer that leaves altogether (no
//! one reads the answers) ends `serve` cleanly; a client answers the requests its agent sent
//! just before the agent's output ended.

use std::time::Duration;

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{CancelReason, RpcError};
use acp_tokio::{Agent, AgentOptions, Client, ClientConnection, ClientContext, ClientOptions, Error, RequestContext};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const LIMIT: Duration = Duration::from_secs(30);

/// Answers `initialize` and `session/new` at once; `_until_told` waits until its handler is
/// told to stop and answers with the reason; `_forever` never finishes (it ignores the signal).
struct Agent1;

impl Agent for Agent1 {
    async fn initialize(&self, _: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(ProtocolVersion::V1))
    }

    async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("s"))
    }

    async fn ext_method(&self, method: &str, _: Value, cx: RequestContext) -> Result<Value, RpcError> {
        match method {
            "_until_told" => {
                cx.cancelled().await;
                Ok(json!({"told": cx.cancellation().reason() == Some(CancelReason::InputEnded)}))
            }
            _ => std::future::pending().await,
        }
    }
}

fn init(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {"protocolVersion": 1}})
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Serves [`Agent1`] over a duplex pipe, writes `lines` at once and ends the agent's input;
/// returns every frame the agent wrote until its output ended, and what `serve` returned.
async fn pipe_in(lines: &[Value], options: AgentOptions) -> (Vec<Value>, Result<(), Error>) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    let served = tokio::spawn(acp_tokio::serve(Agent1, reader, writer, options));
    let (reader, mut writer) = tokio::io::split(ours);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    writer.write_all(text.as_bytes()).await.unwrap();
    writer.shutdown().await.unwrap();
    let mut frames = Vec::new();
    let mut lines = BufReader::new(reader).lines();
    while let Some(line) = tokio::time::timeout(LIMIT, lines.next_line()).await.expect("a hang").unwrap() {
        frames.push(serde_json::from_str(&line).unwrap());
    }
    let result = tokio::time::timeout(LIMIT, served).await.expect("serve did not resolve").unwrap();
    (frames, result)
}

#[tokio::test]
async fn requests_received_just_before_the_end_of_input_are_answered_then_serve_resolves() {
    let new_session = request(1, "session/new", json!({"cwd": "/", "mcpServers": []}));
    let (frames, result) = pipe_in(&[init(0), new_session], AgentOptions::default()).await;
    assert!(result.is_ok(), "{result:?}");
    let ids: Vec<&Value> = frames.iter().map(|f| &f["id"]).collect();
    assert_eq!(ids, [&json!(0), &json!(1)], "{frames:?}");
    assert_eq!(frames[0]["result"]["protocolVersion"], 1);
    assert_eq!(frames[1]["result"]["sessionId"], "s");
}

#[tokio::test]
async fn a_handler_is_told_of_the_end_and_its_own_answer_goes_out() {
    let (frames, result) = pipe_in(&[init(0), request(1, "_until_told", json!({}))], AgentOptions::default()).await;
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(frames[1], json!({"jsonrpc": "2.0", "id": 1, "result": {"told": true}}));
}

#[tokio::test]
async fn a_handler_that_never_finishes_is_answered_after_the_grace() {
    let mut options = AgentOptions::default();
    options.config.cancel_grace = Duration::from_millis(200);
    let (frames, result) = pipe_in(&[init(0), request(1, "_forever", json!({}))], options).await;
    assert!(result.is_ok(), "{result:?}");
    assert_eq!((&frames[1]["id"], &frames[1]["error"]["code"]), (&json!(1), &json!(-32800)), "{frames:?}");
    assert_eq!(frames.len(), 2);
}

#[tokio::test]
async fn a_peer_that_leaves_altogether_ends_serve_cleanly() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    let served = tokio::spawn(acp_tokio::serve(Agent1, reader, writer, AgentOptions::default()));
    let (reader, mut writer) = tokio::io::split(ours);
    let lines = format!("{}\n{}\n", init(0), request(1, "_until_told", json!({})));
    writer.write_all(lines.as_bytes()).await.unwrap();
    let mut lines = BufReader::new(reader).lines();
    let first = tokio::time::timeout(LIMIT, lines.next_line()).await.expect("initialize's answer").unwrap();
    assert!(first.is_some_and(|l| l.contains(r#""id":0"#)));
    // Both directions end; the answer owed, given once the end is seen, meets a broken pipe,
    // which after the end of input says the peer left: not an error.
    drop(lines.into_inner().into_inner().unsplit(writer));
    let result = tokio::time::timeout(LIMIT, served).await.expect("serve did not resolve").unwrap();
    assert!(result.is_ok(), "{result:?}");
}

/// A client whose `_ask` extension handler answers `{"answered": true}`.
struct Answering;

impl Client for Answering {
    async fn ext_method(&self, _: &str, _: Value, _: ClientContext) -> Result<Value, RpcError> {
        Ok(json!({"answered": true}))
    }
}

#[tokio::test]
async fn a_client_answers_what_its_agent_asked_just_before_its_output_ended() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    let conn = ClientConnection::connect(Answering, reader, writer, ClientOptions::default());
    let (reader, mut agent_out) = tokio::io::split(ours);
    let mut agent_in = BufReader::new(reader).lines();
    let client = tokio::spawn(async move {
        conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await.unwrap();
        let pending = conn.new_session(NewSessionRequest::new("/", vec![])).await;
        (conn, pending)
    });
    let next = |line: Option<String>| -> Value { serde_json::from_str(&line.expect("a line")).unwrap() };
    let init = next(agent_in.next_line().await.unwrap());
    let answer = json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": 1}});
    agent_out.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
    let new = next(agent_in.next_line().await.unwrap());
    assert_eq!(new["method"], "session/new");
    // The agent asks, then its output ends (it still reads).
    agent_out.write_all(format!("{}\n", request(7, "_ask", json!({}))).as_bytes()).await.unwrap();
    agent_out.shutdown().await.unwrap();
    let reply = tokio::time::timeout(LIMIT, agent_in.next_line()).await.expect("the answer").unwrap();
    assert_eq!(next(reply), json!({"jsonrpc": "2.0", "id": 7, "result": {"answered": true}}));
    let (conn, pending) = tokio::time::timeout(LIMIT, client).await.expect("the client's calls").unwrap();
    assert!(matches!(pending, Err(Error::ConnectionClosed)), "{pending:?}");
    tokio::time::timeout(LIMIT, conn.closed()).await.expect("the client closes once it answered");
}

#[cfg(feature = "unstable_protocol_v2")]
mod v2 {
    use acp_tokio::acp_proto::v2;
    use acp_tokio::v2 as tokio_v2;

    use super::*;

    struct AgentV2Only;

    impl tokio_v2::Agent for AgentV2Only {
        async fn initialize(
            &self,
            _: v2::InitializeRequest,
            _: tokio_v2::AgentContext,
        ) -> Result<v2::InitializeResponse, RpcError> {
            Ok(serde_json::from_value(json!({
                "protocolVersion": 2, "info": {"name": "a", "version": "1"}, "capabilities": {"session": {}},
            }))
            .unwrap())
        }

        async fn new_session(
            &self,
            _: v2::NewSessionRequest,
            _: tokio_v2::AgentContext,
        ) -> Result<v2::NewSessionResponse, RpcError> {
            Ok(serde_json::from_value(json!({"sessionId": "s2"})).unwrap())
        }
    }

    #[tokio::test]
    async fn a_v2_agent_answers_what_arrived_just_before_the_end_of_input() {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (reader, writer) = tokio::io::split(theirs);
        let served = tokio::spawn(tokio_v2::serve(AgentV2Only, reader, writer, AgentOptions::default()));
        let (reader, mut writer) = tokio::io::split(ours);
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}});
        let new = request(1, "session/new", json!({"cwd": "/"}));
        writer.write_all(format!("{init}\n{new}\n").as_bytes()).await.unwrap();
        writer.shutdown().await.unwrap();
        let mut lines = BufReader::new(reader).lines();
        let mut frames = Vec::new();
        while let Some(line) = tokio::time::timeout(LIMIT, lines.next_line()).await.expect("a hang").unwrap() {
            frames.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert_eq!((&frames[0]["id"], &frames[0]["result"]["protocolVersion"]), (&json!(0), &json!(2)));
        assert_eq!((&frames[1]["id"], &frames[1]["result"]["sessionId"]), (&json!(1), &json!("s2")));
        let result = tokio::time::timeout(LIMIT, served).await.expect("tokio_v2::serve did not resolve").unwrap();
        assert!(result.is_ok(), "{result:?}");
    }
}
