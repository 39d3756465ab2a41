//! Scenarios with both peers in this process, connected by real OS pipes (`std::io::pipe`).

use crate::common;

use std::io::{BufRead, BufReader, PipeReader, PipeWriter, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use acp_blocking::acp_proto::types::*;
use acp_blocking::acp_proto::{CloseReason, Config, RpcError};
use acp_blocking::{
    Agent, AgentOptions, Client, ClientConnection, ClientContext, ClientOptions, Error, PromptContext, RequestContext,
};
use common::*;
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);

/// An agent for these tests: counts the updates it sent, and its prompt does what the text says.
#[derive(Default)]
struct TestAgent {
    sent: AtomicU64,
    /// Handlers running now, and the most seen at once.
    running: AtomicUsize,
    peak: AtomicUsize,
    /// Whether a cancellable handler saw its cancellation.
    saw_cancel: AtomicBool,
    /// Results of the agent's `fs/read_text_file` calls.
    reads: Mutex<Vec<Result<String, String>>>,
    /// Extension notifications received, in order.
    notes: Mutex<Vec<Value>>,
}

impl Agent for TestAgent {
    fn ext_notification(&self, method: &str, params: Value) {
        assert_eq!(method, "_note");
        self.notes.lock().unwrap().push(params);
    }

    fn initialize(&self, _: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        let mut response = InitializeResponse::new(ProtocolVersion::V1);
        response.agent_capabilities.load_session = true;
        Ok(response)
    }

    fn new_session(&self, _: NewSessionRequest, _: &RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("s"))
    }

    fn load_session(&self, request: LoadSessionRequest, cx: &RequestContext) -> Result<LoadSessionResponse, RpcError> {
        for i in 0..100 {
            let chunk = ContentChunk::new(ContentBlock::text(i.to_string()));
            cx.send_session_update(request.session_id.clone(), SessionUpdate::UserMessageChunk(chunk))?;
        }
        Ok(LoadSessionResponse::default())
    }

    fn prompt(&self, request: PromptRequest, cx: &PromptContext) -> Result<PromptResponse, RpcError> {
        let ContentBlock::Text(text) = &request.prompt[0] else { unreachable!() };
        let mut words = text.text.split_whitespace();
        match words.next() {
            Some("storm") => {
                let n: u64 = words.next().unwrap().parse().unwrap();
                for i in 0..n {
                    cx.send_text(i.to_string())?;
                    self.sent.fetch_add(1, Ordering::SeqCst);
                }
            }
            Some("interleave") => {
                for i in 0..20 {
                    cx.send_text(format!("u{i}"))?;
                    cx.read_text_file(format!("/r{i}"), None, None)?;
                }
            }
            Some("read") => {
                for _ in 0..2 {
                    let result = cx.read_text_file("/f", None, None).map_err(|e| e.to_string());
                    self.reads.lock().unwrap().push(result);
                }
            }
            _ => {}
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    fn ext_method(&self, method: &str, params: Value, cx: &RequestContext) -> Result<Value, RpcError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        let ms = params["ms"].as_u64().unwrap_or(0);
        if method == "_cancellable" {
            let cancelled = cx.cancellation().wait_timeout(Duration::from_millis(ms));
            self.saw_cancel.store(cancelled, Ordering::SeqCst);
        } else {
            thread::sleep(Duration::from_millis(ms));
        }
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(json!({}))
    }
}

/// Serves `agent` on one end of two pipes; returns the other ends (the agent's output to read,
/// its input to write) and the serving thread.
fn serve_on_pipes(
    agent: Arc<TestAgent>,
    options: AgentOptions,
) -> (PipeReader, PipeWriter, JoinHandle<Result<(), Error>>) {
    let (agent_in, to_agent) = std::io::pipe().unwrap();
    let (from_agent, agent_out) = std::io::pipe().unwrap();
    let server = thread::spawn(move || acp_blocking::serve_with(agent, agent_in, agent_out, options));
    (from_agent, to_agent, server)
}

/// A client connected to an in-process `TestAgent`.
fn connect<C: Client>(
    client: C,
    agent: Arc<TestAgent>,
    agent_options: AgentOptions,
    options: ClientOptions,
) -> (ClientConnection, JoinHandle<Result<(), Error>>) {
    let (from_agent, to_agent, server) = serve_on_pipes(agent, agent_options);
    (ClientConnection::connect(client, from_agent, to_agent, options).unwrap(), server)
}

/// Waits until `value` stops changing for `quiet`, and returns it.
fn plateau(value: impl Fn() -> u64, quiet: Duration) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut last = value();
    let mut since = Instant::now();
    while Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
        let now = value();
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() >= quiet {
            break;
        }
    }
    last
}

fn small_budget() -> Config {
    let mut config = Config::default();
    config.outbound_budget = 64 * 1024;
    config
}

