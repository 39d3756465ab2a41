//! What the client shows: streamed message text, dimmed thoughts, the plan as a checklist,
//! tool calls with kind, status, locations, content and diffs, permission questions, a
//! spinner while waiting. Plain ANSI escapes, no dependency; no colour when `NO_COLOR` is set,
//! `TERM` is `dumb` or stdout is not a terminal, and no spinner when stdout is not a terminal.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};

use acp_blocking::acp_proto::types::*;

use super::diff::{DiffLine, line_diff};
use super::handler::Activity;

/// Lines of tool call text shown before the rest is elided.
const MAX_TEXT_LINES: usize = 12;
/// Lines of a diff shown before the rest is elided.
const MAX_DIFF_LINES: usize = 40;
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// How to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// ANSI colours and dimming.
    pub color: bool,
    /// An animated spinner while waiting (stdout is a terminal).
    pub spinner: bool,
}

impl Style {
    /// From the environment: colour only on a terminal without `NO_COLOR` or `TERM=dumb`; the
    /// spinner only on a terminal.
    pub fn detect() -> Style {
        let tty = std::io::stdout().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        Style { color: tty && !no_color && !dumb, spinner: tty && !dumb }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    None,
    Message,
    Thought,
}

/// What the renderer remembers of a tool call, to name it in later updates.
#[derive(Debug, Clone)]
struct Tool {
    title: String,
    status: Option<ToolCallStatus>,
}

/// Draws a session on `out` (agent output, questions) and `err` (the agent's stderr).
pub(crate) struct Renderer {
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
    style: Style,
    /// The cursor of `out` is at the start of a line.
    col0: bool,
    block: Block,
    /// The spinner's label while waiting.
    waiting: Option<String>,
    frame: usize,
    spinner_shown: bool,
    tools: HashMap<String, Tool>,
    tool_order: Vec<String>,
}

fn is_final(status: &Option<ToolCallStatus>) -> bool {
    matches!(status, Some(ToolCallStatus::Completed | ToolCallStatus::Failed))
}

impl Renderer {
    pub(crate) fn new(out: Box<dyn Write + Send>, err: Box<dyn Write + Send>, style: Style) -> Renderer {
        Renderer {
            out,
            err,
            style,
            col0: true,
            block: Block::None,
            waiting: None,
            frame: 0,
            spinner_shown: false,
            tools: HashMap::new(),
            tool_order: Vec::new(),
        }
    }

