//! The attaching client's side: [`Attacher`], and reading a [`PermissionResolved`] update.

use serde::Deserialize;

use super::{AttachAnswer, AttachRequest, PERMISSION_RESOLVED, Role};
use crate::Method;
use crate::error::RpcError;
use crate::jsonrpc::RequestId;
use crate::observer::Observer;
use crate::types::SessionUpdate;

/// The id an [`Attacher`] sends its `session/attach` under.
pub(super) const ATTACH_ID: &str = "acp/attach";

/// What to do with a frame from the link (the relay's side).
#[derive(Debug, Clone, PartialEq)]
pub enum Linked {
    /// Hand it to the core.
    Forward,
    /// Hand it to the core, then send this frame (the `session/attach`) to the link.
    ForwardThenSend(Vec<u8>),
    /// The answer to the `session/attach`: not for the core.
    Answered(Result<AttachAnswer, RpcError>),
}

/// A client core's link that attaches one session once the core's `initialize` was answered
/// (rule 10 of the [module docs](super)).
#[derive(Debug)]
pub struct Attacher {
    request: AttachRequest,
    observer: Observer,
    sent: bool,
    answered: bool,
}

impl Attacher {
    /// Attaches `session` as `role`.
    pub fn new(session: impl Into<std::sync::Arc<str>>, role: Role) -> Attacher {
        let request = AttachRequest::new(RequestId::Str(ATTACH_ID.into()), session, role);
        Attacher { request, observer: Observer::new(), sent: false, answered: false }
    }

    /// A frame the core sends to the link (it passes unchanged).
    pub fn from_core(&mut self, frame: &[u8]) {
        if !self.sent {
            self.observer.observe_from_client(frame);
        }
    }

    /// A frame the link sends to the core.
    pub fn from_link(&mut self, frame: &[u8]) -> Linked {
        if !self.sent {
            let observed = self.observer.observe_from_agent(frame);
            if observed.answered.and_then(|a| a.method) == Some(Method::Initialize) {
                self.sent = true;
                return Linked::ForwardThenSend(self.request.to_frame().into_bytes());
            }
            return Linked::Forward;
        }
        if !self.answered
            && let Some(answer) = AttachAnswer::read(frame, &self.request.id)
        {
            self.answered = true;
            return Linked::Answered(answer);
        }
        Linked::Forward
    }
}

/// A `permission_resolved` update (rule 4): who answered which ask.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionResolved {
    /// The tool call asked about.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    /// The option chosen; `None` when the ask was cancelled.
    #[serde(default)]
    pub chosen_option_id: Option<String>,
    /// Who answered: `"host"` or `"guest-N"`.
    #[serde(default)]
    pub resolved_by: String,
}

impl PermissionResolved {
    /// The update, when `update` is one (it decodes as an unknown kind).
    pub fn read(update: &SessionUpdate) -> Option<PermissionResolved> {
        let SessionUpdate::Unknown(unknown) = update else { return None };
        if unknown.0.get("sessionUpdate").and_then(|k| k.as_str()) != Some(PERMISSION_RESOLVED) {
            return None;
        }
        serde_json::from_value(serde_json::Value::Object(unknown.0.clone())).ok()
    }
}
