//! Wire-level checks of one peer: [`acp_proto::wire_check::WireCheck`] (shared with
//! `acp replay --check`), failing the run on the first violation, plus the simulation's own
//! rule that a prompt whose turn was cancelled by `session/cancel` is answered `cancelled`
//! (the simulation knows which turns those are by their labels).
//!
//! A cross-check of the core's two readers of the wire: each peer's frames, both ways, also go
//! to an [`Observer`] (as the remote server and the HTTP client use it), and after every chunk
//! the observer's open requests of the other peer are exactly the wire checker's (same ids,
//! same methods, as many copies), and (v1 and v2) each session's open prompts are its turn's (the
//! observer's [`Turn::prompts`](acp_proto::observer::Turn::prompts)). The check stands down
//! (for the rest of the run, counted in `observer_checks` only while it holds) once the
//! readers may lawfully differ: a consumed frame that is invalid but names an id (the checker
//! expects its error answer, the observer tracks nothing), or an id matched across wire
//! types or a bound hit in the observer.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use acp_proto::framer::{FrameEvent, Framer};
use acp_proto::observer::Observer;
use acp_proto::wire_check::{self, Answered};
use acp_proto::{RequestId, Side};
use serde_json::Value;

use super::label_of;

/// What one peer did on the wire; panics on a violation.
#[derive(Debug)]
pub(super) struct WireCheck {
    /// Which peer, for messages.
    name: &'static str,
    inner: wire_check::WireCheck,
    /// Agent: prompt labels whose response must say `cancelled`.
    must_cancel: BTreeSet<u64>,
    /// Totals.
    pub(super) frames_emitted: u64,
    /// Both directions of this peer's wire (see the module docs).
    observer: Observer,
    /// Mirrors the peer's framer on what it consumed, for the observer.
    mirror: Framer,
    side: Side,
    /// The observer still answers as the checker does (see the module docs).
    comparable: bool,
    /// Cross-checks made.
    pub(super) observer_checks: u64,
}

impl WireCheck {
    /// A checker for the peer `name`, whose framer limit is `max_frame_len`.
    pub(super) fn new(name: &'static str, max_frame_len: usize) -> WireCheck {
        let side = if name == "agent" { Side::Agent } else { Side::Client };
        WireCheck {
            name,
            inner: wire_check::WireCheck::new(side, max_frame_len),
            must_cancel: BTreeSet::new(),
            frames_emitted: 0,
            observer: Observer::new(),
            mirror: Framer::new(max_frame_len),
            side,
            comparable: true,
            observer_checks: 0,
        }
    }

    /// Records the client's capabilities (agent-side checker).
    pub(super) fn set_client_caps(&mut self, caps: Value) {
        self.inner.set_client_caps(caps);
    }

    /// Marks a prompt (by label) whose answer must be `cancelled`.
    pub(super) fn must_cancel(&mut self, label: u64) {
        self.must_cancel.insert(label);
    }

    /// Client: the labels of the permission asks of `session` it read and has not answered
    /// on the wire yet (`None` for an ask without a label).
    pub(super) fn open_asks<'a>(&'a self, session: &'a str) -> impl Iterator<Item = Option<u64>> + 'a {
        self.inner
            .open_requests_with_params()
            .filter(move |(_, method, params)| {
                *method == "session/request_permission" && params["sessionId"] == session
            })
            .map(|(_, _, params)| label_of(params))
    }

    /// Bytes the peer consumed (exactly what `handle_input` reported).
    pub(super) fn consumed(&mut self, bytes: &[u8]) {
        self.inner.consumed(bytes);
        let mut frames = Vec::new();
        let _ = self.mirror.push(bytes, |ev| {
            if let FrameEvent::Frame(f) = ev {
                frames.push(f.to_vec());
            }
            ControlFlow::Continue(())
        });
        self.observe_consumed(frames);
    }

    /// The peer saw the end of its input.
    pub(super) fn consumed_eof(&mut self) {
        self.inner.consumed_eof();
        let mut frames = Vec::new();
        self.mirror.finish(|ev| {
            if let FrameEvent::Frame(f) = ev {
                frames.push(f.to_vec());
            }
            ControlFlow::Continue(())
        });
        self.observe_consumed(frames);
    }