#[test]
fn initialize_to_a_silent_peer_times_out_and_close_does_not_hang() {
    within(LIMIT, || {
        let (peer_in, client_out) = std::io::pipe().unwrap();
        let (client_in, _peer_out) = std::io::pipe().unwrap();
        // The peer reads everything and never answers.
        thread::spawn(move || std::io::copy(&mut { peer_in }, &mut std::io::sink()));
        let conn = ClientConnection::connect((), client_in, client_out, ClientOptions::default()).unwrap();
        let started = Instant::now();
        let init =
            conn.with_timeout(Duration::from_millis(300)).initialize(InitializeRequest::new(ProtocolVersion::V1));
        assert!(matches!(init, Err(Error::TimedOut)), "{init:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
        conn.close().unwrap();
        assert!(started.elapsed() < Duration::from_secs(5), "close took {:?}", started.elapsed());
    });
}

#[test]
fn a_handler_that_outpaces_the_pipe_blocks_on_the_outbound_budget() {
    within(LIMIT, || {
        const UPDATES: u64 = 30_000;
        let agent = Arc::new(TestAgent::default());
        let mut options = AgentOptions::default();
        options.config = small_budget();
        let (from_agent, mut to_agent, server) = serve_on_pipes(agent.clone(), options);
        let mut from_agent = BufReader::new(from_agent);

        // A hand-written client that stops reading once the prompt is sent.
        let send = |w: &mut PipeWriter, frame: Value| writeln!(w, "{frame}").unwrap();
        send(
            &mut to_agent,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        );
        send(
            &mut to_agent,
            json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
        );
        let mut line = String::new();
        for _ in 0..2 {
            line.clear();
            from_agent.read_line(&mut line).unwrap();
        }
        assert!(line.contains(r#""id":1"#) && line.contains(r#""sessionId":"s""#), "{line}");
        let prompt = json!({"sessionId": "s", "prompt": [{"type": "text", "text": format!("storm {UPDATES}")}]});
        send(&mut to_agent, json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}));

        // The handler blocks: what it sent fits in the budget, the writer's batch and the pipe.
        let stuck = plateau(|| agent.sent.load(Ordering::SeqCst), Duration::from_millis(400));
        let frame_len = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"12345"}}}}"#.len() as u64;
        assert!(stuck > 0, "the handler never started");
        assert!(stuck * frame_len < 4 * 64 * 1024 + (1 << 20), "{stuck} updates went out with nobody reading");
        assert!(stuck < UPDATES / 3, "{stuck} of {UPDATES} updates went out with nobody reading");

        // Reading again unblocks it; every update arrives, in order, before the response.
        let mut next = 0u64;
        loop {
            line.clear();
            assert!(from_agent.read_line(&mut line).unwrap() > 0, "the agent's output ended early");
            let frame: Value = serde_json::from_str(&line).unwrap();
            if frame["id"] == 2 {
                assert_eq!(frame["result"]["stopReason"], "end_turn");
                break;
            }
            assert_eq!(frame["params"]["update"]["content"]["text"], next.to_string());
            next += 1;
        }
        assert_eq!(next, UPDATES);
        drop(to_agent);
        assert!(server.join().unwrap().is_ok(), "serve ends cleanly when its input ends");
    });
}

#[test]
fn a_slow_consumer_stops_the_client_reading_and_loses_nothing() {
    within(LIMIT, || {
        const UPDATES: u64 = 30_000;
        let agent = Arc::new(TestAgent::default());
        let mut agent_options = AgentOptions::default();
        agent_options.config = small_budget();
        let mut options = ClientOptions::default();
        options.max_buffered = 64;
        let (conn, _server) = connect((), agent.clone(), agent_options, options);
        handshake(&conn, false);
        let mut turn = conn.prompt(prompt(&"s".into(), &format!("storm {UPDATES}"))).unwrap();

        // Nobody reads the turn: the client stops reading, the agent's handler blocks.
        let stuck = plateau(|| agent.sent.load(Ordering::SeqCst), Duration::from_millis(400));
        assert!(stuck > 0 && stuck < UPDATES / 3, "{stuck} of {UPDATES} updates sent with nobody reading");

        let mut next = 0u64;
        for update in &mut turn {
            assert_eq!(text(&update), next.to_string());
            next += 1;
        }
        assert_eq!(next, UPDATES);
        assert_eq!(turn.finish().unwrap(), StopReason::EndTurn);
    });
}

/// A client whose file handler panics on the first call only.
#[derive(Default)]
struct PanicsOnce {
    calls: AtomicUsize,
}

impl Client for PanicsOnce {
    fn read_text_file(&self, _: ReadTextFileRequest, _: &ClientContext) -> Result<ReadTextFileResponse, RpcError> {
        if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
            panic!("the client's file handler panics (expected by the test)");
        }
        Ok(ReadTextFileResponse::new("contents"))
    }
}

