//! End of input is a half-close (acp-proto's module `half_close`), over real OS pipes and both
//! transports (the `poll(2)` driver of `serve_fds`, the reader and writer threads of
//! `serve_with`): an agent answers the requests that arrived just before its input ended
//! (`printf '<request>\n' | agent`), tells their handlers, answers `-32800` for a handler that
//! never finishes once the grace passed, and only then does `serve` return; a peer that leaves
//! altogether ends `serve` cleanly; a client answers what its agent asked just before the
//! agent's output ended.

use crate::common;

use std::io::{BufRead, BufReader, PipeReader, PipeWriter, Write};
use std::thread;
use std::time::{Duration, Instant};

use acp_blocking::acp_proto::types::*;
use acp_blocking::acp_proto::{CancelReason, CloseReason, RpcError};
use acp_blocking::{
    Agent, AgentOptions, Client, ClientConnection, ClientContext, ClientOptions, Error, RequestContext,
};
use common::within;
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);

/// Answers `initialize` and `session/new` at once; `_until_told` waits until its handler is
/// told to stop and answers whether it was the end of input; `_forever` never finishes.
struct Agent1;

impl Agent for Agent1 {
    fn initialize(&self, _: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(ProtocolVersion::V1))
    }

    fn new_session(&self, _: NewSessionRequest, _: &RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("s"))
    }

    fn ext_method(&self, method: &str, _: Value, cx: &RequestContext) -> Result<Value, RpcError> {
        match method {
            "_until_told" => {
                cx.cancellation().wait_timeout(LIMIT);
                Ok(json!({"told": cx.cancellation().reason() == Some(CancelReason::InputEnded)}))
            }
            _ => loop {
                thread::park();
            },
        }
    }
}

fn init(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {"protocolVersion": 1}})
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// How the agent is served.
#[derive(Clone, Copy, Debug)]
enum Transport {
    /// `serve_fds`: the driver polls the pipes itself.
    Poll,
    /// `serve_with`: reader and writer threads.
    Threads,
}

const BOTH: [Transport; 2] = [Transport::Poll, Transport::Threads];

fn serve(transport: Transport, input: PipeReader, output: PipeWriter, options: AgentOptions) -> Result<(), Error> {
    match transport {
        #[cfg(unix)]
        Transport::Poll => acp_blocking::serve_fds(Agent1, input, output, options),
        _ => acp_blocking::serve_with(Agent1, input, output, options),
    }
}

/// Serves [`Agent1`] over two pipes, writes `lines` at once and ends the agent's input;
/// returns every frame the agent wrote until its output ended, and what `serve` returned.
fn pipe_in(transport: Transport, lines: &[Value], options: AgentOptions) -> (Vec<Value>, Result<(), Error>) {
    let (agent_in, mut to_agent) = std::io::pipe().unwrap();
    let (from_agent, agent_out) = std::io::pipe().unwrap();
    let server = thread::spawn(move || serve(transport, agent_in, agent_out, options));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    to_agent.write_all(text.as_bytes()).unwrap();
    drop(to_agent);
    let frames = BufReader::new(from_agent).lines().map(|l| serde_json::from_str(&l.unwrap()).unwrap()).collect();
    (frames, server.join().unwrap())
}

#[test]
fn requests_received_just_before_the_end_of_input_are_answered_then_serve_returns() {
    within(LIMIT, || {
        for transport in BOTH {
            let new_session = request(1, "session/new", json!({"cwd": "/", "mcpServers": []}));
            let (frames, result) = pipe_in(transport, &[init(0), new_session], AgentOptions::default());
            assert!(result.is_ok(), "{transport:?}: {result:?}");
            let ids: Vec<&Value> = frames.iter().map(|f| &f["id"]).collect();
            assert_eq!(ids, [&json!(0), &json!(1)], "{transport:?}: {frames:?}");
            assert_eq!(frames[1]["result"]["sessionId"], "s");
        }
    });
}

#[test]
fn a_handler_is_told_of_the_end_and_its_own_answer_goes_out() {
    within(LIMIT, || {
        for transport in BOTH {
            let lines = [init(0), request(1, "_until_told", json!({}))];
            let (frames, result) = pipe_in(transport, &lines, AgentOptions::default());
            assert!(result.is_ok(), "{transport:?}: {result:?}");
            assert_eq!(frames[1], json!({"jsonrpc": "2.0", "id": 1, "result": {"told": true}}), "{transport:?}");
        }
    });
}

#[test]
fn a_handler_that_never_finishes_is_answered_after_the_grace() {
    within(LIMIT, || {
        for transport in BOTH {
            let mut options = AgentOptions::default();
            options.config.cancel_grace = Duration::from_millis(200);
            let (frames, result) = pipe_in(transport, &[init(0), request(1, "_forever", json!({}))], options);
            assert!(result.is_ok(), "{transport:?}: {result:?}");
            assert_eq!(frames.len(), 2, "{transport:?}: {frames:?}");
            assert_eq!((&frames[1]["id"], &frames[1]["error"]["code"]), (&json!(1), &json!(-32800)));
        }
    });
}