    /// The frames the peer read, as the other peer's, then the cross-check.
    fn observe_consumed(&mut self, frames: Vec<Vec<u8>>) {
        let other = match self.side {
            Side::Agent => Side::Client,
            Side::Client => Side::Agent,
        };
        for frame in frames {
            self.observer.observe(other, &frame);
        }
        self.cross_check();
    }

    /// The observer's open requests of the other peer and its turns' open prompts are the
    /// checker's (see the module docs). Panics when they differ.
    fn cross_check(&mut self) {
        let counters = self.observer.counters();
        let lawful = counters.loose_ids == 0
            && counters.requests_untracked == 0
            && counters.turns_untracked == 0
            && counters.keys_too_long == 0;
        let checker: BTreeMap<(RequestId, &str), usize> =
            self.inner.open_requests().fold(BTreeMap::new(), |mut m, (id, method)| {
                *m.entry((id.clone(), method)).or_default() += 1;
                m
            });
        // An invalid request with an id: the checker waits for its error answer.
        self.comparable &= lawful && !checker.keys().any(|(_, method)| method.is_empty());
        if !self.comparable {
            return;
        }
        let other = match self.side {
            Side::Agent => Side::Client,
            Side::Client => Side::Agent,
        };
        let observer: BTreeMap<(RequestId, &str), usize> =
            self.observer.open_requests(other).fold(BTreeMap::new(), |mut m, r| {
                *m.entry((r.id.clone(), &*r.wire)).or_default() += 1;
                m
            });
        assert_eq!(observer, checker, "{}: the observer's open requests are not the wire checker's", self.name);
        if self.side == Side::Agent {
            let mut prompts: BTreeMap<&str, u32> = BTreeMap::new();
            for (_, method, params) in self.inner.open_requests_with_params() {
                if method == "session/prompt"
                    && let Some(session) = params["sessionId"].as_str()
                {
                    *prompts.entry(session).or_default() += 1;
                }
            }
            let turns: BTreeMap<&str, u32> =
                self.observer.turns().filter(|(_, t)| t.prompts > 0).map(|(s, t)| (s, t.prompts)).collect();
            assert_eq!(turns, prompts, "agent: the observer's turns do not wait on the prompts open");
        }
        self.observer_checks += 1;
    }

    /// Bytes the peer emitted (whole frames). Panics on a violation.
    pub(super) fn emitted(&mut self, bytes: &[u8], agent: bool) {
        let (name, must_cancel) = (self.name, &self.must_cancel);
        let mut check = |answered: Answered| {
            if !agent || answered.method != "session/prompt" {
                return;
            }
            if let Some(label) = label_of(&answered.params)
                && must_cancel.contains(&label)
            {
                let stop = answered.result.as_ref().map(|r| r["stopReason"].clone());
                assert_eq!(
                    stop,
                    Some(Value::from("cancelled")),
                    "{name}: a turn cancelled by session/cancel was not answered `cancelled`"
                );
            }
        };
        let violations = self.inner.emitted(bytes, &mut check);
        if let Some(v) = violations.first() {
            panic!("{}: {v}", self.name);
        }
        self.frames_emitted = self.inner.frames_emitted();
        for frame in bytes.split(|b| *b == b'\n').filter(|f| !f.is_empty()) {
            self.observer.observe(self.side, frame);
        }
        self.cross_check();
    }

    /// Invariant 12, once the run has settled, for a peer whose input ended while it was
    /// open: every request it read (duplicates it dropped aside) was answered exactly once,
    /// whether or not it closed since. Panics on a violation.
    pub(super) fn settle_after_eof(&self, duplicates_dropped: u64) {
        if let Some(v) = self.inner.settle(duplicates_dropped, 0, false) {
            panic!("{}: a request read before the end of input was not answered exactly once: {v}", self.name);
        }
    }

    /// Final accounting once the run has settled. Panics on a violation.
    pub(super) fn settle(&self, duplicates_dropped: u64, in_flight: usize, closed: bool) {
        if let Some(v) = self.inner.settle(duplicates_dropped, in_flight, closed) {
            panic!("{}: {v}", self.name);
        }
    }
}