    /// `text` in the SGR style `code` (`2` dim, `1` bold, `31` red…), or plain.
    fn paint(&self, code: &str, text: &str) -> String {
        if self.style.color && !text.is_empty() { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }

    fn clear_spinner(&mut self) {
        if self.spinner_shown {
            // At a line start the spinner and its label fill the line; mid-line the cursor
            // sits on the spinner's one glyph: erase from there.
            let _ = self.out.write_all(if self.col0 { b"\r\x1b[2K" } else { b"\x1b[K" });
            self.spinner_shown = false;
        }
    }

    /// Writes `text` as is (already painted), tracking the line start.
    fn raw(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.clear_spinner();
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
        self.col0 = text.ends_with('\n');
    }

    fn newline_if_needed(&mut self) {
        if !self.col0 {
            self.raw("\n");
        }
    }

    /// A whole line, started on a fresh line.
    fn line(&mut self, text: &str) {
        self.set_block(Block::None);
        self.newline_if_needed();
        self.raw(&format!("{text}\n"));
    }

    fn set_block(&mut self, block: Block) {
        if self.block != block {
            self.newline_if_needed();
            self.block = block;
        }
    }

    /// Whether the cursor is at the start of a line.
    pub(crate) fn at_line_start(&self) -> bool {
        self.col0
    }

    /// Ends the last line, so that the shell's prompt starts on a fresh one.
    pub(crate) fn finish(&mut self) {
        self.waiting(None);
        self.newline_if_needed();
    }

    /// Shows the spinner with `label` while waiting (`None` stops it).
    pub(crate) fn waiting(&mut self, label: Option<&str>) {
        self.waiting = label.map(str::to_owned);
        if label.is_none() {
            self.clear_spinner();
            let _ = self.out.flush();
        }
    }

    /// Advances the spinner: with its label at the start of a line, as one glyph after
    /// streamed text (the cursor stays on it, so the next text overwrites it).
    pub(crate) fn tick(&mut self) {
        let Some(label) = self.waiting.clone() else { return };
        if !self.style.spinner {
            return;
        }
        self.frame = (self.frame + 1) % SPINNER.len();
        let glyph = self.paint("36", SPINNER[self.frame]);
        let text =
            if self.col0 { format!("\r\x1b[2K{glyph} {}", self.paint("2", &label)) } else { format!("{glyph}\x08") };
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
        self.spinner_shown = true;
    }

    /// A dimmed informational line.
    pub(crate) fn info(&mut self, text: &str) {
        let text = self.paint("2", text);
        self.line(&text);
    }

    /// A highlighted line (headers).
    pub(crate) fn heading(&mut self, text: &str) {
        let text = self.paint("1", text);
        self.line(&text);
    }

    /// An error, on `out` so that it sits in the transcript where it happened.
    pub(crate) fn error(&mut self, text: &str) {
        let text = self.paint("31", &format!("error: {text}"));
        self.line(&text);
    }

    /// A warning.
    pub(crate) fn warn(&mut self, text: &str) {
        let text = self.paint("33", text);
        self.line(&text);
    }

    /// The interactive prompt.
    pub(crate) fn prompt(&mut self) {
        self.set_block(Block::None);
        self.newline_if_needed();
        let prompt = self.paint("1;32", "> ");
        self.raw(&prompt);
    }

    /// After the user's line was read: on a terminal the user's Enter already moved the cursor;
    /// otherwise the line is written out so the transcript shows what was sent.
    pub(crate) fn input_read(&mut self, line: &str, echoed: bool) {
        if echoed {
            self.col0 = true;
        } else {
            self.raw(&format!("{line}\n"));
        }
    }

    /// A line the agent wrote to stderr (`--show-stderr`).
    pub(crate) fn stderr_line(&mut self, text: &str) {
        self.clear_spinner();
        if self.style.spinner {
            // Both streams share the screen: keep the line structure.
            self.newline_if_needed();
        }
        let text = self.paint("2", &format!("agent stderr │ {text}"));
        let _ = writeln!(self.err, "{text}");
        let _ = self.err.flush();
    }

    /// A new turn: forgets the last turn's tool calls.
    pub(crate) fn begin_turn(&mut self) {
        self.tools.clear();
        self.tool_order.clear();
        self.block = Block::None;
        self.waiting(Some("waiting for the agent…"));
    }

    /// The turn was cancelled: unfinished tool calls are shown cancelled, as the protocol
    /// asks of clients.
    pub(crate) fn cancelling(&mut self) {
        let text = self.paint("33", "⏹ cancelling the turn… (Ctrl-C again quits)");
        self.line(&text);
        let open: Vec<String> =
            self.tool_order.iter().filter(|id| !is_final(&self.tools[*id].status)).cloned().collect();
        for id in open {
            let title = self.tools[&id].title.clone();
            let text = format!("  {} {title}: cancelled", self.paint("33", "✗"));
            self.line(&text);
        }
    }

    /// The end of a turn.
    pub(crate) fn end_turn(&mut self, stop: &StopReason) {
        self.waiting(None);
        let text = match stop {
            StopReason::EndTurn => self.paint("2", "— end of turn"),
            StopReason::Cancelled => self.paint("33", "⏹ turn cancelled"),
            StopReason::Refusal => self.paint("31", "the agent refused to continue (refusal)"),
            other => self.paint("33", &format!("the agent stopped early ({})", other.as_str())),
        };
        self.line(&text);
    }

    /// Client-side activity: a file read or written, a terminal started.
    pub(crate) fn activity(&mut self, activity: &Activity) {
        let text = match &activity.outcome {
            Ok(detail) => self.paint("2", &format!("  · {} {} ({detail})", activity.method, activity.target)),
            Err(reason) => self.paint("31", &format!("  · {} {} refused: {reason}", activity.method, activity.target)),
        };
        self.line(&text);
    }

    /// One session update.
    pub(crate) fn update(&mut self, update: &SessionUpdate) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                self.set_block(Block::Message);
                let text = block_text(&chunk.content);
                self.raw(&text);
            }
            SessionUpdate::AgentThoughtChunk(chunk) => {
                if self.block != Block::Thought {
                    self.set_block(Block::Thought);
                    let label = self.paint("2;3", "thinking: ");
                    self.raw(&label);
                }
                let text = self.paint("2;3", &block_text(&chunk.content));
                self.raw(&text);
            }
            SessionUpdate::UserMessageChunk(chunk) => {
                let text = self.paint("2", &format!("you: {}", block_text(&chunk.content)));
                self.line(&text);
            }
            SessionUpdate::Plan(plan) => self.plan(plan),
            SessionUpdate::ToolCall(call) => self.tool_call(call),
            SessionUpdate::ToolCallUpdate(update) => self.tool_call_update(update),
            SessionUpdate::AvailableCommandsUpdate(c) => {
                let names: Vec<String> = c.available_commands.iter().map(|c| format!("/{}", c.name)).collect();
                self.info(&format!("commands available: {}", names.join(" ")));
            }
            SessionUpdate::CurrentModeUpdate(m) => self.info(&format!("mode: {}", m.current_mode_id)),
            SessionUpdate::ConfigOptionUpdate(c) => {
                self.info(&format!("configuration options updated ({})", c.config_options.len()))
            }
            SessionUpdate::SessionInfoUpdate(i) => {
                if let Some(Some(title)) = &i.title {
                    self.info(&format!("session title: {title}"));
                }
            }
            SessionUpdate::UsageUpdate(u) => {
                let cost =
                    u.cost.as_ref().map(|c| format!(", cost {:.4} {}", c.amount, c.currency)).unwrap_or_default();
                self.info(&format!("context: {} of {} tokens{cost}", u.used, u.size));
            }
            _ => {}
        }
    }

    fn plan(&mut self, plan: &Plan) {
        let heading = self.paint("1", "Plan");
        self.line(&heading);
        for entry in &plan.entries {
            let (mark, code) = match entry.status {
                PlanEntryStatus::Completed => ("[x]", "32"),
                PlanEntryStatus::InProgress => ("[~]", "33"),
                _ => ("[ ]", "0"),
            };
            let priority = match entry.priority {
                PlanEntryPriority::High => self.paint("2", " (high)"),
                _ => String::new(),
            };
            let text = format!("  {} {}{priority}", self.paint(code, mark), entry.content);
            self.line(&text);
        }
    }

    fn status_mark(&self, status: &Option<ToolCallStatus>) -> String {
        match status {
            Some(ToolCallStatus::Completed) => self.paint("32", "✓"),
            Some(ToolCallStatus::Failed) => self.paint("31", "✗"),
            Some(ToolCallStatus::InProgress) => self.paint("33", "…"),
            _ => self.paint("2", "·"),
        }
    }

    fn locations(&mut self, locations: &[ToolCallLocation]) {
        for location in locations {
            let at = match location.line {
                Some(line) => format!("{}:{line}", location.path),
                None => location.path.clone(),
            };
            let text = self.paint("2", &format!("    ↳ {at}"));
            self.line(&text);
        }
    }

    fn tool_call(&mut self, call: &ToolCall) {
        let id = call.tool_call_id.to_string();
        if !self.tools.contains_key(&id) {
            self.tool_order.push(id.clone());
        }
        self.tools.insert(id, Tool { title: call.title.clone(), status: call.status.clone() });
        let kind = call.kind.as_ref().map_or("tool", ToolKind::as_str);
        let status = call.status.as_ref().map_or("pending", ToolCallStatus::as_str);
        let text = format!(
            "{} {}  {}",
            self.paint("35", "▸"),
            self.paint("1", &call.title),
            self.paint("2", &format!("[{kind} · {status}]"))
        );
        self.line(&text);
        self.locations(call.locations.as_deref().unwrap_or_default());
        for content in call.content.iter().flatten() {
            self.tool_content(content);
        }
    }

    fn tool_call_update(&mut self, update: &ToolCallUpdate) {
        let id = update.tool_call_id.to_string();
        let tool = self.tools.entry(id.clone()).or_insert_with(|| Tool { title: id.clone(), status: None });
        if let Some(title) = &update.title {
            tool.title = title.clone();
        }
        if update.status.is_some() {
            tool.status = update.status.clone();
        }
        let title = tool.title.clone();
        if let Some(status) = &update.status {
            let text = format!("  {} {title}: {}", self.status_mark(&update.status), status.as_str().replace('_', " "));
            self.line(&text);
        }
        self.locations(update.locations.as_deref().unwrap_or_default());
        for content in update.content.iter().flatten() {
            self.tool_content(content);
        }
    }

    fn tool_content(&mut self, content: &ToolCallContent) {
        match content {
            ToolCallContent::Content(c) => {
                let text = block_text(&c.content);
                let lines: Vec<&str> = text.lines().collect();
                for line in lines.iter().take(MAX_TEXT_LINES) {
                    let text = format!("    {} {line}", self.paint("2", "│"));
                    self.line(&text);
                }
                if lines.len() > MAX_TEXT_LINES {
                    self.info(&format!("    │ … {} more lines", lines.len() - MAX_TEXT_LINES));
                }
            }
            ToolCallContent::Diff(diff) => self.diff(diff),
            ToolCallContent::Terminal(t) => self.info(&format!("    ▣ terminal {}", t.terminal_id)),
            _ => {}
        }
    }

    fn diff(&mut self, diff: &Diff) {
        let header = match &diff.old_text {
            Some(_) => format!("    diff {}", diff.path),
            None => format!("    new file {}", diff.path),
        };
        let header = self.paint("1", &header);
        self.line(&header);
        let lines = line_diff(diff.old_text.as_deref().unwrap_or(""), &diff.new_text, 2);
        for line in lines.iter().take(MAX_DIFF_LINES) {
            let text = match line {
                DiffLine::Same(l) => self.paint("2", &format!("      {l}")),
                DiffLine::Removed(l) => self.paint("31", &format!("    - {l}")),
                DiffLine::Added(l) => self.paint("32", &format!("    + {l}")),
                DiffLine::Skipped(n) => {
                    self.paint("2", &format!("    ⋮ {n} unchanged line{}", if *n == 1 { "" } else { "s" }))
                }
            };
            self.line(&text);
        }
        if lines.len() > MAX_DIFF_LINES {
            self.info(&format!("    … {} more diff lines", lines.len() - MAX_DIFF_LINES));
        }
    }

    /// A permission question with numbered options.
    pub(crate) fn permission_question(&mut self, request: &RequestPermissionRequest, interactive: bool) {
        self.waiting(None);
        let call = &request.tool_call;
        let id = call.tool_call_id.to_string();
        let known = self.tools.contains_key(&id);
        let title = call.title.clone().or_else(|| self.tools.get(&id).map(|t| t.title.clone())).unwrap_or(id);
        let kind = call.kind.as_ref().map(|k| format!(" [{}]", k.as_str())).unwrap_or_default();
        let text =
            format!("{} {}{}", self.paint("1;33", "? permission:"), self.paint("1", &title), self.paint("2", &kind));
        self.line(&text);
        if !known {
            // A tool call drawn before already showed where it works.
            self.locations(call.locations.as_deref().unwrap_or_default());
        }
        for content in call.content.iter().flatten() {
            self.tool_content(content);
        }
        if interactive {
            let options: Vec<String> =
                request.options.iter().enumerate().map(|(i, o)| format!("[{}] {}", i + 1, o.name)).collect();
            let text = format!("  {}", options.join("   "));
            self.line(&text);
            self.ask_again(request.options.len());
        }
    }

    /// The question's input line.
    pub(crate) fn ask_again(&mut self, n: usize) {
        let text = self.paint("1", &format!("  choose 1-{n} (y/n): "));
        self.newline_if_needed();
        self.raw(&text);
    }

    /// What was decided, and why.
    pub(crate) fn permission_decided(&mut self, choice: &str, why: &str) {
        let text = format!("  → {} {}", self.paint("1", choice), self.paint("2", &format!("({why})")));
        self.line(&text);
        self.waiting(Some("waiting for the agent…"));
    }
}

