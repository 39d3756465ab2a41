//! The same driver on async-std (feature `async-std`): a prompt as a `Stream` and concurrent
//! sessions over a Unix socket pair, `!Send` handlers on `spawn_local`, and a child agent
//! through `async_std::process`. The scenario suite (acp-scenarios's `tests/suite`, module `async_std`) runs
//! the shared scenarios on async-std.
#![cfg(feature = "async-std")]

use crate::common;

use std::cell::Cell;
use std::os::unix::process::ExitStatusExt;
use std::rc::Rc;
use std::time::Duration;

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::types::*;
use acp_tokio::{AgentOptions, ClientConnection, ClientOptions, Error, LocalAgent, PromptContext, RequestContext};
use async_std::os::unix::net::UnixStream;
use async_std::task::block_on;
use common::{EchoAgent, TestClient, example, handshake, prompt, scenarios};

/// An echo agent on async-std over a socket pair, and a client connected to it.
fn connect(client: TestClient, agent: EchoAgent) -> ClientConnection {
    let (client_io, agent_io) = UnixStream::pair().expect("a socket pair");
    let agent_writer = agent_io.clone();
    async_std::task::spawn(acp_tokio::async_std::serve(agent, agent_io, agent_writer, AgentOptions::default()));
    let client_writer = client_io.clone();
    acp_tokio::async_std::connect(client, client_io, client_writer, ClientOptions::default())
}

#[test]
fn handshake_prompt_stream_and_concurrent_sessions() {
    block_on(async {
        let conn = connect(TestClient::default(), EchoAgent::default());
        let session = scenarios::handshake_and_sessions(&conn).await;
        scenarios::prompt_stream(&conn, &session).await;
        scenarios::concurrent_sessions(&conn, 64).await;
    });
}

#[test]
fn close_resolves_pending_requests() {
    block_on(async {
        let conn = connect(TestClient::default(), EchoAgent::default());
        handshake(&conn).await;
        let pending = async_std::task::spawn({
            let conn = conn.clone();
            async move { conn.ext_method("_wait", serde_json::json!({})).await }
        });
        async_std::task::sleep(Duration::from_millis(20)).await;
        assert_eq!(conn.close().await.expect("close"), None);
        assert!(matches!(pending.await, Err(Error::ConnectionClosed)));
    });
}

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

    async fn prompt(&self, _: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
        let counter = self.prompts.clone();
        counter.set(counter.get() + 1);
        async_std::task::yield_now().await;
        let update = common::echo::chunk(format!("prompt {}", counter.get()));
        cx.send_update(update).await?;
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

#[test]
fn not_send_handlers_on_spawn_local() {
    block_on(async {
        let prompts = Rc::new(Cell::new(0));
        let (client_io, agent_io) = UnixStream::pair().expect("a socket pair");
        let agent = RcAgent { prompts: prompts.clone() };
        let agent_writer = agent_io.clone();
        let served = async_std::task::spawn_local(acp_tokio::async_std::serve_local(
            agent,
            agent_io,
            agent_writer,
            AgentOptions::default(),
        ));
        let client_writer = client_io.clone();
        let conn = acp_tokio::async_std::connect_local((), client_io, client_writer, ClientOptions::default());
        let session = handshake(&conn).await;
        for n in 1..=3 {
            let (texts, stop) = scenarios::run_turn(&conn, &session, "hi").await;
            assert_eq!((texts, stop), (vec![format!("prompt {n}")], StopReason::EndTurn));
        }
        assert_eq!(prompts.get(), 3);
        conn.close().await.expect("close");
        assert!(served.await.is_ok());
    });
}

#[test]
fn child_agent_through_async_std_process() {
    block_on(async {
        let command = std::process::Command::new(example("tokio_echo_agent"));
        let conn =
            acp_tokio::async_std::spawn(TestClient::default(), command, ClientOptions::default()).expect("spawn");
        let session = handshake(&conn).await;
        scenarios::prompt_stream(&conn, &session).await;
        scenarios::cancel_mid_turn(&conn, &session, None).await;
        let status = conn.close().await.expect("close").expect("status");
        assert!(status.success(), "{status:?}");

        // Killed mid-turn.
        let command = std::process::Command::new(example("tokio_echo_agent"));
        let conn =
            acp_tokio::async_std::spawn(TestClient::default(), command, ClientOptions::default()).expect("spawn");
        let session = handshake(&conn).await;
        let mut turn = conn.prompt(prompt(&session, "wait")).await.expect("prompt accepted");
        assert!(turn.next_update().await.is_some());
        let pid = rustix::process::Pid::from_raw(conn.child_id().expect("pid") as i32).expect("pid");
        rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("kill");
        assert!(matches!(turn.finish().await, Err(Error::ConnectionClosed)));
        assert_eq!(conn.close().await.expect("close").expect("status").signal(), Some(9));

        // The close sequence signals a child that ignores its stdin.
        let mut sleeper = std::process::Command::new("sh");
        sleeper.args(["-c", "sleep 300"]);
        let mut options = ClientOptions::default();
        options.close_grace = Duration::from_millis(200);
        let conn = acp_tokio::async_std::spawn((), sleeper, options).expect("spawn");
        assert_eq!(conn.close().await.expect("close").expect("status").signal(), Some(15));
    });
}
