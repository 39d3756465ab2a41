//! Client-provided system prompts (`systemPrompt` on `session/new`, `session/load` and
//! `session/resume`) and the agent capabilities that allow them.

use serde::{Deserialize, Serialize};

use super::content::ContentBlock;
use super::serde_ext::{lenient_object, meta_only};
use super::serde_util::{Meta, lenient};

/// System-level instructions a client gives a session.
///
/// Send only to an agent that advertises `sessionCapabilities.systemPrompt`; an agent that
/// cannot apply it answers the session request with an error. `content` must not be empty and
/// holds `text` blocks only until a future capability allows more.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemPrompt {
    /// How the agent combines `content` with its own instructions.
    pub mode: SystemPromptMode,
    /// The instructions.
    pub content: Vec<ContentBlock>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SystemPrompt {
    /// Instructions appended to the agent's own, as one text block.
    pub fn append(text: impl Into<String>) -> Self {
        SystemPrompt { mode: SystemPromptMode::Append, content: vec![ContentBlock::text(text)], meta: None }
    }

    /// Instructions replacing the agent's own, as one text block (needs the agent's
    /// `sessionCapabilities.systemPrompt.mode.override`).
    pub fn override_with(text: impl Into<String>) -> Self {
        SystemPrompt { mode: SystemPromptMode::Override, content: vec![ContentBlock::text(text)], meta: None }
    }
}

crate::v1::serde_util::string_enum! {
    /// How a [`SystemPrompt`] combines with the agent's own instructions.
    pub enum SystemPromptMode {
        /// Added after the agent's instructions (always supported with the capability).
        Append = "append",
        /// Replaces the agent's instructions (needs the `override` mode capability).
        Override = "override",
    }
}

/// Marks `systemPrompt` as accepted on session requests, in `append` mode and the listed modes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSystemPromptCapabilities {
    /// Modes supported beyond `append`; absent means `append` only.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub mode: Option<SessionSystemPromptModeCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// System prompt modes an agent supports beyond `append`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SessionSystemPromptModeCapabilities {
    /// Present when `override` mode is supported.
    #[serde(
        rename = "override",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_object"
    )]
    pub override_: Option<SessionSystemPromptOverrideCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

meta_only! {
    /// Marks `override` system prompts as supported (no options yet).
    SessionSystemPromptOverrideCapabilities
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn modes_and_capabilities_round_trip() {
        let p = SystemPrompt::override_with("be terse");
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v, json!({"mode": "override", "content": [{"type": "text", "text": "be terse"}]}));
        assert_eq!(serde_json::from_value::<SystemPrompt>(v).unwrap(), p);
        let caps: SessionSystemPromptCapabilities = serde_json::from_value(json!({"mode": {"override": {}}})).unwrap();
        assert!(caps.mode.unwrap().override_.is_some());
        let caps: SessionSystemPromptCapabilities =
            serde_json::from_value(json!({"mode": {"override": true}})).unwrap();
        assert!(caps.mode.unwrap().override_.is_none(), "a capability must be an object");
    }
}
