//! An agent written with the official SDK (`agent_client_protocol` 5.2.0), for our clients to
//! talk to. Its prompt does what the first text block says, like acp-tokio's echo agent:
//!
//! | prompt | what the SDK agent does |
//! |---|---|
//! | `permission` | asks permission for tool call `call-1` (options `allow`, `reject`), sends `permission: <option or cancelled>`, ends the turn |
//! | `wait` | sends `waiting`, then keeps the turn open until `session/cancel` ends it with `cancelled` |
//! | `elicit` | sends `elicitation/create` (URL mode), then `elicitation: <action or the error code>` |
//! | anything else | streams `echo: <text>` and `done`, ends the turn |

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, ContentChunk, CreateElicitationRequest, ElicitationAction, ElicitationMode,
    ElicitationSessionScope, ElicitationUrlMode, Implementation, InitializeRequest, InitializeResponse,
    NewSessionRequest, NewSessionResponse, PermissionOption, PermissionOptionKind, PromptRequest, PromptResponse,
    RequestPermissionOutcome, RequestPermissionRequest, SessionId, SessionNotification, SessionUpdate, StopReason,
    TextContent, ToolCallUpdate, ToolCallUpdateFields,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Responder, V1};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// The SDK agent's name in `agentInfo`.
pub const NAME: &str = "sdk-agent";

/// Open `wait` turns by session, answered by `session/cancel`.
type Waiting = Arc<Mutex<HashMap<SessionId, Responder<PromptResponse, V1>>>>;

fn chunk(session: &SessionId, text: impl Into<String>) -> SessionNotification {
    let block = ContentBlock::Text(TextContent::new(text));
    SessionNotification::new(session.clone(), SessionUpdate::AgentMessageChunk(ContentChunk::new(block)))
}

fn first_text(request: &PromptRequest) -> String {
    request
        .prompt
        .iter()
        .find_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// Asks permission, reports the outcome as an update, ends the turn. Runs outside the SDK's
/// dispatch loop (a request awaited inside a handler would block it).
async fn permission_turn(
    cx: ConnectionTo<Client>,
    session: SessionId,
    responder: Responder<PromptResponse, V1>,
) -> agent_client_protocol::Result<()> {
    let options = vec![
        PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
        PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
    ];
    let tool_call = ToolCallUpdate::new("call-1", ToolCallUpdateFields::new().title("touch /tmp/sdk"));
    let request = RequestPermissionRequest::new(session.clone(), tool_call, options);
    let response = cx.send_request(request).block_task().await?;
    let answer = match response.outcome {
        RequestPermissionOutcome::Selected(s) => s.option_id.to_string(),
        _ => "cancelled".to_owned(),
    };
    cx.send_notification(chunk(&session, format!("permission: {answer}")))?;
    responder.respond(PromptResponse::new(StopReason::EndTurn))
}

/// Sends `elicitation/create`, reports the answer (or the error code) as an update.
async fn elicit_turn(
    cx: ConnectionTo<Client>,
    session: SessionId,
    responder: Responder<PromptResponse, V1>,
) -> agent_client_protocol::Result<()> {
    let mode = ElicitationUrlMode::new(ElicitationSessionScope::new(session.clone()), "el-1", "https://example.com/");
    let request = CreateElicitationRequest::new(ElicitationMode::Url(mode), "Sign in");
    let text = match cx.send_request(request).block_task().await {
        Ok(r) => match r.action {
            ElicitationAction::Accept(_) => "elicitation: accept".to_owned(),
            ElicitationAction::Decline => "elicitation: decline".to_owned(),
            _ => "elicitation: other".to_owned(),
        },
        Err(e) => format!("elicitation: error {}", i32::from(e.code)),
    };
    cx.send_notification(chunk(&session, text))?;
    responder.respond(PromptResponse::new(StopReason::EndTurn))
}

async fn prompt(
    request: PromptRequest,
    responder: Responder<PromptResponse, V1>,
    cx: ConnectionTo<Client>,
    waiting: &Waiting,
) -> agent_client_protocol::Result<()> {
    let session = request.session_id.clone();
    match first_text(&request).as_str() {
        "permission" => cx.spawn(permission_turn(cx.clone(), session, responder)),
        "elicit" => cx.spawn(elicit_turn(cx.clone(), session, responder)),
        "wait" => {
            cx.send_notification(chunk(&session, "waiting"))?;
            waiting.lock().expect("not poisoned").insert(session, responder);
            Ok(())
        }
        text => {
            cx.send_notification(chunk(&session, format!("echo: {text}")))?;
            cx.send_notification(chunk(&session, "done"))?;
            responder.respond(PromptResponse::new(StopReason::EndTurn))
        }
    }
}

/// Runs the SDK agent over `reader` (the client's output) and `writer` (its input) until the
/// client's output ends.
pub async fn serve(
    reader: impl tokio::io::AsyncRead + Send + 'static,
    writer: impl tokio::io::AsyncWrite + Send + 'static,
) -> agent_client_protocol::Result<()> {
    let waiting: Waiting = Arc::default();
    let on_cancel = waiting.clone();
    let sessions = Arc::new(Mutex::new(0u32));
    Agent
        .v1()
        .name(NAME)
        .on_receive_request(
            async move |request: InitializeRequest, responder: Responder<InitializeResponse, V1>, _cx| {
                assert_eq!(request.protocol_version, ProtocolVersion::V1);
                let info = Implementation::new(NAME, "5.2.0");
                responder.respond(InitializeResponse::new(ProtocolVersion::V1).agent_info(info))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_: NewSessionRequest, responder: Responder<NewSessionResponse, V1>, _cx| {
                let n = {
                    let mut n = sessions.lock().expect("not poisoned");
                    *n += 1;
                    *n
                };
                responder.respond(NewSessionResponse::new(format!("sdk-session-{n}")))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder: Responder<PromptResponse, V1>, cx: ConnectionTo<Client>| {
                prompt(request, responder, cx, &waiting).await
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |cancel: CancelNotification, _cx| {
                let responder = on_cancel.lock().expect("not poisoned").remove(&cancel.session_id);
                match responder {
                    Some(r) => r.respond(PromptResponse::new(StopReason::Cancelled)),
                    None => Ok(()),
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(ByteStreams::new(writer.compat_write(), reader.compat()))
        .await
}
