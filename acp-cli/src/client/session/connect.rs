//! The handshake (`initialize`, `authenticate`, `session/new`, each with a deadline), the
//! session header, and the reports of a failed request or a dead agent.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use acp_blocking::Error;
use acp_blocking::acp_proto::types::*;

use super::Session;
use super::resume::Reopened;
use crate::Exit;
use crate::client::config::ClientConfig;
use crate::client::handler::describe_error;
use crate::client::terminal_auth;

/// JSON-RPC `auth_required`.
const AUTH_REQUIRED: i32 = -32000;
/// v2's "unsupported protocol version": no version the agent speaks is at or below the one offered.
const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;

impl Session {
    /// `initialize`, `authenticate` (with `--auth`) and `session/new`, each of which must be
    /// answered within the connect timeout.
    pub(super) fn connect(&mut self, config: &ClientConfig, cwd: &Path) -> Result<(), Exit> {
        let timeout = self.settings.connect_timeout;
        let init = self.initialize_request(config);
        let (link, limit) = (self.link(), timeout);
        let response = match self.call("starting the agent…", move || link.initialize(init, limit))? {
            Ok(response) => response,
            Err(e) => return Err(self.failed("initialize", e)),
        };
        self.header(&response);
        self.prompt_caps = response.agent_capabilities.prompt_capabilities.clone();
        self.steering.supported =
            self.conn.always_steerable() || crate::client::steer::advertised(response.meta.as_ref());
        self.control.caps = response.agent_capabilities.clone();
        self.control.cwd = cwd.display().to_string();
        self.auth_methods = response.auth_methods;

        if let Some(method) = &config.auth {
            self.terminal_auth(config, method)?;
            let (link, limit) = (self.link(), timeout);
            let request = AuthenticateRequest::new(method.as_str());
            if let Err(e) = self.call("authenticating…", move || link.authenticate(request, limit))? {
                return Err(self.failed("authenticate", e));
            }
            self.render.info(&format!("authenticated with `{method}`"));
        }

        let mut recorded = false;
        let session = if let Some(attach) = &config.attach {
            let session = self.attached(attach, timeout)?;
            self.render.info(&format!("session {} · cwd {} (the host's)", session.id, cwd.display()));
            self.adopt(session.id, session.modes, session.options);
            return Ok(());
        } else if let Some(resume) = &config.resume {
            let mut reopened = self.reopen(resume, cwd, &response.agent_capabilities)?;
            recorded = self.recorded_controls(resume.local_id, &mut reopened);
            reopened
        } else {
            let (link, limit) = (self.link(), timeout);
            let request = NewSessionRequest::new(cwd.display().to_string(), vec![]);
            match self.call("opening a session…", move || link.new_session(request, limit))? {
                Ok(session) => {
                    Reopened { id: session.session_id, modes: session.modes, options: session.config_options }
                }
                Err(e) => return Err(self.failed("session/new", e)),
            }
        };
        self.render.info(&format!("session {} · cwd {}", session.id, cwd.display()));
        self.start_journal(config, cwd, &session.id);
        self.adopt(session.id, session.modes, session.options);
        self.control.state.recorded = recorded;
        Ok(())
    }

    /// The answer to `--attach`'s `session/attach` (see [`crate::client::shared`]), said on the
    /// terminal: the session joined, or why not.
    fn attached(&mut self, attach: &crate::client::Attach, timeout: Duration) -> Result<Reopened, Exit> {
        let session = crate::sanitize::clean_line(&attach.session).into_owned();
        match self.process.attached(timeout) {
            Some(Ok(answer)) => {
                let clients: Vec<String> = answer
                    .connected_clients
                    .iter()
                    .map(|c| format!("{} ({})", crate::sanitize::clean_line(&c.client_id), c.role.as_str()))
                    .collect();
                let role = answer.role.as_str();
                self.render.info(&format!("attached to session {session} as {role}; clients: {}", clients.join(", ")));
                Ok(Reopened { id: SessionId::from(attach.session.as_str()), modes: None, options: None })
            }
            Some(Err(e)) => {
                let why = crate::sanitize::clean_line(&e.message).into_owned();
                self.render.error(&format!("could not attach session {session}: {why} ({})", e.code.0));
                if e.code == acp_blocking::acp_proto::ErrorCode::METHOD_NOT_FOUND {
                    // The server passed session/attach on to its agent: it shares nothing.
                    self.render.info("the server does not share sessions (it must run `acp serve --share`)");
                }
                Err(Exit::Failure)
            }
            None => {
                self.render
                    .error(&format!("could not attach session {session}: no answer within {}s", timeout.as_secs()));
                Err(Exit::ConnectTimeout)
            }
        }
    }

