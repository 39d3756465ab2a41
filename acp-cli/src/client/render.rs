//! What the client shows: streamed message text, dimmed thoughts, the plan as a checklist,
//! tool calls with name, kind, status, locations, content and diffs, notices, compactions,
//! ID-addressed plans and subagents (in [`v1_updates`]), permission questions, a
//! spinner while waiting. Plain ANSI escapes, no dependency; no colour when `NO_COLOR` is set,
//! `TERM` is `dumb` or stdout is not a terminal, and no spinner when stdout is not a terminal.
//!
//! # Peer text is never written raw
//!
//! Every string the renderer is given may come from the agent, so every text reaches the
//! terminal through the two lowest-level writers, [`Renderer::line`]/[`Renderer::raw`] (text
//! as [`Span`]s, each made one-line and inert with [`sanitize::clean_line`]) and
//! [`Renderer::stream`] (streamed message and thought text, made inert with
//! [`sanitize::clean`], newlines kept). Our colours are added around the sanitized text; the
//! spinner's `\r`, erase and backspace are written by the spinner code alone. A streamed peer
//! line that starts with `?`, our permission question's marker, is shown as `\?`, so that a
//! forged question is told apart even without colour (with colour, the real one is also
//! bold yellow, which the peer cannot produce).

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{IsTerminal, Write};

use acp_blocking::acp_proto::types::*;

use super::diff::{DiffLine, line_diff};
use super::event::Activity;
use crate::sanitize;

pub(crate) mod config_options;
mod elicitation;
#[cfg(test)]
mod inert_tests;
mod v1_updates;

/// Lines of tool call text shown before the rest is elided.
const MAX_TEXT_LINES: usize = 12;
/// Lines of a diff shown before the rest is elided.
const MAX_DIFF_LINES: usize = 40;
/// Characters of one line of tool call text or diff shown before the rest is elided.
const MAX_LINE_CHARS: usize = 1000;
/// Tool calls remembered per turn (to name them in later updates and mark them cancelled);
/// later ones are drawn but not remembered.
const MAX_TOOLS: usize = 1024;
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

/// A piece of a line: the SGR style it is drawn in (`""`: none; `2` dim, `1` bold, `31`
/// red…) and its text, from anywhere: it is sanitized when written.
type Span<'a> = (&'static str, &'a str);

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
    /// Only errors, warnings and permission questions are drawn, on `err` (`--format json`,
    /// `--quiet`: stdout is the output's).
    diagnostics_only: bool,
    /// A diagnostic is being drawn.
    loud: bool,
    /// A line editor draws the prompt (see `editor`).
    editor_prompt: bool,
    /// Called when the UI is idle (with a line editor: shows a partial line).
    on_idle: Option<Box<dyn FnMut() + Send>>,
}

fn is_final(status: &Option<ToolCallStatus>) -> bool {
    matches!(status, Some(ToolCallStatus::Completed | ToolCallStatus::Failed))
}

