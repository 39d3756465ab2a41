//! `acp replay --summary FILE`: sessions, turns with their stop reasons, and per method the
//! requests each way with their latencies (request to response, matched by id and
//! direction; median and max).
//!
//! Whatever the transcript, what the summary remembers is bounded; past a bound it counts
//! instead of remembering, and says so:
//!
//! | what | bound | past it |
//! |---|---|---|
//! | requests awaiting answers | [`MAX_OPEN`] requests and [`MAX_OPEN_BYTES`] each way ([`super::open`]) | counted as not tracked (their answers are not matched) |
//! | methods (each way, requests and notifications) | [`MAX_METHODS`] | counted under `(other methods)` |
//! | sessions listed | [`MAX_SESSIONS`] | counted, not listed |
//! | turns listed per session | [`MAX_TURNS_LISTED`] | counted per stop reason ([`MAX_STOP_REASONS`] reasons, then `other`) |
//! | latencies | a histogram per method: exact below 1024 ms, then within 1/32 | |
//!
//! Sessions and turns are what the core's passive observer (`acp_proto::observer`) reads of the
//! lines, as the remote server reads them: a session is announced by the answer to
//! `session/new` (or `fork`, `load`, `resume`); a turn opens with a prompt and ends at its
//! answer's `stopReason` (v1) or at the agent's `idle` `state_update` (v2, whose prompt is only
//! acknowledged), with the stop reason that ended it, or `error` for an error answer. The
//! observer's own bounds ([`OBSERVER_LIMITS`]) hold what it tracks; turns it did not track are
//! counted.
//!
//! Names from the transcript (methods, session ids, stop reasons) are kept to [`MAX_NAME`]
//! characters and printed inert ([`crate::sanitize`]).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use acp_blocking::acp_proto::Side;
use acp_blocking::acp_proto::jsonrpc::RequestId;
use acp_blocking::acp_proto::observer::{Limits, Observer};
use serde_json::Value;

use super::open::{LineIds, MAX_OPEN, MAX_OPEN_BYTES, OpenRequests};
use super::read::{Kind, Record, describe_exit};
use crate::record::transcript::Dir;
use crate::sanitize::clean_line;

/// Methods remembered (both ways, requests and notifications together).
const MAX_METHODS: usize = 256;
/// Sessions listed.
const MAX_SESSIONS: usize = 1024;
/// Turns listed per session.
const MAX_TURNS_LISTED: usize = 64;
/// Stop reasons counted per session past its listed turns.
const MAX_STOP_REASONS: usize = 16;
/// Characters kept of a method name, a session id or a stop reason.
const MAX_NAME: usize = 200;
/// What the observer tracks at once: as many sessions as are listed, as many open turns, the
/// requests of [`MAX_OPEN`] each way, names as long as [`super::open`]'s lines allow.
const OBSERVER_LIMITS: Limits =
    Limits { max_open_requests: MAX_OPEN, max_sessions: MAX_SESSIONS, max_turns: MAX_SESSIONS, max_key_len: 1024 };
/// Where methods past [`MAX_METHODS`] are counted.
const OTHER_METHODS: &str = "(other methods)";

/// A request waiting for its response.
struct Open {
    method: String,
    t_ms: u64,
}

/// Latencies in milliseconds, as a histogram: one bucket per millisecond below 1024, then 32
/// per doubling (so a bucket's floor is within 1/32 of what it holds).
#[derive(Default)]
struct Latencies {
    counts: Vec<u64>,
    n: u64,
    max: u64,
}

impl Latencies {
    fn bucket(ms: u64) -> usize {
        if ms < 1024 {
            return ms as usize;
        }
        let octave = 63 - ms.leading_zeros() as usize;
        1024 + (octave - 10) * 32 + ((ms >> (octave - 5)) & 31) as usize
    }

