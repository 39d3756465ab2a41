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
//! No field is read here: the connection's observer (`acp_proto::observer`, kept by
//! [`InFlight`](super::inflight::InFlight)) has seen every message both ways and says what
//! each one is ([`Observed`]: the request a response answers, the session it belongs to, the
//! session it announces) and which sessions were registered ("announced", in its words).
//!
//! What is kept is bounded: the observer's limits (4096 sessions and as many requests awaiting
//! their answer); past them the message still arrives, on the connection stream.

use std::collections::HashMap;

use acp_proto::observer::{FrameKind, Observed};
use acp_proto::{Method, RequestId};

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

/// The POSTs of one connection waiting for their answer. `W` is what a waiting POST is woken
/// with.
#[derive(Debug)]
pub(crate) struct Routes<W> {
    waiters: HashMap<RequestId, W>,
}

/// The requests whose success attaches the session their params name (their results name
/// none): `session/load` (v1) and `session/resume` (v1 and v2 share the wire name).
const ATTACHING: [Method; 2] = [Method::LoadSession, Method::ResumeSession];

/// The methods whose POST must name its session (`Acp-Session-Id`), as the RFD lists them: the
/// server checks the header, the HTTP client sets it (v2 shares these wire names).
pub(crate) const SESSION_SCOPED: [Method; 5] =
    [Method::Prompt, Method::Cancel, Method::SetSessionMode, Method::SetSessionConfigOption, Method::CloseSession];

/// Whether `method` attaches the session its params name (see [`ATTACHING`]).
pub(crate) fn attaches(method: Method) -> bool {
    ATTACHING.contains(&method)
}

/// Whether `method` is one of [`SESSION_SCOPED`].
pub(crate) fn is_session_scoped(method: Method) -> bool {
    SESSION_SCOPED.contains(&method)
}

impl<W> Default for Routes<W> {
    fn default() -> Self {
        Routes { waiters: HashMap::new() }
    }
}

impl<W> Routes<W> {
    /// The POST carrying the request `id` waits for its answer (`initialize`).
    pub(crate) fn wait_for(&mut self, id: RequestId, waiter: W) {
        self.waiters.insert(id, waiter);
    }

    /// Where an agent → client message goes, once the observer saw it; `has_session` tells
    /// the sessions registered.
    pub(crate) fn route(&mut self, observed: &Observed, has_session: impl Fn(&str) -> bool) -> Destination<W> {
        let to_session = |session: Option<&str>| match session {
            Some(session) if has_session(session) => Destination::Session(session.to_owned()),
            _ => Destination::Connection,
        };
        match observed.kind {
            FrameKind::Request | FrameKind::Notification => return to_session(observed.session.as_deref()),
            FrameKind::Response => {}
            FrameKind::Batch | FrameKind::Invalid => return Destination::Connection,
        }
        let asked = observed.answered.as_ref();
        if let Some(waiter) = asked.and_then(|r| self.waiters.remove(&r.id)) {
            return Destination::Waiter(waiter);
        }
        if observed.announced.is_some() {
            return Destination::Connection;
        }
        to_session(asked.and_then(|r| r.session.as_deref()))
    }
}

#[cfg(test)]
mod tests {
    use acp_proto::observer::{Limits, Observer};
    use serde_json::{Value, json};

    use super::*;

    /// Whether `method` (a wire name) is one of [`SESSION_SCOPED`].
    fn session_scoped(method: &str) -> bool {
        Method::from_wire(method).is_some_and(is_session_scoped)
    }

    /// A connection's observer and routes, as `http.rs` keeps them.
    #[derive(Default)]
    struct Connection {
        observer: Observer,
        routes: Routes<&'static str>,
    }

    impl Connection {
        fn inbound(&mut self, message: &Value) {
            self.observer.observe_from_client(message.to_string().as_bytes());
        }

        fn outbound(&mut self, message: &Value) -> Destination<&'static str> {
            let observed = self.observer.observe_from_agent(message.to_string().as_bytes());
            self.route(&observed)
        }

