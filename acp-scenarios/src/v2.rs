//! ACP v2 (feature `unstable_protocol_v2`): the echo agent of both adapters and [`TestClient`]
//! as a v2 client, for the scenario suite's v2 runs.
//!
//! The v2 echo agent answers the v1 echo agent's prompt commands the scenarios use, the v2 way:
//! `session/prompt` is acknowledged at once, then the turn's work runs on a thread of its own
//! and ends with an `idle` `state_update` (`end_turn`, or `cancelled` after a
//! `session/cancel`):
//!
//! | prompt | what the turn does |
//! |---|---|
//! | `storm N` | sends N chunks [`storm_text`] (stops early if cancelled), counted in `sent` |
//! | `permission` | asks permission for tool call `call-1` (options `allow`, `reject`) and echoes the outcome (`permission: cancelled` if the ask was cancelled) |
//! | `wait` | sends `waiting`, then waits (up to 60 s) for `session/cancel`, reported to `observed` as `cancelled prompt session/cancel` |
//! | `panic` | the prompt handler panics (the client gets `-32603` for the prompt) |
//! | anything else | echoes the text |
//!
//! The script is written once ([`EchoV2::turn`]) over [`TurnSink`], which acp-blocking's
//! `AgentContext` implements directly and acp-tokio's by waiting for each of its futures on
//! the turn's thread. Its extension requests are the v1 echo agents' `_echo` (answers its
//! params), `_wait` (reported to `observed` as `started _wait`, answered `-32800` once
//! cancelled, reported as `cancelled _wait <reason>`), `_ask_client {"ms"}` (calls the client's
//! `_wait` with a deadline of `ms` and answers `"timed out"`) and `_panic`; an extension
//! notification is reported as `notification <method> <params>`. [`TestClient`] answers the
//! agent's `_wait` as a v1 client does. v2 has no client-side
//! `fs/*` or `terminal/*`: the v1 echo agents' `read`, `terminal` and `interleave` have no v2
//! counterpart here.

use std::collections::HashMap;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::v2::{self, SessionId, SessionUpdate};
use serde_json::json;
use tokio::sync::mpsc::UnboundedSender;

use crate::echo::storm_text;
use crate::{TestClient, ask_deadline, asked};

/// The agent's name in its `initialize` answer (the v1 echo agents' name).
pub const AGENT_NAME: &str = "echo_agent";

/// A value of a v2 type from its JSON.
fn of<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).expect("valid v2 JSON")
}

/// A v2 `agent_message_chunk` of `text`.
pub fn chunk(text: &str) -> SessionUpdate {
    of(json!({
        "sessionUpdate": "agent_message_chunk", "messageId": "agent-1",
        "content": { "type": "text", "text": text },
    }))
}

/// The text of a v2 `agent_message_chunk`, if it is one.
pub fn chunk_text(update: &SessionUpdate) -> Option<&str> {
    match update {
        SessionUpdate::AgentMessageChunk(c) => match &c.content {
            v2::ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        },
        _ => None,
    }
}

/// The tool call a permission ask is about (`call-1`), or the ask's title.
pub fn asked_about(request: &v2::RequestPermissionRequest) -> String {
    let subject = serde_json::to_value(&request.subject).unwrap_or_default();
    subject["toolCall"]["toolCallId"].as_str().map_or_else(|| request.title.clone(), str::to_owned)
}

/// What a v2 turn's script sends through: the agent's context of either adapter.
pub trait TurnSink: Send + 'static {
    /// A `session/update`; `false` once it cannot be sent (the connection closed).
    fn send(&self, session: &SessionId, update: SessionUpdate) -> bool;
    /// A permission ask; its outcome, `None` if the ask failed.
    fn ask(&self, request: v2::RequestPermissionRequest) -> Option<v2::RequestPermissionOutcome>;
    /// The turn's `idle`.
    fn idle(&self, session: &SessionId, stop: v2::IdleStopReason);
}

/// Set once (a session's `session/cancel`), waited for with a deadline.
#[derive(Default)]
struct Flag(Mutex<bool>, Condvar);

impl Flag {
    fn set(&self) {
        *self.0.lock().unwrap() = true;
        self.1.notify_all();
    }

    fn is_set(&self) -> bool {
        *self.0.lock().unwrap()
    }

    /// Whether it was set within `limit`.
    fn wait(&self, limit: Duration) -> bool {
        let set = self.0.lock().unwrap();
        *self.1.wait_timeout_while(set, limit, |set| !*set).unwrap().0
    }
}

