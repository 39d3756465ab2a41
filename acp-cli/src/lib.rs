//! # acp-cli: the `acp` command
//!
//! Four subcommands on top of [`acp_blocking`] and [`acp_services`]:
//!
//! * **`acp agent`**: [`agent::ReferenceAgent`], a deterministic agent on stdio that exercises
//!   the protocol end to end (streamed chunks, a thought, a plan, a tool call with a permission
//!   ask and an `fs/read_text_file`, cancellation, many sessions at once). Tests and other
//!   clients use it as a known-good peer; it is also a library type, so tests can serve it
//!   in-process over pipes.
//! * **`acp client -- AGENT_CMD...`**: [`client::run`], a terminal client for any ACP agent:
//!   streamed message text, dimmed thoughts, the plan as a checklist, tool calls with their
//!   kind, status, locations and diffs, permission questions (or a policy), Ctrl-C to cancel
//!   a turn, the agent's `fs/*` and `terminal/*` requests served by a sandbox confined to
//!   `--root` directories.
//! * **`acp demo`**: [`demo::run`], the client against the built-in agent with a sample
//!   prompt and a temporary file to read.
//! * **`acp serve -- AGENT_CMD...`**: [`serve::run`], any stdio agent served to remote clients
//!   over WebSocket, one agent process per connection; `acp client --connect ws://…/acp` is
//!   the client for it (or for any ACP WebSocket server).
//!
//! * **`acp record --out FILE -- AGENT_CMD...`**: [`record::run`], a transparent stdio proxy
//!   an editor launches in place of its agent, writing a transcript of every line each way;
//!   **`acp replay FILE`** ([`replay::run`]) draws it again, summarizes it (`--summary`) or
//!   checks it for protocol violations (`--check`).
//!
//! Exit codes are listed by [`Exit`].
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod agent;
pub mod check;
pub mod client;
pub mod config;
pub mod demo;
pub mod files;
pub mod manage;
pub(crate) mod outlet;
pub mod permission;
pub mod record;
pub mod replay;
pub(crate) mod sanitize;
pub mod serve;
pub mod setup;
pub(crate) mod signals;
pub mod store;
pub mod wire_dir;

/// The ACP major version `acp agent`, `acp client` and `acp demo` speak (`--protocol`).
///
/// Version 2 is the Preview of ACP v2 and needs the crate feature `unstable_protocol_v2`
/// (`cargo install acp-cli --features unstable_protocol_v2`); [`Protocol::available`] says
/// why not when it is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Protocol {
    /// ACP v1 (the default).
    #[default]
    #[value(name = "1")]
    V1,
    /// ACP v2 (Preview).
    #[value(name = "2")]
    V2,
}

impl Protocol {
    /// `Err` with what to do when this build cannot speak the version.
    pub fn available(self) -> Result<(), String> {
        match self {
            Protocol::V2 if !cfg!(feature = "unstable_protocol_v2") => {
                Err("--protocol 2 (ACP v2, Preview) is not in this build of acp: rebuild it with the feature \
                 unstable_protocol_v2 (cargo install acp-cli --features unstable_protocol_v2), or drop --protocol 2"
                    .to_owned())
            }
            _ => Ok(()),
        }
    }

    /// The version's number (`protocolVersion`; what the session database records).
    pub fn number(self) -> u16 {
        match self {
            Protocol::V1 => 1,
            Protocol::V2 => 2,
        }
    }

    /// The version of a number; `None` for one this build does not know.
    pub fn from_number(number: u16) -> Option<Protocol> {
        match number {
            1 => Some(Protocol::V1),
            2 => Some(Protocol::V2),
            _ => None,
        }
    }
}

/// The exit status of `acp client` and `acp demo`.
///
/// | code | meaning |
/// |---|---|
/// | 0 | the turn ended `end_turn` (interactive: the user quit) |
/// | 1 | a local failure: bad arguments, the agent could not be started, I/O, a remote server refused the connection (e.g. `401`) |
/// | 2 | usage error (from the argument parser) |
/// | 3 | the turn ended `cancelled` |
/// | 4 | the turn ended `refusal` |
/// | 5 | the turn ended `max_tokens` or `max_turn_requests` |
/// | 6 | protocol error: the agent answered with an error or something invalid |
/// | 7 | the agent died (its output ended, or it exited) |
/// | 8 | the agent requires authentication (`--auth METHOD` picks one) |
/// | 9 | the agent did not answer `initialize`, `authenticate` or `session/new` in time (`--connect-timeout`) |
/// | 10 | `--resume`/`--continue`: the agent can reopen no session (it advertises neither `sessionCapabilities.resume` nor `loadSession`), or there is no such session |
/// | 129 | `SIGHUP` ended the client (and its agent) |
/// | 130 | the user quit with Ctrl-C |
/// | 143 | `SIGTERM` ended the client (and its agent) |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: `end_turn`, or a normal quit.
    Ok,
    /// 1: a local failure.
    Failure,
    /// 2: usage error.
    Usage,
    /// 3: the turn was cancelled.
    Cancelled,
    /// 4: the agent refused.
    Refusal,
    /// 5: the agent stopped early (`max_tokens`, `max_turn_requests`).
    Incomplete,
    /// 6: the agent broke the protocol or answered with an error.
    Protocol,
    /// 7: the agent died.
    AgentDied,
    /// 8: the agent requires authentication.
    AuthRequired,
    /// 9: the agent did not answer the handshake (`initialize`, `authenticate`,
    /// `session/new`) within the connect timeout.
    ConnectTimeout,
    /// 10: `--resume` or `--continue` could not reopen a session (the agent advertises
    /// neither `session/resume` nor `session/load`, or there is no session to reopen).
    NoResume,
    /// 130: quit with Ctrl-C.
    Interrupted,
    /// 143 (128 + `SIGTERM`): ended by `SIGTERM`.
    Terminated,
    /// 129 (128 + `SIGHUP`): ended by `SIGHUP` (the terminal went away).
    HungUp,
}

impl Exit {
    /// The numeric exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::Cancelled => 3,
            Exit::Refusal => 4,
            Exit::Incomplete => 5,
            Exit::Protocol => 6,
            Exit::AgentDied => 7,
            Exit::AuthRequired => 8,
            Exit::ConnectTimeout => 9,
            Exit::NoResume => 10,
            Exit::Interrupted => 130,
            Exit::Terminated => 143,
            Exit::HungUp => 129,
        }
    }

    /// Whether a signal ended the client (Ctrl-C, `SIGTERM`, `SIGHUP`): its agent then gets
    /// the short grace of a quit.
    pub fn by_signal(self) -> bool {
        matches!(self, Exit::Interrupted | Exit::Terminated | Exit::HungUp)
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> std::process::ExitCode {
        std::process::ExitCode::from(exit.code())
    }
}
