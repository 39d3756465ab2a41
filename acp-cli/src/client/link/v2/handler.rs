//! What the v2 client answers its agent: the v1 client's handlers ([`CliClient`]), each v2
//! request given to them as the v1 request of the same meaning and the answer given back as
//! v2's. Permission asks go to the same question and policies; elicitations to the same forms
//! and `--elicit` answers; updates outside a turn are drawn as v1's (`upsert.rs`).
//!
//! An ask of a running turn reaches these handlers only after the turn's reader queued the
//! updates that came before it for the UI (acp-blocking's ordering gate), so the question is
//! drawn after them.

use std::sync::{Arc, Mutex, PoisonError};

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types as v1;
use acp_blocking::acp_proto::v2;
use acp_blocking::v2::Client;
use acp_blocking::{Client as _, ClientContext};

use super::shape::reshape;
use super::upsert::Upserts;
use crate::client::handler::CliClient;

/// The v2 client's handlers: the v1 client's, and the ids the updates outside turns drew.
pub(super) struct V2Client {
    pub(super) client: CliClient,
    pub(super) upserts: Arc<Mutex<Upserts>>,
}

/// The v1 form of a v2 permission ask, for the renderer and the policies: its subject as the
/// tool call (the ask's title when the subject has none), a command as its text.
fn permission_v1(request: &v2::RequestPermissionRequest) -> v1::RequestPermissionRequest {
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

impl Client for V2Client {
    fn request_permission(
        &self,
        request: v2::RequestPermissionRequest,
        cx: &ClientContext,
    ) -> Result<v2::RequestPermissionResponse, RpcError> {
        let answer = self.client.request_permission(permission_v1(&request), cx)?;
        Ok(match answer.outcome {
            v1::RequestPermissionOutcome::Selected(selected) => {
                v2::RequestPermissionResponse { outcome: v2::RequestPermissionOutcome::Selected(selected), meta: None }
            }
            _ => v2::RequestPermissionResponse::cancelled(),
        })
    }

    fn create_elicitation(
        &self,
        request: v2::CreateElicitationRequest,
        cx: &ClientContext,
    ) -> Result<v2::CreateElicitationResponse, RpcError> {
        let request: v1::CreateElicitationRequest =
            reshape(&request).map_err(|_| RpcError::invalid_params("an elicitation this client cannot read"))?;
        let answer = self.client.create_elicitation(request, cx)?;
        reshape(&answer).map_err(|_| RpcError::internal_error("the answer has no v2 form"))
    }

    fn session_update(&self, notification: v2::UpdateSessionNotification) {
        let update = self.upserts.lock().unwrap_or_else(PoisonError::into_inner).map(&notification.update);
        if let Some(update) = update {
            self.client.session_update(v1::SessionNotification::new(notification.session_id, update));
        }
    }

    fn complete_elicitation(&self, notification: v2::CompleteElicitationNotification) {
        if let Ok(notification) = reshape(&notification) {
            self.client.complete_elicitation(notification);
        }
    }
}
