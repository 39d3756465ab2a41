//! An ACP v2 client written with the official SDK (`agent_client_protocol` 5.2.0, feature
//! `unstable_protocol_v2`, `Client.v2()`), for our v2 agents to talk to. It offers version 2
//! (`send_initialize`), opens a session in `/tmp` (`build_session(..).start_session()`), prompts
//! (`ActiveSession::send_prompt`), and collects the session's updates until the turn ends: an
//! `idle` `state_update` after a `running` one. It answers `session/request_permission` with the
//! `allow` option (or `cancelled` when there is none). What it saw is its [`Report`].
//!
//! With [`Script::Cancel`], on the first tool call that advertises `capabilities.cancel` it sends
//! `tool_call/cancel` for it (awaiting the answer), then `session/cancel`
//! (`ActiveSession::cancel_active_work`), and still collects until `idle`.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v2::schema::{
    CancelToolCallRequest, CancelledPermissionOutcome, ClientRequest, ExtRequest, Implementation, InitializeRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionUpdate, StateUpdate, UpdateSessionNotification,
};
use agent_client_protocol::v2::{ConnectionTo, InitializeOutcome, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client, Error};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::within;

/// The SDK v2 client's name in `InitializeRequest.info`.
pub const NAME: &str = "sdk-v2-client";

/// What the client does in its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// Prompt, answer permissions, collect until idle.
    Turn,
    /// As [`Script::Turn`], and cancel the first cancellable tool call, then the session's work.
    Cancel,
    /// Before the turn, the extension requests `_echo {"x": 1}` and `_nope` (the SDK's
    /// `ExtMethodRequest`).
    Ext,
}

/// How `initialize` went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Negotiated {
    /// The agent answered 2.
    V2,
    /// The agent answered a lower version (`InitializeOutcome::LowerVersion`), and what the
    /// SDK did when asked for a session after it (the error code, or `ok`).
    Lower {
        /// The version the agent selected.
        selected: u16,
        /// `session/new` afterwards on the same connection.
        then_new_session: Result<(), i32>,
    },
    /// `initialize` failed with this code.
    Error(i32),
}

/// What the SDK client saw.
#[derive(Debug)]
pub struct Report {
    /// The handshake.
    pub negotiated: Negotiated,
    /// The session it opened.
    pub session: Option<String>,
    /// The `messageId` of the prompt's acknowledgement.
    pub ack: Option<String>,
    /// The `session/update`s of the session, in order, as the SDK re-encodes its typed value.
    pub updates: Vec<Value>,
    /// The `session/request_permission` requests it answered, as the SDK re-encodes them.
    pub permissions: Vec<Value>,
    /// The answer to its `tool_call/cancel` (`Script::Cancel`): ok, or the error code.
    pub tool_cancel: Option<Result<(), i32>>,
    /// The answers to its extension requests (`Script::Ext`): the result, or the error code.
    pub ext: Vec<Result<Value, i32>>,
}

fn code(e: &Error) -> i32 {
    i32::from(e.code)
}

fn answer(request: &RequestPermissionRequest) -> RequestPermissionResponse {
    match request.options.iter().find(|o| o.option_id.to_string() == "allow") {
        Some(o) => RequestPermissionResponse::new(RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
            o.option_id.clone(),
        ))),
        None => RequestPermissionResponse::new(CancelledPermissionOutcome::new().into()),
    }
}

fn cancellable_tool(update: &SessionUpdate) -> Option<String> {
    match update {
        SessionUpdate::ToolCallUpdate(t)
            if t.capabilities.as_opt_ref().flatten().is_some_and(|c| c.cancel.is_some()) =>
        {
            Some(t.tool_call_id.to_string())
        }
        _ => None,
    }
}

