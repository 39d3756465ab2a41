//! The simulated v2 agent's session lifecycle, auth and terminals (feature
//! `unstable_protocol_v2`; see `v2`): its `initialize` answer (with or without `session.delete`
//! and auth methods), `session/resume` (of a session it knows: the history replayed before the
//! answer), `session/close` and `session/delete` (the work cancelled first: its asks and
//! elicitations cancelled, an idle saying `cancelled`), `auth/login` and `auth/logout` (with an
//! `agent` auth method, `session/new` needs a login at times), and terminal upserts.

use acp_proto::OutboundId;
use acp_proto::v2::{self, ClientRequest};
use acp_proto::{RpcError, SendError};
use serde_json::json;

use super::v2::typed;
use super::v2_agent::{Effect, Reply};
use super::{Chooser, Pending, Sim};

impl<C: Chooser> Sim<'_, C> {
    /// Agent: its `initialize` answer: `session` (at times without it: every `session/*` is
    /// then refused both ways), `session.delete` at times, and auth methods at random (a
    /// `terminal` one is dropped by the machine unless the client has `auth.terminal`).
    pub(super) fn agent_initialize_reply(&mut self) -> Reply {
        let mut caps = if self.c.chance(1, 8) { json!({}) } else { json!({"session": {}}) };
        if caps.get("session").is_some() && self.c.chance(1, 2) {
            caps["session"]["delete"] = json!({});
        }
        let agent = json!({"type": "agent", "methodId": "m", "name": "Sign in"});
        let terminal = json!({"type": "terminal", "methodId": "t", "name": "Sign in in a terminal"});
        let methods = match self.c.below(5) {
            0 | 1 => None,
            2 => Some(vec![agent]),
            3 => Some(vec![agent, terminal]),
            _ => Some(vec![terminal]),
        };
        let has_agent = methods.as_ref().is_some_and(|m| m.iter().any(|m| m["type"] == "agent"));
        self.v2.agent_auth = has_agent && self.c.chance(1, 3);
        self.v2.agent_logged_in = false;
        let mut r = json!({"protocolVersion": 2, "info": {"name": "sim-agent", "version": "1"}, "capabilities": caps});
        if let Some(m) = methods {
            r["authMethods"] = json!(m);
        }
        (Ok(typed::<v2::InitializeResponse>(r).into()), Ok(None), Effect::None)
    }

    /// Agent: resume, close, delete, login, logout (anything else: `-32601`).
    pub(super) fn agent_lifecycle_reply(&mut self, request: &v2::Request, pending: &Pending) -> Reply {
        let v2::Request::Client(params) = request else {
            return (Err(RpcError::method_not_found(request.wire())), Err(-32601), Effect::None);
        };
        match params {
            ClientRequest::ResumeSession(r) => self.agent_resume(r.session_id.as_str(), pending),
            ClientRequest::CloseSession(r) => self.agent_close(r.session_id.as_str(), false),
            ClientRequest::DeleteSession(r) => self.agent_close(r.session_id.as_str(), true),
            ClientRequest::Login(_) => {
                let ok = typed::<v2::LoginAuthResponse>(json!({}));
                (Ok(ok.into()), Ok(None), Effect::LoggedIn(true))
            }
            ClientRequest::Logout(_) => {
                let ok = typed::<v2::LogoutAuthResponse>(json!({}));
                (Ok(ok.into()), Ok(None), Effect::LoggedIn(false))
            }
            _ => (Err(RpcError::method_not_found(request.wire())), Err(-32601), Effect::None),
        }
    }

    /// Agent: `session/resume` of `s`: a session it knows is replayed (a few updates, sent
    /// while the resume is in flight: the machine allows them) and announced again; another
    /// is `-32002`.
    fn agent_resume(&mut self, s: &str, pending: &Pending) -> Reply {
        if !self.v2.agent_history.contains(s) {
            self.summary.v2.resumes[1] += 1;
            return (Err(RpcError::resource_not_found("no such session")), Err(-32002), Effect::None);
        }
        if !pending.cancelled && !self.agent.conn.is_closed() {
            self.v2.agent_replaying = Some(s.to_owned());
            for _ in 0..self.c.below(3) {
                let text = json!({"type": "text", "text": "replayed"});
                let u = json!({"sessionUpdate": "agent_message_chunk", "messageId": "old", "content": text});
                if self.agent_send_update(s, u).is_ok() {
                    self.summary.v2.resumes[2] += 1;
                }
            }
            self.v2.agent_replaying = None;
        }
        let ok = typed::<v2::ResumeSessionResponse>(json!({}));
        (Ok(ok.into()), Ok(None), Effect::Announced(s.to_owned()))
    }

    /// Agent: `session/close` (or `session/delete`) of `s`: its work is cancelled first (its
    /// asks and elicitations get `$/cancel_request`, working foreground ends with an idle
    /// `cancelled`, the docs' MUSTs; 1 in 4 times without that idle), then the answer (`_meta.simClosed` names the session for
    /// the wire checker). Closing a session it does not know succeeds too (the docs' SHOULD).
    fn agent_close(&mut self, s: &str, deleted: bool) -> Reply {
        if self.agent.sessions.iter().any(|k| k == s) && !self.agent.conn.is_closed() {
            self.agent_cancel_session_requests(s);
            // At times it leaves the end of the work to the close itself (the docs' MUST is
            // the application's): the machine must then send nothing more of the session,
            // not even the idle of a cancel grace.
            if self.v2.agent_working.contains_key(s) && !self.c.chance(1, 4) {
                let idle = json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"});
                if let Err(SendError::Backpressure { .. }) = self.agent_send_update(s, idle) {
                    return (Err(RpcError::internal_error("retry")), Err(0), Effect::Retry);
                }
            }
        }
        let meta = json!({"_meta": {"simClosed": s}});
        let ok: v2::Response = if deleted {
            typed::<v2::DeleteSessionResponse>(meta).into()
        } else {
            typed::<v2::CloseSessionResponse>(meta).into()
        };
        (Ok(ok), Ok(None), Effect::Forget(s.to_owned(), deleted))
    }

    /// Agent: `$/cancel_request` for its requests in flight of session `s` (asks,
    /// elicitations); their outcome is `Cancelled`.
    fn agent_cancel_session_requests(&mut self, s: &str) {
        let ids: Vec<OutboundId> = self
            .agent
            .outstanding
            .iter()
            .filter(|(_, o)| o.session.as_deref() == Some(s) && !o.locally_cancelled)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let cancelled = self.agent.conn.cancel_request(self.now, id);
            assert!(cancelled, "cancel_request refused for a request in flight");
            if let Some(out) = self.agent.outstanding.get_mut(&id) {
                out.locally_cancelled = true;
            }
            self.log(format!("agent cancels {id} of closing {s}"));
        }
    }

    /// Agent: the close (or delete) of `s` was answered: it sends nothing of it any more.
    pub(super) fn agent_forget(&mut self, s: &str, deleted: bool) {
        self.agent.sessions.retain(|k| k != s);
        self.v2.agent_working.remove(s);
        self.v2.agent_tools.retain(|(ts, _), _| ts != s);
        if deleted {
            self.v2.agent_history.remove(s);
        }
    }

    /// Agent: a terminal upsert, new or of a known terminal, with or without
    /// `capabilities.cancel`, at times with its exit status (final).
    pub(super) fn agent_terminal_upsert(&mut self, s: &str) {
        let t = self.agent_upsert_id(s, "term:", "x");
        let mut u = json!({"sessionUpdate": "terminal_update", "terminalId": t, "command": "make"});
        let with_cancel = self.agent_cancel_caps(&mut u);
        if self.c.chance(1, 4) {
            u["exitStatus"] = json!({"exitCode": 0});
        }
        if self.agent_send_update(s, u).is_ok() {
            self.summary.v2.terminal_upserts[usize::from(!with_cancel)] += 1;
        }
    }
}
