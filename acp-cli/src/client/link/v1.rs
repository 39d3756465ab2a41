//! The v1 link: acp-blocking's [`ClientConnection`], whose requests are the session's own.

use std::time::Duration;

use acp_blocking::acp_proto::types::*;
use acp_blocking::{ClientConnection, Error, PromptTurn, Requester};
use serde_json::json;

use super::{Link, Turn};
use crate::client::steer::STEERING_METHOD;

impl Link for ClientConnection {
    fn initialize(&self, request: InitializeRequest, timeout: Duration) -> Result<InitializeResponse, Error> {
        self.with_timeout(timeout).initialize(request)
    }

    fn authenticate(&self, request: AuthenticateRequest, timeout: Duration) -> Result<(), Error> {
        self.with_timeout(timeout).authenticate(request).map(drop)
    }

    fn new_session(&self, request: NewSessionRequest, timeout: Duration) -> Result<NewSessionResponse, Error> {
        self.with_timeout(timeout).new_session(request)
    }

    fn load_session(&self, request: LoadSessionRequest, timeout: Duration) -> Result<LoadSessionResponse, Error> {
        self.with_timeout(timeout).load_session(request)
    }

    fn resume_session(&self, request: ResumeSessionRequest, timeout: Duration) -> Result<ResumeSessionResponse, Error> {
        self.with_timeout(timeout).resume_session(request)
    }

    fn list_sessions(&self, request: ListSessionsRequest, timeout: Duration) -> Result<ListSessionsResponse, Error> {
        self.with_timeout(timeout).list_sessions(request)
    }

    fn set_mode(&self, request: SetSessionModeRequest, timeout: Duration) -> Result<SetSessionModeResponse, Error> {
        self.with_timeout(timeout).set_session_mode(request)
    }

    fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
        timeout: Duration,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        self.with_timeout(timeout).set_session_config_option(request)
    }

    fn prompt(&self, request: PromptRequest) -> Result<Box<dyn Turn>, Error> {
        Ok(Box::new(Requester::prompt(self, request)?))
    }

    fn cancel(&self, session: &SessionId) -> Result<(), Error> {
        Requester::cancel(self, session)
    }

    fn steer(&self, session: &SessionId, text: &str, timeout: Duration) -> Result<String, String> {
        let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
        let answer = self.with_timeout(timeout).ext_method(STEERING_METHOD, params).map_err(|e| e.to_string())?;
        Ok(answer.get("outcome").and_then(serde_json::Value::as_str).unwrap_or("(none)").to_owned())
    }

    fn close(&self) {
        let _ = ClientConnection::close(self);
    }
}

impl Turn for PromptTurn {
    fn next_update_then(&mut self, forward: &mut dyn FnMut(SessionUpdate) -> bool) -> Option<bool> {
        PromptTurn::next_update_then(self, forward)
    }

    fn response(self: Box<Self>) -> Result<PromptResponse, Error> {
        PromptTurn::response(*self)
    }
}