/// The turn after the session is open: prompt, collect until idle follows running.
async fn turn(
    cx: &ConnectionTo<Agent>,
    session: &agent_client_protocol::v2::ActiveSession<Agent>,
    updates: &mut mpsc::UnboundedReceiver<UpdateSessionNotification>,
    script: Script,
    report: &mut Report,
) -> agent_client_protocol::Result<()> {
    let ack = within("prompt ack", session.send_prompt("turn").block_task()).await?;
    report.ack = Some(ack.message_id.to_string());
    let mut running = false;
    loop {
        let Some(n) = within("session/update", updates.recv()).await else { return Ok(()) };
        report.updates.push(serde_json::to_value(&n).map_err(Error::into_internal_error)?);
        match &n.update {
            SessionUpdate::StateUpdate(StateUpdate::Idle(_)) if running => return Ok(()),
            SessionUpdate::StateUpdate(StateUpdate::Running(_)) => running = true,
            update => {
                if let (Script::Cancel, None, Some(id)) = (script, &report.tool_cancel, cancellable_tool(update)) {
                    let sent = cx.send_request(CancelToolCallRequest::new(n.session_id.clone(), id));
                    let answer = within("tool_call/cancel", sent.block_task()).await;
                    report.tool_cancel = Some(answer.map(|_| ()).map_err(|e| code(&e)));
                    session.cancel_active_work()?;
                }
            }
        }
    }
}

async fn drive(
    cx: ConnectionTo<Agent>,
    mut updates: mpsc::UnboundedReceiver<UpdateSessionNotification>,
    script: Script,
) -> agent_client_protocol::Result<Report> {
    let mut report = Report {
        negotiated: Negotiated::V2,
        session: None,
        ack: None,
        updates: Vec::new(),
        permissions: Vec::new(),
        tool_cancel: None,
        ext: Vec::new(),
    };
    let init = InitializeRequest::new(ProtocolVersion::V2, Implementation::new(NAME, "5.2.0"));
    match within("initialize", cx.send_initialize(init).block_task()).await {
        Ok(InitializeOutcome::Initialized(_)) => {}
        Ok(InitializeOutcome::LowerVersion(mismatch)) => {
            let selected = serde_json::to_value(mismatch.selected()).map_err(Error::into_internal_error)?;
            let then = within("session/new", cx.build_session("/tmp").start_session().block_task()).await;
            report.negotiated = Negotiated::Lower {
                selected: selected.as_u64().and_then(|v| u16::try_from(v).ok()).unwrap_or(0),
                then_new_session: then.map(|_| ()).map_err(|e| code(&e)),
            };
            return Ok(report);
        }
        Ok(_) => return Err(Error::internal_error().data("an InitializeOutcome this test does not know")),
        Err(e) => {
            report.negotiated = Negotiated::Error(code(&e));
            return Ok(report);
        }
    }
    let setup = within("session/new", cx.build_session("/tmp").start_session().block_task()).await?;
    report.session = Some(setup.session.session_id().to_string());
    if script == Script::Ext {
        for (method, params) in [("_echo", r#"{"x":1}"#), ("_nope", "{}")] {
            let raw =
                serde_json::value::RawValue::from_string(params.to_owned()).map_err(Error::into_internal_error)?;
            let request = ClientRequest::ExtMethodRequest(Box::new(ExtRequest::new(method, raw.into())));
            let answer = within(method, cx.send_request(request).block_task()).await;
            report.ext.push(answer.map_err(|e| code(&e)));
        }
    }
    turn(&cx, &setup.session, &mut updates, script, &mut report).await?;
    Ok(report)
}

/// Runs the SDK v2 client over `reader` (the agent's output) and `writer` (its input): one
/// handshake, one session, one turn by `script`. It returns when the turn is over (or the
/// handshake did not give v2), closing its side.
pub async fn run(
    reader: impl tokio::io::AsyncRead + Send + 'static,
    writer: impl tokio::io::AsyncWrite + Send + 'static,
    script: Script,
) -> agent_client_protocol::Result<Report> {
    let (tx, rx) = mpsc::unbounded_channel();
    let (ptx, mut prx) = mpsc::unbounded_channel();
    let mut report = Client
        .v2()
        .name(NAME)
        .on_receive_notification(
            async move |n: UpdateSessionNotification, _cx: ConnectionTo<Agent>| {
                tx.send(n).map_err(Error::into_internal_error)
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse>,
                        _cx: ConnectionTo<Agent>| {
                ptx.send(serde_json::to_value(&request).map_err(Error::into_internal_error)?)
                    .map_err(Error::into_internal_error)?;
                responder.respond(answer(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(ByteStreams::new(writer.compat_write(), reader.compat()), async move |cx| {
            drive(cx, rx, script).await
        })
        .await?;
    while let Ok(p) = prx.try_recv() {
        report.permissions.push(p);
    }
    Ok(report)
}
