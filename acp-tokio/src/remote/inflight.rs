//! The prompt turns in flight on one remote connection, as the server's bridge sees them pass:
//! what a graceful shutdown cancels, then waits for.
//!
//! The bridge carries every message both ways, whatever the agent is (an in-process
//! [`Agent`](crate::Agent) behind its own core, or an agent process). It records each
//! `session/prompt` request of the client (its id and session) and forgets it when the agent's
//! response with that id passes. When the server shuts down, [`InFlight::cancels`] gives one
//! `session/cancel` per session with a turn in flight: the very message a client sends to cancel
//! a turn, so the agent handles it as it would the client's (for an acp-tokio agent: the core
//! fires the prompt handler's cancellation and answers `stopReason: "cancelled"`, on its own
//! after the cancel grace period if the handler does not). [`InFlight::settled_by`] resolves
//! once every recorded prompt was answered, or at its deadline (the server gives the answers
//! half its drain timeout: an agent that ignores the cancel does not hold the shutdown up); the
//! bridge then ends the agent's input. No change to
//! the core was needed: cancelling from the client's side of the agent is what `session/cancel`
//! is for.
//!
//! Bounds and cost: at most [`MAX_TRACKED`] prompts are recorded (one more is not, and its turn
//! ends with the agent's input, unanswered); a client frame is parsed only when it names
//! `session/prompt`, an agent line only while prompts are in flight and only when it has an
//! `"id"` key.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::routes::{id_key, is_response, may_have_id, params_session};

/// Prompts recorded per connection.
pub(crate) const MAX_TRACKED: usize = 1024;

/// The prompts in flight on one connection: request id → session id.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    prompts: Mutex<HashMap<String, String>>,
    answered: Notify,
}

impl InFlight {
    fn prompts(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.prompts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A client → agent message (one JSON text). Returns the session of a prompt request.
    pub(crate) fn client_text(&self, text: &str) -> Option<String> {
        if !text.contains("session/prompt") {
            return None;
        }
        self.client_message(&serde_json::from_str(text).ok()?)
    }

    /// A client → agent message. Returns the session of a prompt request.
    pub(crate) fn client_message(&self, message: &Value) -> Option<String> {
        if message.get("method").and_then(Value::as_str) != Some("session/prompt") {
            return None;
        }
        let (key, session) = (id_key(message)?, params_session(message)?.to_owned());
        let mut prompts = self.prompts();
        if prompts.len() < MAX_TRACKED || prompts.contains_key(&key) {
            prompts.insert(key, session.clone());
        }
        Some(session)
    }

    /// An agent → client line (one JSON text): a response ends its prompt.
    pub(crate) fn agent_line(&self, line: &[u8]) {
        if self.prompts().is_empty() || !may_have_id(line) {
            return;
        }
        if let Ok(message) = serde_json::from_slice::<Value>(line) {
            self.agent_message(&message);
        }
    }

    /// An agent → client message: a response ends its prompt.
    pub(crate) fn agent_message(&self, message: &Value) {
        if !is_response(message) {
            return;
        }
        let Some(key) = id_key(message) else { return };
        let mut prompts = self.prompts();
        if prompts.remove(&key).is_some() && prompts.is_empty() {
            self.answered.notify_waiters();
        }
    }

    /// One `session/cancel` per session with a prompt in flight.
    pub(crate) fn cancels(&self) -> Vec<String> {
        let mut sessions: Vec<String> = self.prompts().values().cloned().collect();
        sessions.sort();
        sessions.dedup();
        sessions.iter().map(|s| cancel(s)).collect()
    }

    /// Resolves once no prompt is in flight, or at `deadline`.
    pub(crate) async fn settled_by(&self, deadline: Instant) {
        let _ = tokio::time::timeout_at(deadline, self.drained()).await;
    }

    /// Resolves once no prompt is in flight.
    pub(crate) async fn drained(&self) {
        loop {
            // Registered before the check: an answer in between is not missed.
            let answered = self.answered.notified();
            if self.prompts().is_empty() {
                return;
            }
            answered.await;
        }
    }
}

/// The `session/cancel` notification of `session`.
pub(crate) fn cancel(session: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}).to_string()
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn what_is_recorded_is_bounded() {
        let turns = InFlight::default();
        for i in 0..MAX_TRACKED + 10 {
            turns.client_text(&prompt(i.into(), &format!("s{i}")));
        }
        assert_eq!(turns.cancels().len(), MAX_TRACKED);
    }
}
