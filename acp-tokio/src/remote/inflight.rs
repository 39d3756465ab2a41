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
//! once every recorded turn ended, or at its deadline (the server gives the answers
//! half its drain timeout: an agent that ignores the cancel does not hold the shutdown up); the
//! bridge then ends the agent's input. No change to
//! the core was needed: cancelling from the client's side of the agent is what `session/cancel`
//! is for.
//!
//! **ACP v2.** A v2 agent only acknowledges a prompt (a result without `stopReason`, v2's
//! `{"messageId": …}`); its turn goes on until the agent's `session/update` of that session
//! reports `state_update` `idle`. So a response without `stopReason` moves its session to the
//! running turns, and an idle `state_update` ends the session's running turn; a v1 answer (with
//! `stopReason`) or an error ends the turn at once. The version is read off the messages
//! themselves, so one bridge serves v1 and v2 agents alike (`acp serve` relays either).
//!
//! Bounds and cost: at most [`MAX_TRACKED`] prompts and as many running v2 turns are recorded
//! (one more is not, and its turn ends with the agent's input, unanswered); a client frame is
//! parsed only when it names `session/prompt`, an agent line only while turns are in flight
//! and only when it has an `"id"` key (or, while v2 turns run, an `"idle"` string); and a
//! frame or line is read by a borrowed peek at the few keys that matter (`method`, `id`,
//! `params.sessionId`, `result.stopReason`, `params.update`), not into a [`Value`]: over
//! WebSocket every prompt and its answer pass here, and building two `Value`s per round trip
//! was 4% of its CPU. The peek decides as the `Value` functions do (the tests compare them),
//! except that a message with a key given twice is not read at all (nothing is recorded or
//! ended for it).

use std::collections::{HashMap, HashSet};
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

/// The turns in flight on one connection.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    tracked: Mutex<Tracked>,
    answered: Notify,
}

/// What [`InFlight`] records.
#[derive(Debug, Default)]
struct Tracked {
    /// Prompts not answered yet: request id → session id.
    prompts: HashMap<String, String>,
    /// Sessions whose v2 prompt was acknowledged and whose turn has not reported `idle` yet.
    running: HashSet<String>,
}

impl Tracked {
    fn is_empty(&self) -> bool {
        self.prompts.is_empty() && self.running.is_empty()
    }
}

impl InFlight {
    fn tracked(&self) -> std::sync::MutexGuard<'_, Tracked> {
        self.tracked.lock().unwrap_or_else(PoisonError::into_inner)
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
        let prompts = &mut self.tracked().prompts;
        if prompts.len() < MAX_TRACKED || prompts.contains_key(&key) {
            prompts.insert(key, session.clone());
        }
        session
    }

    /// An agent → client line (one JSON text): a response ends its prompt (or, a v2
    /// acknowledgement, starts its running turn); an idle `state_update` ends a running turn.
    pub(crate) fn agent_line(&self, line: &[u8]) {
        let (prompts, running) = {
            let tracked = self.tracked();
            (!tracked.prompts.is_empty(), !tracked.running.is_empty())
        };
        if !(prompts && may_have_id(line) || running && has_idle(line)) {
            return;
        }
        let Ok(peek) = serde_json::from_slice::<AgentPeek<'_>>(line) else { return };
        match peek.method {
            MethodPeek::Absent => {
                if let Some(key) = peek.id.key() {
                    self.answered(&key, peek.result.is_some_and(|r| r.acknowledges));
                }
            }
            MethodPeek::Named(method) if method == "session/update" => {
                let Some(params) = peek.params else { return };
                let idle = params.update.is_some_and(|u| {
                    u.session_update.as_deref() == Some("state_update") && u.state.as_deref() == Some("idle")
                });
                if let (true, Some(session)) = (idle, params.session_id) {
                    self.idle(&session);
                }
            }
            MethodPeek::Named(_) | MethodPeek::Other => {}
        }
    }

    /// An agent → client message: as [`agent_line`](Self::agent_line).
    pub(crate) fn agent_message(&self, message: &Value) {
        if is_response(message) {
            if let Some(key) = id_key(message) {
                let result = message.get("result");
                let acknowledges = result.and_then(Value::as_object).is_some_and(|r| !r.contains_key("stopReason"));
                self.answered(&key, acknowledges);
            }
            return;
        }
        if message.get("method").and_then(Value::as_str) != Some("session/update") {
            return;
        }
        let update = message.get("params").and_then(|p| p.get("update"));
        let field = |name| update.and_then(|u| u.get(name)).and_then(Value::as_str);
        if field("sessionUpdate") == Some("state_update")
            && field("state") == Some("idle")
            && let Some(session) = params_session(message)
        {
            self.idle(session);
        }
    }

    /// The response to `key` passed: its prompt ends, or (a v2 acknowledgement) its turn runs
    /// on until the session reports idle.
    fn answered(&self, key: &str, acknowledges: bool) {
        let mut tracked = self.tracked();
        let Some(session) = tracked.prompts.remove(key) else { return };
        if acknowledges && tracked.running.len() < MAX_TRACKED {
            tracked.running.insert(session);
        }
        if tracked.is_empty() {
            self.answered.notify_waiters();
        }
    }

    /// `session` reported idle: its running v2 turn ended.
    fn idle(&self, session: &str) {
        let mut tracked = self.tracked();
        if tracked.running.remove(session) && tracked.is_empty() {
            self.answered.notify_waiters();
        }
    }

    /// One `session/cancel` per session with a turn in flight.
    pub(crate) fn cancels(&self) -> Vec<String> {
        let tracked = self.tracked();
        let mut sessions: Vec<String> = tracked.prompts.values().chain(&tracked.running).cloned().collect();
        drop(tracked);
        sessions.sort();
        sessions.dedup();
        sessions.iter().map(|s| cancel(s)).collect()
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
            if self.tracked().is_empty() {
                return;
            }
            answered.await;
        }
    }
}

