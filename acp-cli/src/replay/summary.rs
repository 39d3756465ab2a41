//! `acp replay --summary FILE`: sessions, turns with their stop reasons, and per method the
//! requests each way with their latencies (request to response, matched by id and
//! direction; median and max).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde_json::Value;

use super::read::{Kind, Record, describe_exit};
use crate::record::transcript::Dir;

/// A request waiting for its response.
struct Open {
    method: String,
    t_ms: u64,
    /// For a prompt: its session.
    session: Option<String>,
}

/// Requests of one method in one direction.
#[derive(Default)]
struct MethodStats {
    count: u64,
    errors: u64,
    latencies: Vec<u64>,
}

/// One prompt turn.
struct Turn {
    session: String,
    stop: String,
    ms: u64,
}

#[derive(Default)]
struct Summary {
    open: HashMap<(&'static str, String), Open>,
    methods: BTreeMap<(&'static str, String), MethodStats>,
    notifications: BTreeMap<(&'static str, String), u64>,
    sessions: Vec<String>,
    turns: Vec<Turn>,
    lines: [u64; 2],
    exit: Option<String>,
}

/// The summary of `records`, as text.
pub(crate) fn summarize(records: &[Record]) -> String {
    let mut s = Summary::default();
    for record in records {
        match &record.kind {
            Kind::Line { dir, text, .. } => {
                s.lines[usize::from(*dir == Dir::A2c)] += 1;
                if let Ok(message) = serde_json::from_str::<Value>(text) {
                    s.message(*dir, record.t_ms, &message);
                }
            }
            Kind::Exit(exit) => s.exit = Some(describe_exit(exit)),
            _ => {}
        }
    }
    s.text()
}

impl Summary {
    fn message(&mut self, dir: Dir, t_ms: u64, message: &Value) {
        let tag = dir.as_str();
        let (method, id) = (message["method"].as_str(), message.get("id").map(Value::to_string));
        match (method, id) {
            (Some(method), Some(id)) => {
                self.methods.entry((tag, method.to_owned())).or_default().count += 1;
                let session = message["params"]["sessionId"].as_str().map(str::to_owned);
                if matches!(method, "session/load" | "session/resume") {
                    self.add_session(session.clone());
                }
                self.open.insert((tag, id), Open { method: method.to_owned(), t_ms, session });
            }
            (Some(method), None) => *self.notifications.entry((tag, method.to_owned())).or_default() += 1,
            (None, Some(id)) => self.response(dir, t_ms, id, message),
            (None, None) => {}
        }
    }

    fn response(&mut self, dir: Dir, t_ms: u64, id: String, message: &Value) {
        // A response goes the other way from its request.
        let asker = match dir {
            Dir::C2a => Dir::A2c.as_str(),
            Dir::A2c => Dir::C2a.as_str(),
        };
        let Some(open) = self.open.remove(&(asker, id)) else { return };
        let ms = t_ms.saturating_sub(open.t_ms);
        let stats = self.methods.entry((asker, open.method.clone())).or_default();
        stats.latencies.push(ms);
        let failed = message.get("error").is_some();
        if failed {
            stats.errors += 1;
        }
        match open.method.as_str() {
            "session/new" => self.add_session(message["result"]["sessionId"].as_str().map(str::to_owned)),
            "session/prompt" => {
                let stop = match message["result"]["stopReason"].as_str() {
                    Some(stop) => stop.to_owned(),
                    None if failed => "error".to_owned(),
                    None => "no stop reason".to_owned(),
                };
                self.turns.push(Turn { session: open.session.unwrap_or_default(), stop, ms });
            }
            _ => {}
        }
    }

    fn add_session(&mut self, session: Option<String>) {
        if let Some(session) = session
            && !self.sessions.contains(&session)
        {
            self.sessions.push(session);
        }
    }

    fn text(&self) -> String {
        let mut out = String::new();
        let [c2a, a2c] = self.lines;
        let _ = writeln!(out, "lines: {c2a} client→agent, {a2c} agent→client");
        let _ = writeln!(out, "sessions: {}", self.sessions.len());
        for session in &self.sessions {
            let turns: Vec<&Turn> = self.turns.iter().filter(|t| &t.session == session).collect();
            let _ = writeln!(out, "  {session}: {} turn{}", turns.len(), if turns.len() == 1 { "" } else { "s" });
            for (i, turn) in turns.iter().enumerate() {
                let _ = writeln!(out, "    turn {}: {} ({} ms)", i + 1, turn.stop, turn.ms);
            }
        }
        let open_prompts = self.open.values().filter(|o| o.method == "session/prompt").count();
        if open_prompts > 0 {
            let _ = writeln!(out, "  {open_prompts} turn(s) never ended");
        }
        let _ = writeln!(out, "requests:{}", if self.methods.is_empty() { " none" } else { "" });
        for ((dir, method), stats) in &self.methods {
            let _ = writeln!(out, "  {dir} {method:<28} {}", describe(stats));
        }
        if !self.notifications.is_empty() {
            let _ = writeln!(out, "notifications:");
            for ((dir, method), n) in &self.notifications {
                let _ = writeln!(out, "  {dir} {method:<28} {n}");
            }
        }
        if let Some(exit) = &self.exit {
            let _ = writeln!(out, "agent: {exit}");
        }
        out
    }
}

/// `N sent, E errors, U unanswered, median M ms, max X ms`.
fn describe(stats: &MethodStats) -> String {
    let mut latencies = stats.latencies.clone();
    latencies.sort_unstable();
    let unanswered = stats.count.saturating_sub(latencies.len() as u64);
    let mut text = format!("{:>4} sent", stats.count);
    if stats.errors > 0 {
        let _ = write!(text, ", {} errors", stats.errors);
    }
    if unanswered > 0 {
        let _ = write!(text, ", {unanswered} unanswered");
    }
    if let (Some(max), false) = (latencies.last(), latencies.is_empty()) {
        let median = latencies[(latencies.len() - 1) / 2];
        let _ = write!(text, ", median {median} ms, max {max} ms");
    }
    text
}
