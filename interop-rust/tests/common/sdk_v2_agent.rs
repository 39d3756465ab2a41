//! An ACP v2 agent written with the official SDK (`agent_client_protocol` 5.2.0, feature
//! `unstable_protocol_v2`, `Agent.v2()`), for our v2 clients to talk to. In v2 `session/prompt`
//! only acknowledges the prompt (`PromptResponse.messageId`); the turn is told by `session/update`
//! `state_update`s: `running`, then one `idle` with a stop reason that ends it.
//!
//! | prompt (first text) | what the SDK agent does after acknowledging with `user-<n>` |
//! |---|---|
//! | `wait` | `user_message`, `running`, tool calls `call-w1` and `call-w2` (`in_progress`, `capabilities.cancel`); then waits: `tool_call/cancel` of one answers `{}` and sends its `tool_call_update` `cancelled` (the turn stays open); `session/cancel` sends `cancelled` for the open ones, then `idle` with `cancelled` |
//! | anything else | `user_message`, `running`, `agent_thought_chunk`, `agent_message_chunk` `echo: <text>`, tool call `call-1` (`pending`, `capabilities.cancel`), its `tool_call_content_chunk` (a diff), asks `session/request_permission` about it (options `allow`, `reject`), `tool_call_update` `completed` (allow) or `failed` (anything else), a `plan_update` of two entries, the `agent_message` snapshot, `usage_update`, `session_info_update`, `notice`, `idle` with `end_turn`. A `session/cancel` while the permission is asked: `$/cancel_request` for that request, then (after its answer, whatever it is) `call-1` `cancelled` and `idle` with `cancelled` |
//!
//! `initialize` is answered with version 2 (the SDK itself answers an offer of 1 with `-32022`
//! before this handler runs). `tool_call/cancel` of an unknown or finished tool call is `-32602`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v2::schema::{
    AgentCapabilities, AgentMessage, CancelSessionNotification, CancelToolCallRequest, CancelToolCallResponse,
    ContentBlock, ContentChunk, Cost, Diff, DiffChange, IdleStateUpdate, Implementation, InitializeRequest,
    InitializeResponse, NewSessionRequest, NewSessionResponse, Notice, NoticeSeverity, PermissionOption,
    PermissionOptionKind, PlanEntry, PlanEntryPriority, PlanEntryStatus, PlanUpdate, PlanUpdateContent, PromptRequest,
    PromptResponse, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionSubject, RunningStateUpdate,
    SessionCapabilities, SessionId, SessionInfoUpdate, SessionUpdate, StateUpdate, StopReason,
    ToolCallCancelCapabilities, ToolCallCapabilities, ToolCallContent, ToolCallContentChunk, ToolCallId,
    ToolCallPermissionSubject, ToolCallStatus, ToolCallUpdate, ToolKind, UpdateSessionNotification, UsageUpdate,
    UserMessage,
};
use agent_client_protocol::v2::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client, Error, RequestCancellationHandle};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// The SDK v2 agent's name in `InitializeResponse.info`.
pub const NAME: &str = "sdk-v2-agent";

type Result<T> = agent_client_protocol::Result<T>;

/// Per session: the tool calls of the open `wait` turn that are not final yet (`None`: no open
/// turn).
#[derive(Clone, Default)]
struct State {
    open: Arc<Mutex<HashMap<SessionId, Vec<ToolCallId>>>>,
    /// Sessions whose full turn is running.
    full: Arc<Mutex<HashMap<SessionId, FullTurn>>>,
    counter: Arc<Mutex<u32>>,
}

/// A running full turn.
#[derive(Default)]
struct FullTurn {
    /// `session/cancel` asked to stop it.
    cancelled: bool,
    /// Cancels its pending permission request (`$/cancel_request`).
    asking: Option<RequestCancellationHandle>,
}

impl State {
    fn next(&self) -> u32 {
        let mut n = self.counter.lock().expect("not poisoned");
        *n += 1;
        *n
    }
}

fn update(cx: &ConnectionTo<Client>, session: &SessionId, update: SessionUpdate) -> Result<()> {
    cx.send_notification(UpdateSessionNotification::new(session.clone(), update))
}

fn state(cx: &ConnectionTo<Client>, session: &SessionId, state: StateUpdate) -> Result<()> {
    update(cx, session, SessionUpdate::StateUpdate(state))
}

