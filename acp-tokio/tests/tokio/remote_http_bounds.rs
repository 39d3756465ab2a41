//! The SSE streams of a Streamable HTTP connection are bounded in bytes (issue 28, item 2):
//! streams nobody opens fill up to the connection's byte budget, not to a message count, and
//! then the agent's output waits until the connection ends, with its reason told to the
//! backend; a stream that is read gets everything through a small budget. A POST whose client
//! hangs up while its message is half written to an agent that reads slowly still leaves a
//! whole line (the next message does not land in the middle of it).

use crate::common;

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_tokio::AgentOptions;
#[cfg(feature = "ws")]
use acp_tokio::remote::Direct;
use acp_tokio::remote::{AgentBackend, Backend, BoxFuture, Endpoint, WsServerOptions, serve_ws};
use common::EchoAgent;
use common::raw_http::*;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// Echo agents, and the reasons the server gave for the connections it ended.
struct Told {
    agents: AgentBackend<fn() -> EchoAgent>,
    reasons: Arc<Mutex<Vec<String>>>,
}

impl Backend for Told {
    fn open(&self, connection_id: &str) -> BoxFuture<'_, io::Result<Endpoint>> {
        self.agents.open(connection_id)
    }
    #[cfg(feature = "ws")]
    fn direct(&self, connection_id: &str) -> Option<Direct> {
        self.agents.direct(connection_id)
    }
    fn ending(&self, _connection_id: &str, reason: &str) {
        self.reasons.lock().unwrap().push(reason.to_owned());
    }
}

async fn told_server(options: WsServerOptions) -> (String, Arc<Mutex<Vec<String>>>, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let reasons = Arc::new(Mutex::new(Vec::new()));
    let agents = AgentBackend::new(EchoAgent::default as fn() -> EchoAgent, AgentOptions::default());
    let backend = Told { agents, reasons: reasons.clone() };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve_ws(listener, backend, options, async move {
        let _ = stopped.await;
    }));
    (addr, reasons, stop)
}

fn prompt(id: u64, session: &str, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}})
}

#[tokio::test]
async fn session_streams_nobody_opens_fill_the_connections_byte_budget_then_the_connection_ends() {
    const SESSIONS: u64 = 10;
    // Ten echoes of 100 KB: ten messages per stream at most, far below any message count,
    // but 1 MB in all, four times the connection's budget.
    let options = WsServerOptions {
        connection_buffer: 256 << 10,
        stream_stall: Duration::from_secs(1),
        ..WsServerOptions::default()
    };
    let (addr, reasons, _stop) = told_server(options).await;
    let conn = initialize(&addr).await;
    let mut stream = Sse::open(&addr, &conn, None).await.expect("the connection stream");
    let mut sessions = Vec::new();
    for id in 0..SESSIONS {
        sessions.push(new_session(&addr, &[], &conn, &mut stream, 10 + id).await);
    }
    let text = "e".repeat(100_000);
    for (id, session) in (100..).zip(&sessions) {
        let message = prompt(id, session, &text);
        let posted = tokio::time::timeout(Duration::from_secs(30), post(&addr, Some(&conn), Some(session), &message));
        // Once the agent's input is full too, a POST waits; the connection's end answers it.
        if let Ok(answer) = posted.await {
            assert!([202, 404, 410].contains(&answer.status), "{answer:?}");
        }
    }
    let ended =
        tokio::time::timeout(Duration::from_secs(30), stream.next()).await.expect("the connection ends in time");
    assert!(ended.is_none(), "nothing but the end on the connection stream: {ended:?}");
    assert_eq!(*reasons.lock().unwrap(), ["stream_stalled"]);
    let after = post(&addr, Some(&conn), None, &json!({"jsonrpc": "2.0", "method": "_x/note"})).await;
    assert_eq!(after.status, 404, "{after:?}");
}

#[tokio::test]
async fn a_stream_that_is_read_gets_every_message_through_a_small_budget() {
    let options = WsServerOptions { stream_buffer: 4096, connection_buffer: 8192, ..WsServerOptions::default() };
    let (addr, reasons, _stop) = told_server(options).await;
    let conn = initialize(&addr).await;
    let mut stream = Sse::open(&addr, &conn, None).await.expect("the connection stream");
    let session = new_session(&addr, &[], &conn, &mut stream, 2).await;
    let mut session_stream = Sse::open(&addr, &conn, Some(&session)).await.expect("the session stream");
    assert_eq!(post(&addr, Some(&conn), Some(&session), &prompt(3, &session, "storm 500")).await.status, 202);
    let mut updates = 0;
    let answer = loop {
        let message = session_stream.next().await.expect("a message of the turn");
        if message["method"] == "session/update" {
            updates += 1;
        } else {
            break message;
        }
    };
    assert_eq!((updates, answer["result"]["stopReason"].clone()), (500, json!("end_turn")));
    assert!(reasons.lock().unwrap().is_empty());
}

/// An agent the test plays: each connection's input and output ends are handed to it.
struct Played(tokio::sync::mpsc::UnboundedSender<(tokio::io::DuplexStream, tokio::io::DuplexStream)>);

impl Backend for Played {
    fn open(&self, _connection_id: &str) -> BoxFuture<'_, io::Result<Endpoint>> {
        // A small pipe into the agent: a long message waits in the middle until it reads.
        let (writer, agent_input) = tokio::io::duplex(1024);
        let (agent_output, reader) = tokio::io::duplex(64 << 10);
        let _ = self.0.send((agent_input, agent_output));
        Box::pin(async move {
            Ok(Endpoint { reader: Box::new(reader), writer: Box::new(writer), finish: Box::pin(async {}) })
        })
    }
}

#[tokio::test]
async fn a_post_whose_client_hangs_up_mid_write_leaves_no_half_line_in_the_agents_input() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let (ends, mut opened) = tokio::sync::mpsc::unbounded_channel();
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve_ws(listener, Played(ends), WsServerOptions::default(), async move {
        let _ = stopped.await;
    }));
    // initialize, answered by the test as the agent.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}});
    let posted = tokio::spawn({
        let addr = addr.clone();
        async move { post(&addr, None, None, &init).await }
    });
    let (agent_input, mut agent_output) = opened.recv().await.expect("the connection's agent");
    let mut agent_input = tokio::io::BufReader::new(agent_input).lines();
    let first = agent_input.next_line().await.expect("read").expect("initialize");
    assert!(first.contains("initialize"), "{first}");
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}});
    agent_output.write_all(format!("{answer}\n").as_bytes()).await.expect("answer");
    let answer = posted.await.expect("the POST");
    let conn = answer.header("acp-connection-id").expect("a connection id").to_owned();
    // A 200 KB notification: its write stops after the pipe's 1 KB; its client hangs up.
    let long = json!({"jsonrpc": "2.0", "method": "_note", "params": {"text": "x".repeat(200_000)}});
    let hung_up = tokio::time::timeout(Duration::from_millis(500), post(&addr, Some(&conn), None, &long)).await;
    assert!(hung_up.is_err(), "the POST waits for the agent to read");
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A second message, then the agent reads: two whole lines, in order.
    let short = json!({"jsonrpc": "2.0", "method": "_note", "params": {"text": "short"}});
    let second = tokio::spawn({
        let (addr, short) = (addr.clone(), short.clone());
        async move { post(&addr, Some(&conn), None, &short).await }
    });
    for expected in [long, short] {
        let line = agent_input.next_line().await.expect("read").expect("a line");
        let message: Value = serde_json::from_str(&line).expect("a whole JSON line");
        assert_eq!(message, expected);
    }
    assert_eq!(second.await.expect("the second POST").status, 202);
}
