//! The prompt turns in flight on one remote connection, as the server's bridge sees them pass:
//! what a graceful shutdown cancels, then waits for.
//!
//! The bridge carries every message both ways, whatever the agent is (an in-process
//! [`Agent`](crate::Agent) behind its own core, or an agent process), and shows each to the
//! connection's [`Observer`] (`acp_proto::observer`): the core's passive reader of both peers'
//! frames, which knows which requests and turns are open and which sessions were announced
//! (the HTTP routing asks it too, see `routes.rs`). This module reads no ACP field itself.
//! When the server shuts down, [`InFlight::cancels`] gives one `session/cancel` per session
//! with a turn open: the very message a client sends to cancel a turn, so the agent handles it
//! as it would the client's (for an acp-tokio agent: the core fires the prompt handler's
//! cancellation and answers `stopReason: "cancelled"`, on its own after the cancel grace period
//! if the handler does not). [`InFlight::settled_by`] resolves once no turn is open, or at its
//! deadline (the server gives the answers half its drain timeout: an agent that ignores the
//! cancel does not hold the shutdown up); the bridge then ends the agent's input.
//!
//! **ACP v2.** A v2 agent only acknowledges a prompt; its turn goes on until the agent's
//! `session/update` of that session reports `state_update` `idle`. The observer reads the
//! version off the messages themselves, so one bridge serves v1 and v2 agents alike (`acp
//! serve` relays either).
//!
//! Bounds and cost: what the observer keeps is bounded by its `Limits` (the defaults: 4096
//! open requests per peer, sessions and open turns; past them a turn is not tracked and ends
//! with the agent's input, unanswered). Every frame is read once by the observer: the core's
//! envelope parse plus a borrowed peek at its params, never into a `serde_json::Value`.

use std::sync::{Mutex, MutexGuard, PoisonError};

use acp_proto::Side;
use acp_proto::observer::{Observed, Observer};
use tokio::sync::Notify;
use tokio::time::Instant;

/// The turns in flight on one connection (and what else its observer knows).
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    observer: Mutex<Observer>,
    answered: Notify,
}

impl InFlight {
    fn observer(&self) -> MutexGuard<'_, Observer> {
        self.observer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A client → agent message (one JSON text): what it was.
    pub(crate) fn client_frame(&self, frame: &[u8]) -> Observed {
        self.observe(Side::Client, frame)
    }

    /// A client → agent message (one JSON text). Returns the session of a prompt request. (The
    /// WebSocket pump and frames; the tests below.)
    #[cfg(any(feature = "ws", test))]
    pub(crate) fn client_text(&self, text: &str) -> Option<String> {
        self.client_frame(text.as_bytes()).turn_began.map(|s| s.to_string())
    }

    /// An agent → client message (one JSON text): what it was.
    pub(crate) fn agent_frame(&self, frame: &[u8]) -> Observed {
        self.observe(Side::Agent, frame)
    }

    /// An agent → client line (one JSON text). (The WebSocket pump and frames; the tests
    /// below.)
    #[cfg(any(feature = "ws", test))]
    pub(crate) fn agent_line(&self, line: &[u8]) {
        self.agent_frame(line);
    }

    fn observe(&self, from: Side, frame: &[u8]) -> Observed {
        let mut observer = self.observer();
        let open = !observer.no_turn_open();
        let observed = observer.observe(from, frame);
        if open && observer.no_turn_open() {
            self.answered.notify_waiters();
        }
        observed
    }

    /// Whether `session` was announced on this connection (created, loaded or resumed).
    pub(crate) fn has_session(&self, session: &str) -> bool {
        self.observer().has_session(session)
    }

    /// One `session/cancel` per session with a turn in flight.
    pub(crate) fn cancels(&self) -> Vec<String> {
        let sessions: Vec<String> = self.observer().turns().map(|(s, _)| s.to_owned()).collect();
        sessions.iter().map(|s| cancel(s)).collect()
    }

    /// The state of each session's turn, for a resumed stream (`_meta["acp/turnState"]` of a
    /// WebSocket's resume, the `acp/turnState` event of an SSE one), read off the observer by
    /// `acp_proto::resume::turn_states`.
    #[cfg(feature = "unstable_resumable_transport")]
    pub(crate) fn turn_states(&self) -> Vec<acp_proto::resume::ResumedTurn> {
        acp_proto::resume::turn_states(&self.observer())
    }

    /// Resolves once no turn is in flight, or at `deadline`.
    pub(crate) async fn settled_by(&self, deadline: Instant) {
        let _ = tokio::time::timeout_at(deadline, self.drained()).await;
    }

    /// Resolves once no turn is in flight.
    pub(crate) async fn drained(&self) {
        loop {
            // Registered before the check: an answer in between is not missed.
            let answered = self.answered.notified();
            if self.observer().no_turn_open() {
                return;
            }
            answered.await;
        }
    }
}

/// The turns tracked per connection at most.
#[cfg(test)]
fn max_tracked() -> usize {
    acp_proto::observer::Limits::default().max_turns
}

