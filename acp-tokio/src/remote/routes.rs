//! Where an agent's message goes on a Streamable HTTP connection: the RFD's routing rules, kept
//! apart from the I/O so that each has a test.
//!
//! | agent → client message | goes to |
//! |---|---|
//! | the response to a request that waits for it in its POST (`initialize`) | that POST's body |
//! | a response whose result carries a new `sessionId` (`session/new`, `session/fork`) | the connection stream; the session is registered (its stream may be opened) |
//! | a successful response to `session/load` or `session/resume` (v1, and v2's `session/resume`: their results carry no `sessionId`) | the connection stream; the request's session is registered |
//! | a response to a request the client sent with a `sessionId` in its params | that session's stream |
//! | a request or notification with a registered `sessionId` in its params | that session's stream |
//! | anything else | the connection stream |
//!
//! A message without an `"id"` key anywhere is a notification (or no JSON): only its
//! `params.sessionId` is read, by a borrowed peek ([`notification_session`]) instead of a
//! whole [`Value`]; the core at the other end parses it anyway.
//!
//! What the table keeps is bounded: at most [`MAX_SESSIONS`] sessions and [`MAX_ROUTES`]
//! requests awaiting their answer; past them the message still arrives, on the connection
//! stream.

use std::collections::{HashMap, HashSet};

use acp_proto::Method;
use serde_json::Value;

/// Sessions a connection may register.
pub(crate) const MAX_SESSIONS: usize = 4096;
/// Client requests whose session is remembered until their answer.
pub(crate) const MAX_ROUTES: usize = 4096;

/// Where a message goes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Destination<W> {
    /// To the POST waiting for it.
    Waiter(W),
    /// The connection-scoped stream.
    Connection,
    /// A session-scoped stream.
    Session(String),
}

/// The routing table of one connection. `W` is what a waiting POST is woken with.
#[derive(Debug)]
pub(crate) struct Routes<W> {
    sessions: HashSet<String>,
    /// Client requests naming a session, by id: the session, and whether the request attaches
    /// it (`session/load`, `session/resume`).
    pending: HashMap<String, (String, bool)>,
    waiters: HashMap<String, W>,
}

/// The requests whose success attaches the session their params name (their results name
/// none): `session/load` (v1) and `session/resume` (v1 and v2 share the wire name).
const ATTACHING: [Method; 2] = [Method::LoadSession, Method::ResumeSession];

/// The methods whose POST must name its session (`Acp-Session-Id`), as the RFD lists them: the
/// server checks the header, the HTTP client sets it (v2 shares these wire names).
pub(crate) const SESSION_SCOPED: [Method; 5] =
    [Method::Prompt, Method::Cancel, Method::SetSessionMode, Method::SetSessionConfigOption, Method::CloseSession];

/// Whether `method` (a wire name) attaches the session its params name (see [`ATTACHING`]).
pub(crate) fn attaching(method: &str) -> bool {
    Method::from_wire(method).is_some_and(|m| ATTACHING.contains(&m))
}

/// Whether `method` (a wire name) is one of [`SESSION_SCOPED`].
pub(crate) fn session_scoped(method: &str) -> bool {
    Method::from_wire(method).is_some_and(|m| SESSION_SCOPED.contains(&m))
}

impl<W> Default for Routes<W> {
    fn default() -> Self {
        Routes { sessions: HashSet::new(), pending: HashMap::new(), waiters: HashMap::new() }
    }
}

/// A JSON-RPC id as a key (`1` and `"1"` are one key, as the RFD's reference does).
pub(crate) fn id_key(message: &Value) -> Option<String> {
    match message.get("id")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn session_in(value: Option<&Value>) -> Option<&str> {
    value?.get("sessionId")?.as_str()
}

/// Whether `message` is a response (an `id`, no `method`).
pub(crate) fn is_response(message: &Value) -> bool {
    message.get("id").is_some() && message.get("method").is_none()
}

/// The `sessionId` of a request's or notification's params.
pub(crate) fn params_session(message: &Value) -> Option<&str> {
    session_in(message.get("params"))
}

/// Whether `text` may have an `"id"` key at any depth (a key written with escapes, such as
/// `"\u0069d"`, is not seen).
pub(crate) fn may_have_id(text: &[u8]) -> bool {
    let mut rest = text;
    while let Some(quote) = rest.iter().position(|&b| b == b'"') {
        rest = &rest[quote + 1..];
        if rest.starts_with(b"id\"") {
            return true;
        }
    }
    false
}

/// The top level of a notification, as far as routing reads it.
#[derive(serde::Deserialize)]
struct Peek<'a> {
    #[serde(borrow, default)]
    params: Option<PeekParams<'a>>,
}