/// Whether `line` may be an idle `state_update` (it has an `"idle"` string).
fn has_idle(line: &[u8]) -> bool {
    line.windows(6).any(|w| w == b"\"idle\"")
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
struct AgentPeek<'a> {
    #[serde(default)]
    method: MethodPeek,
    #[serde(default)]
    id: IdPeek,
    #[serde(default)]
    result: Option<ResultPeek>,
    #[serde(borrow, default)]
    params: Option<UpdateParamsPeek<'a>>,
}

/// A `method` key: absent (a response), a name, or anything else (no response either).
#[derive(Default)]
enum MethodPeek {
    #[default]
    Absent,
    Named(String),
    Other,
}

impl<'de> Deserialize<'de> for MethodPeek {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = IgnoredOrStr::deserialize(deserializer)?;
        Ok(value.0.map_or(MethodPeek::Other, MethodPeek::Named))
    }
}

/// Any JSON value, keeping it only when it is a string.
struct IgnoredOrStr(Option<String>);

impl<'de> Deserialize<'de> for IgnoredOrStr {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IdVisitor { numbers: false }).map(IgnoredOrStr)
    }
}

/// A response's `result`: whether it is a v2 acknowledgement (an object without `stopReason`).
struct ResultPeek {
    acknowledges: bool,
}

impl<'de> Deserialize<'de> for ResultPeek {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ResultVisitor)
    }
}

struct ResultVisitor;

impl<'de> Visitor<'de> for ResultVisitor {
    type Value = ResultPeek;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut stop_reason = false;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            stop_reason |= key == "stopReason";
            map.next_value::<IgnoredAny>()?;
        }
        Ok(ResultPeek { acknowledges: !stop_reason })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ResultPeek { acknowledges: false })
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(ResultPeek { acknowledges: false })
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ResultPeek { acknowledges: false })
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ResultPeek { acknowledges: false })
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ResultPeek { acknowledges: false })
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ResultPeek { acknowledges: false })
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ResultPeek { acknowledges: false })
    }
}

/// The params of an agent message, as far as an idle `state_update` needs them.
#[derive(Deserialize)]
struct UpdateParamsPeek<'a> {
    #[serde(borrow, default, rename = "sessionId")]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    update: Option<StatePeek<'a>>,
}

#[derive(Deserialize)]
struct StatePeek<'a> {
    #[serde(borrow, default, rename = "sessionUpdate")]
    session_update: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    state: Option<Cow<'a, str>>,
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
        deserializer.deserialize_any(IdVisitor { numbers: true }).map(IdPeek)
    }
}

/// Reads any JSON value, keeping a string (and with `numbers`, a number as `id_key` writes it).
struct IdVisitor {
    numbers: bool,
}

impl<'de> Visitor<'de> for IdVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(self.numbers.then(|| v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(self.numbers.then(|| v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        // As `serde_json::Number` writes it (what `id_key` gives for the same id).
        Ok(serde_json::Number::from_f64(v).filter(|_| self.numbers).map(|n| n.to_string()))
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
    fn the_peek_at_a_v2_line_decides_as_the_parsed_message_does() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"result":{"messageId":"m"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":null}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":["stopReason"]}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"x":{"stopReason":1}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":null}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":null,"result":{}}"#.to_owned(),
            state("s1", "idle"),
            state("s1", "requires_action"),
            state("s2", "idle"),
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"usage_update","state":"idle"}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle","x":{"id":2}}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"state_update","state":"idle"}}}"#.to_owned(),
        ];
        for line in &lines {
            let (peeked, parsed) = (InFlight::default(), InFlight::default());
            for turns in [&peeked, &parsed] {
                turns.client_text(&prompt(1.into(), "s1"));
                // s1 is also running already (an earlier acknowledged turn's session).
                turns.client_text(&prompt(9.into(), "s1"));
                turns.agent_line(br#"{"jsonrpc":"2.0","id":9,"result":{"messageId":"m9"}}"#);
            }
            peeked.agent_line(line.as_bytes());
            parsed.agent_message(&serde_json::from_str(line).expect("json"));
            let (a, b) = (peeked.tracked(), parsed.tracked());
            assert_eq!((&a.prompts, &a.running), (&b.prompts, &b.running), "{line}");
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
