//! The permission policy governs the services: under `--ask`, a write or a command the user
//! has not approved is asked first.
//!
//! **Approved** (kept simple on purpose): when the user answers the agent's
//! `session/request_permission` with an allow option, that tool call is approved; the
//! `fs/write_text_file` and `terminal/create` requests of its session are served without a
//! new question while it is in progress, that is until an update reports it `completed` or
//! `failed`, the agent asks another permission, or the turn ends. Anything else is a local
//! question (through the same queue as the agent's questions, showing the path or the
//! command), whose answer applies to that one request.
//!
//! The end of a tool call is seen by the turn's reader thread as it takes the update; a
//! request the agent sends right after that update may start a moment before (acp-blocking
//! opens its gate when the update is taken), so it may still be covered: a window of a few
//! instructions, not of the UI's backlog.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use acp_blocking::ClientContext;
use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;

use super::event::{ElicitAsk, PermissionAsk, UiEvent};

/// How often a waiting handler looks at its cancellation.
const POLL: Duration = Duration::from_millis(50);

/// The tool call whose permission the user granted, while it is in progress.
#[derive(Debug, Default)]
pub(crate) struct Approvals {
    current: Mutex<Option<(SessionId, ToolCallId)>>,
}

impl Approvals {
    /// The user allowed `call` of `session`.
    pub(crate) fn approve(&self, session: &SessionId, call: &ToolCallId) {
        *self.lock() = Some((session.clone(), call.clone()));
    }

    /// Forgets the approval (a new permission request, the end of the turn).
    pub(crate) fn clear(&self) {
        *self.lock() = None;
    }

    /// `call` is over (`completed` or `failed`): its approval ends.
    pub(crate) fn finished(&self, call: &ToolCallId) {
        let mut current = self.lock();
        if current.as_ref().is_some_and(|(_, id)| id == call) {
            *current = None;
        }
    }

    /// Whether an approved tool call of `session` is in progress.
    pub(crate) fn covers(&self, session: &SessionId) -> bool {
        self.lock().as_ref().is_some_and(|(s, _)| s == session)
    }

    /// Ends approvals of tool calls this update reports over.
    pub(crate) fn observe(&self, update: &SessionUpdate) {
        let over = |status: &Option<ToolCallStatus>| {
            matches!(status, Some(ToolCallStatus::Completed | ToolCallStatus::Failed))
        };
        match update {
            SessionUpdate::ToolCall(call) if over(&call.status) => self.finished(&call.tool_call_id),
            SessionUpdate::ToolCallUpdate(update) if over(&update.status) => self.finished(&update.tool_call_id),
            _ => {}
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(SessionId, ToolCallId)>> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Sends a question to the UI's queue and waits for its answer; `cancelled` when the
/// request is cancelled or the UI is gone.
pub(crate) fn ask(
    ui: &SyncSender<UiEvent>,
    request: RequestPermissionRequest,
    local: bool,
    cx: &ClientContext,
) -> RequestPermissionOutcome {
    let (reply, answer) = mpsc::sync_channel(1);
    let abandoned = Arc::new(AtomicBool::new(false));
    let ask = PermissionAsk { request, reply, local, abandoned: abandoned.clone() };
    if ui.send(UiEvent::Permission(ask)).is_err() {
        return RequestPermissionOutcome::Cancelled;
    }
    loop {
        match answer.recv_timeout(POLL) {
            Ok(outcome) => return outcome,
            // The turn was cancelled: the core already answered `cancelled`.
            Err(RecvTimeoutError::Timeout) if !cx.is_cancelled() => {}
            _ => {
                // The UI skips a question nobody waits for.
                abandoned.store(true, Ordering::Relaxed);
                return RequestPermissionOutcome::Cancelled;
            }
        }
    }
}

/// Sends an elicitation to the UI's queue (asked on the terminal) and waits for its answer;
/// `cancel` when the request is cancelled or the UI is gone.
pub(crate) fn ask_elicitation(
    ui: &SyncSender<UiEvent>,
    request: CreateElicitationRequest,
    cx: &ClientContext,
) -> CreateElicitationResponse {
    let (reply, answer) = mpsc::sync_channel(1);
    let abandoned = Arc::new(AtomicBool::new(false));
    let ask = ElicitAsk { request, reply, abandoned: abandoned.clone() };
    if ui.send(UiEvent::Elicit(ask)).is_err() {
        return CreateElicitationResponse::cancel();
    }
    loop {
        match answer.recv_timeout(POLL) {
            Ok(response) => return response,
            Err(RecvTimeoutError::Timeout) if !cx.is_cancelled() => {}
            _ => {
                abandoned.store(true, Ordering::Relaxed);
                return CreateElicitationResponse::cancel();
            }
        }
    }
}

/// A local question: may the agent `what` (`write /path`, `run cmd args`)? Allowed only by
/// an allow answer.
pub(crate) fn ask_locally(ui: &SyncSender<UiEvent>, session: &SessionId, what: &str, cx: &ClientContext) -> bool {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = format!("client-question-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let mut call = ToolCallUpdate::new(id);
    call.title = Some(format!("the agent asks to {what}"));
    let options = vec![
        PermissionOption::new("allow", "Allow this once", PermissionOptionKind::AllowOnce),
        PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
    ];
    let request = RequestPermissionRequest::new(session.clone(), call, options);
    matches!(ask(ui, request, true, cx), RequestPermissionOutcome::Selected(s) if s.option_id == "allow")
}

/// The error a refused write or command gets.
pub(crate) fn refused(reason: &str) -> RpcError {
    let mut error = RpcError::invalid_params(reason);
    if let Some(serde_json::Value::Object(data)) = error.data.as_mut() {
        data.insert("kind".into(), serde_json::Value::String("permission_denied".into()));
    }
    error
}
