//! The driver that reads and writes pipes itself with `poll(2)` (`serve_fds`,
//! `ClientConnection::connect_fds`; `serve_stdio` and `ClientConnection::spawn` use it too):
//! its own rules over real OS pipes.
#![cfg(unix)]

use crate::common;

use std::io::{BufRead, BufReader, ErrorKind, PipeReader, PipeWriter, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;
use acp_blocking::{Agent, AgentOptions, ClientConnection, ClientOptions, Error, PromptContext, RequestContext};
use common::within;
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);

/// Echoes extension requests back (with `pad` bytes of padding), counting them; a prompt
/// `N` streams N numbered updates.
#[derive(Default)]
struct Echo {
    handled: AtomicU64,
    sent: AtomicU64,
}

impl Agent for Echo {
    fn initialize(&self, _: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(ProtocolVersion::V1))
    }

    fn new_session(&self, _: NewSessionRequest, _: &RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("s"))
    }

    fn prompt(&self, request: PromptRequest, cx: &PromptContext) -> Result<PromptResponse, RpcError> {
        let ContentBlock::Text(text) = &request.prompt[0] else { unreachable!() };
        let n: u64 = text.text.parse().unwrap();
        for i in 0..n {
            cx.send_text(i.to_string())?;
            self.sent.fetch_add(1, Ordering::SeqCst);
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    fn ext_method(&self, _method: &str, params: Value, _: &RequestContext) -> Result<Value, RpcError> {
        self.handled.fetch_add(1, Ordering::SeqCst);
        let pad = params["pad"].as_u64().unwrap_or(0) as usize;
        Ok(json!({"n": params["n"], "pad": "x".repeat(pad)}))
    }
}

/// A duplicate of a pipe end, to look at its mode after the connection let go of it. While a
/// probe of a write end lives, the reader sees no end of the stream: drop it first.
fn probe(fd: &impl AsFd) -> OwnedFd {
    fd.as_fd().try_clone_to_owned().unwrap()
}

fn nonblocking(fd: &OwnedFd) -> bool {
    acp_runtime::fd::is_nonblocking(fd.as_fd()).unwrap()
}

/// What [`serve_echo`] returns.
type Served = (Arc<Echo>, PipeReader, PipeWriter, [OwnedFd; 2], JoinHandle<Result<(), Error>>);

/// Serves an `Echo` with `serve_fds` on two fresh pipes; returns the agent, the client's ends
/// (the agent's output to read, its input to write), probes of the agent's ends, and the
/// serving thread.
fn serve_echo(options: AgentOptions) -> Served {
    let (agent_in, to_agent) = std::io::pipe().unwrap();
    let (from_agent, agent_out) = std::io::pipe().unwrap();
    let probes = [probe(&agent_in), probe(&agent_out)];
    let agent = Arc::new(Echo::default());
    let served = agent.clone();
    let server = thread::spawn(move || acp_blocking::serve_fds(served, agent_in, agent_out, options));
    (agent, from_agent, to_agent, probes, server)
}

fn send(w: &mut impl Write, frame: Value) {
    writeln!(w, "{frame}").unwrap();
}

fn initialize(to_agent: &mut PipeWriter, from_agent: &mut BufReader<PipeReader>) {
    send(to_agent, json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}));
    let mut line = String::new();
    from_agent.read_line(&mut line).unwrap();
    assert!(line.contains(r#""id":0"#) && line.contains("protocolVersion"), "{line}");
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

#[test]
fn a_peer_that_never_reads_keeps_the_driver_bounded_and_everything_is_answered_once_it_reads() {
    within(LIMIT, || {
        const REQUESTS: u64 = 5_000;
        const PAD: u64 = 1_000;
        let mut options = AgentOptions::default();
        options.config.outbound_budget = 64 * 1024;
        let (agent, from_agent, mut to_agent, probes, server) = serve_echo(options);
        let mut from_agent = BufReader::new(from_agent);
        initialize(&mut to_agent, &mut from_agent);
        assert!(probes.iter().all(nonblocking), "serving over pipes: both ends non-blocking");

        // 5 MB of answers asked for; nobody reads them for now. The writing thread blocks
        // once the agent stops reading.
        let writer = thread::spawn(move || {
            for n in 1..=REQUESTS {
                let params = json!({"n": n, "pad": PAD});
                send(&mut to_agent, json!({"jsonrpc": "2.0", "id": n, "method": "_echo", "params": params}));
            }
            to_agent
        });
        let stuck = plateau(|| agent.handled.load(Ordering::SeqCst), Duration::from_millis(400));
        assert!(stuck > 0, "no request was handled");
        // What was answered fits the budget, one answer per pool thread, the batch being
        // written and the pipe: a small fraction of what was asked.
        assert!(stuck < REQUESTS / 4, "{stuck} of {REQUESTS} requests handled with nobody reading");
        assert!(!writer.is_finished(), "the agent kept reading while nobody read its answers");

        // Reading again: every request is answered, exactly once.
        let mut seen = vec![false; REQUESTS as usize + 1];
        let mut line = String::new();
        for _ in 0..REQUESTS {
            line.clear();
            assert!(from_agent.read_line(&mut line).unwrap() > 0, "the agent's output ended early");
            let frame: Value = serde_json::from_str(&line).unwrap();
            let n = frame["id"].as_u64().unwrap();
            assert_eq!(frame["result"]["n"], n);
            assert!(!std::mem::replace(&mut seen[n as usize], true), "{n} answered twice");
        }
        assert!(seen[1..].iter().all(|&s| s));
        drop(writer.join().unwrap());
        assert!(server.join().unwrap().is_ok(), "serve ends cleanly when its input ends");
        assert!(probes.iter().all(|fd| !nonblocking(fd)), "blocking mode restored when serve returned");
    });
}

#[test]
fn eof_in_the_middle_of_a_frame_ends_the_connection_without_a_hang() {
    within(LIMIT, || {
        let (agent, from_agent, mut to_agent, probes, server) = serve_echo(AgentOptions::default());
        let mut from_agent = BufReader::new(from_agent);
        initialize(&mut to_agent, &mut from_agent);
        to_agent.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"_echo","par"#).unwrap();
        drop(to_agent);
        assert!(server.join().unwrap().is_ok(), "the end of the input ends serve");
        assert!(probes.iter().all(|fd| !nonblocking(fd)), "blocking mode restored");
        drop(probes);
        let mut rest = String::new();
        from_agent.read_to_string(&mut rest).unwrap();
        assert!(!rest.contains(r#""id":1"#), "the cut frame was not handled: {rest}");
        assert_eq!(agent.handled.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn a_peer_that_closes_its_read_end_ends_the_connection_with_broken_pipe() {
    within(LIMIT, || {
        let (_agent, from_agent, mut to_agent, probes, server) = serve_echo(AgentOptions::default());
        // The client goes away before it reads anything: the answer meets a closed pipe
        // (EPIPE; Rust ignores SIGPIPE, so this process lives on to see the error).
        drop(from_agent);
        send(
            &mut to_agent,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        );
        let result = server.join().unwrap();
        assert!(
            matches!(&result, Err(Error::Io(e)) if e.kind() == ErrorKind::BrokenPipe),
            "serve ends with the write's error: {result:?}"
        );
        assert!(probes.iter().all(|fd| !nonblocking(fd)), "blocking mode restored after the failure");
    });
}

#[test]
fn a_client_over_pipes_answers_many_threads_and_restores_blocking_mode_when_dropped() {
    within(LIMIT, || {
        const THREADS: u64 = 8;
        const EACH: u64 = 300;
        let (agent_in, client_out) = std::io::pipe().unwrap();
        let (client_in, agent_out) = std::io::pipe().unwrap();
        let probes = [probe(&client_in), probe(&client_out)];
        let agent = Arc::new(Echo::default());
        let served = agent.clone();
        let server =
            thread::spawn(move || acp_blocking::serve_fds(served, agent_in, agent_out, AgentOptions::default()));
        let conn =
            Arc::new(ClientConnection::connect_fds((), client_in, client_out, ClientOptions::default()).unwrap());
        assert!(probes.iter().all(nonblocking), "the client's pipe ends are non-blocking while it runs");
        conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).unwrap();
        // Every call wakes the driver from another thread; a lost wake-up would leave a call
        // waiting for good (and `within` would fail the test).
        let callers: Vec<_> = (0..THREADS)
            .map(|t| {
                let conn = conn.clone();
                thread::spawn(move || {
                    for i in 0..EACH {
                        let n = t * EACH + i;
                        let answer = conn.ext_method("_echo", json!({"n": n})).unwrap();
                        assert_eq!(answer["n"], n);
                    }
                })
            })
            .collect();
        for caller in callers {
            caller.join().unwrap();
        }
        assert_eq!(agent.handled.load(Ordering::SeqCst), THREADS * EACH);
        drop(Arc::into_inner(conn).expect("the callers are done"));
        assert!(probes.iter().all(|fd| !nonblocking(fd)), "blocking mode restored when the connection dropped");
        drop(probes);
        assert!(server.join().unwrap().is_ok(), "the agent saw its input end");
    });
}

#[test]
fn descriptors_poll_cannot_wait_for_are_served_by_threads() {
    within(LIMIT, || {
        // `/dev/null` as input: a character device, read by the reader thread (at once: EOF).
        let null = std::fs::File::open("/dev/null").unwrap();
        let (mut from_agent, agent_out) = std::io::pipe().unwrap();
        let out_probe = probe(&agent_out);
        let served = acp_blocking::serve_fds(Echo::default(), null, agent_out, AgentOptions::default());
        assert!(served.is_ok(), "{served:?}");
        assert!(!nonblocking(&out_probe), "the pipe was never made non-blocking");
        drop(out_probe);
        let mut rest = Vec::new();
        from_agent.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
    });
}

#[test]
fn a_slow_reader_of_a_turn_stops_the_client_reading_and_loses_nothing() {
    within(LIMIT, || {
        const UPDATES: u64 = 30_000;
        let (agent_in, client_out) = std::io::pipe().unwrap();
        let (client_in, agent_out) = std::io::pipe().unwrap();
        let agent = Arc::new(Echo::default());
        let served = agent.clone();
        let server = thread::spawn(move || {
            let mut options = AgentOptions::default();
            options.config.outbound_budget = 64 * 1024;
            acp_blocking::serve_fds(served, agent_in, agent_out, options)
        });
        let mut options = ClientOptions::default();
        options.max_buffered = 64;
        let conn = ClientConnection::connect_fds((), client_in, client_out, options).unwrap();
        conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).unwrap();
        let session = conn.new_session(NewSessionRequest::new("/", vec![])).unwrap().session_id;
        let mut turn = conn.prompt(PromptRequest::new(session, vec![UPDATES.to_string().into()])).unwrap();
        // Nobody takes the updates: the client stops reading once 64 wait, and the agent's
        // handler stops on its outbound budget.
        let stuck = plateau(|| agent.sent.load(Ordering::SeqCst), Duration::from_millis(400));
        assert!(stuck < UPDATES / 3, "{stuck} of {UPDATES} updates sent with nobody taking them");
        // Taking them wakes the client's driver (through its wake-up descriptor) each time
        // the backlog has room again: every update arrives, in order.
        let mut next = 0u64;
        for update in &mut turn {
            assert_eq!(common::text(&update), next.to_string());
            next += 1;
        }
        assert_eq!(next, UPDATES);
        assert_eq!(turn.finish().unwrap(), StopReason::EndTurn);
        conn.close().unwrap();
        assert!(server.join().unwrap().is_ok());
    });
}
