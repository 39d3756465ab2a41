//! Over pipes a calling thread writes its own request, and a handler thread its own answer,
//! when the output is idle; the driver is woken only when that left it something to do. Each
//! test here puts the driver to sleep (no input, no timer) and makes a write-through create
//! one of those things; a wake-up it forgot leaves the driver asleep for good, and `within`
//! fails the test.
#![cfg(unix)]

use crate::common;

use std::io::{BufRead, BufReader, PipeReader, PipeWriter, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;
use acp_blocking::{Agent, AgentOptions, ClientConnection, ClientOptions, Error, RequestContext};
use common::within;
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);
/// Long enough for a driver to go back to sleep in `poll(2)`.
const NAP: Duration = Duration::from_millis(50);

/// An agent whose handlers take a nap before answering; extension requests are counted.
#[derive(Default)]
struct Sleepy {
    handled: AtomicU64,
}

impl Agent for Sleepy {
    fn initialize(&self, _: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        thread::sleep(NAP);
        Ok(InitializeResponse::new(ProtocolVersion::V1))
    }

    fn new_session(&self, _: NewSessionRequest, _: &RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("s"))
    }

    fn prompt(&self, _: PromptRequest, _: &acp_blocking::PromptContext) -> Result<PromptResponse, RpcError> {
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    fn ext_method(&self, _method: &str, params: Value, _: &RequestContext) -> Result<Value, RpcError> {
        thread::sleep(NAP);
        self.handled.fetch_add(1, Ordering::SeqCst);
        Ok(json!({"n": params["n"]}))
    }
}

/// What [`serve`] returns.
type Served = (Arc<Sleepy>, BufReader<PipeReader>, PipeWriter, JoinHandle<Result<(), Error>>);

/// Serves `Sleepy` with `serve_fds` over two fresh pipes; returns the agent, its output to
/// read (line by line), its input to write, and the serving thread.
fn serve(options: AgentOptions) -> Served {
    let (agent_in, to_agent) = std::io::pipe().unwrap();
    let (from_agent, agent_out) = std::io::pipe().unwrap();
    let agent = Arc::new(Sleepy::default());
    let served = agent.clone();
    let server = thread::spawn(move || acp_blocking::serve_fds(served, agent_in, agent_out, options));
    (agent, BufReader::new(from_agent), to_agent, server)
}

fn read_frame(from: &mut BufReader<PipeReader>) -> Value {
    let mut line = String::new();
    assert!(from.read_line(&mut line).unwrap() > 0, "the end of the stream");
    serde_json::from_str(&line).unwrap()
}

fn frame(id: u64, method: &str, params: Value) -> String {
    format!("{}\n", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// Rule 2: a request's deadline is a timer earlier than the none the client's driver sleeps
/// to; the calling thread writes the request and must wake the driver to time it out.
#[test]
fn a_calls_deadline_wakes_a_driver_asleep_without_a_timer() {
    within(LIMIT, || {
        let (agent_in, client_out) = std::io::pipe().unwrap();
        let (client_in, mut to_client) = std::io::pipe().unwrap();
        let conn = ClientConnection::connect_fds((), client_in, client_out, ClientOptions::default()).unwrap();
        // The agent is this thread: it answers `initialize` and then never answers again.
        let mut from_client = BufReader::new(agent_in);
        let peer = thread::spawn(move || {
            let init = read_frame(&mut from_client);
            let answer = json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": 1}});
            writeln!(to_client, "{answer}").unwrap();
            let call = read_frame(&mut from_client);
            assert_eq!(call["method"], "_never");
            let cancel = read_frame(&mut from_client);
            assert_eq!(cancel["method"], "$/cancel_request", "{cancel}");
            assert_eq!(cancel["params"]["requestId"], call["id"]);
            (from_client, to_client)
        });
        conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).unwrap();
        thread::sleep(NAP);
        let timed = conn.with_timeout(Duration::from_millis(100)).ext_method("_never", json!({}));
        assert!(matches!(timed, Err(Error::TimedOut)), "{timed:?}");
        let _ends = peer.join().unwrap();
        drop(conn);
    });
}

/// Rule 3: a request that arrives while the agent's `initialize` answer is pending is held by
/// the core and released by that answer, which the handler's thread writes itself: it must
/// wake the driver to dispatch the request.
#[test]
fn a_request_held_behind_initialize_is_dispatched_once_the_handler_answers() {
    within(LIMIT, || {
        let (_agent, mut from_agent, mut to_agent, server) = serve(AgentOptions::default());
        let both = frame(0, "initialize", json!({"protocolVersion": 1}))
            + &frame(1, "session/new", json!({"cwd": "/", "mcpServers": []}));
        to_agent.write_all(both.as_bytes()).unwrap();
        let init = read_frame(&mut from_agent);
        assert_eq!(init["id"], 0, "{init}");
        let session = read_frame(&mut from_agent);
        assert_eq!((&session["id"], &session["result"]["sessionId"]), (&json!(1), &json!("s")), "{session}");
        drop(to_agent);
        assert!(server.join().unwrap().is_ok());
    });
}

/// Rule 4: with `max_inbound` requests in flight and nothing awaited from the peer, the core
/// stops taking input and the driver holds the rest of what it read. An answer, written by
/// its handler's thread, makes room: it must wake the driver to feed the rest.
#[test]
fn input_paused_at_max_inbound_goes_on_when_a_handler_answers() {
    within(LIMIT, || {
        const REQUESTS: u64 = 12;
        let mut options = AgentOptions::default();
        options.config.max_inbound = 2;
        let (agent, mut from_agent, mut to_agent, server) = serve(options);
        to_agent.write_all(frame(0, "initialize", json!({"protocolVersion": 1})).as_bytes()).unwrap();
        assert_eq!(read_frame(&mut from_agent)["id"], 0);
        // One write: the driver reads them in one chunk and holds what the core does not take.
        let burst: String = (1..=REQUESTS).map(|n| frame(n, "_work", json!({"n": n}))).collect();
        to_agent.write_all(burst.as_bytes()).unwrap();
        let mut answered: Vec<u64> =
            (0..REQUESTS).map(|_| read_frame(&mut from_agent)["id"].as_u64().unwrap()).collect();
        answered.sort_unstable();
        assert_eq!(answered, (1..=REQUESTS).collect::<Vec<_>>());
        assert_eq!(agent.handled.load(Ordering::SeqCst), REQUESTS);
        drop(to_agent);
        assert!(server.join().unwrap().is_ok());
    });
}
