//! The client's answers to the agent's requests: permission asks go to the UI thread, which
//! owns the terminal; `fs/*` and `terminal/*` are served by [`ClientServices`] (a sandbox
//! confined to the `--root` directories, and terminals), each reported to the UI.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError, Sender, SyncSender};
use std::time::Duration;

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;
use acp_blocking::{Client, ClientContext};
use acp_services::{ClientServices, ErrorKind};

use super::UiEvent;

/// How often a waiting permission handler looks at its cancellation.
const POLL: Duration = Duration::from_millis(50);

/// A permission question waiting for the UI's answer.
#[derive(Debug)]
pub(crate) struct PermissionAsk {
    pub(crate) request: RequestPermissionRequest,
    /// Dropping it unanswered answers `cancelled`.
    pub(crate) reply: SyncSender<RequestPermissionOutcome>,
}

/// Something the client did for the agent, for the transcript.
#[derive(Debug, Clone)]
pub(crate) struct Activity {
    /// What was done: `read`, `write`, `terminal`.
    pub(crate) method: &'static str,
    /// The path or command concerned.
    pub(crate) target: String,
    /// A detail when served, the reason when refused.
    pub(crate) outcome: Result<String, String>,
}

/// The [`Client`] of `acp client`.
pub(crate) struct CliClient {
    services: Arc<ClientServices>,
    ui: Sender<UiEvent>,
}

impl CliClient {
    pub(crate) fn new(services: Arc<ClientServices>, ui: Sender<UiEvent>) -> CliClient {
        CliClient { services, ui }
    }

    fn report<T>(
        &self,
        method: &'static str,
        target: String,
        result: &Result<T, RpcError>,
        detail: impl Fn(&T) -> String,
    ) {
        let outcome = match result {
            Ok(value) => Ok(detail(value)),
            Err(e) => Err(describe_error(e)),
        };
        let _ = self.ui.send(UiEvent::Activity(Activity { method, target, outcome }));
    }
}

/// An error as the transcript shows it: the reason, the sandbox's kind and the code.
pub(crate) fn describe_error(e: &RpcError) -> String {
    // Agents put the details in different places: `data.reason` (acp-rs), `data.details`
    // (the TypeScript SDK's internal errors), `data.message`, or a bare string.
    let data = e.data.as_ref();
    let detail = e.reason().or_else(|| {
        let data = data?;
        data.as_str().or_else(|| data.get("details")?.as_str()).or_else(|| data.get("message")?.as_str())
    });
    let reason = match detail {
        Some(detail) if detail != e.message && e.reason().is_none() => format!("{}: {detail}", e.message),
        Some(detail) => detail.to_owned(),
        None => e.message.clone(),
    };
    match ErrorKind::of(e) {
        Some(kind) => format!("{reason} ({kind}, {})", e.code.0),
        None => format!("{reason} ({})", e.code.0),
    }
}

fn missing(method: &str) -> RpcError {
    RpcError::method_not_found(method)
}

impl Client for CliClient {
    fn request_permission(
        &self,
        request: RequestPermissionRequest,
        cx: &ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        let (reply, answer) = mpsc::sync_channel(1);
        if self.ui.send(UiEvent::Permission(PermissionAsk { request, reply })).is_err() {
            return Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled));
        }
        loop {
            match answer.recv_timeout(POLL) {
                Ok(outcome) => return Ok(RequestPermissionResponse::new(outcome)),
                // The turn was cancelled: the core already answered `cancelled`.
                Err(RecvTimeoutError::Timeout) if !cx.is_cancelled() => {}
                _ => return Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled)),
            }
        }
    }

    fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        _: &ClientContext,
    ) -> Result<ReadTextFileResponse, RpcError> {
        let fs = self.services.fs().ok_or_else(|| missing("fs/read_text_file"))?;
        let result = fs.read_text_file(&request);
        self.report("read", request.path.clone(), &result, |r| format!("{} bytes", r.content.len()));
        result
    }

    fn write_text_file(
        &self,
        request: WriteTextFileRequest,
        _: &ClientContext,
    ) -> Result<WriteTextFileResponse, RpcError> {
        let fs = self.services.fs().ok_or_else(|| missing("fs/write_text_file"))?;
        let result = fs.write_text_file(&request);
        let bytes = request.content.len();
        self.report("write", request.path.clone(), &result, |_| format!("{bytes} bytes"));
        result
    }

    fn create_terminal(
        &self,
        request: CreateTerminalRequest,
        _: &ClientContext,
    ) -> Result<CreateTerminalResponse, RpcError> {
        let terminals = self.services.terminals().ok_or_else(|| missing("terminal/create"))?;
        let result = terminals.create(&request);
        let mut command = vec![request.command.clone()];
        command.extend(request.args.iter().flatten().cloned());
        self.report("run", command.join(" "), &result, |r| format!("terminal {}", r.terminal_id));
        result
    }

    fn terminal_output(
        &self,
        request: TerminalOutputRequest,
        _: &ClientContext,
    ) -> Result<TerminalOutputResponse, RpcError> {
        self.services.terminals().ok_or_else(|| missing("terminal/output"))?.output(&request)
    }

    fn wait_for_terminal_exit(
        &self,
        request: WaitForTerminalExitRequest,
        _: &ClientContext,
    ) -> Result<WaitForTerminalExitResponse, RpcError> {
        let terminals = self.services.terminals().ok_or_else(|| missing("terminal/wait_for_exit"))?;
        let result = terminals.wait_for_exit(&request);
        self.report("exit of", request.terminal_id.to_string(), &result, |r| match (r.exit_code, &r.signal) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            _ => "ended".to_owned(),
        });
        result
    }

    fn kill_terminal(&self, request: KillTerminalRequest, _: &ClientContext) -> Result<KillTerminalResponse, RpcError> {
        self.services.terminals().ok_or_else(|| missing("terminal/kill"))?.kill(&request)
    }

    fn release_terminal(
        &self,
        request: ReleaseTerminalRequest,
        _: &ClientContext,
    ) -> Result<ReleaseTerminalResponse, RpcError> {
        self.services.terminals().ok_or_else(|| missing("terminal/release"))?.release(&request)
    }

    fn session_update(&self, notification: SessionNotification) {
        let _ = self.ui.send(UiEvent::Outside(notification));
    }
}
