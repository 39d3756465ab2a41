//! Exhaustive struct literals (no `..`) of the stable types that carry unstable fields, in a
//! crate that never enables an `unstable_*` feature of acp-proto. They must keep compiling when
//! another crate of the build turns those features on (cargo unifies features), which CI checks
//! by building this test both ways:
//!
//! ```text
//! cargo test -p acp-services --test services unstable_literals::
//! cargo test -p acp-services --test services unstable_literals:: --features acp-proto/unstable
//! ```
//!
//! The unset unstable fields stay off the wire in both builds.

use acp_proto::types::*;
use serde_json::json;

#[test]
fn literals_without_the_features_compile_and_encode_the_stable_shape() {
    let mcp = McpCapabilities { http: true, sse: false, acp: false, meta: None };
    let session = SessionCapabilities {
        list: Some(SessionListCapabilities::default()),
        delete: None,
        additional_directories: None,
        system_prompt: None,
        resume: None,
        close: None,
        fork: None,
        archive: None,
        status: None,
        options: None,
        title: None,
        meta: None,
    };
    let auth = AgentAuthCapabilities { status: None, logout: None, meta: None };
    let agent = AgentCapabilities {
        load_session: true,
        prompt_capabilities: PromptCapabilities::default(),
        mcp_capabilities: mcp,
        session_capabilities: session,
        auth,
        providers: None,
        meta: None,
    };
    let wire = serde_json::to_value(&agent).unwrap();
    assert_eq!(wire["mcpCapabilities"], json!({"http": true, "sse": false}));
    assert_eq!(wire["sessionCapabilities"], json!({"list": {}}));
    assert_eq!(wire["auth"], json!({}));
    assert!(wire.get("providers").is_none(), "{wire}");

    let client = ClientSessionCapabilities {
        compaction: None,
        config_options: None,
        notices: None,
        prompt_suggestions: None,
        cursors: None,
        meta: None,
    };
    assert_eq!(serde_json::to_value(&client).unwrap(), json!({}));

    let list = ListSessionsRequest { cwd: Some("/w".into()), cursor: None, archived: None, meta: None };
    assert_eq!(serde_json::to_value(&list).unwrap(), json!({"cwd": "/w"}));
    let info = SessionInfo {
        session_id: "s".into(),
        cwd: "/w".into(),
        additional_directories: None,
        title: None,
        updated_at: None,
        archived: None,
        meta: None,
    };
    assert_eq!(serde_json::to_value(&info).unwrap(), json!({"sessionId": "s", "cwd": "/w"}));

    let done = PromptResponse { stop_reason: StopReason::EndTurn, usage: None, meta: None };
    assert_eq!(serde_json::to_value(&done).unwrap(), json!({"stopReason": "end_turn"}));
    let idle = IdleStateUpdate { stop_reason: None, error: None, usage: None, meta: None, extra: Default::default() };
    assert_eq!(serde_json::to_value(&idle).unwrap(), json!({}));
}