#[test]
fn a_peer_that_leaves_altogether_ends_serve_cleanly() {
    within(LIMIT, || {
        for transport in BOTH {
            let (agent_in, mut to_agent) = std::io::pipe().unwrap();
            let (from_agent, agent_out) = std::io::pipe().unwrap();
            let server = thread::spawn(move || serve(transport, agent_in, agent_out, AgentOptions::default()));
            writeln!(to_agent, "{}\n{}", init(0), request(1, "_until_told", json!({}))).unwrap();
            let mut from_agent = BufReader::new(from_agent);
            let mut line = String::new();
            from_agent.read_line(&mut line).unwrap();
            assert!(line.contains(r#""id":0"#), "{line}");
            // Both directions end; the answer owed, given once the end is seen, meets a broken
            // pipe (EPIPE: Rust ignores SIGPIPE), which after the end of input says the peer
            // left: not an error.
            drop(from_agent);
            drop(to_agent);
            let result = server.join().unwrap();
            assert!(result.is_ok(), "{transport:?}: {result:?}");
        }
    });
}

/// A client whose extension handler answers `{"answered": true}`.
struct Answering;

impl Client for Answering {
    fn ext_method(&self, _: &str, _: Value, _: &ClientContext) -> Result<Value, RpcError> {
        Ok(json!({"answered": true}))
    }
}

#[test]
fn a_client_answers_what_its_agent_asked_just_before_its_output_ended() {
    within(LIMIT, || {
        let (client_in, mut agent_out) = std::io::pipe().unwrap();
        let (agent_in, client_out) = std::io::pipe().unwrap();
        let conn = ClientConnection::connect(Answering, client_in, client_out, ClientOptions::default()).unwrap();
        let mut agent_in = BufReader::new(agent_in).lines();
        let mut next = || -> Value { serde_json::from_str(&agent_in.next().unwrap().unwrap()).unwrap() };
        let client = thread::spawn(move || {
            conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).unwrap();
            let pending = conn.new_session(NewSessionRequest::new("/", vec![]));
            (conn, pending)
        });
        let init = next();
        writeln!(agent_out, "{}", json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": 1}}))
            .unwrap();
        assert_eq!(next()["method"], "session/new");
        // The agent asks, then its output ends (it still reads).
        writeln!(agent_out, "{}", request(7, "_ask", json!({}))).unwrap();
        drop(agent_out);
        assert_eq!(next(), json!({"jsonrpc": "2.0", "id": 7, "result": {"answered": true}}));
        let (conn, pending) = client.join().unwrap();
        assert!(matches!(pending, Err(Error::ConnectionClosed)), "{pending:?}");
        let deadline = Instant::now() + LIMIT;
        while conn.close_reason().is_none() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(conn.close_reason(), Some(CloseReason::PeerEof), "closed once it answered");
    });
}

#[cfg(feature = "unstable_protocol_v2")]
mod v2 {
    use acp_blocking::acp_proto::v2;
    use acp_blocking::v2::AgentContext;

    use super::*;

    struct AgentV2Only;

    impl acp_blocking::v2::Agent for AgentV2Only {
        fn initialize(&self, _: v2::InitializeRequest, _: &AgentContext) -> Result<v2::InitializeResponse, RpcError> {
            Ok(serde_json::from_value(json!({
                "protocolVersion": 2, "info": {"name": "a", "version": "1"}, "capabilities": {"session": {}},
            }))
            .unwrap())
        }

        fn new_session(&self, _: v2::NewSessionRequest, _: &AgentContext) -> Result<v2::NewSessionResponse, RpcError> {
            Ok(serde_json::from_value(json!({"sessionId": "s2"})).unwrap())
        }
    }

    #[test]
    fn a_v2_agent_answers_what_arrived_just_before_the_end_of_input() {
        within(LIMIT, || {
            for transport in BOTH {
                let (agent_in, mut to_agent) = std::io::pipe().unwrap();
                let (from_agent, agent_out) = std::io::pipe().unwrap();
                let server = thread::spawn(move || match transport {
                    #[cfg(unix)]
                    Transport::Poll => {
                        acp_blocking::v2::serve_fds(AgentV2Only, agent_in, agent_out, AgentOptions::default())
                    }
                    _ => acp_blocking::v2::serve_with(AgentV2Only, agent_in, agent_out, AgentOptions::default()),
                });
                let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}});
                writeln!(to_agent, "{init}\n{}", request(1, "session/new", json!({"cwd": "/"}))).unwrap();
                drop(to_agent);
                let frames: Vec<Value> =
                    BufReader::new(from_agent).lines().map(|l| serde_json::from_str(&l.unwrap()).unwrap()).collect();
                assert_eq!(frames.len(), 2, "{transport:?}: {frames:?}");
                assert_eq!((&frames[0]["id"], &frames[0]["result"]["protocolVersion"]), (&json!(0), &json!(2)));
                assert_eq!((&frames[1]["id"], &frames[1]["result"]["sessionId"]), (&json!(1), &json!("s2")));
                assert!(server.join().unwrap().is_ok(), "{transport:?}");
            }
        });
    }
}
