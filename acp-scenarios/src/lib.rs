//! The ACP adapters' shared test support, and the scenario suite that runs on every runtime.
//!
//! Its library is the support both acp-tokio's integration tests and this crate's tests use:
//! [`TestClient`] (a scripted client implementing both adapters' `Client` traits), the echo
//! agents of both adapters ([`echo::EchoAgent`], [`blocking_echo::BlockingEcho`], which answer
//! the same commands), the handshake and prompt helpers, and [`scenarios`] (scenarios against
//! acp-tokio's `ClientConnection`, run over each transport by acp-tokio's tests).
//!
//! Its tests are what needs both adapters: the scenario suite (`tests/suite`: every scenario on
//! tokio multi-thread, a `LocalSet`, async-std, acp-blocking and across the adapters) and the
//! cross-adapter test (`tests/cross.rs`: the v1 clients over OS pipes; v2 across the adapters
//! is the suite's, which replaced `tests/cross_v2.rs`).
//!
//! Why a crate of its own, and why the support is its library: the suite drives both adapters,
//! so in acp-tokio it made acp-blocking a dev-dependency of acp-tokio and acp-tokio's
//! `unstable_protocol_v2` turn on acp-blocking's. Here each adapter is a plain dependency, and
//! this crate's features forward to both. acp-tokio's integration tests take this crate as a
//! dev-dependency (a dev-dependency cycle cargo allows: integration tests link acp-tokio's
//! normal library, the same one this crate links), so [`TestClient`] and the echo agents have
//! one home instead of a copy per crate. The tokio echo agent's source stays with the example
//! that serves it (`acp-tokio/examples/support/echo.rs`, `tokio_echo_agent`); this library
//! includes that file by path.
#![allow(clippy::missing_panics_doc)]

pub mod blocking_echo;
#[path = "../../acp-tokio/examples/support/echo.rs"]
pub mod echo;
pub mod scenarios;
#[cfg(feature = "unstable_protocol_v2")]
pub mod v2;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::types::*;
use acp_tokio::{Client, ClientConnection, ClientContext};
use futures_core::Stream;
use tokio::sync::mpsc;

pub use echo::{EchoAgent, chunk_text, join_all};

/// A terminal's command, run to completion: its output and exit code.
pub type Finished = (String, Option<u32>);

/// A boxed future, for [`join_all`].
pub type BoxedFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// A client that serves files from a map, answers permission requests with a fixed option (or
/// waits for the turn's cancellation when it has none) and reports what it saw.
#[derive(Clone, Default)]
pub struct TestClient {
    pub files: Arc<Mutex<HashMap<String, String>>>,
    pub permission: Option<&'static str>,
    pub events: Option<mpsc::UnboundedSender<String>>,
    /// Terminals: the output and exit code of each command, run to completion on creation.
    pub terminals: Arc<Mutex<HashMap<String, Finished>>>,
    /// The paths of every `fs/read_text_file` asked, in the order the handlers ran.
    pub reads: Arc<Mutex<Vec<String>>>,
}

impl TestClient {
    pub fn with_events() -> (TestClient, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (TestClient { events: Some(tx), ..TestClient::default() }, rx)
    }

    fn event(&self, what: String) {
        if let Some(tx) = &self.events {
            let _ = tx.send(what);
        }
    }
}

impl TestClient {
    /// Reports the ask; the answer when the client has a fixed option (else the handler waits
    /// for the ask's cancellation).
    fn ask(&self, request: &RequestPermissionRequest) -> Option<RequestPermissionResponse> {
        self.event(format!("permission asked {}", request.tool_call.tool_call_id));
        let option = self.permission?;
        Some(RequestPermissionResponse::new(RequestPermissionOutcome::selected(option)))
    }