/// The v2 echo agent's state, shared by both adapters' agent traits (see the module docs).
#[derive(Clone, Default)]
pub struct EchoV2 {
    sessions: Arc<AtomicU64>,
    /// Per session: the cancellation of its running turn (replaced by each prompt).
    cancelled: Arc<Mutex<HashMap<SessionId, Arc<Flag>>>>,
    /// Tests: what the turns observed (`cancelled prompt session/cancel`).
    pub observed: Option<UnboundedSender<String>>,
    /// Tests: how many `storm` updates the turns have sent so far.
    pub sent: Arc<AtomicU64>,
}

impl EchoV2 {
    /// An agent reporting to `observed` and counting its `storm` updates in `sent`.
    pub fn reporting(observed: Option<UnboundedSender<String>>, sent: Arc<AtomicU64>) -> EchoV2 {
        EchoV2 { observed, sent, ..EchoV2::default() }
    }

    fn observe(&self, what: String) {
        if let Some(tx) = &self.observed {
            let _ = tx.send(what);
        }
    }

    fn initialize(&self) -> v2::InitializeResponse {
        of(json!({
            "protocolVersion": 2,
            "info": { "name": AGENT_NAME, "version": "0.1.0" },
            "capabilities": { "session": {} },
        }))
    }

    fn new_session(&self) -> v2::NewSessionResponse {
        of(json!({ "sessionId": format!("sess-{}", self.sessions.fetch_add(1, Ordering::Relaxed)) }))
    }

    /// Acknowledges `request`, and hands its turn to `start` (which runs it after the answer
    /// went out); a `panic` prompt panics here instead.
    fn prompt(
        &self,
        request: v2::PromptRequest,
        start: impl FnOnce(Box<dyn FnOnce(&dyn TurnSink) + Send>),
    ) -> v2::PromptResponse {
        let text = match request.prompt.first() {
            Some(v2::ContentBlock::Text(t)) => t.text.clone(),
            _ => String::new(),
        };
        assert!(text != "panic", "the v2 echo agent was asked to panic");
        let flag = Arc::new(Flag::default());
        self.cancelled.lock().unwrap().insert(request.session_id.clone(), flag.clone());
        let (this, session) = (self.clone(), request.session_id);
        start(Box::new(move |cx: &dyn TurnSink| this.turn(cx, &session, &text, &flag)));
        of(json!({ "messageId": "user-1" }))
    }