/// The text shown for a content block.
fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!("[image {}]", i.mime_type),
        ContentBlock::Audio(a) => format!("[audio {}]", a.mime_type),
        ContentBlock::ResourceLink(l) => format!("[{} {}]", l.name, l.uri),
        ContentBlock::Resource(r) => match serde_json::to_value(&r.resource) {
            Ok(v) => match (v.get("uri").and_then(|u| u.as_str()), v.get("text").and_then(|t| t.as_str())) {
                (_, Some(text)) => text.to_owned(),
                (Some(uri), None) => format!("[resource {uri}]"),
                _ => "[resource]".to_owned(),
            },
            Err(_) => "[resource]".to_owned(),
        },
        _ => "[content]".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn renderer(color: bool) -> (Renderer, Buf) {
        let buf = Buf::default();
        let style = Style { color, spinner: false };
        (Renderer::new(Box::new(buf.clone()), Box::new(Buf::default()), style), buf)
    }

    fn text(buf: &Buf) -> String {
        String::from_utf8(buf.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn a_turn_in_plain_text() {
        let (mut r, buf) = renderer(false);
        r.begin_turn();
        r.update(&SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text("hel"))));
        r.update(&SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text("lo"))));
        r.update(&SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::text("hmm"))));
        r.update(&SessionUpdate::Plan(Plan::new(vec![
            PlanEntry::new("one", PlanEntryPriority::Low, PlanEntryStatus::Completed),
            PlanEntry::new("two", PlanEntryPriority::Low, PlanEntryStatus::Pending),
        ])));
        let mut call = ToolCall::new("c1", "Edit /a.txt");
        call.kind = Some(ToolKind::Edit);
        call.locations = Some(vec![ToolCallLocation::new("/a.txt")]);
        r.update(&SessionUpdate::ToolCall(call));
        let mut update = ToolCallUpdate::new("c1");
        update.status = Some(ToolCallStatus::Completed);
        let mut diff = Diff::new("/a.txt", "x\nY\n");
        diff.old_text = Some("x\ny\n".into());
        update.content = Some(vec![ToolCallContent::Diff(diff)]);
        r.update(&SessionUpdate::ToolCallUpdate(update));
        r.end_turn(&StopReason::EndTurn);
        let expected = "hello\nthinking: hmm\nPlan\n  [x] one\n  [ ] two\n▸ Edit /a.txt  [edit · pending]\n    ↳ /a.txt\n  ✓ Edit /a.txt: completed\n    diff /a.txt\n      x\n    - y\n    + Y\n— end of turn\n";
        assert_eq!(text(&buf), expected);
    }

    #[test]
    fn colours_only_when_asked_and_cancel_marks_open_tools() {
        let (mut r, buf) = renderer(true);
        r.update(&SessionUpdate::ToolCall(ToolCall::new("c1", "Run")));
        r.cancelling();
        let out = text(&buf);
        assert!(out.contains("\x1b[1mRun\x1b[0m"), "{out:?}");
        assert!(out.contains("Run: cancelled"), "{out:?}");
        let (mut plain, buf) = renderer(false);
        plain.error("boom");
        assert_eq!(text(&buf), "error: boom\n");
    }
}