#[derive(serde::Deserialize)]
struct PeekParams<'a> {
    #[serde(borrow, default, rename = "sessionId")]
    session_id: Option<std::borrow::Cow<'a, str>>,
}

/// A notification's `params.sessionId`, read without building a [`Value`]: `Ok(None)` when it
/// has none, `Err` when `text` is no JSON object (or its params are not one).
pub(crate) fn notification_session(text: &[u8]) -> Result<Option<std::borrow::Cow<'_, str>>, serde_json::Error> {
    let peek: Peek<'_> = serde_json::from_slice(text)?;
    Ok(peek.params.and_then(|p| p.session_id))
}

impl<W> Routes<W> {
    /// Where a request or notification of the agent goes: its session's stream, if registered.
    pub(crate) fn to_session(&self, session: Option<&str>) -> Destination<W> {
        match session {
            Some(session) if self.sessions.contains(session) => Destination::Session(session.to_owned()),
            _ => Destination::Connection,
        }
    }

    /// Whether `session` was registered (its stream may be opened, its POSTs accepted).
    pub(crate) fn has_session(&self, session: &str) -> bool {
        self.sessions.contains(session)
    }

    /// The POST carrying `message` waits for its answer (`initialize`).
    pub(crate) fn wait_for(&mut self, message: &Value, waiter: W) {
        if let Some(key) = id_key(message) {
            self.waiters.insert(key, waiter);
        }
    }

    /// A client → agent message: a request naming a session has its answer routed there.
    pub(crate) fn inbound(&mut self, message: &Value) {
        let Some(method) = message.get("method") else { return };
        if self.pending.len() >= MAX_ROUTES {
            return;
        }
        if let (Some(key), Some(session)) = (id_key(message), params_session(message)) {
            self.pending.insert(key, (session.to_owned(), method.as_str().is_some_and(attaching)));
        }
    }

