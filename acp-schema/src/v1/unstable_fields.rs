//! The unstable fields of stable types exist in every build (see
//! [`session_options`](super::session_options)); these tests pin their wire form with and
//! without their feature. With it a field is encoded and decoded; without it a set value is
//! refused when encoded (the error names the feature) and the key is ignored when decoded.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::*;

/// Encodes `value` (whose unstable field is set), and decodes `wire` (an object holding that
/// field's key at `pointer`) to see whether the field came out set.
fn check<T: Serialize + DeserializeOwned>(
    feature: &str,
    enabled: bool,
    value: T,
    pointer: &str,
    wire: Value,
    is_set: fn(&T) -> bool,
) {
    let expected = wire.pointer(pointer).cloned();
    assert!(expected.is_some(), "{feature}: the wire of the case holds {pointer}");
    assert!(is_set(&value), "{feature}: the case sets its field");
    match serde_json::to_value(&value) {
        Ok(encoded) => {
            assert!(enabled, "{feature}: encoded without the feature: {encoded}");
            assert_eq!(encoded.pointer(pointer).cloned(), expected, "{feature}");
        }
        Err(e) => {
            assert!(!enabled, "{feature}: refused with the feature: {e}");
            assert!(e.to_string().contains(feature), "{feature}: the error names the feature: {e}");
        }
    }
    let decoded: T = serde_json::from_value(wire).unwrap_or_else(|e| panic!("{feature}: {e}"));
    assert_eq!(is_set(&decoded), enabled, "{feature}: decoded {pointer}");
}

#[test]
fn agent_capability_fields_follow_their_features() {
    let caps = AgentCapabilities { providers: Some(ProvidersCapabilities::default()), ..Default::default() };
    let on = cfg!(feature = "unstable_llm_providers");
    check("unstable_llm_providers", on, caps, "/providers", json!({"providers": {}}), |c| c.providers.is_some());

    let mcp = McpCapabilities { acp: true, ..Default::default() };
    let on = cfg!(feature = "unstable_mcp_over_acp");
    check("unstable_mcp_over_acp", on, mcp, "/acp", json!({"acp": true}), |c| c.acp);

    let auth = AgentAuthCapabilities { status: Some(AuthStatusCapabilities::default()), ..Default::default() };
    let on = cfg!(feature = "unstable_auth_status");
    check("unstable_auth_status", on, auth, "/status", json!({"status": {}}), |c| c.status.is_some());
}

#[test]
fn session_capability_flags_follow_their_features() {
    type Flag = (&'static str, bool, &'static str, fn(&mut SessionCapabilities), fn(&SessionCapabilities) -> bool);
    let flags: [Flag; 5] = [
        (
            "unstable_session_fork",
            cfg!(feature = "unstable_session_fork"),
            "fork",
            |c| c.fork = Some(Default::default()),
            |c| c.fork.is_some(),
        ),
        (
            "unstable_session_archive",
            cfg!(feature = "unstable_session_archive"),
            "archive",
            |c| c.archive = Some(Default::default()),
            |c| c.archive.is_some(),
        ),
        (
            "unstable_session_status",
            cfg!(feature = "unstable_session_status"),
            "status",
            |c| c.status = Some(Default::default()),
            |c| c.status.is_some(),
        ),
        (
            "unstable_session_options",
            cfg!(feature = "unstable_session_options"),
            "options",
            |c| c.options = Some(Default::default()),
            |c| c.options.is_some(),
        ),
        (
            "unstable_session_set_title",
            cfg!(feature = "unstable_session_set_title"),
            "title",
            |c| c.title = Some(Default::default()),
            |c| c.title.is_some(),
        ),
    ];
    for (feature, on, key, set, is_set) in flags {
        let mut caps = SessionCapabilities::default();
        set(&mut caps);
        check(feature, on, caps, &format!("/{key}"), json!({ key: {} }), is_set);
    }
}

