//! The official SDK's client against `acp agent`'s reference agent (acp-cli's `ReferenceAgent`,
//! on acp-blocking, served on a thread of this process over two OS pipes): handshake, the
//! scripted prompt turn with every kind of update and a permission request, and a cancel.

mod common;

use std::os::fd::OwnedFd;

use acp_cli::agent::{ALLOW_ONCE, REJECT_ONCE, ReferenceAgent};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, ContentChunk, InitializeRequest, NewSessionRequest, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionId, SessionNotification, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Responder, V1};
use common::within;
use tokio::net::unix::pipe;
use tokio::sync::mpsc;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// What the SDK client's handlers saw, in order: `sessionUpdate` kinds (with the text of
/// message chunks) and permission requests (with their option ids).
fn update_seen(update: &SessionUpdate) -> String {
    let kind = serde_json::to_value(update).expect("an update serializes")["sessionUpdate"].clone();
    match update {
        SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) => {
            format!("{} {}", kind.as_str().unwrap_or("?"), t.text)
        }
        _ => kind.as_str().unwrap_or("?").to_owned(),
    }
}

fn prompt(session: &SessionId, text: &str) -> PromptRequest {
    PromptRequest::new(session.clone(), vec![ContentBlock::Text(TextContent::new(text))])
}

fn drain(seen: &mut mpsc::UnboundedReceiver<String>) -> Vec<String> {
    std::iter::from_fn(|| seen.try_recv().ok()).collect()
}

async fn scenarios(
    cx: ConnectionTo<Agent>,
    mut seen: mpsc::UnboundedReceiver<String>,
) -> agent_client_protocol::Result<()> {
    let init = cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    assert!(init.agent_info.is_some(), "the reference agent names itself");
    let session = cx.send_request(NewSessionRequest::new("/tmp")).block_task().await?.session_id;

    let done = cx.send_request(prompt(&session, "hello")).block_task().await?;
    assert_eq!(done.stop_reason, StopReason::EndTurn);
    let expected = [
        "agent_message_chunk echo: hello",
        "agent_thought_chunk",
        "plan",
        "tool_call",
        "permission allow-once,reject-once",
        "tool_call_update",
        "tool_call_update",
        "agent_message_chunk done",
    ];
    assert_eq!(drain(&mut seen), expected);

    let turn = cx.send_request(prompt(&session, "be slow"));
    assert_eq!(seen.recv().await.as_deref(), Some("agent_message_chunk echo: be slow"));
    cx.send_notification(CancelNotification::new(session.clone()))?;
    assert_eq!(turn.block_task().await?.stop_reason, StopReason::Cancelled);
    Ok(())
}

/// Serves the reference agent on a thread, over `input`/`output`.
fn spawn_reference_agent(input: std::io::PipeReader, output: std::io::PipeWriter) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || ReferenceAgent::new().serve(input, output).expect("the reference agent ends cleanly"))
}

#[tokio::test]
async fn sdk_client_drives_the_reference_agent() {
    let (agent_reads, client_writes) = std::io::pipe().expect("pipe");
    let (client_reads, agent_writes) = std::io::pipe().expect("pipe");
    let agent = spawn_reference_agent(agent_reads, agent_writes);
    let writer = pipe::Sender::from_owned_fd(OwnedFd::from(client_writes)).expect("a pipe to write");
    let reader = pipe::Receiver::from_owned_fd(OwnedFd::from(client_reads)).expect("a pipe to read");

    let (tx, seen) = mpsc::unbounded_channel();
    let on_permission = tx.clone();
    let client = Client
        .v1()
        .name("sdk-client")
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                let _ = tx.send(update_seen(&n.update));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: RequestPermissionRequest, responder: Responder<RequestPermissionResponse, V1>, _cx| {
                let ids: Vec<String> = r.options.iter().map(|o| o.option_id.to_string()).collect();
                let _ = on_permission.send(format!("permission {}", ids.join(",")));
                assert_eq!(ids, [ALLOW_ONCE, REJECT_ONCE]);
                let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(ALLOW_ONCE));
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(ByteStreams::new(writer.compat_write(), reader.compat()), async move |cx| {
            scenarios(cx, seen).await
        });
    within("the SDK client's scenarios", client).await.expect("every scenario passes");
    // The SDK client closed its side: the agent's input ends and its thread returns.
    within("the agent's end", tokio::task::spawn_blocking(move || agent.join()))
        .await
        .expect("join")
        .expect("agent thread");
}
