//! Wire-level checks of one peer: [`acp_proto::wire_check::WireCheck`] (shared with
//! `acp replay --check`), failing the run on the first violation, plus the simulation's own
//! rule that a prompt whose turn was cancelled by `session/cancel` is answered `cancelled`
//! (the simulation knows which turns those are by their labels).

use std::collections::BTreeSet;

use acp_proto::Side;
use acp_proto::wire_check::{self, Answered};
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
    }

    /// The peer saw the end of its input.
    pub(super) fn consumed_eof(&mut self) {
        self.inner.consumed_eof();
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
