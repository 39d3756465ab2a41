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
//! `"id"` key; and a frame or line is read by a borrowed peek at the few keys that matter
//! (`method`, `id`, `params.sessionId`), not into a [`Value`]: over WebSocket every prompt and
//! its answer pass here, and building two `Value`s per round trip was 4% of its CPU. The peek
//! decides as the `Value` functions do (the tests compare them), except that a message with a
//! key given twice is not read at all (nothing is recorded or ended for it).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
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
        let peek: ClientPeek<'_> = serde_json::from_str(text).ok()?;
        if peek.method.as_deref() != Some("session/prompt") {
            return None;
        }
        let session = peek.params.and_then(|params| params.session_id)?;
        Some(self.record(peek.id.key()?, session.into_owned()))
    }

    /// A client → agent message. Returns the session of a prompt request.
    pub(crate) fn client_message(&self, message: &Value) -> Option<String> {
        if message.get("method").and_then(Value::as_str) != Some("session/prompt") {
            return None;
        }
        let (key, session) = (id_key(message)?, params_session(message)?.to_owned());
        Some(self.record(key, session))
    }

    /// Records the prompt `key` of `session` (within the bound); returns `session`.
    fn record(&self, key: String, session: String) -> String {
        let mut prompts = self.prompts();
        if prompts.len() < MAX_TRACKED || prompts.contains_key(&key) {
            prompts.insert(key, session.clone());
        }
        session
    }

    /// An agent → client line (one JSON text): a response ends its prompt.
    pub(crate) fn agent_line(&self, line: &[u8]) {
        if self.prompts().is_empty() || !may_have_id(line) {
            return;
        }
        let Ok(peek) = serde_json::from_slice::<AgentPeek>(line) else { return };
        if let (false, Some(key)) = (peek.method, peek.id.key()) {
            self.answered(&key);
        }
    }

    /// An agent → client message: a response ends its prompt.
    pub(crate) fn agent_message(&self, message: &Value) {
        if !is_response(message) {
            return;
        }
        if let Some(key) = id_key(message) {
            self.answered(&key);
        }
    }

    /// The response to `key` passed: its prompt ends.
    fn answered(&self, key: &str) {
        let mut prompts = self.prompts();
        if prompts.remove(key).is_some() && prompts.is_empty() {
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

/// A client message, as far as [`InFlight::client_text`] reads it.
#[derive(Deserialize)]
struct ClientPeek<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default)]
    id: IdPeek,
    #[serde(borrow, default)]
    params: Option<ParamsPeek<'a>>,
}

#[derive(Deserialize)]
struct ParamsPeek<'a> {
    #[serde(borrow, default, rename = "sessionId")]
    session_id: Option<Cow<'a, str>>,
}

/// An agent message, as far as [`InFlight::agent_line`] reads it.
#[derive(Deserialize)]
struct AgentPeek {
    /// Whether it has a `method` key (whatever its value, `null` too): then it is no response.
    #[serde(default, deserialize_with = "present")]
    method: bool,
    #[serde(default)]
    id: IdPeek,
}

fn present<'de, D: de::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(deserializer).map(|_| true)
}

/// An `id` as [`id_key`] reads it: a string or a number is a key, anything else (or none) not.
#[derive(Default)]
struct IdPeek(Option<String>);

impl IdPeek {
    fn key(self) -> Option<String> {
        self.0
    }
}

impl<'de> Deserialize<'de> for IdPeek {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IdVisitor).map(IdPeek)
    }
}

struct IdVisitor;

impl<'de> Visitor<'de> for IdVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        // As `serde_json::Number` writes it (what `id_key` gives for the same id).
        Ok(serde_json::Number::from_f64(v).map(|n| n.to_string()))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
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

    /// The peek of `client_text` and `agent_line` decides as the `Value` functions do.
    #[test]
    fn the_peek_at_a_text_decides_as_the_parsed_message_does() {
        let clients = [
            prompt(1.into(), "s1"),
            prompt("a\\\"b".into(), "s\n2"),
            prompt(json_f64(), "s3"),
            prompt(Value::Null, "s4"),
            prompt(serde_json::json!({"x": [1]}), "s5"),
            prompt(true.into(), "s6"),
            r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"prompt":[]}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"sessionId":9}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":10,"method":"session/prompt","params":[]}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":12,"method":"session/new","params":{"cwd":"session/prompt"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":-13,"params":{"sessionId":"s13"},"method":"session/prompt"}"#.to_owned(),
        ];
        for text in &clients {
            let (peeked, parsed) = (InFlight::default(), InFlight::default());
            let value: Value = serde_json::from_str(text).expect("json");
            assert_eq!(peeked.client_text(text), parsed.client_message(&value), "{text}");
            assert_eq!(peeked.cancels(), parsed.cancels(), "{text}");
        }
        // As before the peek: a method name written with escapes is not seen in a text.
        let escaped = r#"{"jsonrpc":"2.0","id":11,"method":"session\/prompt","params":{"sessionId":"s11"}}"#;
        assert_eq!(InFlight::default().client_text(escaped), None);
        let agents = [
            r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#,
            r#"{"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"id":1}}"#,
            r#"{"jsonrpc":"2.0","result":{"id":1}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":[1],"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":-13,"result":{}}"#,
        ];
        for line in agents {
            let (peeked, parsed) = (InFlight::default(), InFlight::default());
            for turns in [&peeked, &parsed] {
                turns.client_text(&prompt(1.into(), "s1"));
                turns.client_text(&prompt((-13).into(), "s13"));
            }
            peeked.agent_line(line.as_bytes());
            parsed.agent_message(&serde_json::from_str(line).expect("json"));
            assert_eq!(peeked.cancels(), parsed.cancels(), "{line}");
        }
    }

    fn json_f64() -> Value {
        serde_json::json!(1.5)
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
