//! One test per content rule of the module docs.

use serde_json::{Value, json};

use super::*;
use crate::types::*;

fn snap(caps: Value) -> CapabilitySnapshot {
    CapabilitySnapshot::from_json(caps)
}

/// `update` is denied with `needs` against `{}`, `null` and `false` at the path, and allowed
/// against `allowing`.
fn assert_update_rule(update: SessionUpdate, needs: &'static [&'static str], allowing: Value) {
    for denying in [json!({}), json!({"plan": null, "subagents": false, "session": {"notices": null}})] {
        assert_eq!(check_update(Some(&snap(denying)), &update), GateDecision::Denied { capability: needs });
    }
    assert_eq!(check_update(None, &update), GateDecision::Denied { capability: needs });
    assert_eq!(check_update(Some(&snap(allowing)), &update), GateDecision::Allowed, "{update:?}");
}

#[test]
fn plan_updates_need_plan() {
    assert_update_rule(SessionUpdate::PlanUpdate(PlanUpdate::markdown("p", "# x")), &["plan"], json!({"plan": {}}));
    assert_update_rule(SessionUpdate::PlanRemoved(PlanRemoved::new("p")), &["plan"], json!({"plan": {}}));
}

#[test]
fn notices_need_session_notices() {
    let notice = SessionUpdate::Notice(Notice::new(NoticeSeverity::Warning, "w"));
    assert_update_rule(notice, &["session", "notices"], json!({"session": {"notices": {}}}));
}

#[cfg(feature = "unstable_prompt_suggestions")]
#[test]
fn prompt_suggestions_need_session_prompt_suggestions() {
    let update =
        SessionUpdate::PromptSuggestionsUpdate(PromptSuggestionsUpdate::new(vec![PromptSuggestion::text("go")]));
    assert_update_rule(update, &["session", "promptSuggestions"], json!({"session": {"promptSuggestions": {}}}));
}

#[cfg(feature = "unstable_session_cursors")]
#[test]
fn cursor_updates_need_session_cursors() {
    let anchor = CursorAnchor::after_message(CursorAnchorKind::UserMessage, "m1");
    let update = SessionUpdate::CursorUpdate(CursorUpdate::new("c1", anchor));
    assert_update_rule(update, &["session", "cursors"], json!({"session": {"cursors": {}}}));
}

#[test]
fn compaction_updates_need_session_compaction() {
    let caps = json!({"session": {"compaction": {}}});
    let update = SessionUpdate::CompactionUpdate(CompactionUpdate::new("c", CompactionStatus::InProgress));
    assert_update_rule(update, &["session", "compaction"], caps.clone());
    let chunk = SessionUpdate::CompactionSummaryChunk(CompactionSummaryChunk::new("c", ContentBlock::text("t")));
    assert_update_rule(chunk, &["session", "compaction"], caps);
}

#[test]
fn subagent_updates_and_session_messages_need_subagents() {
    let caps = json!({"subagents": {}});
    assert_update_rule(
        SessionUpdate::SubagentUpdate(Box::new(SubagentUpdate::new("child"))),
        &["subagents"],
        caps.clone(),
    );
    assert_update_rule(SessionUpdate::SessionMessage(SessionMessage::new("m")), &["subagents"], caps.clone());
    let chunk = SessionUpdate::SessionMessageChunk(SessionMessageChunk::new("m", ContentBlock::text("t")));
    assert_update_rule(chunk, &["subagents"], caps);
}

#[test]
fn other_update_kinds_are_not_gated() {
    let chunk = SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text("t")));
    assert_eq!(check_update(None, &chunk), GateDecision::Allowed);
    let mut call = ToolCall::new("t", "title");
    call.content = Some(vec![ToolCallContent::Session(SessionReference::new("child"))]);
    assert_eq!(check_update(Some(&snap(json!({}))), &SessionUpdate::ToolCall(call)), GateDecision::Allowed);
}

#[test]
fn form_elicitation_needs_elicitation_form() {
    let req = CreateElicitationRequest::form("m", "s", ElicitationSchema::new());
    let denied = GateDecision::Denied { capability: &["elicitation", "form"] };
    assert_eq!(check_elicitation(Some(&snap(json!({"elicitation": {"url": {}}}))), &req), denied);
    assert_eq!(check_elicitation(Some(&snap(json!({"elicitation": {"form": {}}}))), &req), GateDecision::Allowed);
}

#[test]
fn url_elicitation_needs_elicitation_url() {
    let req = CreateElicitationRequest::url("m", "s", "e", "https://example.com");
    let denied = GateDecision::Denied { capability: &["elicitation", "url"] };
    assert_eq!(check_elicitation(Some(&snap(json!({"elicitation": {"form": {}}}))), &req), denied);
    assert_eq!(check_elicitation(Some(&snap(json!({"elicitation": {"url": {}}}))), &req), GateDecision::Allowed);
}

#[test]
fn terminal_auth_methods_need_auth_terminal() {
    let terminal = AuthMethod::Terminal(AuthMethodTerminal::new("tui", "Log in"));
    assert!(!allows_auth_method(Some(&snap(json!({}))), &terminal));
    assert!(!allows_auth_method(Some(&snap(json!({"auth": {"terminal": false}}))), &terminal));
    assert!(allows_auth_method(Some(&snap(json!({"auth": {"terminal": true}}))), &terminal));
    assert!(allows_auth_method(None, &AuthMethod::Agent(AuthMethodAgent::new("a", "A"))));
}

#[test]
fn system_prompts_need_the_agents_system_prompt_capability() {
    let append = SystemPrompt::append("x");
    let denied = GateDecision::Denied { capability: &["sessionCapabilities", "systemPrompt"] };
    assert_eq!(check_system_prompt(Some(&snap(json!({"sessionCapabilities": {}}))), &append), denied);
    let caps = snap(json!({"sessionCapabilities": {"systemPrompt": {}}}));
    assert_eq!(check_system_prompt(Some(&caps), &append), GateDecision::Allowed);
}

#[test]
fn override_system_prompts_need_the_override_mode() {
    let over = SystemPrompt::override_with("x");
    let caps = snap(json!({"sessionCapabilities": {"systemPrompt": {}}}));
    assert!(matches!(check_system_prompt(Some(&caps), &over), GateDecision::Denied { .. }));
    let caps = snap(json!({"sessionCapabilities": {"systemPrompt": {"mode": {"override": {}}}}}));
    assert_eq!(check_system_prompt(Some(&caps), &over), GateDecision::Allowed);
}

/// The example of the module docs (their doctest while the module was public).
#[test]
fn module_docs_example() {
    use crate::gate::{CapabilitySnapshot, GateDecision, check_update};
    use crate::types::{Notice, NoticeSeverity, SessionUpdate};
    let notice = SessionUpdate::Notice(Notice::new(NoticeSeverity::Info, "Indexing"));
    let plain = CapabilitySnapshot::from_json(serde_json::json!({}));
    let opted_in = CapabilitySnapshot::from_json(serde_json::json!({"session": {"notices": {}}}));
    assert_eq!(check_update(Some(&plain), &notice), GateDecision::Denied { capability: &["session", "notices"] });
    assert_eq!(check_update(Some(&opted_in), &notice), GateDecision::Allowed);
}
