//! Typed answers: an inbound request comes with a [`Responder`] typed by its result, and
//! [`Connection::respond`](super::Connection::respond) takes the [`Answer`] it makes.
//!
//! [`Event::Request`](super::Event::Request) gives an [`InboundRequest`](super::InboundRequest) request;
//! its [`into_call`](super::InboundRequest::into_call) pairs the request with the responder of its
//! method's result type (`ClientCall::Prompt(PromptRequest, Responder<PromptResponse>)`, …). The
//! machine alone makes responders, so a responder answers the request it came with, and an
//! answer of another type does not compile:
//!
//! ```compile_fail
//! use acp_proto::role::Agent;
//! use acp_proto::types::{NewSessionResponse, PromptRequest, PromptResponse, StopReason};
//! use acp_proto::{Answer, Connection, Instant, Responder};
//!
//! fn answer(agent: &mut Connection<Agent>, responder: Responder<PromptResponse>) {
//!     // A prompt is answered with a `PromptResponse`, not with a new session.
//!     let _ = agent.respond(Instant::ZERO, responder.answer(Ok(NewSessionResponse::new("s"))));
//! }
//! ```
//!
//! An error answers any request: [`Answer::error`] takes the request's handle alone, for an
//! application that keeps handles (to fail what is still running when it stops, say).

use std::fmt;
use std::marker::PhantomData;

use super::InboundId;
use crate::error::RpcError;
use crate::protocol::Protocol;
use crate::role::Role;

/// Answers one inbound request with its method's result type `T` (or an error). Made by the
/// machine only, with the request ([`InboundRequest::into_call`](super::InboundRequest::into_call)); not
/// `Clone`: one request, one answer.
pub struct Responder<T> {
    id: InboundId,
    result: PhantomData<fn() -> T>,
}

impl<T> Responder<T> {
    /// The responder of the inbound request `id`.
    pub(crate) fn new(id: InboundId) -> Responder<T> {
        Responder { id, result: PhantomData }
    }

    /// The handle of the request it answers.
    pub fn id(&self) -> InboundId {
        self.id
    }

    /// The answer `result` to the request, for a connection of side `R` speaking `P` (both are
    /// inferred from the [`respond`](super::Connection::respond) that takes it). `T` must be
    /// one of `R`'s results in `P`: a responder of a request `R` never receives has no answer.
    pub fn answer<R: Role, P: Protocol>(self, result: Result<T, RpcError>) -> Answer<R, P>
    where
        T: Into<R::Response<P>>,
    {
        Answer { id: self.id, result: result.map(Into::into) }
    }
}

impl<T> fmt::Debug for Responder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Responder").field("id", &self.id).field("result", &std::any::type_name::<T>()).finish()
    }
}

/// The answer to one inbound request, of side `R` speaking `P`: a result of the request's own
/// type ([`Responder::answer`]) or an error ([`Answer::error`]).
pub struct Answer<R: Role, P: Protocol> {
    id: InboundId,
    result: Result<R::Response<P>, RpcError>,
}

impl<R: Role, P: Protocol> Answer<R, P> {
    /// The answer to request `id`: the machine's only, where the result is known to be of the
    /// request's type.
    pub(crate) fn new(id: InboundId, result: Result<R::Response<P>, RpcError>) -> Answer<R, P> {
        Answer { id, result }
    }

    /// An error answering the request `id`, whatever its method.
    pub fn error(id: InboundId, error: RpcError) -> Answer<R, P> {
        Answer { id, result: Err(error) }
    }

    /// The handle of the request it answers.
    pub fn id(&self) -> InboundId {
        self.id
    }

    /// The result or the error.
    pub fn result(&self) -> &Result<R::Response<P>, RpcError> {
        &self.result
    }

    /// The handle and the result, for the machine.
    pub(crate) fn into_parts(self) -> (InboundId, Result<R::Response<P>, RpcError>) {
        (self.id, self.result)
    }
}

