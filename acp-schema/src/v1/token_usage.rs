//! **Unstable** end-of-turn token usage (feature `unstable_end_turn_token_usage`): [`Usage`],
//! carried by [`PromptResponse::usage`](super::PromptResponse::usage) (the turn's usage, when
//! the agent reports it) and [`IdleStateUpdate::usage`](super::IdleStateUpdate::usage) (a
//! subagent's completed foreground work). No capability announces it: a client that does not
//! know the field ignores it, so an agent may always send it. Without the feature the fields
//! still exist (so that struct literals compile whatever features cargo unifies) but are never
//! decoded: `PromptResponse` ignores the key, `IdleStateUpdate` keeps it verbatim in its `extra`
//! keys; a value set on them is refused when encoded. Upstream may change or remove it in any
//! release.
//!
//! ```
//! # #[cfg(feature = "unstable_end_turn_token_usage")] {
//! use acp_schema::v1::{PromptResponse, StopReason, Usage};
//! let mut done = PromptResponse::new(StopReason::EndTurn);
//! done.usage = Some(Usage::new(1200, 1000, 200));
//! let wire = serde_json::to_value(&done).unwrap();
//! assert_eq!(wire["usage"], serde_json::json!({"totalTokens": 1200, "inputTokens": 1000, "outputTokens": 200}));
//! # }
//! ```

use serde::{Deserialize, Serialize};

use super::serde_util::{Meta, lenient};

/// Token usage of a prompt turn (or of a subagent's foreground work). The three totals are
/// required; the finer counts are optional and dropped when malformed
/// (`x-deserialize-default-on-error`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// All token kinds together.
    pub total_tokens: u64,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Thought (reasoning) tokens, if reported.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub thought_tokens: Option<u64>,
    /// Tokens read from the cache, if reported.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub cached_read_tokens: Option<u64>,
    /// Tokens written to the cache, if reported.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub cached_write_tokens: Option<u64>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Usage {
    /// `total` tokens, of which `input` in and `output` out; nothing finer reported.
    pub fn new(total: u64, input: u64, output: u64) -> Self {
        Usage {
            total_tokens: total,
            input_tokens: input,
            output_tokens: output,
            thought_tokens: None,
            cached_read_tokens: None,
            cached_write_tokens: None,
            meta: None,
        }
    }
}

#[cfg(all(test, feature = "unstable_end_turn_token_usage"))]
mod tests {
    use serde_json::json;

    use super::super::{IdleStateUpdate, PromptResponse};
    use super::*;

    #[test]
    fn usage_is_strict_in_its_totals_and_lenient_in_the_rest() {
        let u: Usage = serde_json::from_value(json!({
            "totalTokens": 10, "inputTokens": 6, "outputTokens": 4, "thoughtTokens": -1, "cachedReadTokens": 2
        }))
        .unwrap();
        assert_eq!((u.thought_tokens, u.cached_read_tokens), (None, Some(2)));
        assert!(serde_json::from_value::<Usage>(json!({"totalTokens": 1, "inputTokens": 1})).is_err());
        assert!(
            serde_json::from_value::<Usage>(json!({"totalTokens": 1.5, "inputTokens": 1, "outputTokens": 0})).is_err()
        );
        // A malformed usage does not fail the answer or the state that carries it.
        let r: PromptResponse =
            serde_json::from_value(json!({"stopReason": "end_turn", "usage": {"totalTokens": "x"}})).unwrap();
        assert_eq!(r.usage, None);
        let idle: IdleStateUpdate = serde_json::from_value(
            json!({"stopReason": "end_turn", "usage": {"totalTokens": 3, "inputTokens": 2, "outputTokens": 1}}),
        )
        .unwrap();
        assert_eq!(idle.usage, Some(Usage::new(3, 2, 1)));
        assert!(idle.extra.is_empty(), "a typed field, not an extra key");
    }
}