#[test]
fn client_capability_fields_follow_their_features() {
    let caps = ClientSessionCapabilities {
        prompt_suggestions: Some(PromptSuggestionsCapabilities::default()),
        ..Default::default()
    };
    let on = cfg!(feature = "unstable_prompt_suggestions");
    let wire = json!({"promptSuggestions": {}});
    check("unstable_prompt_suggestions", on, caps, "/promptSuggestions", wire, |c| c.prompt_suggestions.is_some());

    let caps = ClientSessionCapabilities { cursors: Some(SessionCursorsCapabilities::default()), ..Default::default() };
    let on = cfg!(feature = "unstable_session_cursors");
    check("unstable_session_cursors", on, caps, "/cursors", json!({"cursors": {}}), |c| c.cursors.is_some());
}

#[test]
fn session_list_archive_fields_follow_their_feature() {
    let on = cfg!(feature = "unstable_session_archive");
    let list = ListSessionsRequest { archived: Some(SessionArchiveFilter::Include), ..Default::default() };
    check("unstable_session_archive", on, list, "/archived", json!({"archived": "include"}), |l| l.archived.is_some());

    let mut info = SessionInfo::new("s", "/w");
    info.archived = Some(true);
    let wire = json!({"sessionId": "s", "cwd": "/w", "archived": true});
    check("unstable_session_archive", on, info, "/archived", wire, |i| i.archived.is_some());
}

#[test]
fn token_usage_fields_follow_their_feature() {
    let on = cfg!(feature = "unstable_end_turn_token_usage");
    let usage = json!({"totalTokens": 3, "inputTokens": 2, "outputTokens": 1});
    let mut done = PromptResponse::new(StopReason::EndTurn);
    done.usage = Some(Usage::new(3, 2, 1));
    let wire = json!({"stopReason": "end_turn", "usage": usage});
    check("unstable_end_turn_token_usage", on, done, "/usage", wire, |r| r.usage.is_some());

    let idle = IdleStateUpdate { usage: Some(Usage::new(3, 2, 1)), ..Default::default() };
    check("unstable_end_turn_token_usage", on, idle, "/usage", json!({"usage": usage}), |u| u.usage.is_some());
    // Without the feature the key is one of the kept unknown ones, and re-encodes as it came.
    let decoded: IdleStateUpdate = serde_json::from_value(json!({"usage": usage})).unwrap();
    assert_eq!(decoded.extra.contains_key("usage"), !on);
    assert_eq!(serde_json::to_value(&decoded).unwrap(), json!({"usage": usage}));
}

#[cfg(feature = "unstable_session_fork")]
#[test]
fn fork_cursor_follows_its_feature() {
    let on = cfg!(feature = "unstable_session_cursors");
    let mut fork = ForkSessionRequest::new("s", "/w");
    fork.cursor_id = Some(CursorId::from("c1"));
    let wire = json!({"sessionId": "s", "cwd": "/w", "cursorId": "c1"});
    check("unstable_session_cursors", on, fork, "/cursorId", wire, |f| f.cursor_id.is_some());
}

/// Unset, every such field stays off the wire in every build: the stable encoding is unchanged.
#[test]
fn unset_fields_are_never_written() {
    let wire = serde_json::to_value(AgentCapabilities::default()).unwrap();
    assert!(wire.get("providers").is_none(), "{wire}");
    assert_eq!(serde_json::to_value(SessionCapabilities::default()).unwrap(), json!({}));
    assert_eq!(serde_json::to_value(McpCapabilities::default()).unwrap(), json!({"http": false, "sse": false}));
    assert_eq!(serde_json::to_value(AgentAuthCapabilities::default()).unwrap(), json!({}));
    assert_eq!(serde_json::to_value(ClientSessionCapabilities::default()).unwrap(), json!({}));
    assert_eq!(serde_json::to_value(ListSessionsRequest::default()).unwrap(), json!({}));
    assert_eq!(serde_json::to_value(SessionInfo::new("s", "/w")).unwrap(), json!({"sessionId": "s", "cwd": "/w"}));
    let done = PromptResponse::new(StopReason::EndTurn);
    assert_eq!(serde_json::to_value(&done).unwrap(), json!({"stopReason": "end_turn"}));
    assert_eq!(serde_json::to_value(IdleStateUpdate::default()).unwrap(), json!({}));
}
