//! Flow control and handler flavours on tokio: backpressure on both sides, write batching, and
//! `!Send` handlers on a current-thread runtime in a `LocalSet`. The order of a turn's updates
//! and the agent's requests is a scenario of the suite (acp-scenarios's `tests/suite`), on every runtime.

use crate::common;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::types::*;
use acp_tokio::{
    Agent, AgentOptions, ClientConnection, ClientContext, ClientOptions, LocalAgent, LocalClient, PromptContext,
    RequestContext,
};
use common::echo::chunk;
use common::{chunk_text, handshake, prompt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Streams `updates` numbered chunks per prompt as fast as `send_update` lets it, and exposes
/// its progress and the prompt's context to the test.
#[derive(Clone, Default)]
struct Flood {
    updates: u64,
    sent: Arc<AtomicU64>,
    context: Arc<Mutex<Option<PromptContext>>>,
}

impl Agent for Flood {
    async fn initialize(&self, _: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(ProtocolVersion::V1))
    }

    async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("flood"))
    }

    async fn prompt(&self, _: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
        *self.context.lock().unwrap() = Some(cx.clone());
        for i in 0..self.updates {
            cx.send_update(chunk(i.to_string())).await?;
            self.sent.store(i + 1, Ordering::SeqCst);
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

fn small_budget() -> AgentOptions {
    let mut options = AgentOptions::default();
    options.config.outbound_budget = 16 * 1024;
    options
}

#[tokio::test(start_paused = true)]
async fn send_update_waits_while_the_peer_does_not_read() {
    let flood = Flood { updates: 5000, ..Flood::default() };
    let (ours, theirs) = tokio::io::duplex(4096);
    let (reader, writer) = tokio::io::split(ours);
    tokio::spawn(acp_tokio::serve(flood.clone(), reader, writer, small_budget()));
    let (reader, mut writer) = tokio::io::split(theirs);
    let mut lines = BufReader::new(reader).lines();
    for (id, method, params) in
        [(1, "initialize", json!({"protocolVersion": 1})), (2, "session/new", json!({"cwd": "/", "mcpServers": []}))]
    {
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writer.write_all(format!("{frame}\n").as_bytes()).await.expect("write");
        let _ = lines.next_line().await;
    }
    let frame = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": "flood", "prompt": [{"type": "text", "text": "go"}]}});
    writer.write_all(format!("{frame}\n").as_bytes()).await.expect("write");

    // The client reads nothing for a while: the agent's handler is held in `send_update`.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let sent = flood.sent.load(Ordering::SeqCst);
    assert!(sent > 0 && sent < 1000, "sent {sent} updates into a 4 KiB pipe and a 16 KiB budget");
    let stats = flood.context.lock().unwrap().as_ref().expect("the prompt ran").stats();
    assert_eq!(stats.held_sends, 1, "the handler's next update is held by the driver");
    assert!(stats.peak_memory_estimate <= 64 * 1024, "{stats:?}");
    assert!(stats.peak_buffered_bytes <= 32 * 1024, "{stats:?}");
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(flood.sent.load(Ordering::SeqCst), sent, "no progress while the peer does not read");

    // Reading again lets everything through, in order.
    for i in 0..5000u64 {
        let line = lines.next_line().await.expect("read").expect("a line");
        let update: Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(update["params"]["update"]["content"]["text"], i.to_string());
    }
    let response: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(response, json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}));
    assert_eq!(flood.sent.load(Ordering::SeqCst), 5000);
}

#[tokio::test(start_paused = true)]
async fn a_slow_turn_consumer_stops_the_reading_and_slows_the_agent() {
    let flood = Flood { updates: 20_000, ..Flood::default() };
    let (client_io, agent_io) = tokio::io::duplex(4096);
    let (reader, writer) = tokio::io::split(agent_io);
    tokio::spawn(acp_tokio::serve(flood.clone(), reader, writer, small_budget()));
    let (reader, writer) = tokio::io::split(client_io);
    let mut options = ClientOptions::default();
    options.turn_buffer = 16;
    let conn = ClientConnection::connect((), reader, writer, options);
    let session = handshake(&conn).await;
    let mut turn = conn.prompt(prompt(&session, "go")).await.expect("prompt accepted");

    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(turn.buffered(), 16, "the turn buffers up to its bound");
    // What is in flight is bounded by the buffers (the client core's event queue, the read
    // buffer, the pipe, the agent's budget), not by the number of updates.
    let sent = flood.sent.load(Ordering::SeqCst);
    assert!(sent < 3000, "the agent is held back: {sent} sent");
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(flood.sent.load(Ordering::SeqCst), sent, "no progress while the consumer waits");
    let stats = conn.stats();
    assert!(stats.peak_memory_estimate <= 256 * 1024, "{stats:?}");

    for i in 0..20_000u64 {
        let update = turn.next_update().await.expect("an update");
        assert_eq!(chunk_text(&update), Some(i.to_string().as_str()));
    }
    assert!(turn.next_update().await.is_none());
    assert_eq!(turn.finish().await.expect("stop"), StopReason::EndTurn);
}