    fn floor(bucket: usize) -> u64 {
        if bucket < 1024 {
            return bucket as u64;
        }
        let (octave, sub) = ((bucket - 1024) / 32 + 10, (bucket - 1024) % 32);
        (32 + sub as u64) << (octave - 5)
    }

    fn add(&mut self, ms: u64) {
        let bucket = Latencies::bucket(ms);
        if self.counts.len() <= bucket {
            self.counts.resize(bucket + 1, 0);
        }
        self.counts[bucket] += 1;
        self.n += 1;
        self.max = self.max.max(ms);
    }

    /// The median (the lower one of an even count), to within its bucket.
    fn median(&self) -> Option<u64> {
        let rank = self.n.checked_sub(1)? / 2;
        let mut seen = 0;
        for (bucket, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen > rank {
                return Some(Latencies::floor(bucket));
            }
        }
        None
    }
}

/// Requests of one method in one direction.
#[derive(Default)]
struct MethodStats {
    count: u64,
    errors: u64,
    latencies: Latencies,
}

/// One prompt turn.
struct Turn {
    stop: String,
    ms: u64,
}

/// One session and its turns.
struct SessionTurns {
    id: String,
    turns: Vec<Turn>,
    /// Turns past the listed ones, per stop reason.
    more: Vec<(String, u64)>,
}

impl SessionTurns {
    fn add(&mut self, turn: Turn) {
        if self.turns.len() < MAX_TURNS_LISTED {
            self.turns.push(turn);
            return;
        }
        let known = self.more.iter().position(|(stop, _)| *stop == turn.stop);
        let at = match known {
            Some(at) => at,
            None if self.more.len() < MAX_STOP_REASONS => {
                self.more.push((turn.stop, 0));
                self.more.len() - 1
            }
            None => match self.more.iter().position(|(stop, _)| stop == "other") {
                Some(at) => at,
                None => {
                    self.more.push(("other".into(), 0));
                    self.more.len() - 1
                }
            },
        };
        self.more[at].1 += 1;
    }

    fn total(&self) -> u64 {
        self.turns.len() as u64 + self.more.iter().map(|(_, n)| n).sum::<u64>()
    }
}

