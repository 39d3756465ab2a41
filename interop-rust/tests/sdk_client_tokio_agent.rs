//! The official SDK's client against our agent, acp-tokio's `serve` running acp-tokio's echo
//! agent (`acp-tokio/examples/support/echo.rs`), in one process over `tokio::io::duplex`:
//! handshake, a prompt turn with streamed updates, a permission request and a cancel.

mod common;
#[path = "../../acp-tokio/examples/support/echo.rs"]
mod echo;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, ContentChunk, InitializeRequest, NewSessionRequest, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionId, SessionNotification, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Responder, V1};
use common::within;
use tokio::sync::mpsc;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// What the SDK client's handlers saw: update texts and permission requests, in order.
#[derive(Debug, PartialEq)]
enum Seen {
    Text(String),
    Permission(String),
}

fn prompt(session: &SessionId, text: &str) -> PromptRequest {
    PromptRequest::new(session.clone(), vec![ContentBlock::Text(TextContent::new(text))])
}

/// Everything seen so far (the handlers ran before the response that follows them).
fn drain(seen: &mut mpsc::UnboundedReceiver<Seen>) -> Vec<Seen> {
    std::iter::from_fn(|| seen.try_recv().ok()).collect()
}

/// The scenarios, run by the SDK client once connected: handshake, a streamed turn, a
/// permission turn, a cancelled turn.
async fn scenarios(
    cx: ConnectionTo<Agent>,
    mut seen: mpsc::UnboundedReceiver<Seen>,
) -> agent_client_protocol::Result<()> {
    let init = cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    assert_eq!(init.agent_info.map(|i| i.name).as_deref(), Some("echo_agent"));
    let session = cx.send_request(NewSessionRequest::new("/tmp")).block_task().await?.session_id;
    assert_eq!(session.to_string(), "sess-0");

    let done = cx.send_request(prompt(&session, "hello")).block_task().await?;
    assert_eq!(done.stop_reason, StopReason::EndTurn);
    assert_eq!(drain(&mut seen), vec![Seen::Text("hello".into())]);

    let done = cx.send_request(prompt(&session, "permission")).block_task().await?;
    assert_eq!(done.stop_reason, StopReason::EndTurn);
    assert_eq!(drain(&mut seen), vec![Seen::Permission("call-1".into()), Seen::Text("permission: allow".into())]);

    let turn = cx.send_request(prompt(&session, "wait"));
    assert_eq!(seen.recv().await, Some(Seen::Text("waiting".into())));
    cx.send_notification(CancelNotification::new(session.clone()))?;
    assert_eq!(turn.block_task().await?.stop_reason, StopReason::Cancelled);
    assert_eq!(drain(&mut seen), vec![]);
    Ok(())
}

#[tokio::test]
async fn sdk_client_drives_our_agent() {
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    let agent = tokio::spawn(acp_tokio::serve(echo::EchoAgent::default(), reader, writer, Default::default()));

    let (tx, seen) = mpsc::unbounded_channel();
    let on_permission = tx.clone();
    let (reader, writer) = tokio::io::split(client_io);
    let client = Client
        .v1()
        .name("sdk-client")
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                if let SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) = n.update
                {
                    let _ = tx.send(Seen::Text(t.text));
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: RequestPermissionRequest, responder: Responder<RequestPermissionResponse, V1>, _cx| {
                let _ = on_permission.send(Seen::Permission(r.tool_call.tool_call_id.to_string()));
                let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow"));
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(ByteStreams::new(writer.compat_write(), reader.compat()), async move |cx| {
            scenarios(cx, seen).await
        });
    within("the SDK client's scenarios", client).await.expect("every scenario passes");
    // The SDK client closed its side: our agent sees the end of its input and returns cleanly.
    within("our agent's end", agent).await.expect("agent task").expect("serve ends cleanly");
}
