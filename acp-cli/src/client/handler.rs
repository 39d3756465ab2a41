//! The client's answers to the agent's requests: permission asks go to the UI thread, which
//! owns the terminal; `fs/*` and `terminal/*` are served by [`ClientServices`] (a sandbox
//! confined to the `--root` directories, and terminals), each reported to the UI. The
//! permission policy governs writes and commands ([`super::guard`], [`super::offer`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::time::Duration;

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;
use acp_blocking::{Client, ClientContext};
use acp_services::{ClientServices, ErrorKind};

use super::elicit::{Answers, ElicitNote, answer_form};
use super::event::{Activity, UiEvent};
use super::guard::{Approvals, ask, ask_elicitation, ask_locally, refused};
use crate::permission::Policy;

/// How often `terminal/wait_for_exit` looks at its cancellation and at the shutdown.
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// The [`Client`] of `acp client`.
#[derive(Clone)]
pub(crate) struct CliClient {
    services: Arc<ClientServices>,
    ui: SyncSender<UiEvent>,
    policy: Policy,
    approvals: Arc<Approvals>,
    /// Set when the client shuts down: waits return.
    shutdown: Arc<AtomicBool>,
    /// The `--elicit` answers to forms.
    answers: Option<Arc<Answers>>,
    /// The user is at a terminal: elicitations are asked there (forms only without `--elicit`).
    on_terminal: bool,
}

impl CliClient {
    pub(crate) fn new(
        services: Arc<ClientServices>,
        ui: SyncSender<UiEvent>,
        policy: Policy,
        approvals: Arc<Approvals>,
        shutdown: Arc<AtomicBool>,
        (answers, on_terminal): (Option<Arc<Answers>>, bool),
    ) -> CliClient {
        CliClient { services, ui, policy, approvals, shutdown, answers, on_terminal }
    }

    /// Whether the policy lets the agent `what` (a write or a command) now; under `--ask`
    /// an unapproved one is asked first.
    fn permitted(&self, session: &SessionId, what: &str, cx: &ClientContext) -> Result<(), RpcError> {
        match self.policy {
            Policy::Allow => Ok(()),
            Policy::Deny => Err(refused(&format!("the client does not let the agent {what} (--deny)"))),
            Policy::Ask if self.approvals.covers(session) => Ok(()),
            Policy::Ask if ask_locally(&self.ui, session, what, cx) => Ok(()),
            Policy::Ask => Err(refused(&format!("the user did not let the agent {what}"))),
        }
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
        // "The last permission request" decides what is approved (see `guard`).
        self.approvals.clear();
        Ok(RequestPermissionResponse::new(ask(&self.ui, request, false, cx)))
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
        cx: &ClientContext,
    ) -> Result<WriteTextFileResponse, RpcError> {
        let fs = self.services.fs().ok_or_else(|| missing("fs/write_text_file"))?;
        let result = self
            .permitted(&request.session_id, &format!("write {}", request.path), cx)
            .and_then(|()| fs.write_text_file(&request));
        let bytes = request.content.len();
        self.report("write", request.path.clone(), &result, |_| format!("{bytes} bytes"));
        result
    }

    fn create_terminal(
        &self,
        request: CreateTerminalRequest,
        cx: &ClientContext,
    ) -> Result<CreateTerminalResponse, RpcError> {
        let terminals = self.services.terminals().ok_or_else(|| missing("terminal/create"))?;
        let mut command = vec![request.command.clone()];
        command.extend(request.args.iter().flatten().cloned());
        let what = match &request.cwd {
            Some(cwd) => format!("run `{}` in {cwd}", command.join(" ")),
            None => format!("run `{}`", command.join(" ")),
        };
        let result = self.permitted(&request.session_id, &what, cx).and_then(|()| terminals.create(&request));
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
        cx: &ClientContext,
    ) -> Result<WaitForTerminalExitResponse, RpcError> {
        let terminals = self.services.terminals().ok_or_else(|| missing("terminal/wait_for_exit"))?;
        // In slices, so that a cancelled request or the client's shutdown ends the wait.
        let result = loop {
            match terminals.wait_for_exit_timeout(&request, WAIT_SLICE) {
                Ok(Some(response)) => break Ok(response),
                Ok(None) if cx.is_cancelled() || self.shutdown.load(Ordering::Relaxed) => {
                    return Err(RpcError::request_cancelled());
                }
                Ok(None) => {}
                Err(e) => break Err(e),
            }
        };
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

    fn create_elicitation(
        &self,
        request: CreateElicitationRequest,
        cx: &ClientContext,
    ) -> Result<CreateElicitationResponse, RpcError> {
        let (response, note) = match &request.mode {
            ElicitationMode::Form(form) if self.answers.is_some() || !self.on_terminal => {
                answer_form(&request.message, &form.requested_schema, self.answers.as_deref())
            }
            ElicitationMode::Form(_) | ElicitationMode::Url(_) if self.on_terminal => {
                return Ok(ask_elicitation(&self.ui, request, cx));
            }
            ElicitationMode::Url(url) => {
                let note = ElicitNote::Url {
                    message: request.message.clone(),
                    url: url.url.clone(),
                    id: url.elicitation_id.to_string(),
                    declined: "no terminal to ask on".to_owned(),
                };
                (CreateElicitationResponse::decline(), note)
            }
            _ => return Err(RpcError::invalid_params("an elicitation mode this client does not know")),
        };
        let _ = self.ui.send(UiEvent::Elicitation(note));
        Ok(response)
    }

    fn complete_elicitation(&self, notification: CompleteElicitationNotification) {
        let _ =
            self.ui.send(UiEvent::Elicitation(ElicitNote::Completed { id: notification.elicitation_id.to_string() }));
    }

    fn session_update(&self, notification: SessionNotification) {
        self.approvals.observe(&notification.update);
        let _ = self.ui.send(UiEvent::Outside(notification));
    }
}