    /// The client's `initialize`: v1, what this machine offers, who the client is.
    pub(super) fn initialize_request(&self, config: &ClientConfig) -> InitializeRequest {
        let mut init = InitializeRequest::new(ProtocolVersion::V1);
        let local = config.connect.is_none() && !config.agent.is_empty();
        init.client_capabilities =
            crate::client::offer::advertised(self.services.capabilities(), self.settings.forms, local);
        let mut info = Implementation::new("acp-cli", env!("CARGO_PKG_VERSION"));
        info.title = Some("acp client".to_owned());
        init.client_info = Some(info);
        init
    }

    /// Runs the `terminal` authentication method `id`, if that is its kind (see
    /// [`crate::client::terminal_auth`]).
    fn terminal_auth(&mut self, config: &ClientConfig, id: &str) -> Result<(), Exit> {
        let Some(AuthMethod::Terminal(method)) = self.auth_methods.iter().find(|m| m.id() == Some(id)).cloned() else {
            return Ok(());
        };
        let line = terminal_auth::command_line(&config.agent, &method);
        let shown: Vec<String> = line.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        self.render.waiting(None);
        self.render.info(&format!("running `{}` for `{id}` ({})", shown.join(" "), method.name));
        match terminal_auth::run(&config.agent, &method) {
            Ok(()) => Ok(()),
            Err(why) => {
                self.render.error(&format!("authentication with `{id}` failed: {why}"));
                Err(Exit::AuthRequired)
            }
        }
    }

    fn header(&mut self, response: &InitializeResponse) {
        let name = response.agent_info.as_ref().map_or_else(
            || "an unnamed agent".to_owned(),
            |i| format!("{} {}", i.title.as_deref().unwrap_or(&i.name), i.version),
        );
        self.render.heading(&format!("connected to {name} (ACP protocol v{})", response.protocol_version.0));
        let caps = &response.agent_capabilities;
        let mut offers = vec!["text"];
        offers.extend(caps.supports_image().then_some("images"));
        offers.extend(caps.supports_audio().then_some("audio"));
        offers.extend(caps.supports_embedded_context().then_some("embedded context"));
        offers.extend(caps.supports_load_session().then_some("session/load"));
        self.render.info(&format!("  prompts: {}", offers.join(", ")));
        if self.conn.serves_files() {
            for line in self.settings.offer.describe() {
                self.render.info(&line);
            }
        } else {
            self.render.info("  fs and terminals: none (ACP v2 has neither)");
        }
        if !response.auth_methods.is_empty() {
            let ids: Vec<&str> = response.auth_methods.iter().filter_map(AuthMethod::id).collect();
            self.render.info(&format!("  authentication methods: {}", ids.join(", ")));
        }
    }

