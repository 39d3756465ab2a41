//! What `acp client` runs ([`ClientConfig`]) and the client's bounds.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::output::Output;
use super::render::Style;
use super::shared::Attach;
use crate::permission::Policy;

/// Events the UI queue holds; a sender blocks while it is full (Ctrl-C and wake-ups only try).
pub const UI_QUEUE: usize = 64;
/// Turn updates and notifications the connection buffers before it stops reading from the
/// agent ([`acp_blocking::ClientOptions::max_buffered`]).
pub const MAX_BUFFERED: usize = 256;
/// The default deadline of `initialize`, `authenticate` and `session/new`.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// What `acp client` runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientConfig {
    /// The agent's command line (program and arguments).
    pub agent: Vec<OsString>,
    /// How permission requests are answered; `None`: ask when stdin is a terminal, reject
    /// otherwise.
    pub policy: Option<Policy>,
    /// The directories the agent may read, write and run commands in; empty: the session's
    /// working directory.
    pub roots: Vec<PathBuf>,
    /// The session's working directory; `None`: the current directory.
    pub cwd: Option<PathBuf>,
    /// One prompt to run (then exit with its stop reason); `None`: the interactive loop.
    pub prompt: Option<String>,
    /// Show the agent's stderr as it is written (otherwise only its tail, if it dies).
    pub show_stderr: bool,
    /// Why the policy applies, shown with each automatic answer (default: the flag's name).
    pub policy_note: Option<String>,
    /// The authentication method to use before opening the session.
    pub auth: Option<String>,
    /// A JSON object of field names to values that answers the agent's forms
    /// (`elicitation/create`, form mode); without it forms are filled on the terminal, or,
    /// when there is none, declined and not advertised.
    pub elicit: Option<PathBuf>,
    /// Lines printed before connecting (the demo's introduction).
    pub banner: Vec<String>,
    /// How to draw; `None`: [`Style::detect`].
    pub style: Option<Style>,
    /// How long the agent gets to answer each of `initialize`, `authenticate` and
    /// `session/new` (default [`CONNECT_TIMEOUT`]); past it the client exits with
    /// [`Exit::ConnectTimeout`](crate::Exit::ConnectTimeout).
    pub connect_timeout: Duration,
    /// Offer terminals even when the kernel cannot confine them to the roots (default off:
    /// such a client does not advertise `terminal`).
    pub unconfined_terminals: bool,
    /// Start the agent through `acp __exec-child` so that the kernel kills it if the client
    /// dies, even by `SIGKILL` (default off; needs the current executable to be `acp`, as it
    /// is for the `acp` command and its demo).
    pub die_with_client: bool,
    /// A remote agent's URL (`ws://host:port/acp`, or `http://…` for Streamable HTTP), instead
    /// of `agent`'s command.
    pub connect: Option<String>,
    /// Sent as `Authorization: Bearer TOKEN` to the remote agent.
    pub token: Option<String>,
    /// For `wss://`: trust only the CAs of this PEM file instead of the platform's roots.
    pub ca_file: Option<PathBuf>,
    /// What goes to stdout (default [`Output::Text`]); json and quiet need a `prompt`.
    pub output: Output,
    /// Images to send with the prompt (`--image`; the agent must advertise images).
    pub images: Vec<PathBuf>,
    /// Environment variables set for the agent process (a named agent's `env`).
    pub agent_env: Vec<(OsString, OsString)>,
    /// The agent process's working directory (a named agent's `cwd`); `None`: the client's.
    pub agent_cwd: Option<PathBuf>,
    /// Record the session in the session database ([`crate::store`]) under this agent.
    pub record: Option<crate::store::AgentRef>,
    /// Reopen this remembered session instead of opening a new one.
    pub resume: Option<Resume>,
    /// With `connect`: join this session of another client instead of opening one (see
    /// [`Attach`]).
    pub attach: Option<Attach>,
    /// The ACP version to speak (default v1); v2 needs the feature `unstable_protocol_v2`.
    /// Both run the same session, over the version's link (`link`).
    pub protocol: crate::Protocol,
}

/// A remembered session to reopen (`--resume`, `--continue`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    /// Its local id in the session database.
    pub local_id: i64,
    /// The agent's session id.
    pub session_id: String,
    /// The ACP version it was spoken in, which reopens it.
    pub protocol: crate::Protocol,
}

impl ClientConfig {
    /// A client for the agent command line `agent`, with the defaults.
    pub fn new(agent: Vec<OsString>) -> ClientConfig {
        ClientConfig {
            agent,
            policy: None,
            roots: Vec::new(),
            cwd: None,
            prompt: None,
            show_stderr: false,
            policy_note: None,
            auth: None,
            elicit: None,
            banner: Vec::new(),
            style: None,
            connect_timeout: CONNECT_TIMEOUT,
            unconfined_terminals: false,
            die_with_client: false,
            connect: None,
            token: None,
            output: Output::Text,
            images: Vec::new(),
            agent_env: Vec::new(),
            agent_cwd: None,
            record: None,
            resume: None,
            attach: None,
            ca_file: None,
            protocol: crate::Protocol::V1,
        }
    }

    /// A client for the remote agent at `url` (`ws://host:port/acp` or `http://host:port/acp`).
    pub fn remote(url: impl Into<String>) -> ClientConfig {
        ClientConfig { connect: Some(url.into()), ..ClientConfig::new(Vec::new()) }
    }
}