struct Summary {
    open: OpenRequests<Open>,
    /// Sessions and turns (module docs).
    observer: Observer,
    /// When each open turn the observer tracks began.
    turn_began: HashMap<String, u64>,
    methods: BTreeMap<(&'static str, String), MethodStats>,
    notifications: BTreeMap<(&'static str, String), u64>,
    sessions: Vec<SessionTurns>,
    session_index: HashMap<String, usize>,
    /// Sessions announced past [`MAX_SESSIONS`].
    sessions_unlisted: u64,
    lines: [u64; 2],
    exit: Option<String>,
}

/// The summary of `records`, as text.
pub(crate) fn summarize(records: impl Iterator<Item = Record>) -> String {
    let mut s = Summary {
        open: OpenRequests::default(),
        observer: Observer::with_limits(OBSERVER_LIMITS),
        turn_began: HashMap::new(),
        methods: BTreeMap::new(),
        notifications: BTreeMap::new(),
        sessions: Vec::new(),
        session_index: HashMap::new(),
        sessions_unlisted: 0,
        lines: [0; 2],
        exit: None,
    };
    for record in records {
        match &record.kind {
            Kind::Line { dir, text, .. } => {
                s.lines[dir.index()] += 1;
                s.observe(*dir, record.t_ms, text);
                if let Ok(message) = serde_json::from_str::<Value>(text) {
                    s.message(*dir, record.t_ms, text, &message);
                }
            }
            Kind::Exit(exit) => s.exit = Some(describe_exit(exit)),
            _ => {}
        }
    }
    s.text()
}

/// `text` cut to [`MAX_NAME`] characters (with `…` when cut).
fn short(text: &str) -> String {
    match text.char_indices().nth(MAX_NAME) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

impl Summary {
    /// The key of `method` going `tag`: itself while fewer than [`MAX_METHODS`] are known.
    fn method_key(&self, tag: &'static str, method: &str) -> (&'static str, String) {
        let key = (tag, short(method));
        let known = self.methods.contains_key(&key) || self.notifications.contains_key(&key);
        if known || self.methods.len() + self.notifications.len() < MAX_METHODS {
            key
        } else {
            (tag, OTHER_METHODS.to_owned())
        }
    }

    /// Sessions and turns, as the observer reads the line.
    fn observe(&mut self, dir: Dir, t_ms: u64, text: &str) {
        let from = match dir {
            Dir::C2a => Side::Client,
            Dir::A2c => Side::Agent,
        };
        let seen = self.observer.observe(from, text.as_bytes());
        if let Some(session) = &seen.announced {
            self.add_session(Some(short(session)));
        }
        if let Some(session) = &seen.turn_began
            && self.observer.turn(session).is_some()
        {
            self.turn_began.entry(session.to_string()).or_insert(t_ms);
        }
        if let Some(end) = seen.turn_ended {
            let began = self.turn_began.remove(&*end.session).unwrap_or(t_ms);
            let stop = match (&end.stop_reason, end.error) {
                (Some(stop), _) => short(stop),
                (None, true) => "error".to_owned(),
                (None, false) => "no stop reason".to_owned(),
            };
            if let Some(at) = self.session_index.get(&short(&end.session)).copied() {
                self.sessions[at].add(Turn { stop, ms: t_ms.saturating_sub(began) });
            }
        }
    }

    fn message(&mut self, dir: Dir, t_ms: u64, text: &str, message: &Value) {
        let tag = dir.as_str();
        let (method, id) = (message["method"].as_str(), message.get("id"));
        match (method, id) {
            (Some(method), Some(id)) => {
                let key = self.method_key(tag, method);
                self.methods.entry(key.clone()).or_default().count += 1;
                let Ok(id) = serde_json::from_value::<RequestId>(id.clone()) else { return };
                let ids = LineIds { requests: vec![(id.clone(), text.len())], responses: Vec::new() };
                if self.open.fits(dir, &ids) {
                    self.open.insert(dir, id, text.len(), Open { method: key.1, t_ms });
                }
            }
            (Some(method), None) => *self.notifications.entry(self.method_key(tag, method)).or_default() += 1,
            (None, Some(id)) => self.response(dir, t_ms, id, message),
            (None, None) => {}
        }
    }

    fn response(&mut self, dir: Dir, t_ms: u64, id: &Value, message: &Value) {
        // A response goes the other way from its request.
        let asker = dir.reverse();
        let Ok(id) = serde_json::from_value::<RequestId>(id.clone()) else { return };
        let Some(open) = self.open.answer(asker, &id) else { return };
        let ms = t_ms.saturating_sub(open.t_ms);
        let stats = self.methods.entry((asker.as_str(), open.method.clone())).or_default();
        stats.latencies.add(ms);
        if message.get("error").is_some() {
            stats.errors += 1;
        }
    }

    fn add_session(&mut self, session: Option<String>) {
        let Some(session) = session else { return };
        if self.session_index.contains_key(&session) {
            return;
        }
        if self.sessions.len() >= MAX_SESSIONS {
            self.sessions_unlisted += 1;
            return;
        }
        self.session_index.insert(session.clone(), self.sessions.len());
        self.sessions.push(SessionTurns { id: session, turns: Vec::new(), more: Vec::new() });
    }

    fn text(&self) -> String {
        let mut out = String::new();
        let [c2a, a2c] = self.lines;
        let _ = writeln!(out, "lines: {c2a} client→agent, {a2c} agent→client");
        let _ = writeln!(out, "sessions: {}", self.sessions.len() as u64 + self.sessions_unlisted);
        for session in &self.sessions {
            let n = session.total();
            let _ = writeln!(out, "  {}: {n} turn{}", clean_line(&session.id), if n == 1 { "" } else { "s" });
            for (i, turn) in session.turns.iter().enumerate() {
                let _ = writeln!(out, "    turn {}: {} ({} ms)", i + 1, clean_line(&turn.stop), turn.ms);
            }
            if !session.more.is_empty() {
                let more: Vec<String> =
                    session.more.iter().map(|(stop, n)| format!("{n} {}", clean_line(stop))).collect();
                let _ = writeln!(out, "    and {} more: {}", n - session.turns.len() as u64, more.join(", "));
            }
        }
        if self.sessions_unlisted > 0 {
            let _ = writeln!(out, "  {} more not listed (past {MAX_SESSIONS})", self.sessions_unlisted);
        }
        let open_turns = self.observer.turns().count();
        if open_turns > 0 {
            let _ = writeln!(out, "  {open_turns} turn(s) never ended");
        }
        let untracked_turns = self.observer.counters().turns_untracked;
        if untracked_turns > 0 {
            let _ = writeln!(out, "  {untracked_turns} turn(s) not tracked (more than {MAX_SESSIONS} open at once)");
        }
        let untracked = self.open.untracked(Dir::C2a) + self.open.untracked(Dir::A2c);
        if untracked > 0 {
            let _ = writeln!(
                out,
                "  {untracked} request(s) not tracked (more than {MAX_OPEN} requests or {} MiB awaiting answers at once): \
                 their answers are not matched",
                MAX_OPEN_BYTES >> 20
            );
        }
        let _ = writeln!(out, "requests:{}", if self.methods.is_empty() { " none" } else { "" });
        for ((dir, method), stats) in &self.methods {
            let _ = writeln!(out, "  {dir} {:<28} {}", clean_line(method), describe(stats));
        }
        if !self.notifications.is_empty() {
            let _ = writeln!(out, "notifications:");
            for ((dir, method), n) in &self.notifications {
                let _ = writeln!(out, "  {dir} {:<28} {n}", clean_line(method));
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
    let latencies = &stats.latencies;
    let unanswered = stats.count.saturating_sub(latencies.n);
    let mut text = format!("{:>4} sent", stats.count);
    if stats.errors > 0 {
        let _ = write!(text, ", {} errors", stats.errors);
    }
    if unanswered > 0 {
        let _ = write!(text, ", {unanswered} unanswered");
    }
    if let Some(median) = latencies.median() {
        let _ = write!(text, ", median {median} ms, max {} ms", latencies.max);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_are_exact_below_a_second_and_within_a_32nd_above() {
        let mut l = Latencies::default();
        assert_eq!(l.median(), None);
        for ms in [5, 1, 3, 900] {
            l.add(ms);
        }
        assert_eq!((l.median(), l.max), (Some(3), 900), "the lower median of an even count, as before");
        for ms in [1023, 1024, 1055, 1056, 5000, 1 << 40, u64::MAX] {
            let floor = Latencies::floor(Latencies::bucket(ms));
            assert!(floor <= ms && ms - floor <= ms / 32, "{ms}: {floor}");
        }
        assert!(Latencies::bucket(u64::MAX) < 2800, "a histogram has a bounded number of buckets");
    }

    #[test]
    fn turns_past_the_listed_ones_are_counted_by_stop_reason() {
        let mut s = SessionTurns { id: "s".into(), turns: Vec::new(), more: Vec::new() };
        for i in 0..MAX_TURNS_LISTED + 40 {
            let stop = if i < MAX_TURNS_LISTED + 20 { "end_turn".to_owned() } else { format!("reason-{i}") };
            s.add(Turn { stop, ms: 1 });
        }
        assert_eq!((s.turns.len(), s.total()), (MAX_TURNS_LISTED, MAX_TURNS_LISTED as u64 + 40));
        assert_eq!(s.more.len(), MAX_STOP_REASONS + 1, "{:?}", s.more);
        assert_eq!(s.more[0], ("end_turn".to_owned(), 20));
        assert_eq!(s.more.last().unwrap().0, "other");
    }
}