    /// Reports a failed request and picks the exit status.
    pub(super) fn failed(&mut self, what: &str, error: Error) -> Exit {
        match error {
            Error::ConnectionClosed => {
                self.died(&format!("during {what}"));
                Exit::AgentDied
            }
            Error::TimedOut => {
                let secs = self.settings.connect_timeout.as_secs_f64();
                self.render.error(&format!(
                    "the agent did not answer {what} within {secs} s; is it an ACP agent, and is it waiting \
                     for something? (--show-stderr shows its log; --connect-timeout SECS changes the deadline)"
                ));
                Exit::ConnectTimeout
            }
            // Over Streamable HTTP the server answers the requests themselves: its refusal (such
            // as `401` for a missing token) comes back as the request's error, and ends the
            // client as a refused WebSocket upgrade does.
            Error::Rpc(e) if e.data.as_ref().and_then(|d| d.get("httpStatus")).is_some() => {
                self.render.error(&format!("could not connect ({what}): {}", e.message));
                Exit::Failure
            }
            Error::UnsupportedProtocolVersion(version) => {
                let (theirs, ours) = (version.0, self.conn.version());
                let what = match theirs {
                    1 => "rerun without --protocol 2 (a session recorded in v2 cannot be reopened in v1)",
                    2 if cfg!(feature = "unstable_protocol_v2") => "rerun with --protocol 2",
                    2 => "this build of acp speaks v1 only (the feature unstable_protocol_v2 adds v2)",
                    _ => "this acp speaks neither",
                };
                self.render.error(&format!(
                    "the agent speaks ACP v{theirs} (it answered protocolVersion {theirs}), not v{ours}: {what}"
                ));
                Exit::Protocol
            }
            Error::Rpc(e) if e.code.0 == AUTH_REQUIRED => {
                self.render.error(&format!("the agent requires authentication ({what}: {})", describe_error(&e)));
                self.list_auth_methods();
                Exit::AuthRequired
            }
            Error::Rpc(e) => {
                self.render.error(&format!("the agent answered {what} with an error: {}", describe_error(&e)));
                let v2_only = e.code.0 == UNSUPPORTED_PROTOCOL_VERSION
                    || e.code == acp_blocking::acp_proto::ErrorCode::METHOD_NOT_FOUND;
                if what == "initialize" && v2_only {
                    // An ACP v2-only agent answers a v1 offer -32022 (`acp agent --protocol 2`;
                    // v2's schema), or -32601 (agents written before that code).
                    self.render.warn("an agent that speaks only ACP v2 answers a v1 initialize so: try --protocol 2");
                }
                Exit::Protocol
            }
            other => {
                self.render.error(&format!("{what} failed: {other}"));
                Exit::Protocol
            }
        }
    }

    fn list_auth_methods(&mut self) {
        if self.auth_methods.is_empty() {
            self.render.info("it offers no authentication method; log in with the agent's own tool first");
            return;
        }
        self.render.info("it offers:");
        for method in self.auth_methods.clone() {
            let name = serde_json::to_value(&method)
                .ok()
                .and_then(|v| {
                    let name = v.get("name")?.as_str()?.to_owned();
                    let description = v.get("description").and_then(|d| d.as_str());
                    Some(description.map_or(name.clone(), |d| format!("{name}: {d}")))
                })
                .unwrap_or_default();
            self.render.info(&format!("  {}  {name}", method.id().unwrap_or("?")));
        }
        self.render.info("run again with --auth METHOD_ID");
    }

    /// Reports that the agent is gone, with its exit status and the tail of its stderr.
    pub(super) fn died(&mut self, when: &str) {
        let deadline = Instant::now() + Duration::from_millis(500);
        let status = loop {
            if let Some(status) = self.process.try_end()
                && (self.process.stderr_ended() || Instant::now() >= deadline)
            {
                break Some(status);
            }
            if Instant::now() >= deadline {
                break None;
            }
            thread::sleep(Duration::from_millis(10));
        };
        while let Ok(event) = self.rx.try_recv() {
            self.background(event);
        }
        let how = status.unwrap_or_else(|| "its output ended".to_owned());
        self.render.error(&format!("the agent died {when} ({how})"));
        let tail = self.process.stderr_tail();
        if !self.settings.show_stderr && !tail.is_empty() {
            self.render.info("last lines of its stderr:");
            for line in tail {
                self.render.info(&format!("  {line}"));
            }
        }
    }
}