/// The `session/cancel` notification of `session`.
pub(crate) fn cancel(session: &str) -> String {
    let params = acp_proto::types::CancelNotification::new(session);
    serde_json::json!({"jsonrpc": "2.0", "method": acp_proto::Method::Cancel.wire(), "params": params}).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn prompt(id: Value, session: &str) -> String {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": []}})
        .to_string()
    }

    #[tokio::test]
    async fn prompts_are_cancelled_per_session_and_drained_by_their_answers() {
        let turns = InFlight::default();
        assert_eq!(turns.client_text(&prompt(1.into(), "s1")), Some("s1".into()));
        assert_eq!(turns.client_text(&prompt("two".into(), "s2")), Some("s2".into()));
        assert_eq!(turns.client_text(r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{}}"#), None);
        let cancels = turns.cancels();
        assert_eq!(cancels.len(), 2);
        let first: Value = serde_json::from_str(&cancels[0]).expect("json");
        assert_eq!(first["method"], "session/cancel");
        assert_eq!(first["params"]["sessionId"], "s1");
        assert!(first.get("id").is_none(), "a notification");
        // An update of the turn and a request of the agent with the same id end nothing.
        turns.agent_line(br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1"}}"#);
        turns.agent_line(br#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{}}"#);
        turns.agent_line(br#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}"#);
        assert_eq!(turns.cancels().len(), 1);
    }

    #[tokio::test]
    async fn drained_resolves_when_the_last_answer_passes() {
        let turns = std::sync::Arc::new(InFlight::default());
        turns.client_text(&prompt("two".into(), "s2"));
        let waiter = turns.clone();
        let waiting = tokio::spawn(async move { waiter.drained().await });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "a prompt is in flight");
        turns.agent_line(br#"{"jsonrpc":"2.0","id":"two","result":{"stopReason":"cancelled"}}"#);
        waiting.await.expect("drained");
        assert!(turns.cancels().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn an_agent_that_never_answers_holds_nothing_up_past_the_deadline() {
        let turns = InFlight::default();
        turns.client_text(&prompt(1.into(), "s1"));
        let deadline = Instant::now() + std::time::Duration::from_secs(3);
        turns.settled_by(deadline).await;
        assert!(Instant::now() >= deadline);
        assert_eq!(turns.cancels().len(), 1, "still unanswered");
    }

    // The two tests that compared the borrowed peek with the parsed `Value` went with the peek:
    // the cases they held (ids of every type, escaped names, results that are no object or
    // carry `stopReason: null`, keys given twice, idle outside `session/update`) are rules of
    // `acp_proto::observer` and tested there (`observer/tests.rs`, `proptests/tests/observer.rs`).

    /// A v2 agent's `session/update` of `session` with a `state_update` of `state`.
    fn state(session: &str, state: &str) -> String {
        serde_json::json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session,
            "update": {"sessionUpdate": "state_update", "state": state, "stopReason": "end_turn"}}})
        .to_string()
    }

    #[tokio::test]
    async fn a_v2_turn_runs_from_its_acknowledgement_to_its_idle_state_update() {
        let turns = std::sync::Arc::new(InFlight::default());
        turns.client_text(&prompt(1.into(), "s1"));
        turns.client_text(&prompt(2.into(), "s2"));
        // s1's v2 acknowledgement (no stopReason): its turn goes on; s2 was a v1 answer.
        turns.agent_line(br#"{"jsonrpc":"2.0","id":1,"result":{"messageId":"user-1"}}"#);
        turns.agent_line(br#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#);
        assert_eq!(turns.cancels(), [cancel("s1")], "s1's turn runs on after its ack");
        let waiter = turns.clone();
        let waiting = tokio::spawn(async move { waiter.drained().await });
        // Neither another session's idle, nor s1's running state, nor an idle outside
        // `session/update` ends it.
        turns.agent_line(state("s2", "idle").as_bytes());
        turns.agent_line(state("s1", "running").as_bytes());
        turns.agent_line(state("s1", "idle").replace("session/update", "_x/update").as_bytes());
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "s1's turn is running");
        turns.agent_line(state("s1", "idle").as_bytes());
        within(waiting).await;
        assert!(turns.cancels().is_empty());
        // An error answers a v2 prompt too: no turn runs.
        turns.client_text(&prompt(3.into(), "s3"));
        turns.agent_line(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"no"}}"#);
        assert!(turns.cancels().is_empty());
    }

    async fn within(task: tokio::task::JoinHandle<()>) {
        tokio::time::timeout(std::time::Duration::from_secs(5), task).await.expect("in time").expect("drained");
    }

    #[test]
    fn what_is_recorded_is_bounded() {
        let turns = InFlight::default();
        for i in 0..max_tracked() + 10 {
            turns.client_text(&prompt(i.into(), &format!("s{i}")));
        }
        assert_eq!(turns.cancels().len(), max_tracked());
    }
}