    /// The answer once the ask was cancelled (reported with the token's reason).
    fn ask_cancelled(&self, reason: Option<acp_tokio::acp_proto::CancelReason>) -> RequestPermissionResponse {
        self.event(format!("permission cancelled {reason:?}"));
        RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled)
    }

    fn read(&self, request: ReadTextFileRequest) -> Result<ReadTextFileResponse, RpcError> {
        self.reads.lock().unwrap().push(request.path.clone());
        let files = self.files.lock().unwrap();
        match files.get(&request.path) {
            Some(content) => Ok(ReadTextFileResponse::new(content.clone())),
            None => Err(RpcError::resource_not_found(format!("no file {}", request.path))),
        }
    }

    fn create(&self, request: CreateTerminalRequest) -> Result<CreateTerminalResponse, RpcError> {
        let output = std::process::Command::new(&request.command)
            .args(request.args.unwrap_or_default())
            .output()
            .map_err(|e| RpcError::internal_error(e.to_string()))?;
        let mut terminals = self.terminals.lock().unwrap();
        let id = format!("term-{}", terminals.len());
        let code = output.status.code().and_then(|c| u32::try_from(c).ok());
        terminals.insert(id.clone(), (String::from_utf8_lossy(&output.stdout).into_owned(), code));
        Ok(CreateTerminalResponse::new(id))
    }

    fn terminal(&self, id: &TerminalId) -> Result<Finished, RpcError> {
        let terminals = self.terminals.lock().unwrap();
        terminals.get(id.as_str()).cloned().ok_or_else(|| RpcError::resource_not_found("terminal"))
    }

    fn exit(&self, request: WaitForTerminalExitRequest) -> Result<WaitForTerminalExitResponse, RpcError> {
        let (_, code) = self.terminal(&request.terminal_id)?;
        Ok(WaitForTerminalExitResponse { exit_code: code, ..Default::default() })
    }

    fn output(&self, request: TerminalOutputRequest) -> Result<TerminalOutputResponse, RpcError> {
        let (output, _) = self.terminal(&request.terminal_id)?;
        Ok(TerminalOutputResponse::new(output, false))
    }

    fn release(&self, request: ReleaseTerminalRequest) -> ReleaseTerminalResponse {
        self.terminals.lock().unwrap().remove(request.terminal_id.as_str());
        ReleaseTerminalResponse::default()
    }

    /// The client's extension request `_wait`: reported, then answered `-32800` once cancelled
    /// (with the reason reported); other methods are unknown.
    fn wait_started(&self, method: &str) -> Result<(), RpcError> {
        if method != "_wait" {
            return Err(RpcError::method_not_found(method));
        }
        self.event("client started _wait".to_owned());
        Ok(())
    }

    fn wait_cancelled(&self, reason: Option<acp_tokio::acp_proto::CancelReason>) -> RpcError {
        self.event(format!("client cancelled _wait {reason:?}"));
        RpcError::request_cancelled()
    }

    fn outside_turn(&self, notification: SessionNotification) {
        self.event(format!("outside-turn update {:?}", chunk_text(&notification.update)));
    }
}

impl Client for TestClient {
    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
        cx: ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        if let Some(answer) = self.ask(&request) {
            return Ok(answer);
        }
        cx.cancelled().await;
        Ok(self.ask_cancelled(cx.cancellation().reason()))
    }

    async fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        _cx: ClientContext,
    ) -> Result<ReadTextFileResponse, RpcError> {
        self.read(request)
    }

    async fn create_terminal(
        &self,
        request: CreateTerminalRequest,
        _cx: ClientContext,
    ) -> Result<CreateTerminalResponse, RpcError> {
        self.create(request)
    }

    async fn wait_for_terminal_exit(
        &self,
        request: WaitForTerminalExitRequest,
        _cx: ClientContext,
    ) -> Result<WaitForTerminalExitResponse, RpcError> {
        self.exit(request)
    }

    async fn terminal_output(
        &self,
        request: TerminalOutputRequest,
        _cx: ClientContext,
    ) -> Result<TerminalOutputResponse, RpcError> {
        self.output(request)
    }

    async fn release_terminal(
        &self,
        request: ReleaseTerminalRequest,
        _cx: ClientContext,
    ) -> Result<ReleaseTerminalResponse, RpcError> {
        Ok(self.release(request))
    }

    async fn ext_method(
        &self,
        method: &str,
        _params: serde_json::Value,
        cx: ClientContext,
    ) -> Result<serde_json::Value, RpcError> {
        self.wait_started(method)?;
        cx.cancelled().await;
        Err(self.wait_cancelled(cx.cancellation().reason()))
    }

    async fn session_update(&self, notification: SessionNotification) {
        self.outside_turn(notification);
    }
}