    /// The extension requests but `_wait` (which waits as its adapter waits: in each impl).
    fn ext_method(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value, RpcError> {
        match method {
            "_echo" => Ok(params),
            "_panic" => panic!("the v2 echo agent was asked to panic"),
            other => Err(RpcError::method_not_found(other)),
        }
    }

    /// An extension notification: reported as the v1 echo agents report one.
    fn ext_notification(&self, method: &str, params: serde_json::Value) {
        self.observe(format!("notification {method} {params}"));
    }

    /// `_wait`, once cancelled for `reason`: reported, answered `-32800`.
    fn waited(&self, reason: Option<acp_tokio::acp_proto::CancelReason>) -> Result<serde_json::Value, RpcError> {
        self.observe(format!("cancelled _wait {reason:?}"));
        Err(RpcError::request_cancelled())
    }

    fn session_cancelled(&self, session: &SessionId) {
        if let Some(flag) = self.cancelled.lock().unwrap().get(session) {
            flag.set();
        }
    }

    /// `storm n`: `n` chunks, stopping early if cancelled; `false` once one could not be sent.
    fn storm(&self, cx: &dyn TurnSink, session: &SessionId, n: u64, cancel: &Flag) -> bool {
        for i in 0..n {
            if cancel.is_set() {
                break;
            }
            if !cx.send(session, chunk(&storm_text(i))) {
                return false;
            }
            self.sent.fetch_add(1, Ordering::SeqCst);
        }
        true
    }

    /// The turn of a prompt `text` (see the module docs), ended with its `idle`.
    fn turn(&self, cx: &dyn TurnSink, session: &SessionId, text: &str, cancel: &Flag) {
        let mut words = text.split_whitespace();
        let sent = match words.next().unwrap_or("") {
            "storm" => self.storm(cx, session, words.next().and_then(|n| n.parse().ok()).unwrap_or(0), cancel),
            "permission" => {
                let answer = match cx.ask(permission_ask(session)) {
                    Some(v2::RequestPermissionOutcome::Selected(s)) => s.option_id.as_str().to_owned(),
                    _ => "cancelled".to_owned(),
                };
                cx.send(session, chunk(&format!("permission: {answer}")))
            }
            "wait" => {
                let sent = cx.send(session, chunk("waiting"));
                if sent && cancel.wait(Duration::from_secs(60)) {
                    self.observe("cancelled prompt session/cancel".to_owned());
                }
                sent
            }
            _ => cx.send(session, chunk(text)),
        };
        if sent {
            let stop = if cancel.is_set() { v2::IdleStopReason::Cancelled } else { v2::IdleStopReason::EndTurn };
            cx.idle(session, stop);
        }
    }
}

/// The `permission` command's ask: tool call `call-1`, options `allow` and `reject`.
fn permission_ask(session: &SessionId) -> v2::RequestPermissionRequest {
    of(json!({
        "sessionId": session, "title": "touch /tmp/echo",
        "subject": { "type": "tool_call", "toolCall": { "toolCallId": "call-1" } },
        "options": [
            { "optionId": "allow", "name": "Allow", "kind": "allow_once" },
            { "optionId": "reject", "name": "Reject", "kind": "reject_once" },
        ],
    }))
}

/// Wakes the thread parked in [`wait_for`].
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` on this thread (a turn's thread of acp-tokio's v2 echo agent), parking while
/// it waits: the connection's driver, on its runtime, wakes it.
fn wait_for<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

impl TurnSink for acp_tokio::v2::AgentContext {
    fn send(&self, session: &SessionId, update: SessionUpdate) -> bool {
        wait_for(self.send_update(session, update)).is_ok()
    }

    fn ask(&self, request: v2::RequestPermissionRequest) -> Option<v2::RequestPermissionOutcome> {
        wait_for(self.request_permission(request)).ok().map(|answer| answer.outcome)
    }

    fn idle(&self, session: &SessionId, stop: v2::IdleStopReason) {
        let _ = wait_for(self.send_idle(session, stop));
    }
}

impl TurnSink for acp_blocking::v2::AgentContext {
    fn send(&self, session: &SessionId, update: SessionUpdate) -> bool {
        self.send_update(session, update).is_ok()
    }

    fn ask(&self, request: v2::RequestPermissionRequest) -> Option<v2::RequestPermissionOutcome> {
        self.request_permission(request).ok().map(|answer| answer.outcome)
    }

    fn idle(&self, session: &SessionId, stop: v2::IdleStopReason) {
        let _ = self.send_idle(session, stop);
    }
}

/// acp-tokio's v2 echo agent: each turn on a thread of its own, once the prompt's answer went
/// out (the agent runs on any runtime: tokio, a `LocalSet`, async-std).
impl acp_tokio::v2::Agent for EchoV2 {
    async fn initialize(
        &self,
        _: v2::InitializeRequest,
        _: acp_tokio::v2::AgentContext,
    ) -> Result<v2::InitializeResponse, RpcError> {
        Ok(EchoV2::initialize(self))
    }

    async fn new_session(
        &self,
        _: v2::NewSessionRequest,
        _: acp_tokio::v2::AgentContext,
    ) -> Result<v2::NewSessionResponse, RpcError> {
        Ok(EchoV2::new_session(self))
    }

    async fn prompt(
        &self,
        request: v2::PromptRequest,
        cx: acp_tokio::v2::AgentContext,
    ) -> Result<v2::PromptResponse, RpcError> {
        Ok(EchoV2::prompt(self, request, |turn| {
            std::thread::spawn(move || {
                wait_for(cx.answered());
                turn(&cx);
            });
        }))
    }

    async fn session_cancelled(&self, notification: v2::CancelSessionNotification) {
        EchoV2::session_cancelled(self, &notification.session_id);
    }

    async fn ext_method(
        &self,
        method: &str,
        params: serde_json::Value,
        cx: acp_tokio::v2::AgentContext,
    ) -> Result<serde_json::Value, RpcError> {
        match method {
            "_wait" => {
                self.observe("started _wait".into());
                cx.cancelled().await;
                self.waited(cx.cancellation().reason())
            }
            "_ask_client" => {
                let deadline = ask_deadline(Some(&params));
                Ok(asked(cx.ext_method("_wait", json!({}), Some(deadline)).await))
            }
            _ => EchoV2::ext_method(self, method, params),
        }
    }

    async fn ext_notification(&self, method: &str, params: serde_json::Value) {
        EchoV2::ext_notification(self, method, params);
    }
}

/// acp-blocking's v2 echo agent: each turn on a thread of its own.
impl acp_blocking::v2::Agent for EchoV2 {
    fn initialize(
        &self,
        _: v2::InitializeRequest,
        _: &acp_blocking::v2::AgentContext,
    ) -> Result<v2::InitializeResponse, RpcError> {
        Ok(EchoV2::initialize(self))
    }

    fn new_session(
        &self,
        _: v2::NewSessionRequest,
        _: &acp_blocking::v2::AgentContext,
    ) -> Result<v2::NewSessionResponse, RpcError> {
        Ok(EchoV2::new_session(self))
    }

    fn prompt(
        &self,
        request: v2::PromptRequest,
        cx: &acp_blocking::v2::AgentContext,
    ) -> Result<v2::PromptResponse, RpcError> {
        let cx = cx.clone();
        Ok(EchoV2::prompt(self, request, |turn| {
            std::thread::spawn(move || {
                cx.answered();
                turn(&cx);
            });
        }))
    }

    fn session_cancelled(&self, notification: v2::CancelSessionNotification) {
        EchoV2::session_cancelled(self, &notification.session_id);
    }

    fn ext_method(
        &self,
        method: &str,
        params: serde_json::Value,
        cx: &acp_blocking::v2::AgentContext,
    ) -> Result<serde_json::Value, RpcError> {
        match method {
            "_wait" => {
                self.observe("started _wait".into());
                cx.cancellation().wait_timeout(Duration::from_secs(60));
                self.waited(cx.cancellation().reason())
            }
            "_ask_client" => {
                let deadline = ask_deadline(Some(&params));
                Ok(asked(cx.ext_method("_wait", json!({}), Some(deadline))))
            }
            _ => EchoV2::ext_method(self, method, params),
        }
    }

    fn ext_notification(&self, method: &str, params: serde_json::Value) {
        EchoV2::ext_notification(self, method, params);
    }
}

impl TestClient {
    /// A v2 permission ask: reported; the answer when the client has a fixed option.
    fn ask_v2(&self, request: &v2::RequestPermissionRequest) -> Option<v2::RequestPermissionResponse> {
        self.event(format!("permission asked {}", asked_about(request)));
        let option = self.permission?;
        Some(v2::RequestPermissionResponse::new(v2::RequestPermissionOutcome::Selected(
            v2::SelectedPermissionOutcome::new(option),
        )))
    }

    fn ask_cancelled_v2(&self, reason: Option<acp_tokio::acp_proto::CancelReason>) -> v2::RequestPermissionResponse {
        self.event(format!("permission cancelled {reason:?}"));
        v2::RequestPermissionResponse::cancelled()
    }

    fn outside_turn_v2(&self, notification: &v2::UpdateSessionNotification) {
        self.event(format!("outside-turn update {:?}", chunk_text(&notification.update)));
    }
}

/// [`TestClient`] as acp-tokio's v2 client: the same answers and reports as v1's.
impl acp_tokio::v2::Client for TestClient {
    async fn request_permission(
        &self,
        request: v2::RequestPermissionRequest,
        cx: acp_tokio::ClientContext,
    ) -> Result<v2::RequestPermissionResponse, RpcError> {
        if let Some(answer) = self.ask_v2(&request) {
            return Ok(answer);
        }
        cx.cancelled().await;
        Ok(self.ask_cancelled_v2(cx.cancellation().reason()))
    }

    async fn session_update(&self, notification: v2::UpdateSessionNotification) {
        self.outside_turn_v2(&notification);
    }

    async fn ext_method(
        &self,
        method: &str,
        _params: serde_json::Value,
        cx: acp_tokio::ClientContext,
    ) -> Result<serde_json::Value, RpcError> {
        self.wait_started(method)?;
        cx.cancelled().await;
        Err(self.wait_cancelled(cx.cancellation().reason()))
    }
}

/// [`TestClient`] as acp-blocking's v2 client.
impl acp_blocking::v2::Client for TestClient {
    fn request_permission(
        &self,
        request: v2::RequestPermissionRequest,
        cx: &acp_blocking::ClientContext,
    ) -> Result<v2::RequestPermissionResponse, RpcError> {
        if let Some(answer) = self.ask_v2(&request) {
            return Ok(answer);
        }
        // A hang guard only: the scenarios cancel the ask long before.
        cx.cancellation().wait_timeout(Duration::from_secs(60));
        Ok(self.ask_cancelled_v2(cx.cancellation().reason()))
    }

    fn session_update(&self, notification: v2::UpdateSessionNotification) {
        self.outside_turn_v2(&notification);
    }

    fn ext_method(
        &self,
        method: &str,
        _params: serde_json::Value,
        cx: &acp_blocking::ClientContext,
    ) -> Result<serde_json::Value, RpcError> {
        self.wait_started(method)?;
        // A hang guard only: the agent's deadline passes long before.
        cx.cancellation().wait_timeout(Duration::from_secs(60));
        Err(self.wait_cancelled(cx.cancellation().reason()))
    }
}