    /// An agent → client message: where it goes.
    pub(crate) fn outbound(&mut self, message: &Value) -> Destination<W> {
        if !is_response(message) {
            return self.to_session(params_session(message));
        }
        let key = id_key(message);
        if let Some(waiter) = key.as_ref().and_then(|k| self.waiters.remove(k)) {
            return Destination::Waiter(waiter);
        }
        let routed = key.and_then(|k| self.pending.remove(&k));
        if let Some(established) = session_in(message.get("result")) {
            if !self.sessions.contains(established) && self.sessions.len() < MAX_SESSIONS {
                self.sessions.insert(established.to_owned());
            }
            return Destination::Connection;
        }
        match routed {
            Some((session, true)) if message.get("result").is_some() => {
                if self.sessions.len() < MAX_SESSIONS {
                    self.sessions.insert(session);
                }
                Destination::Connection
            }
            Some((session, _)) if self.sessions.contains(&session) => Destination::Session(session),
            _ => Destination::Connection,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The POSTs that must carry `Acp-Session-Id`, by wire name (the server checks, the HTTP
    /// client sets the header from this one list).
    #[test]
    fn session_scoped_methods_by_wire_name() {
        for method in
            ["session/prompt", "session/cancel", "session/set_mode", "session/set_config_option", "session/close"]
        {
            assert!(session_scoped(method), "{method}");
        }
        for method in ["initialize", "session/new", "session/load", "session/resume", "_x/session/prompt", "nope"] {
            assert!(!session_scoped(method), "{method}");
        }
    }

    fn established(routes: &mut Routes<()>, session: &str) {
        let answer = json!({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": session}});
        assert_eq!(routes.outbound(&answer), Destination::Connection);
    }

    #[test]
    fn a_notification_is_routed_by_a_peek_at_its_session_as_a_parsed_one_would_be() {
        let mut routes: Routes<()> = Routes::default();
        established(&mut routes, "s1");
        let update = br#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"text":"say \"id\""}},"sessionId":"s1"}}"#;
        assert!(!may_have_id(update), "an escaped \"id\" in a string is no key");
        let session = notification_session(update).expect("json");
        assert_eq!(routes.to_session(session.as_deref()), Destination::Session("s1".into()));
        let parsed: Value = serde_json::from_slice(update).expect("json");
        assert_eq!(routes.outbound(&parsed), Destination::Session("s1".into()));
        let other = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\u0032"}}"#;
        assert_eq!(notification_session(other).expect("json").as_deref(), Some("s2"), "escapes are decoded");
        assert_eq!(routes.to_session(Some("s2")), Destination::Connection, "unregistered");
        assert_eq!(notification_session(br#"{"method":"x"}"#).expect("json"), None);
        assert!(notification_session(br#"{"method":"x","params":[1]}"#).is_err());
        assert!(notification_session(b"no json").is_err());
        assert!(may_have_id(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
    }

    #[test]
    fn the_answer_a_post_waits_for_goes_to_it_once() {
        let mut routes = Routes::default();
        routes.wait_for(&json!({"id": 1, "method": "initialize"}), "waiter");
        let answer = json!({"id": 1, "result": {"protocolVersion": 1}});
        assert_eq!(routes.outbound(&answer), Destination::Waiter("waiter"));
        assert_eq!(routes.outbound(&answer), Destination::Connection);
    }

    #[test]
    fn a_new_session_answer_goes_to_the_connection_stream_and_registers_the_session() {
        let mut routes = Routes::default();
        assert!(!routes.has_session("s1"));
        established(&mut routes, "s1");
        assert!(routes.has_session("s1"));
    }

    #[test]
    fn a_session_requests_answer_goes_to_its_session_stream() {
        let mut routes = Routes::default();
        established(&mut routes, "s1");
        routes.inbound(&json!({"id": "7", "method": "session/prompt", "params": {"sessionId": "s1"}}));
        let answer = json!({"id": 7, "result": {"stopReason": "end_turn"}});
        assert_eq!(routes.outbound(&answer), Destination::Session("s1".into()));
        // Routed once: a repeated answer is the connection's.
        assert_eq!(routes.outbound(&answer), Destination::Connection);
    }

    #[test]
    fn agent_requests_and_notifications_go_to_their_registered_session() {
        let mut routes = Routes::default();
        let update = json!({"method": "session/update", "params": {"sessionId": "s1", "update": {}}});
        assert_eq!(routes.outbound(&update), Destination::Connection, "not registered yet");
        established(&mut routes, "s1");
        assert_eq!(routes.outbound(&update), Destination::Session("s1".into()));
        let ask = json!({"id": 0, "method": "session/request_permission", "params": {"sessionId": "s1"}});
        assert_eq!(routes.outbound(&ask), Destination::Session("s1".into()));
        let other = json!({"method": "_x/ping", "params": {}});
        assert_eq!(routes.outbound(&other), Destination::Connection);
    }

    #[test]
    fn a_load_or_resume_answer_goes_to_the_connection_stream_and_registers_its_session() {
        let mut routes = Routes::<()>::default();
        // v2's `session/resume` (as v1's `session/load` and `session/resume`): the result names
        // no session; the request did.
        for (id, method, session) in [(1, "session/resume", "s1"), (2, "session/load", "s2")] {
            routes.inbound(&json!({"id": id, "method": method, "params": {"sessionId": session, "cwd": "/"}}));
            assert!(!routes.has_session(session));
            let answer = json!({"id": id, "result": {"configOptions": []}});
            assert_eq!(routes.outbound(&answer), Destination::Connection);
            assert!(routes.has_session(session), "{method}");
        }
        let update = json!({"method": "session/update", "params": {"sessionId": "s1", "update": {}}});
        assert_eq!(routes.outbound(&update), Destination::Session("s1".into()));
        // A refused resume attaches nothing; neither does another request naming a session.
        routes.inbound(&json!({"id": 3, "method": "session/resume", "params": {"sessionId": "s3"}}));
        routes.outbound(&json!({"id": 3, "error": {"code": -32602, "message": "unknown session"}}));
        routes.inbound(&json!({"id": 4, "method": "session/close", "params": {"sessionId": "s4"}}));
        routes.outbound(&json!({"id": 4, "result": {}}));
        assert!(!routes.has_session("s3") && !routes.has_session("s4"));
    }

    #[test]
    fn client_answers_and_notifications_record_no_route() {
        let mut routes = Routes::<()>::default();
        routes.inbound(&json!({"id": 0, "result": {"outcome": {"outcome": "cancelled"}}}));
        routes.inbound(&json!({"method": "session/cancel", "params": {"sessionId": "s1"}}));
        assert!(routes.pending.is_empty());
    }

    #[test]
    fn the_tables_are_bounded() {
        let mut routes = Routes::<()>::default();
        for i in 0..MAX_ROUTES + 10 {
            routes.inbound(&json!({"id": i, "method": "session/prompt", "params": {"sessionId": "s"}}));
        }
        assert_eq!(routes.pending.len(), MAX_ROUTES);
        for i in 0..MAX_SESSIONS + 10 {
            routes.outbound(&json!({"id": -1, "result": {"sessionId": format!("s{i}")}}));
        }
        assert_eq!(routes.sessions.len(), MAX_SESSIONS);
    }
}