impl<R: Role, P: Protocol> fmt::Debug for Answer<R, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Answer").field("id", &self.id).field("result", &self.result).finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use crate::role::Agent;
    use crate::types::{InitializeResponse, ProtocolVersion};
    use crate::{Answer, Call, ClientCall, Connection, Event, Instant, RpcError};

    const T0: Instant = Instant::ZERO;

    /// An agent past its handshake, fed `line` (a request); the request as dispatched.
    fn agent_with(line: &str) -> (Connection<Agent>, crate::InboundRequest) {
        let mut agent: Connection<Agent> = Connection::agent(T0);
        let init = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";
        let _ = agent.handle_input(T0, init.as_bytes());
        let Some(Event::Request(request)) = agent.poll_event() else { panic!("the initialize") };
        let Call::Client(ClientCall::Initialize(_, responder)) = request.into_call() else { panic!("initialize") };
        agent.respond(T0, responder.answer(Ok(InitializeResponse::new(ProtocolVersion::V1)))).unwrap();
        let _ = agent.poll_transmit(&mut Vec::new());
        while agent.poll_event().is_some() {}
        let _ = agent.handle_input(T0, format!("{line}\n").as_bytes());
        let Some(Event::Request(request)) = agent.poll_event() else { panic!("the request") };
        (agent, request)
    }

    /// The frames the connection wrote.
    fn frames(conn: &mut Connection<Agent>) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        let _ = conn.poll_transmit(&mut out);
        out.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect()
    }

    #[test]
    fn a_call_carries_the_responder_of_its_own_request() {
        let line = r#"{"jsonrpc":"2.0","id":"n1","method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;
        let (mut agent, request) = agent_with(line);
        let id = request.id();
        let Call::Client(ClientCall::NewSession(params, responder)) = request.into_call() else {
            panic!("session/new")
        };
        assert_eq!(params.cwd, "/");
        assert_eq!(responder.id(), id);
        let answer = responder.answer(Ok(crate::types::NewSessionResponse::new("s1")));
        assert_eq!(answer.id(), id);
        agent.respond(T0, answer).unwrap();
        let sent = frames(&mut agent);
        assert_eq!(sent[0]["id"], "n1");
        assert_eq!(sent[0]["result"]["sessionId"], "s1");
    }

    #[test]
    fn an_error_answers_any_request_by_its_handle() {
        let line = r#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;
        let (mut agent, request) = agent_with(line);
        agent.respond(T0, Answer::error(request.id(), RpcError::internal_error("no"))).unwrap();
        let sent = frames(&mut agent);
        assert_eq!(sent[0]["id"], 7);
        assert_eq!(sent[0]["error"]["code"], -32603);
    }

    #[test]
    fn a_json_answer_is_decoded_as_the_requests_result_type() {
        let line = r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;
        let (mut agent, request) = agent_with(line);
        // A prompt's result is not a `session/new` result: refused here, nothing is sent.
        let prompt_result = RawValue::from_string(r#"{"stopReason":"end_turn"}"#.to_owned()).unwrap();
        assert!(request.answer_json::<Agent>(Ok(&prompt_result)).is_err());
        assert!(frames(&mut agent).is_empty());
        let session = RawValue::from_string(r#"{"sessionId":"s9"}"#.to_owned()).unwrap();
        let answer = request.answer_json::<Agent>(Ok(&session)).unwrap();
        agent.respond(T0, answer).unwrap();
        assert_eq!(frames(&mut agent)[0]["result"]["sessionId"], "s9");
        // The session it announced is known to the machine: the answer went through the turn rules.
        let update = crate::types::SessionNotification::new(
            "s9",
            crate::types::SessionUpdate::AgentMessageChunk(crate::types::ContentChunk::new("x".into())),
        );
        assert!(agent.send_notification(T0, update).is_ok());
    }
}