/// The same client on acp-blocking: the same answers and the same reports.
impl acp_blocking::Client for TestClient {
    fn request_permission(
        &self,
        request: RequestPermissionRequest,
        cx: &acp_blocking::ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        if let Some(answer) = self.ask(&request) {
            return Ok(answer);
        }
        // A hang guard only: the scenarios cancel the ask long before.
        cx.cancellation().wait_timeout(std::time::Duration::from_secs(60));
        Ok(self.ask_cancelled(cx.cancellation().reason()))
    }

    fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        _: &acp_blocking::ClientContext,
    ) -> Result<ReadTextFileResponse, RpcError> {
        self.read(request)
    }

    fn create_terminal(
        &self,
        request: CreateTerminalRequest,
        _: &acp_blocking::ClientContext,
    ) -> Result<CreateTerminalResponse, RpcError> {
        self.create(request)
    }

    fn wait_for_terminal_exit(
        &self,
        request: WaitForTerminalExitRequest,
        _: &acp_blocking::ClientContext,
    ) -> Result<WaitForTerminalExitResponse, RpcError> {
        self.exit(request)
    }

    fn terminal_output(
        &self,
        request: TerminalOutputRequest,
        _: &acp_blocking::ClientContext,
    ) -> Result<TerminalOutputResponse, RpcError> {
        self.output(request)
    }

    fn release_terminal(
        &self,
        request: ReleaseTerminalRequest,
        _: &acp_blocking::ClientContext,
    ) -> Result<ReleaseTerminalResponse, RpcError> {
        Ok(self.release(request))
    }

    fn ext_method(
        &self,
        method: &str,
        _params: serde_json::Value,
        cx: &acp_blocking::ClientContext,
    ) -> Result<serde_json::Value, RpcError> {
        self.wait_started(method)?;
        // A hang guard only: the agent's deadline passes long before.
        cx.cancellation().wait_timeout(std::time::Duration::from_secs(60));
        Err(self.wait_cancelled(cx.cancellation().reason()))
    }

    fn session_update(&self, notification: SessionNotification) {
        self.outside_turn(notification);
    }
}

/// `_ask_client {"ms"}` of the blocking and v2 echo agents: how long the agent's `_wait` on
/// its client may take (200 ms without).
pub fn ask_deadline(params: Option<&serde_json::Value>) -> std::time::Duration {
    let ms = params.and_then(|p| p.get("ms")).and_then(serde_json::Value::as_u64);
    std::time::Duration::from_millis(ms.unwrap_or(200))
}

/// `_ask_client`'s answer: the client's result, `"timed out"`, or the error's text (both
/// adapters' `Error` is acp-runtime's).
pub fn asked(result: Result<serde_json::Value, acp_tokio::Error>) -> serde_json::Value {
    match result {
        Ok(value) => value,
        Err(acp_tokio::Error::TimedOut) => serde_json::json!("timed out"),
        Err(e) => serde_json::json!(e.to_string()),
    }
}

/// An `initialize` request advertising `fs.readTextFile` and `terminal`.
pub fn init_with_caps() -> InitializeRequest {
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.fs.read_text_file = true;
    init.client_capabilities.terminal = true;
    init.client_info = Some(Implementation::new("acp-tokio-tests", "0"));
    init
}

/// Initializes (advertising `fs.readTextFile` and `terminal`) and opens a session.
pub async fn handshake(conn: &ClientConnection) -> SessionId {
    conn.initialize(init_with_caps()).await.expect("initialize");
    conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("session/new").session_id
}

/// A text prompt.
pub fn prompt(session: &SessionId, text: &str) -> PromptRequest {
    PromptRequest::new(session.clone(), vec![ContentBlock::text(text)])
}

/// The next item of a stream.
pub async fn next<S: Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}