#[test]
fn a_panicking_client_handler_answers_internal_error_for_that_request_only() {
    within(LIMIT, || {
        let agent = Arc::new(TestAgent::default());
        let (conn, _server) =
            connect(PanicsOnce::default(), agent.clone(), AgentOptions::default(), ClientOptions::default());
        handshake(&conn, true);
        let stop = conn.prompt(prompt(&"s".into(), "read")).unwrap().finish().unwrap();
        assert_eq!(stop, StopReason::EndTurn);
        let reads = agent.reads.lock().unwrap().clone();
        assert_eq!(reads.len(), 2);
        assert!(reads[0].as_ref().unwrap_err().contains("-32603"), "{reads:?}");
        assert_eq!(reads[1], Ok("contents".to_owned()));
    });
}

#[test]
fn a_timed_out_request_cancels_the_agent_handler() {
    within(LIMIT, || {
        let agent = Arc::new(TestAgent::default());
        let (conn, _server) = connect((), agent.clone(), AgentOptions::default(), ClientOptions::default());
        handshake(&conn, false);
        let result = conn.with_timeout(Duration::from_millis(100)).ext_method("_cancellable", json!({"ms": 10_000}));
        assert!(matches!(result, Err(Error::TimedOut)), "{result:?}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !agent.saw_cancel.load(Ordering::SeqCst) {
            assert!(Instant::now() < deadline, "the handler never saw the $/cancel_request");
            thread::sleep(Duration::from_millis(5));
        }
    });
}

#[test]
fn handlers_beyond_the_pool_bound_queue_and_all_complete() {
    within(LIMIT, || {
        let agent = Arc::new(TestAgent::default());
        let mut agent_options = AgentOptions::default();
        agent_options.max_handlers = 2;
        let (conn, _server) = connect((), agent.clone(), agent_options, ClientOptions::default());
        handshake(&conn, false);
        thread::scope(|scope| {
            let calls: Vec<_> = (0..6).map(|_| scope.spawn(|| conn.ext_method("_sleep", json!({"ms": 100})))).collect();
            for call in calls {
                assert_eq!(call.join().unwrap().unwrap(), json!({}));
            }
        });
        assert_eq!(agent.peak.load(Ordering::SeqCst), 2, "at most two handlers ran at once, and two did");
    });
}

#[test]
fn updates_outside_a_turn_reach_the_client_handler_in_order() {
    within(LIMIT, || {
        let client = Arc::new(TestClient::default());
        let agent = Arc::new(TestAgent::default());
        let (conn, _server) = connect(client.clone(), agent, AgentOptions::default(), ClientOptions::default());
        handshake(&conn, false);
        conn.load_session(LoadSessionRequest::new("old", "/", vec![])).unwrap();
        // The replay precedes the response on the wire, but runs on the notification thread.
        let deadline = Instant::now() + Duration::from_secs(5);
        while client.outside.lock().unwrap().len() < 100 {
            assert!(Instant::now() < deadline, "the replay did not arrive");
            thread::sleep(Duration::from_millis(5));
        }
        let replay: Vec<String> = client
            .outside
            .lock()
            .unwrap()
            .iter()
            .map(|n| match &n.update {
                SessionUpdate::UserMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) => t.text.clone(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(replay, (0..100).map(|i| i.to_string()).collect::<Vec<_>>());
        assert!(client.outside.lock().unwrap().iter().all(|n| n.session_id.as_str() == "old"));
    });
}

#[test]
fn serve_returns_once_the_input_ends_and_drops_its_output() {
    within(LIMIT, || {
        let (mut from_agent, to_agent, server) =
            serve_on_pipes(Arc::new(TestAgent::default()), AgentOptions::default());
        drop(to_agent);
        assert!(server.join().unwrap().is_ok());
        let mut rest = Vec::new();
        from_agent.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "nothing was asked, nothing is written");
    });
}

#[test]
fn extension_notifications_reach_the_agent_in_order_even_when_the_core_takes_input_piecemeal() {
    within(LIMIT, || {
        let agent = Arc::new(TestAgent::default());
        // Two queued events stop the agent's core from consuming a chunk: the driver must feed
        // the rest again after dispatching, losing nothing.
        let mut agent_options = AgentOptions::default();
        agent_options.config.max_events = 2;
        let (conn, _server) = connect((), agent.clone(), agent_options, ClientOptions::default());
        handshake(&conn, false);
        for i in 0..200 {
            conn.ext_notification("_note", json!({ "i": i })).unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while agent.notes.lock().unwrap().len() < 200 {
            assert!(Instant::now() < deadline, "the notifications did not all arrive");
            thread::sleep(Duration::from_millis(5));
        }
        let order: Vec<u64> = agent.notes.lock().unwrap().iter().map(|n| n["i"].as_u64().unwrap()).collect();
        assert_eq!(order, (0..200).collect::<Vec<_>>());
    });
}

#[test]
fn an_agent_choosing_an_unsupported_protocol_version_is_refused() {
    within(LIMIT, || {
        let (peer_in, client_out) = std::io::pipe().unwrap();
        let (client_in, mut peer_out) = std::io::pipe().unwrap();
        // A fake agent that answers `initialize` with protocol version 2.
        thread::spawn(move || {
            let mut line = String::new();
            BufReader::new(peer_in).read_line(&mut line).unwrap();
            let request: Value = serde_json::from_str(&line).unwrap();
            let response = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"protocolVersion": 2}});
            writeln!(peer_out, "{response}").unwrap();
            thread::sleep(Duration::from_secs(2));
        });
        let conn = ClientConnection::connect((), client_in, client_out, ClientOptions::default()).unwrap();
        let init = conn.initialize(InitializeRequest::new(ProtocolVersion::V1));
        assert!(matches!(init, Err(Error::UnsupportedProtocolVersion(ProtocolVersion(2)))), "{init:?}");
        assert!(matches!(conn.new_session(NewSessionRequest::new("/", vec![])), Err(Error::ConnectionClosed)));
        let reason = conn.close_reason();
        assert!(
            matches!(reason, Some(CloseReason::UnsupportedProtocolVersion { version: ProtocolVersion(2) })),
            "{reason:?}"
        );
    });
}

