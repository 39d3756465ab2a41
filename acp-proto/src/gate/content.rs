//! The content rules of the gate: what a message may carry, given the receiver's capabilities.
//!
//! The method gate ([`check`](super::check)) decides per method. Some capabilities are opt-ins
//! for a *kind* of content inside an always-allowed method instead; these rules decide those,
//! with the same fail-closed reading of the capability object (a path must end in `true` or
//! an object). The connection applies them to what it sends only: what it receives is
//! decoded whatever it carries (inbound stays tolerant).
//!
//! | message (sent by) | content | needs, in the receiver's capabilities | on refusal |
//! |---|---|---|---|
//! | `session/update` (agent) | `plan_update`, `plan_removed` | `plan` | send refused |
//! | `session/update` (agent) | `notice` | `session.notices` | send refused |
//! | `session/update` (agent) | `prompt_suggestions_update` (feature `unstable_prompt_suggestions`) | `session.promptSuggestions` | send refused |
//! | `session/update` (agent) | `cursor_update` (feature `unstable_session_cursors`) | `session.cursors` | send refused |
//! | `session/update` (agent) | `compaction_update`, `compaction_summary_chunk` | `session.compaction` | send refused |
//! | `session/update` (agent) | `subagent_update`, `session_message`, `session_message_chunk` | `subagents` | send refused |
//! | `elicitation/create` (agent) | `mode: "form"` | `elicitation.form` | send refused |
//! | `elicitation/create` (agent) | `mode: "url"` | `elicitation.url` | send refused |
//! | `initialize` result (agent) | an `authMethods` entry of `type: "terminal"` | `auth.terminal` | entry left out |
//! | `session/new`, `session/load`, `session/resume` (client) | `systemPrompt` | `sessionCapabilities.systemPrompt` | send refused |
//! | same | `systemPrompt` with `mode: "override"` | `sessionCapabilities.systemPrompt.mode.override` | send refused |
//! | `session/new`, `session/load`, `session/resume`, `session/fork` (client) | a non-empty `configOptions` (feature `unstable_session_options`) | `sessionCapabilities.options` | send refused |
//!
//! Not gated: the other update kinds; `ToolCallContent` of `type: "session"` (display-only, the
//! schema ties it to no capability); an elicitation of an unknown (extension) mode, which needs
//! only the method's `elicitation`; a `systemPrompt` of an unknown mode, which needs only
//! `sessionCapabilities.systemPrompt` (the agent answers an error for a mode it lacks).
//!
//! The unit test `tests::module_docs_example` (in `content/tests.rs`) gates a `notice` update on
//! `session.notices`.

use super::{CapabilitySnapshot, GateDecision, path_allows};
use crate::types::{
    AuthMethod, CreateElicitationRequest, ElicitationMode, InitialSessionConfigOption, SessionUpdate, SystemPrompt,
    SystemPromptMode,
};

/// The capability path a session update kind needs in the client's capabilities (`[]`: none).
pub fn update_capability(update: &SessionUpdate) -> &'static [&'static str] {
    match update {
        SessionUpdate::PlanUpdate(_) | SessionUpdate::PlanRemoved(_) => &["plan"],
        SessionUpdate::Notice(_) => &["session", "notices"],
        #[cfg(feature = "unstable_prompt_suggestions")]
        SessionUpdate::PromptSuggestionsUpdate(_) => &["session", "promptSuggestions"],
        #[cfg(feature = "unstable_session_cursors")]
        SessionUpdate::CursorUpdate(_) => &["session", "cursors"],
        SessionUpdate::CompactionUpdate(_) | SessionUpdate::CompactionSummaryChunk(_) => &["session", "compaction"],
        SessionUpdate::SubagentUpdate(_) | SessionUpdate::SessionMessage(_) | SessionUpdate::SessionMessageChunk(_) => {
            &["subagents"]
        }
        _ => &[],
    }
}

/// The capability path an elicitation's mode needs in the client's capabilities.
pub fn elicitation_capability(request: &CreateElicitationRequest) -> &'static [&'static str] {
    match &request.mode {
        ElicitationMode::Form(_) => &["elicitation", "form"],
        ElicitationMode::Url(_) => &["elicitation", "url"],
        _ => &["elicitation"],
    }
}

/// The capability path a `systemPrompt` needs in the agent's capabilities.
pub fn system_prompt_capability(prompt: &SystemPrompt) -> &'static [&'static str] {
    match prompt.mode {
        SystemPromptMode::Override => &["sessionCapabilities", "systemPrompt", "mode", "override"],
        _ => &["sessionCapabilities", "systemPrompt"],
    }
}

fn decide(snapshot: Option<&CapabilitySnapshot>, capability: &'static [&'static str]) -> GateDecision {
    if capability.is_empty() {
        return GateDecision::Allowed;
    }
    match snapshot {
        Some(s) if path_allows(s.json(), capability) => GateDecision::Allowed,
        _ => GateDecision::Denied { capability },
    }
}

/// May this update kind be sent to a client with these capabilities?
pub fn check_update(snapshot: Option<&CapabilitySnapshot>, update: &SessionUpdate) -> GateDecision {
    decide(snapshot, update_capability(update))
}

/// May this elicitation (its mode) be sent to a client with these capabilities?
pub fn check_elicitation(snapshot: Option<&CapabilitySnapshot>, request: &CreateElicitationRequest) -> GateDecision {
    decide(snapshot, elicitation_capability(request))
}

/// May this `systemPrompt` be sent to an agent with these capabilities?
pub fn check_system_prompt(snapshot: Option<&CapabilitySnapshot>, prompt: &SystemPrompt) -> GateDecision {
    decide(snapshot, system_prompt_capability(prompt))
}

/// May these initial config option values (the `config_options` of a session setup request)
/// be sent to an agent with these capabilities? A non-empty list needs
/// `sessionCapabilities.options`; none, or an empty list, is always allowed.
pub fn check_initial_config(
    snapshot: Option<&CapabilitySnapshot>,
    config_options: Option<&[InitialSessionConfigOption]>,
) -> GateDecision {
    match config_options {
        Some(options) if !options.is_empty() => decide(snapshot, &["sessionCapabilities", "options"]),
        _ => GateDecision::Allowed,
    }
}

/// May this auth method be offered to a client with these capabilities? `terminal` methods
/// need `auth.terminal`; the others are always allowed.
pub fn allows_auth_method(snapshot: Option<&CapabilitySnapshot>, method: &AuthMethod) -> bool {
    match method {
        AuthMethod::Terminal(_) => decide(snapshot, &["auth", "terminal"]) == GateDecision::Allowed,
        _ => true,
    }
}

#[cfg(test)]
mod tests;
