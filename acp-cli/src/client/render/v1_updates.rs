//! Drawing the session updates of the newest v1 schema that need a client capability: notices
//! (`session.notices`), compactions (`session.compaction`), ID-addressed plans (`plan`),
//! subagents and inter-session messages (`subagents`). The client advertises exactly these
//! (see `offer::advertised`); everything goes through the sanitizing writers
//! of the parent module.

use acp_blocking::acp_proto::types::*;

use super::{MAX_LINE_CHARS, MAX_TEXT_LINES, Renderer, block_text, shorten};

impl Renderer {
    /// A `notice`: `notice (severity): title`, then its description.
    pub(super) fn notice(&mut self, notice: &Notice) {
        let code = match notice.severity {
            NoticeSeverity::Error => "31",
            NoticeSeverity::Warning => "33",
            _ => "36",
        };
        let tag = format!("notice ({}): ", notice.severity.as_str());
        self.line(&[(code, "!"), ("", " "), (code, &tag), ("1", &notice.title)]);
        if let Some(description) = &notice.description {
            self.text_lines("    ", description);
        }
    }

    /// A `compaction_update`: its status, then its summary or error when given.
    pub(super) fn compaction(&mut self, update: &CompactionUpdate) {
        let status = update.status.as_str().replace('_', " ");
        let head = format!("context compaction {}: {status}", update.compaction_id);
        self.line(&[("35", "⇲"), ("", " "), ("", &head)]);
        if let Some(Some(summary)) = &update.summary {
            for block in summary {
                self.text_lines("    summary: ", &block_text(block));
            }
        }
        if let Some(Some(error)) = &update.error {
            self.line(&[("31", "    error: "), ("31", error)]);
        }
    }

    /// A piece of a compaction's summary.
    pub(super) fn compaction_chunk(&mut self, chunk: &CompactionSummaryChunk) {
        let head = format!("    summary of {}: ", chunk.compaction_id);
        self.text_lines(&head, &block_text(&chunk.content));
    }

    /// A `plan_update`: the steps as a checklist, or the Markdown text.
    pub(super) fn plan_update(&mut self, update: &PlanUpdate) {
        match &update.plan {
            PlanUpdateContent::Items(items) => {
                self.line(&[("1", "Plan "), ("1", items.plan_id.as_ref())]);
                for entry in &items.entries {
                    self.plan_entry(entry);
                }
            }
            PlanUpdateContent::Markdown(markdown) => {
                let path = markdown.path.as_ref().map(|p| format!(" ({p})")).unwrap_or_default();
                self.line(&[("1", "Plan "), ("1", markdown.plan_id.as_ref()), ("2", &path)]);
                self.text_lines("  ", &markdown.content);
            }
            _ => self.info("plan updated (a kind this client does not know)"),
        }
    }

    /// A `plan_removed`.
    pub(super) fn plan_removed(&mut self, removed: &PlanRemoved) {
        self.info(&format!("plan {} removed", removed.plan_id));
    }

    /// A `subagent_update`: the child session, its title, state and description when given.
    pub(super) fn subagent(&mut self, update: &SubagentUpdate) {
        let title = update.title.clone().flatten().map(|t| format!(" {t}")).unwrap_or_default();
        let state = match &update.state {
            Some(Some(StateUpdate::Running(_))) => " (running)".to_owned(),
            Some(Some(StateUpdate::Idle(idle))) => match &idle.stop_reason {
                Some(reason) => format!(" (idle: {})", reason.as_str()),
                None => " (idle)".to_owned(),
            },
            Some(Some(StateUpdate::RequiresAction(_))) => " (waiting for you)".to_owned(),
            Some(Some(_)) => " (state unknown)".to_owned(),
            _ => String::new(),
        };
        let head = format!("subagent {}", update.session_id);
        self.line(&[("34", "◆"), ("", " "), ("", &head), ("1", &title), ("2", &state)]);
        if let Some(Some(description)) = &update.description {
            self.text_lines("    ", description);
        }
    }

    /// A `session_message`: who sent it to whom, and its content when given.
    pub(super) fn session_message(&mut self, message: &SessionMessage) {
        let from = message.sender_session_id.clone().flatten().map(|s| format!(" from {s}")).unwrap_or_default();
        let to = message.recipient_session_id.clone().flatten().map(|s| format!(" to {s}")).unwrap_or_default();
        let head = format!("message {}{from}{to}", message.message_id);
        self.line(&[("34", "✉"), ("", " "), ("", &head)]);
        if let Some(Some(content)) = &message.content {
            for block in content {
                self.text_lines("    ", &block_text(block));
            }
        }
    }

    /// A piece of a `session_message`.
    pub(super) fn session_message_chunk(&mut self, chunk: &SessionMessageChunk) {
        let head = format!("    {}: ", chunk.message_id);
        self.text_lines(&head, &block_text(&chunk.content));
    }

    /// Peer text as lines after `prefix`, capped like tool call text.
    fn text_lines(&mut self, prefix: &str, text: &str) {
        let mut lines = text.lines();
        for line in lines.by_ref().take(MAX_TEXT_LINES) {
            self.line(&[("2", prefix), ("", &shorten(line, MAX_LINE_CHARS))]);
        }
        let more = lines.count();
        if more > 0 {
            self.info(&format!("{prefix}… {more} more lines"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Style;
    use super::super::tests::Buf;
    use super::*;

    #[test]
    fn peer_text_of_the_new_kinds_is_drawn_inert_and_capped() {
        let buf = Buf::default();
        let style = Style { color: false, spinner: false };
        let mut r = Renderer::new(Box::new(buf.clone()), Box::new(Buf::default()), style);
        let mut notice = Notice::new(NoticeSeverity::Error, "\x1b]0;owned\x07title");
        notice.description = Some((0..MAX_TEXT_LINES + 3).map(|i| format!("line {i}\n")).collect());
        r.update(&SessionUpdate::Notice(notice));
        let mut subagent = SubagentUpdate::new("child\x1b[2J");
        subagent.title = Some(Some("t\ri".to_owned()));
        r.update(&SessionUpdate::SubagentUpdate(Box::new(subagent)));
        let out = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert!(!out.contains('\x1b') && !out.contains('\x07') && !out.contains('\r'), "{out:?}");
        assert!(out.starts_with("! notice (error): "), "{out:?}");
        assert!(out.contains("◆ subagent child"), "{out:?}");
        assert!(out.contains("    … 3 more lines\n"), "{out:?}");
        assert_eq!(out.lines().filter(|l| l.starts_with("    line ")).count(), MAX_TEXT_LINES, "{out:?}");
    }
}
