//! What the v2 client answers its agent ([`Client`](acp_tokio::v2::Client)): permission asks go to the UI thread
//! as the v1 client's do ([`PermissionAsk`], asked with the same question and policies), and
//! updates outside a turn are drawn.
//!
//! An ask of a running turn reaches this handler only after the turn's reader queued the
//! updates that came before it for the UI (acp-tokio's ordering gate; see the reader in
//! `ui.rs`), so the question is drawn after them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};

use acp_blocking::acp_proto::types as v1;
use acp_proto::RpcError;
use acp_proto::v2;
use acp_tokio::ClientContext;
use acp_tokio::v2::Client;
use serde_json::json;

use super::super::UiEvent;
use super::super::guard::PermissionAsk;
use super::upsert::Upserts;

/// The v2 client's handlers.
pub(crate) struct CliClient {
    pub(crate) ui: SyncSender<UiEvent>,
    pub(crate) upserts: Arc<Mutex<Upserts>>,
}

/// Sends `event` to the UI thread without blocking the runtime (the queue is bounded).
pub(super) async fn post(ui: &SyncSender<UiEvent>, event: UiEvent) -> bool {
    let ui = ui.clone();
    tokio::task::spawn_blocking(move || ui.send(event).is_ok()).await.unwrap_or(false)
}

/// The v1 form of a v2 permission ask, for the renderer and the policies: its subject as the
/// tool call (the ask's title when the subject has none), a command as its text.
pub(crate) fn permission_v1(request: &v2::RequestPermissionRequest) -> v1::RequestPermissionRequest {
    let mut call = match &request.subject {
        Some(v2::RequestPermissionSubject::ToolCall(subject)) => serde_json::to_value(&subject.tool_call)
            .ok()
            .and_then(|v| serde_json::from_value::<v1::ToolCallUpdate>(v).ok())
            .unwrap_or_else(|| v1::ToolCallUpdate::new(subject.tool_call.tool_call_id.as_str())),
        Some(v2::RequestPermissionSubject::Command(command)) => {
            let id = command.tool_call_id.as_ref().map_or("command", |id| id.as_str());
            let mut call = v1::ToolCallUpdate::new(id);
            let text = format!("$ {} (in {})", command.command, command.cwd.0);
            call.content = Some(vec![v1::ToolCallContent::from(v1::ContentBlock::text(text))]);
            call
        }
        _ => v1::ToolCallUpdate::new("permission"),
    };
    if call.title.is_none() {
        call.title = Some(request.title.clone());
    }
    if let Some(description) = &request.description {
        let note = v1::ToolCallContent::from(v1::ContentBlock::text(description.clone()));
        call.content.get_or_insert_with(Vec::new).insert(0, note);
    }
    v1::RequestPermissionRequest::new(request.session_id.clone(), call, request.options.clone())
}

fn cancelled() -> v2::RequestPermissionResponse {
    serde_json::from_value(json!({ "outcome": { "outcome": "cancelled" } }))
        .unwrap_or_else(|_| unreachable!("a fixed, valid permission answer"))
}

impl Client for CliClient {
    async fn request_permission(
        &self,
        request: v2::RequestPermissionRequest,
        cx: ClientContext,
    ) -> Result<v2::RequestPermissionResponse, RpcError> {
        let (reply, answer) = mpsc::sync_channel(1);
        let abandoned = Arc::new(AtomicBool::new(false));
        let ask = PermissionAsk { request: permission_v1(&request), reply, local: false, abandoned: abandoned.clone() };
        if !post(&self.ui, UiEvent::Permission(ask)).await {
            return Ok(cancelled());
        }
        // The UI answers, or drops the ask (cancelled); a cancelled request is not waited for.
        let wait = tokio::task::spawn_blocking(move || answer.recv());
        let outcome = tokio::select! {
            answer = wait => answer.ok().and_then(Result::ok),
            () = cx.cancelled() => None,
        };
        abandoned.store(true, Ordering::Relaxed);
        Ok(match outcome {
            Some(v1::RequestPermissionOutcome::Selected(selected)) => {
                v2::RequestPermissionResponse { outcome: v2::RequestPermissionOutcome::Selected(selected), meta: None }
            }
            _ => cancelled(),
        })
    }

    async fn session_update(&self, notification: v2::UpdateSessionNotification) {
        let update = self.upserts.lock().unwrap_or_else(PoisonError::into_inner).map(&notification.update);
        if let Some(update) = update {
            let outside = v1::SessionNotification::new(notification.session_id, update);
            post(&self.ui, UiEvent::Outside(outside)).await;
        }
    }
}