/// Logs the paths it is asked to read, in order.
struct OrderLog(Arc<Mutex<Vec<String>>>);

impl Client for OrderLog {
    fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        _: &ClientContext,
    ) -> Result<ReadTextFileResponse, RpcError> {
        self.0.lock().unwrap().push(request.path.trim_start_matches('/').to_owned());
        Ok(ReadTextFileResponse::new("x"))
    }
}

/// The `interleave` turn of a client that advertises file reads and logs them: the read log,
/// the turn, and what keeps the connection alive.
type Interleaved =
    (Arc<Mutex<Vec<String>>>, acp_blocking::PromptTurn, (ClientConnection, JoinHandle<Result<(), Error>>));

fn interleaved_turn() -> Interleaved {
    let log = Arc::new(Mutex::new(Vec::new()));
    let agent = Arc::new(TestAgent::default());
    let (conn, server) = connect(OrderLog(log.clone()), agent, AgentOptions::default(), ClientOptions::default());
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.fs.read_text_file = true;
    conn.initialize(init).unwrap();
    let session = conn.new_session(NewSessionRequest::new("/tmp", vec![])).unwrap().session_id;
    let turn = conn.prompt(prompt(&session, "interleave")).unwrap();
    (log, turn, (conn, server))
}

#[test]
fn agent_requests_of_a_turn_reach_the_client_after_the_updates_before_them() {
    let (log, mut turn, _conn) = interleaved_turn();
    // The agent sends update i, then asks to read r{i}. The read handler of r{i} starts only
    // once the reader is done with update i (the next test checks that part), so whenever the
    // reader has taken k updates, at most k reads have run, however long it dawdles before
    // taking the next one.
    let mut taken = Vec::new();
    loop {
        thread::sleep(Duration::from_millis(3));
        let reads = log.lock().unwrap().clone();
        assert!(reads.len() <= taken.len(), "reads {reads:?} ran before updates {taken:?} were taken");
        match turn.next_update() {
            Some(update) => taken.push(text(&update)),
            None => break,
        }
    }
    assert_eq!(turn.finish().unwrap(), StopReason::EndTurn);
    let updates: Vec<String> = (0..20).map(|i| format!("u{i}")).collect();
    let reads: Vec<String> = (0..20).map(|i| format!("r{i}")).collect();
    assert_eq!(taken, updates);
    assert_eq!(*log.lock().unwrap(), reads);
}

#[test]
fn agent_requests_of_a_turn_wait_until_next_update_then_has_handled_the_updates_before_them() {
    let (log, mut turn, _conn) = interleaved_turn();
    // The agent sends update i, then asks to read r{i}. While `next_update_then` still handles
    // update i, r{i} must not have run: at most the i reads of the updates handled before.
    let mut done = 0;
    while turn
        .next_update_then(|update| {
            assert_eq!(text(&update), format!("u{done}"));
            thread::sleep(Duration::from_millis(3));
            let reads = log.lock().unwrap().clone();
            assert!(reads.len() <= done, "read {reads:?} ran while the reader still handled u{done}");
        })
        .is_some()
    {
        done += 1;
    }
    assert_eq!(done, 20);
    assert_eq!(turn.finish().unwrap(), StopReason::EndTurn);
    let reads: Vec<String> = (0..20).map(|i| format!("r{i}")).collect();
    assert_eq!(*log.lock().unwrap(), reads);
}
