//! The `news` prompt word: one update of each kind that needs a client capability (newest v1
//! schema), each refused by the core when the client did not advertise it.

use acp_blocking::acp_proto::types::*;
use acp_blocking::{Error, PromptContext};

/// Whether `text` contains the word `news` (any case, delimited by non-alphanumerics).
pub fn is_news(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|w| w.eq_ignore_ascii_case("news"))
}

/// The updates sent for `news`, each with the capability it needs.
fn updates(call_id: &str) -> Vec<(&'static str, SessionUpdate)> {
    let mut notice = Notice::new(NoticeSeverity::Warning, "The reference agent has news");
    notice.description = Some("Sent because the prompt says `news`.".to_owned());
    let items = PlanItems { plan_id: "plan-news".into(), entries: news_entries(), meta: None };
    let mut compaction = CompactionUpdate::new("compaction-1", CompactionStatus::Completed);
    compaction.summary = Some(Some(vec![ContentBlock::text("Earlier turns were summarized.")]));
    let mut subagent = SubagentUpdate::new("sess-news-child");
    subagent.title = Some(Some("Reader".to_owned()));
    subagent.state = Some(Some(StateUpdate::Running(RunningStateUpdate::default())));
    let mut message = SessionMessage::new("msg-news");
    message.recipient_session_id = Some(Some("sess-news-child".into()));
    message.content = Some(Some(vec![ContentBlock::text("Please read the file.")]));
    let markdown = PlanMarkdown {
        plan_id: "plan-notes".into(),
        content: "## Notes\n- read the *news*\n- tell the user".to_owned(),
        path: None,
        meta: None,
    };
    let chunk = SessionMessageChunk::new("msg-news", ContentBlock::text(" And summarize it."));
    let mut call = ToolCall::new(call_id, "Look up the news");
    call.name = Some("lookup_news".to_owned());
    call.kind = Some(ToolKind::Fetch);
    call.status = Some(ToolCallStatus::Completed);
    vec![
        ("session.notices", SessionUpdate::Notice(notice)),
        ("plan", SessionUpdate::PlanUpdate(PlanUpdate::new(PlanUpdateContent::Items(items)))),
        ("plan", SessionUpdate::PlanUpdate(PlanUpdate::new(PlanUpdateContent::Markdown(markdown)))),
        ("plan", SessionUpdate::PlanRemoved(PlanRemoved::new("plan-old"))),
        ("session.compaction", SessionUpdate::CompactionUpdate(compaction)),
        (
            "session.compaction",
            SessionUpdate::CompactionSummaryChunk(CompactionSummaryChunk::new(
                "compaction-1",
                ContentBlock::text("More summary."),
            )),
        ),
        ("subagents", SessionUpdate::SubagentUpdate(Box::new(subagent))),
        ("subagents", SessionUpdate::SessionMessage(message)),
        ("subagents", SessionUpdate::SessionMessageChunk(chunk)),
        ("(none)", SessionUpdate::ToolCall(call)),
    ]
}

fn news_entries() -> Vec<PlanEntry> {
    vec![
        PlanEntry::new("Gather the news", PlanEntryPriority::High, PlanEntryStatus::Completed),
        PlanEntry::new("Tell the user", PlanEntryPriority::Medium, PlanEntryStatus::InProgress),
    ]
}

/// Sends the `news` updates; one the core refuses (the client did not advertise its
/// capability) is reported in an `agent_message_chunk` `not sent: KIND (needs CAPABILITY)`.
/// Errors only when the turn can no longer send at all.
pub(super) fn send_news(cx: &PromptContext, call_id: &str) -> Result<(), Error> {
    for (capability, update) in updates(call_id) {
        let kind = update_kind(&update);
        if cx.send_update(update).is_err() {
            cx.send_text(format!("not sent: {kind} (needs {capability})\n"))?;
        }
    }
    Ok(())
}

fn update_kind(update: &SessionUpdate) -> &'static str {
    match update {
        SessionUpdate::Notice(_) => "notice",
        SessionUpdate::PlanUpdate(_) => "plan_update",
        SessionUpdate::PlanRemoved(_) => "plan_removed",
        SessionUpdate::CompactionUpdate(_) => "compaction_update",
        SessionUpdate::CompactionSummaryChunk(_) => "compaction_summary_chunk",
        SessionUpdate::SubagentUpdate(_) => "subagent_update",
        SessionUpdate::SessionMessage(_) => "session_message",
        SessionUpdate::SessionMessageChunk(_) => "session_message_chunk",
        _ => "tool_call",
    }
}
