//! **Unstable** prompt suggestions (feature `unstable_prompt_suggestions`): prompts the agent
//! predicts the user will send next, streamed as the `prompt_suggestions_update` session update.
//!
//! A client opts in with `session.promptSuggestions` in its capabilities
//! ([`PromptSuggestionsCapabilities`], a field of
//! [`ClientSessionCapabilities`](super::ClientSessionCapabilities)); the connection refuses to
//! send the update to a client that did not (see `acp_proto::gate`'s content rules), and decodes
//! it whatever the client advertised. Each update replaces the session's list; an empty list
//! withdraws the suggestions. Suggestions are not history: agents should not replay them.
//!
//! Upstream may change or remove this in any release.
//!
//! ```
//! use acp_schema::v1::{ContentBlock, PromptSuggestion, PromptSuggestionsUpdate, SessionUpdate};
//! let update = SessionUpdate::PromptSuggestionsUpdate(PromptSuggestionsUpdate::new(vec![
//!     PromptSuggestion::text("Run the tests"),
//!     PromptSuggestion::new(vec![ContentBlock::text("Explain this file")]).unwrap(),
//! ]));
//! let json = serde_json::to_value(&update).unwrap();
//! assert_eq!(json["sessionUpdate"], "prompt_suggestions_update");
//! assert_eq!(json["suggestions"][0]["prompt"][0]["text"], "Run the tests");
//! // A suggestion without content is malformed: it is dropped from the list on decode.
//! let read: PromptSuggestionsUpdate =
//!     serde_json::from_value(serde_json::json!({"suggestions": [{"prompt": []}, json["suggestions"][1]]}))
//!         .unwrap();
//! assert_eq!(read.suggestions.len(), 1);
//! ```
//!
//! [`PromptSuggestionsCapabilities`]: super::PromptSuggestionsCapabilities

use serde::{Deserialize, Deserializer, Serialize};

use super::content::ContentBlock;
use super::serde_util::{Meta, lenient, lenient_items};

/// A prompt the agent predicts the user will send next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptSuggestion {
    /// The suggested prompt, at least one block; the client can send it unchanged as the
    /// `prompt` of `session/prompt`. Agents use `text` and `resource_link` blocks, and other
    /// kinds only when both their prompt capabilities and the client's
    /// [`PromptSuggestionsCapabilities`] allow them. An empty list is refused on decode.
    ///
    /// [`PromptSuggestionsCapabilities`]: super::PromptSuggestionsCapabilities
    #[serde(deserialize_with = "non_empty_prompt")]
    pub prompt: Vec<ContentBlock>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PromptSuggestion {
    /// A suggestion of these blocks; `None` when `prompt` is empty (the schema needs one).
    pub fn new(prompt: Vec<ContentBlock>) -> Option<Self> {
        (!prompt.is_empty()).then_some(PromptSuggestion { prompt, meta: None })
    }

    /// A suggestion of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        PromptSuggestion { prompt: vec![ContentBlock::text(text)], meta: None }
    }
}

fn non_empty_prompt<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ContentBlock>, D::Error> {
    let prompt = Vec::<ContentBlock>::deserialize(d)?;
    if prompt.is_empty() {
        return Err(serde::de::Error::custom("a prompt suggestion needs at least one content block"));
    }
    Ok(prompt)
}

/// The `prompt_suggestions_update` session update: the session's suggestions, replaced whole.
/// Send only to a client that advertised `session.promptSuggestions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptSuggestionsUpdate {
    /// The suggestions, most likely first; empty withdraws them. Malformed entries are dropped.
    #[serde(deserialize_with = "lenient_items")]
    pub suggestions: Vec<PromptSuggestion>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PromptSuggestionsUpdate {
    /// Replaces the list with `suggestions`.
    pub fn new(suggestions: Vec<PromptSuggestion>) -> Self {
        PromptSuggestionsUpdate { suggestions, meta: None }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_update_round_trips_and_drops_malformed_suggestions() {
        let wire = json!({"suggestions": [
            {"prompt": [{"type": "text", "text": "go"}], "_meta": {"k": 1}},
            {"prompt": []},
            {"nope": true},
        ]});
        let update: PromptSuggestionsUpdate = serde_json::from_value(wire).unwrap();
        assert_eq!(update.suggestions.len(), 1);
        assert_eq!(update.suggestions[0].prompt, vec![ContentBlock::text("go")]);
        let back = serde_json::to_value(&update).unwrap();
        assert_eq!(back, json!({"suggestions": [{"prompt": [{"type": "text", "text": "go"}], "_meta": {"k": 1}}]}));
        assert!(serde_json::from_value::<PromptSuggestionsUpdate>(json!({})).is_err(), "suggestions is required");
        assert_eq!(PromptSuggestion::new(Vec::new()), None);
    }

    #[test]
    fn capabilities_read_objects_and_tolerate_malformed_fields() {
        use crate::v1::PromptSuggestionsCapabilities;
        let caps: PromptSuggestionsCapabilities =
            serde_json::from_value(json!({"image": {}, "audio": null, "embeddedContext": 3})).unwrap();
        assert!(caps.image.is_some() && caps.audio.is_none() && caps.embedded_context.is_none());
        assert_eq!(serde_json::to_value(&caps).unwrap(), json!({"image": {}}));
    }
}