fn tool(id: &str, status: ToolCallStatus, cancellable: bool) -> ToolCallUpdate {
    let t = ToolCallUpdate::new(id).status(status);
    if cancellable { t.capabilities(ToolCallCapabilities::new().cancel(ToolCallCancelCapabilities::new())) } else { t }
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

/// The start of every turn: the inserted user message, then `running`.
fn begin(cx: &ConnectionTo<Client>, request: &PromptRequest, message: &str) -> Result<()> {
    let user = UserMessage::new(message.to_owned()).content(request.prompt.clone());
    update(cx, &request.session_id, SessionUpdate::UserMessage(user))?;
    state(cx, &request.session_id, StateUpdate::Running(RunningStateUpdate::new()))
}

/// The full turn (see the module docs). Runs outside the SDK's dispatch loop: a request awaited
/// inside a handler would block it. A `session/cancel` while the permission is asked ends it after
/// the answer: the tool call `cancelled`, then `idle` with `cancelled`.
async fn full_turn(cx: ConnectionTo<Client>, request: PromptRequest, n: u32, s: State) -> Result<()> {
    let session = request.session_id.clone();
    let thought = ContentChunk::new(ContentBlock::from("thinking"), format!("thought-{n}"));
    update(&cx, &session, SessionUpdate::AgentThoughtChunk(thought))?;
    let echo = format!("echo: {}", first_text(&request));
    let chunk = ContentChunk::new(ContentBlock::from(echo.clone()), format!("agent-{n}"));
    update(&cx, &session, SessionUpdate::AgentMessageChunk(chunk))?;
    let call = tool("call-1", ToolCallStatus::Pending, true).title("touch /tmp/sdk-v2").kind(ToolKind::Edit);
    update(&cx, &session, SessionUpdate::ToolCallUpdate(call.clone()))?;
    let diff = Diff::patch("--- a\n+++ b\n", vec![DiffChange::modify("/tmp/sdk-v2")]);
    let content = ToolCallContentChunk::new("call-1", ToolCallContent::Diff(diff));
    update(&cx, &session, SessionUpdate::ToolCallContentChunk(content))?;
    let allowed = ask(&cx, &session, call, &s).await;
    let cancelled = s.full.lock().expect("not poisoned").remove(&session).is_some_and(|t| t.cancelled);
    if cancelled {
        update(&cx, &session, SessionUpdate::ToolCallUpdate(tool("call-1", ToolCallStatus::Cancelled, false)))?;
        return state(&cx, &session, StateUpdate::Idle(IdleStateUpdate::new().stop_reason(StopReason::Cancelled)));
    }
    let allowed = allowed?;
    let status = if allowed { ToolCallStatus::Completed } else { ToolCallStatus::Failed };
    update(&cx, &session, SessionUpdate::ToolCallUpdate(tool("call-1", status, false)))?;
    let entries = vec![
        PlanEntry::new("touch the file", PlanEntryPriority::High, PlanEntryStatus::Completed),
        PlanEntry::new("report", PlanEntryPriority::Low, PlanEntryStatus::InProgress),
    ];
    update(&cx, &session, SessionUpdate::PlanUpdate(PlanUpdate::new(PlanUpdateContent::items("plan-1", entries))))?;
    let snapshot = AgentMessage::new(format!("agent-{n}")).content(vec![ContentBlock::from(echo)]);
    update(&cx, &session, SessionUpdate::AgentMessage(snapshot))?;
    update(&cx, &session, SessionUpdate::UsageUpdate(UsageUpdate::new(10, 100).cost(Cost::new(0.25, "USD"))))?;
    update(&cx, &session, SessionUpdate::SessionInfoUpdate(SessionInfoUpdate::new().title("sdk title")))?;
    let notice = Notice::new(NoticeSeverity::Warning, "careful").description("a notice");
    update(&cx, &session, SessionUpdate::Notice(notice))?;
    state(&cx, &session, StateUpdate::Idle(IdleStateUpdate::new().stop_reason(StopReason::EndTurn)))
}

/// Asks `session/request_permission` about `call` (options `allow`, `reject`): whether `allow`
/// was selected. The request can be cancelled by `session/cancel` meanwhile (see [`FullTurn`]).
async fn ask(cx: &ConnectionTo<Client>, session: &SessionId, call: ToolCallUpdate, s: &State) -> Result<bool> {
    let options = vec![
        PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
        PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
    ];
    let subject = RequestPermissionSubject::ToolCall(Box::new(ToolCallPermissionSubject::new(call)));
    let ask = RequestPermissionRequest::new(session.clone(), "Touch a file?", options).subject(subject);
    let sent = cx.send_request(ask);
    if let Some(turn) = s.full.lock().expect("not poisoned").get_mut(session) {
        turn.asking = Some(sent.cancellation_handle());
    }
    let answer = sent.block_task().await?;
    Ok(matches!(&answer.outcome, RequestPermissionOutcome::Selected(s) if s.option_id.to_string() == "allow"))
}

async fn prompt(
    request: PromptRequest,
    responder: Responder<PromptResponse>,
    cx: ConnectionTo<Client>,
    s: &State,
) -> Result<()> {
    let n = s.next();
    let message = format!("user-{n}");
    responder.respond(PromptResponse::new(message.clone()))?;
    begin(&cx, &request, &message)?;
    if first_text(&request) != "wait" {
        s.full.lock().expect("not poisoned").insert(request.session_id.clone(), FullTurn::default());
        return cx.spawn(full_turn(cx.clone(), request, n, s.clone()));
    }
    let session = request.session_id.clone();
    let calls: Vec<ToolCallId> = vec!["call-w1".into(), "call-w2".into()];
    s.open.lock().expect("not poisoned").insert(session.clone(), calls.clone());
    for id in calls {
        let call = tool(&id.to_string(), ToolCallStatus::InProgress, true).title(format!("long {id}"));
        update(&cx, &session, SessionUpdate::ToolCallUpdate(call))?;
    }
    Ok(())
}

fn cancel_tool(
    request: CancelToolCallRequest,
    responder: Responder<CancelToolCallResponse>,
    cx: &ConnectionTo<Client>,
    s: &State,
) -> Result<()> {
    let removed = {
        let mut open = s.open.lock().expect("not poisoned");
        let calls = open.get_mut(&request.session_id);
        let at = calls.as_ref().and_then(|c| c.iter().position(|id| *id == request.tool_call_id));
        match (calls, at) {
            (Some(calls), Some(at)) => Some(calls.remove(at)),
            _ => None,
        }
    };
    let Some(id) = removed else {
        return responder
            .respond_with_error(Error::invalid_params().data("unknown, final or not cancellable tool call"));
    };
    responder.respond(CancelToolCallResponse::new())?;
    update(
        cx,
        &request.session_id,
        SessionUpdate::ToolCallUpdate(tool(&id.to_string(), ToolCallStatus::Cancelled, false)),
    )
}

fn cancel_session(cancel: CancelSessionNotification, cx: &ConnectionTo<Client>, s: &State) -> Result<()> {
    let asking = match s.full.lock().expect("not poisoned").get_mut(&cancel.session_id) {
        Some(turn) => {
            turn.cancelled = true; // the full turn ends itself once its permission is answered
            Some(turn.asking.take())
        }
        None => None,
    };
    if let Some(asking) = asking {
        // Cascade, as the v2 cancellation docs show: `$/cancel_request` for the pending permission.
        return asking.map_or(Ok(()), |handle| handle.cancel());
    }
    let Some(calls) = s.open.lock().expect("not poisoned").remove(&cancel.session_id) else { return Ok(()) };
    for id in calls {
        update(
            cx,
            &cancel.session_id,
            SessionUpdate::ToolCallUpdate(tool(&id.to_string(), ToolCallStatus::Cancelled, false)),
        )?;
    }
    state(cx, &cancel.session_id, StateUpdate::Idle(IdleStateUpdate::new().stop_reason(StopReason::Cancelled)))
}

/// Runs the SDK v2 agent over `reader` (the client's output) and `writer` (its input) until the
/// client's output ends.
pub async fn serve(
    reader: impl tokio::io::AsyncRead + Send + 'static,
    writer: impl tokio::io::AsyncWrite + Send + 'static,
) -> Result<()> {
    let s = State::default();
    let (s1, s2, s3, s4) = (s.clone(), s.clone(), s.clone(), s);
    Agent
        .v2()
        .name(NAME)
        .on_receive_request(
            async move |_: InitializeRequest, responder: Responder<InitializeResponse>, _cx| {
                let info = Implementation::new(NAME, "5.2.0");
                let caps = AgentCapabilities::new().session(SessionCapabilities::new());
                responder.respond(InitializeResponse::new(ProtocolVersion::V2, info).capabilities(caps))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_: NewSessionRequest, responder: Responder<NewSessionResponse>, _cx| {
                responder.respond(NewSessionResponse::new(format!("sdk-v2-session-{}", s1.next())))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder: Responder<PromptResponse>, cx: ConnectionTo<Client>| {
                prompt(request, responder, cx, &s2).await
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CancelToolCallRequest,
                        responder: Responder<CancelToolCallResponse>,
                        cx: ConnectionTo<Client>| { cancel_tool(request, responder, &cx, &s3) },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |cancel: CancelSessionNotification, cx: ConnectionTo<Client>| cancel_session(cancel, &cx, &s4),
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(ByteStreams::new(writer.compat_write(), reader.compat()))
        .await
}