/// `text` cut after `max` characters, with `…` when something was cut.
fn shorten(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((at, _)) => Cow::Owned(format!("{}…", &text[..at])),
        None => Cow::Borrowed(text),
    }
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
            diagnostics_only: false,
            loud: false,
            editor_prompt: false,
            on_idle: None,
        }
    }

    /// From now on draws only errors, warnings and permission questions, on `err`, plainly.
    pub(crate) fn diagnostics_only(&mut self) {
        self.diagnostics_only = true;
        self.style = Style { color: false, spinner: false };
    }

    /// Draws with `f` even when only diagnostics are drawn.
    fn loudly(&mut self, f: impl FnOnce(&mut Renderer)) {
        let was = std::mem::replace(&mut self.loud, true);
        f(self);
        self.loud = was;
    }

    /// Writes through a line editor from now on (`out` and `err`): the editor draws the prompt
    /// and there is no spinner, whose escapes would fight the line being typed.
    pub(crate) fn redirect(
        &mut self,
        out: Box<dyn Write + Send>,
        err: Box<dyn Write + Send>,
        on_idle: Box<dyn FnMut() + Send>,
    ) {
        self.on_idle = Some(on_idle);
        self.waiting(None);
        self.newline_if_needed();
        self.out = out;
        self.err = err;
        self.style.spinner = false;
        self.editor_prompt = true;
    }

    /// Appends `text`, already sanitized, in the SGR style `code` (or plain).
    fn paint_into(&self, into: &mut String, code: &str, text: &str) {
        if self.style.color && !code.is_empty() && !text.is_empty() {
            into.push_str(&format!("\x1b[{code}m{text}\x1b[0m"));
        } else {
            into.push_str(text);
        }
    }

    /// The spans, each sanitized onto one line, then painted (neighbours of one style together).
    fn styled(&self, spans: &[Span<'_>]) -> String {
        let mut text = String::new();
        let mut run = String::new();
        for (i, (code, span)) in spans.iter().enumerate() {
            run.push_str(&sanitize::clean_line(span));
            if spans.get(i + 1).is_none_or(|(next, _)| next != code) {
                self.paint_into(&mut text, code, &run);
                run.clear();
            }
        }
        text
    }

    fn clear_spinner(&mut self) {
        if self.spinner_shown {
            // At a line start the spinner and its label fill the line; mid-line the cursor
            // sits on the spinner's one glyph: erase from there.
            let _ = self.out.write_all(if self.col0 { b"\r\x1b[2K" } else { b"\x1b[K" });
            self.spinner_shown = false;
        }
    }

    /// Writes bytes that are ours or already sanitized, tracking the line start.
    fn write_out(&mut self, text: &str) {
        if text.is_empty() || (self.diagnostics_only && !self.loud) {
            return;
        }
        self.clear_spinner();
        let out = if self.diagnostics_only { &mut self.err } else { &mut self.out };
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        self.col0 = text.ends_with('\n');
    }

    /// Writes the spans (sanitized, painted) where the cursor is.
    fn raw(&mut self, spans: &[Span<'_>]) {
        let text = self.styled(spans);
        self.write_out(&text);
    }

    /// Streams peer text that may span lines (message and thought chunks): sanitized with its
    /// newlines kept, a `?` starting a line escaped, then painted.
    fn stream(&mut self, code: &str, text: &str) {
        let clean = sanitize::clean(text);
        let guarded = sanitize::guard_line_starts(&clean, self.col0);
        let mut painted = String::new();
        self.paint_into(&mut painted, code, &guarded);
        self.write_out(&painted);
    }

    fn newline_if_needed(&mut self) {
        if !self.col0 {
            self.write_out("\n");
        }
    }

    /// A whole line of spans, started on a fresh line.
    fn line(&mut self, spans: &[Span<'_>]) {
        self.set_block(Block::None);
        self.newline_if_needed();
        let mut text = self.styled(spans);
        text.push('\n');
        self.write_out(&text);
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
        if let Some(on_idle) = &mut self.on_idle {
            on_idle();
        }
        let Some(label) = self.waiting.clone() else { return };
        if !self.style.spinner {
            return;
        }
        self.frame = (self.frame + 1) % SPINNER.len();
        let glyph = self.styled(&[("36", SPINNER[self.frame])]);
        let text = if self.col0 {
            format!("\r\x1b[2K{glyph} {}", self.styled(&[("2", &label)]))
        } else {
            format!("{glyph}\x08")
        };
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
        self.spinner_shown = true;
    }

    /// A dimmed informational line.
    pub(crate) fn info(&mut self, text: &str) {
        self.line(&[("2", text)]);
    }

    /// A highlighted line (headers).
    pub(crate) fn heading(&mut self, text: &str) {
        self.line(&[("1", text)]);
    }

    /// An error, on `out` so that it sits in the transcript where it happened.
    pub(crate) fn error(&mut self, text: &str) {
        self.loudly(|r| r.line(&[("31", "error: "), ("31", text)]));
    }

    /// A warning.
    pub(crate) fn warn(&mut self, text: &str) {
        self.loudly(|r| r.line(&[("33", text)]));
    }

    /// The interactive prompt.
    pub(crate) fn prompt(&mut self) {
        self.set_block(Block::None);
        self.newline_if_needed();
        if self.editor_prompt {
            return;
        }
        self.raw(&[("1;32", "> ")]);
    }

    /// After the user's line was read: on a terminal the user's Enter already moved the cursor;
    /// otherwise the line is written out so the transcript shows what was sent.
    pub(crate) fn input_read(&mut self, line: &str, echoed: bool) {
        if echoed {
            self.col0 = true;
        } else {
            let mut text = self.styled(&[("", line)]);
            text.push('\n');
            self.write_out(&text);
        }
    }

    /// A line the agent wrote to stderr (`--show-stderr`).
    pub(crate) fn stderr_line(&mut self, text: &str) {
        self.clear_spinner();
        if self.style.spinner {
            // Both streams share the screen: keep the line structure.
            self.newline_if_needed();
        }
        let text = self.styled(&[("2", "agent stderr │ "), ("2", text)]);
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
        self.line(&[("33", "⏹ cancelling the turn… (Ctrl-C again quits)")]);
        let open: Vec<String> =
            self.tool_order.iter().filter(|id| !is_final(&self.tools[*id].status)).cloned().collect();
        for id in open {
            let title = self.tools[&id].title.clone();
            self.line(&[("", "  "), ("33", "✗"), ("", " "), ("", &title), ("", ": cancelled")]);
        }
    }

    /// The end of a turn.
    pub(crate) fn end_turn(&mut self, stop: &StopReason) {
        self.waiting(None);
        match stop {
            StopReason::EndTurn => self.line(&[("2", "— end of turn")]),
            StopReason::Cancelled => self.line(&[("33", "⏹ turn cancelled")]),
            StopReason::Refusal => self.line(&[("31", "the agent refused to continue (refusal)")]),
            other => self.line(&[("33", &format!("the agent stopped early ({})", other.as_str()))]),
        }
    }

    /// Client-side activity: a file read or written, a terminal started.
    pub(crate) fn activity(&mut self, activity: &Activity) {
        let (method, target) = (activity.method, activity.target.as_str());
        match &activity.outcome {
            Ok(detail) => {
                self.line(&[("2", "  · "), ("2", method), ("2", " "), ("2", target), ("2", &format!(" ({detail})"))])
            }
            Err(reason) => self.line(&[
                ("31", "  · "),
                ("31", method),
                ("31", " "),
                ("31", target),
                ("31", " refused: "),
                ("31", reason),
            ]),
        }
    }

    /// One session update.
    pub(crate) fn update(&mut self, update: &SessionUpdate) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                self.set_block(Block::Message);
                self.stream("", &block_text(&chunk.content));
            }
            SessionUpdate::AgentThoughtChunk(chunk) => {
                if self.block != Block::Thought {
                    self.set_block(Block::Thought);
                    self.raw(&[("2;3", "thinking: ")]);
                }
                self.stream("2;3", &block_text(&chunk.content));
            }
            SessionUpdate::UserMessageChunk(chunk) => self.line(&[("2", "you: "), ("2", &block_text(&chunk.content))]),
            SessionUpdate::Plan(plan) => self.plan(plan),
            SessionUpdate::PlanUpdate(plan) => self.plan_update(plan),
            SessionUpdate::PlanRemoved(removed) => self.plan_removed(removed),
            SessionUpdate::Notice(notice) => self.notice(notice),
            SessionUpdate::CompactionUpdate(update) => self.compaction(update),
            SessionUpdate::CompactionSummaryChunk(chunk) => self.compaction_chunk(chunk),
            SessionUpdate::SubagentUpdate(update) => self.subagent(update),
            SessionUpdate::SessionMessage(message) => self.session_message(message),
            SessionUpdate::SessionMessageChunk(chunk) => self.session_message_chunk(chunk),
            SessionUpdate::ToolCall(call) => self.tool_call(call),
            SessionUpdate::ToolCallUpdate(update) => self.tool_call_update(update),
            SessionUpdate::AvailableCommandsUpdate(c) => {
                let names: Vec<String> = c.available_commands.iter().map(|c| format!("/{}", c.name)).collect();
                self.info(&format!("commands available: {}", names.join(" ")));
            }
            SessionUpdate::CurrentModeUpdate(m) => self.info(&format!("mode: {}", m.current_mode_id)),
            SessionUpdate::ConfigOptionUpdate(c) => {
                self.info(&format!("config options: {}", config_options::summary(&c.config_options)))
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
            SessionUpdate::Unknown(_) => self.permission_resolved(update),
            _ => {}
        }
    }

    /// A shared session's ask was answered (`acp client --attach`): by whom, and how.
    fn permission_resolved(&mut self, update: &SessionUpdate) {
        let Some(resolved) = acp_tokio::acp_proto::attach::PermissionResolved::read(update) else { return };
        let clean = |text: &str| crate::sanitize::clean_line(text).into_owned();
        let call = resolved.tool_call_id.as_deref().map(clean).unwrap_or_else(|| "a tool call".to_owned());
        let how = resolved
            .chosen_option_id
            .as_deref()
            .map_or_else(|| "cancelled".to_owned(), |o| format!("chose {}", clean(o)));
        self.info(&format!("permission for {call}: {} {how}", clean(&resolved.resolved_by)));
    }

    fn plan(&mut self, plan: &Plan) {
        self.line(&[("1", "Plan")]);
        for entry in &plan.entries {
            self.plan_entry(entry);
        }
    }

    /// One step of a plan, as a checklist line.
    fn plan_entry(&mut self, entry: &PlanEntry) {
        let (mark, code) = match entry.status {
            PlanEntryStatus::Completed => ("[x]", "32"),
            PlanEntryStatus::InProgress => ("[~]", "33"),
            _ => ("[ ]", "0"),
        };
        let priority = match entry.priority {
            PlanEntryPriority::High => " (high)",
            _ => "",
        };
        self.line(&[("", "  "), (code, mark), ("", " "), ("", &entry.content), ("2", priority)]);
    }

    fn status_mark(status: &Option<ToolCallStatus>) -> Span<'static> {
        match status {
            Some(ToolCallStatus::Completed) => ("32", "✓"),
            Some(ToolCallStatus::Failed) => ("31", "✗"),
            Some(ToolCallStatus::InProgress) => ("33", "…"),
            _ => ("2", "·"),
        }
    }

    fn locations(&mut self, locations: &[ToolCallLocation]) {
        for location in locations {
            let line = location.line.map(|line| format!(":{line}")).unwrap_or_default();
            self.line(&[("2", "    ↳ "), ("2", &location.path), ("2", &line)]);
        }
    }

    /// Remembers a tool call's title and status, up to [`MAX_TOOLS`] per turn.
    fn remember(&mut self, id: &str) -> Option<&mut Tool> {
        if !self.tools.contains_key(id) {
            if self.tools.len() >= MAX_TOOLS {
                return None;
            }
            self.tool_order.push(id.to_owned());
            self.tools.insert(id.to_owned(), Tool { title: id.to_owned(), status: None });
        }
        self.tools.get_mut(id)
    }

    fn tool_call(&mut self, call: &ToolCall) {
        if let Some(tool) = self.remember(call.tool_call_id.as_ref()) {
            *tool = Tool { title: call.title.clone(), status: call.status.clone() };
        }
        let kind = call.kind.as_ref().map_or("tool", ToolKind::as_str);
        let status = call.status.as_ref().map_or("pending", ToolCallStatus::as_str);
        let name = call.name.as_ref().map(|n| format!("{n} · ")).unwrap_or_default();
        let tag = format!("[{name}{kind} · {status}]");
        self.line(&[("35", "▸"), ("", " "), ("1", &call.title), ("", "  "), ("2", &tag)]);
        self.locations(call.locations.as_deref().unwrap_or_default());
        for content in call.content.iter().flatten() {
            self.tool_content(content);
        }
    }

    fn tool_call_update(&mut self, update: &ToolCallUpdate) {
        let id = update.tool_call_id.to_string();
        let title = match self.remember(&id) {
            Some(tool) => {
                if let Some(title) = &update.title {
                    tool.title = title.clone();
                }
                if update.status.is_some() {
                    tool.status = update.status.clone();
                }
                tool.title.clone()
            }
            None => update.title.clone().unwrap_or(id),
        };
        if let Some(status) = &update.status {
            let status = format!(": {}", status.as_str().replace('_', " "));
            self.line(&[("", "  "), Self::status_mark(&update.status), ("", " "), ("", &title), ("", &status)]);
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
                let mut lines = text.lines();
                for line in lines.by_ref().take(MAX_TEXT_LINES) {
                    self.line(&[("", "    "), ("2", "│"), ("", " "), ("", &shorten(line, MAX_LINE_CHARS))]);
                }
                let more = lines.count();
                if more > 0 {
                    self.info(&format!("    │ … {more} more lines"));
                }
            }
            ToolCallContent::Diff(diff) => self.diff(diff),
            ToolCallContent::Terminal(t) => self.info(&format!("    ▣ terminal {}", t.terminal_id)),
            _ => {}
        }
    }

    fn diff(&mut self, diff: &Diff) {
        let header = if diff.old_text.is_some() { "    diff " } else { "    new file " };
        self.line(&[("1", header), ("1", &diff.path)]);
        let lines = line_diff(diff.old_text.as_deref().unwrap_or(""), &diff.new_text, 2);
        for line in lines.iter().take(MAX_DIFF_LINES) {
            match line {
                DiffLine::Same(l) => self.line(&[("2", "      "), ("2", &shorten(l, MAX_LINE_CHARS))]),
                DiffLine::Removed(l) => self.line(&[("31", "    - "), ("31", &shorten(l, MAX_LINE_CHARS))]),
                DiffLine::Added(l) => self.line(&[("32", "    + "), ("32", &shorten(l, MAX_LINE_CHARS))]),
                DiffLine::Skipped(n) => {
                    self.info(&format!("    ⋮ {n} unchanged line{}", if *n == 1 { "" } else { "s" }))
                }
            }
        }
        if lines.len() > MAX_DIFF_LINES {
            self.info(&format!("    … {} more diff lines", lines.len() - MAX_DIFF_LINES));
        }
    }

    /// A permission question with numbered options.
    pub(crate) fn permission_question(&mut self, request: &RequestPermissionRequest, interactive: bool) {
        if interactive && !self.loud {
            return self.loudly(|r| r.permission_question(request, interactive));
        }
        self.waiting(None);
        let call = &request.tool_call;
        let id = call.tool_call_id.to_string();
        let known = self.tools.contains_key(&id);
        let title = call.title.clone().or_else(|| self.tools.get(&id).map(|t| t.title.clone())).unwrap_or(id);
        let kind = call.kind.as_ref().map(|k| format!(" [{}]", k.as_str())).unwrap_or_default();
        self.line(&[("1;33", "? permission:"), ("", " "), ("1", &title), ("2", &kind)]);
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
            self.line(&[("", "  "), ("", &options.join("   "))]);
            self.ask_again(request.options.len());
        }
    }

    /// The question's input line.
    pub(crate) fn ask_again(&mut self, n: usize) {
        self.loudly(|r| {
            r.newline_if_needed();
            r.raw(&[("1", &format!("  choose 1-{n} (y/n): "))]);
            if r.editor_prompt {
                // The editor shows whole lines only; the answer is typed at its prompt.
                r.write_out("\n");
            }
        });
    }

    /// What was decided, and why.
    pub(crate) fn permission_decided(&mut self, choice: &str, why: &str) {
        self.line(&[("", "  → "), ("1", choice), ("", " "), ("2", "("), ("2", why), ("2", ")")]);
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
pub(super) mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A shared in-memory terminal for renderer tests.
    #[derive(Clone, Default)]
    pub(in crate::client) struct Buf(pub(in crate::client) Arc<Mutex<Vec<u8>>>);
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

    #[test]
    fn a_diff_of_a_long_file_with_scattered_changes_is_drawn_capped() {
        let old: String = (0..80_000).map(|i| format!("line {i}\n")).collect();
        let edit = |i: usize| if i % 1000 == 500 { format!("LINE {i}\n") } else { format!("line {i}\n") };
        let mut diff = Diff::new("/big.txt", (0..80_000).map(edit).collect::<String>());
        diff.old_text = Some(old);
        let mut update = ToolCallUpdate::new("c1");
        update.content = Some(vec![ToolCallContent::Diff(diff)]);
        let (mut r, buf) = renderer(false);
        r.update(&SessionUpdate::ToolCallUpdate(update));
        let out = text(&buf);
        let lines: Vec<&str> = out.lines().collect();
        // 80 changes: each 2 + 2 lines of context, a removal and an addition, and 81 gaps.
        assert_eq!(lines.len(), 1 + MAX_DIFF_LINES + 1, "{out}");
        let first = ["    diff /big.txt", "    ⋮ 498 unchanged lines", "      line 498", "      line 499"];
        assert_eq!(lines[..4], first);
        assert_eq!(
            lines[4..9],
            ["    - line 500", "    + LINE 500", "      line 501", "      line 502", "    ⋮ 995 unchanged lines"]
        );
        assert_eq!(lines[9..13], ["      line 1498", "      line 1499", "    - line 1500", "    + LINE 1500"]);
        assert_eq!(lines.last(), Some(&"    … 521 more diff lines"));
    }

    #[test]
    fn what_a_turn_remembers_and_draws_is_bounded() {
        let (mut r, buf) = renderer(false);
        for i in 0..MAX_TOOLS + 10 {
            r.update(&SessionUpdate::ToolCall(ToolCall::new(format!("c{i}"), "t")));
        }
        assert_eq!((r.tools.len(), r.tool_order.len()), (MAX_TOOLS, MAX_TOOLS));
        let mut late = ToolCallUpdate::new(format!("c{}", MAX_TOOLS + 5));
        late.status = Some(ToolCallStatus::Completed);
        late.content = Some(vec![ToolCallContent::from(ContentBlock::text("y".repeat(100_000)))]);
        r.update(&SessionUpdate::ToolCallUpdate(late));
        let out = text(&buf);
        let tail: Vec<&str> = out.lines().rev().take(2).collect();
        assert_eq!(tail[1], format!("  ✓ c{}: completed", MAX_TOOLS + 5), "a forgotten call is named by its id");
        assert_eq!(tail[0], format!("    │ {}…", "y".repeat(MAX_LINE_CHARS)));
    }
}