#[tokio::test(start_paused = true)]
async fn a_stream_of_updates_is_written_in_few_batches_with_one_flush_each() {
    let flood = Flood { updates: 2000, ..Flood::default() };
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    tokio::spawn(acp_tokio::serve(flood.clone(), reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(client_io);
    let conn = ClientConnection::connect((), reader, writer, ClientOptions::default());
    let session = handshake(&conn).await;
    let (texts, stop) = common::scenarios::run_turn(&conn, &session, "go").await;
    assert_eq!((texts.len(), stop), (2000, StopReason::EndTurn));
    let stats = flood.context.lock().unwrap().as_ref().expect("the prompt ran").stats();
    assert!(stats.core.frames_out >= 2002, "{stats:?}");
    assert!(stats.flushes <= stats.write_batches, "at most one flush per batch: {stats:?}");
    assert!(stats.write_batches * 20 <= stats.core.frames_out, "updates are coalesced into batches: {stats:?}");
}

/// An agent holding `Rc` state: only a `LocalAgent` can.
struct RcAgent {
    prompts: Rc<Cell<u32>>,
}

impl LocalAgent for RcAgent {
    async fn initialize(&self, _: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(ProtocolVersion::V1))
    }

    async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("local"))
    }

    async fn prompt(&self, request: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
        let counter = self.prompts.clone(); // an `Rc` held across awaits
        counter.set(counter.get() + 1);
        let path = match &request.prompt[..] {
            [ContentBlock::Text(t)] => t.text.clone(),
            _ => return Err(RpcError::invalid_params("one text block: a path")),
        };
        let content = cx.read_text_file(path, None, None).await?;
        tokio::task::yield_now().await;
        let text = format!("prompt {} read {content}", counter.get());
        cx.send_update(chunk(text)).await?;
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    async fn ext_method(&self, method: &str, params: Value, _: RequestContext) -> Result<Value, RpcError> {
        let _ = method;
        Ok(json!({"prompts": self.prompts.get(), "params": params}))
    }
}

/// A client holding `Rc` state.
struct RcClient {
    files: Rc<RefCell<HashMap<String, String>>>,
    reads: Rc<Cell<u32>>,
}

impl LocalClient for RcClient {
    async fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        _: ClientContext,
    ) -> Result<ReadTextFileResponse, RpcError> {
        self.reads.set(self.reads.get() + 1);
        tokio::task::yield_now().await;
        let files = self.files.borrow();
        let content = files.get(&request.path).ok_or_else(|| RpcError::resource_not_found("no such file"))?;
        Ok(ReadTextFileResponse::new(content.clone()))
    }
}

#[tokio::test(start_paused = true)]
async fn not_send_handlers_on_a_current_thread_local_set() {
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let prompts = Rc::new(Cell::new(0));
            let reads = Rc::new(Cell::new(0));
            let files = Rc::new(RefCell::new(HashMap::from([("/a".to_owned(), "alpha".to_owned())])));
            let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
            let (reader, writer) = tokio::io::split(agent_io);
            let agent = RcAgent { prompts: prompts.clone() };
            let served =
                tokio::task::spawn_local(acp_tokio::serve_local(agent, reader, writer, AgentOptions::default()));
            let (reader, writer) = tokio::io::split(client_io);
            let client = RcClient { files, reads: reads.clone() };
            let conn = ClientConnection::connect_local(client, reader, writer, ClientOptions::default());
            let session = handshake(&conn).await;
            for n in 1..=3 {
                let (texts, stop) = common::scenarios::run_turn(&conn, &session, "/a").await;
                assert_eq!((texts, stop), (vec![format!("prompt {n} read alpha")], StopReason::EndTurn));
            }
            assert_eq!((prompts.get(), reads.get()), (3, 3));
            assert_eq!(conn.ext_method("_count", json!(7)).await.expect("ext"), json!({"prompts": 3, "params": 7}));
            assert_eq!(conn.close().await.expect("close"), None);
            assert!(served.await.expect("task").is_ok());
        })
        .await;
}