        fn route(&mut self, observed: &Observed) -> Destination<&'static str> {
            let observer = &self.observer;
            self.routes.route(observed, |s| observer.has_session(s))
        }

        fn has_session(&self, session: &str) -> bool {
            self.observer.has_session(session)
        }
    }

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

    fn established(connection: &mut Connection, session: &str) {
        let answer = json!({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": session}});
        assert_eq!(connection.outbound(&answer), Destination::Connection);
    }

    #[test]
    fn a_notification_is_routed_by_its_session() {
        let mut connection = Connection::default();
        established(&mut connection, "s1");
        let update = br#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"text":"say \"id\""}},"sessionId":"s1"}}"#;
        let observed = connection.observer.observe_from_agent(update);
        assert_eq!(connection.route(&observed), Destination::Session("s1".into()));
        let other = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\u0032"}}"#;
        let observed = connection.observer.observe_from_agent(other);
        assert_eq!(observed.session.as_deref(), Some("s2"), "escapes are decoded");
        assert_eq!(connection.route(&observed), Destination::Connection, "unregistered");
        let none = connection.observer.observe_from_agent(br#"{"jsonrpc":"2.0","method":"x"}"#);
        assert_eq!(connection.route(&none), Destination::Connection);
    }

    #[test]
    fn the_answer_a_post_waits_for_goes_to_it_once() {
        let mut connection = Connection::default();
        connection.inbound(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}));
        connection.routes.wait_for(RequestId::Number(1), "waiter");
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}});
        assert_eq!(connection.outbound(&answer), Destination::Waiter("waiter"));
        assert_eq!(connection.outbound(&answer), Destination::Connection);
    }

    #[test]
    fn a_new_session_answer_goes_to_the_connection_stream_and_registers_the_session() {
        let mut connection = Connection::default();
        assert!(!connection.has_session("s1"));
        established(&mut connection, "s1");
        assert!(connection.has_session("s1"));
    }

    #[test]
    fn a_session_requests_answer_goes_to_its_session_stream() {
        let mut connection = Connection::default();
        established(&mut connection, "s1");
        connection
            .inbound(&json!({"jsonrpc": "2.0", "id": "7", "method": "session/prompt", "params": {"sessionId": "s1"}}));
        let answer = json!({"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "end_turn"}});
        assert_eq!(connection.outbound(&answer), Destination::Session("s1".into()));
        // Routed once: a repeated answer is the connection's.
        assert_eq!(connection.outbound(&answer), Destination::Connection);
    }

    #[test]
    fn agent_requests_and_notifications_go_to_their_registered_session() {
        let mut connection = Connection::default();
        let update = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {}}});
        assert_eq!(connection.outbound(&update), Destination::Connection, "not registered yet");
        established(&mut connection, "s1");
        assert_eq!(connection.outbound(&update), Destination::Session("s1".into()));
        let ask =
            json!({"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": {"sessionId": "s1"}});
        assert_eq!(connection.outbound(&ask), Destination::Session("s1".into()));
        let other = json!({"jsonrpc": "2.0", "method": "_x/ping", "params": {}});
        assert_eq!(connection.outbound(&other), Destination::Connection);
    }

    #[test]
    fn a_load_or_resume_answer_goes_to_the_connection_stream_and_registers_its_session() {
        let mut connection = Connection::default();
        // v2's `session/resume` (as v1's `session/load` and `session/resume`): the result names
        // no session; the request did.
        for (id, method, session) in [(1, "session/resume", "s1"), (2, "session/load", "s2")] {
            connection.inbound(
                &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"sessionId": session, "cwd": "/"}}),
            );
            assert!(!connection.has_session(session));
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"configOptions": []}});
            assert_eq!(connection.outbound(&answer), Destination::Connection);
            assert!(connection.has_session(session), "{method}");
        }
        let update = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {}}});
        assert_eq!(connection.outbound(&update), Destination::Session("s1".into()));
        // A refused resume attaches nothing; neither does another request naming a session.
        connection
            .inbound(&json!({"jsonrpc": "2.0", "id": 3, "method": "session/resume", "params": {"sessionId": "s3"}}));
        connection
            .outbound(&json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "unknown session"}}));
        connection
            .inbound(&json!({"jsonrpc": "2.0", "id": 4, "method": "session/close", "params": {"sessionId": "s4"}}));
        connection.outbound(&json!({"jsonrpc": "2.0", "id": 4, "result": {}}));
        assert!(!connection.has_session("s3") && !connection.has_session("s4"));
    }

    #[test]
    fn client_answers_and_notifications_record_no_route() {
        let mut connection = Connection::default();
        connection.inbound(&json!({"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "cancelled"}}}));
        connection.inbound(&json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}));
        assert_eq!(connection.observer.open_request_count(acp_proto::Side::Client), 0);
    }

    #[test]
    fn the_tables_are_bounded() {
        let limits = Limits::default();
        let mut connection = Connection::default();
        for i in 0..limits.max_open_requests + 10 {
            connection
                .inbound(&json!({"jsonrpc": "2.0", "id": i, "method": "session/prompt", "params": {"sessionId": "s"}}));
        }
        assert_eq!(connection.observer.open_request_count(acp_proto::Side::Client), limits.max_open_requests);
        for i in 0..limits.max_sessions + 10 {
            connection.outbound(&json!({"jsonrpc": "2.0", "id": -1, "result": {"sessionId": format!("s{i}")}}));
        }
        assert_eq!(connection.observer.sessions().count(), limits.max_sessions);
    }
}
