//! `acp serve`: any stdio agent, served to remote clients over WebSocket (the RFD "Streamable
//! HTTP & WebSocket Transport", its WebSocket profile).
//!
//! One agent process per remote connection: started when the WebSocket opens, bridged frame
//! for frame (one text frame = one line of the agent's stdin or stdout), and when the
//! connection ends its stdin is closed, then the shared close sequence runs (a grace period,
//! `SIGTERM` and `SIGKILL` to its process group, the reap). Without a token the server listens
//! on loopback addresses only. With `--tls-cert`/`--tls-key` the endpoint is served over TLS
//! (rustls; `https://`, `wss://`). Logs go to stderr, one `key=value` line per event; a value
//! that is not plain (the agent's stderr lines among them) is quoted and escaped.
//!
//! With `--share`, a client of another connection that holds the same credential may join a
//! live session (`acp client --attach ID [--observe]`; acp-tokio's `share.rs`): its updates
//! reach every client attached, a permission ask every controller (the first answer wins),
//! the agent's file and terminal requests only the client that opened the session.
//!
//! On `SIGTERM` (or `SIGINT`, `SIGHUP`) the bridge of each connection sends its agent a
//! `session/cancel` for every prompt turn it saw start and not yet answered, carries the
//! answers (`stopReason: "cancelled"`) to the clients, then ends the agent's stdin; the agents
//! are reaped and the server exits, within the drain timeout (acp-tokio's `inflight.rs`),
//! whatever its stderr does: the log is written through `outlet`, which stops waiting
//! for a stderr nobody reads once the signal came.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_runtime::process::{Supervisor, SupervisorOptions};
use acp_tokio::remote::{Backend, BoxFuture, Endpoint, WsServerOptions, serve_ws};

use crate::{outlet, sanitize};

/// What `acp serve` is told.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The agent's command line, started once per connection.
    pub agent: Vec<OsString>,
    /// One of them is required from every client (`Authorization: Bearer TOKEN`), each a
    /// credential of its own; without any only loopback addresses may be listened on.
    pub tokens: Vec<String>,
    /// The server's limits.
    pub options: WsServerOptions,
    /// How long an agent gets to exit after its connection ended, before `SIGTERM`.
    pub close_grace: Duration,
}

impl ServeConfig {
    /// Serves `agent` on `listen` with the default limits.
    pub fn new(listen: SocketAddr, agent: Vec<OsString>) -> ServeConfig {
        ServeConfig {
            listen,
            agent,
            tokens: Vec::new(),
            options: WsServerOptions::default(),
            close_grace: Duration::from_secs(2),
        }
    }
}

/// Runs the server until `SIGTERM`, `SIGINT` or `SIGHUP`, then drains (the turns in flight are
/// cancelled and answered, then every connection's agent sees the end of its input; the
/// server waits for them) and returns.
pub fn run(config: ServeConfig) -> io::Result<()> {
    if config.agent.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no agent command given (after --)"));
    }
    if config.tokens.is_empty() && !config.listen.ip().is_loopback() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "refusing to listen on {} without --token-file: only loopback addresses may go without a token",
                config.listen
            ),
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let served = runtime.block_on(serve(config));
    outlet::drain();
    served
}

async fn serve(config: ServeConfig) -> io::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let addr = listener.local_addr()?;
    let command: Vec<String> = config.agent.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let on = |yes: bool| if yes { "on" } else { "off" };
    let (tls, share) = (on(config.options.tls.is_some()), on(config.options.share_sessions));
    let fields = [
        ("addr", addr.to_string()),
        ("endpoint", "/acp".into()),
        ("tls", tls.into()),
        ("share", share.into()),
        ("agent", command.join(" ")),
    ];
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    log(&[&[("event", "listening")], &fields[..]].concat());
    let backend = ProcessBackend { agent: Arc::new(config.agent), close_grace: config.close_grace };
    let mut options = config.options;
    options.bearer_tokens = config.tokens;
    serve_ws(listener, backend, options, shutdown_signal()).await?;
    log(&[("event", "stopped")]);
    Ok(())
}

/// Resolves at the first `SIGTERM`, `SIGINT` or `SIGHUP`.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) =
        (signal(SignalKind::terminate()), signal(SignalKind::interrupt()), signal(SignalKind::hangup()))
    else {
        log(&[("event", "warning"), ("message", "signals could not be installed; stop with SIGKILL")]);
        return std::future::pending().await;
    };
    let name = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
        _ = hup.recv() => "SIGHUP",
    };
    outlet::signalled();
    log(&[("event", "draining"), ("signal", name)]);
}

/// One line of `key=value` pairs on stderr, through its outlet: once the server is told to
/// stop, a log nobody reads never holds the drain up (see [`crate::outlet`]).
fn log(fields: &[(&str, &str)]) {
    let line = log_line(fields) + "\n";
    let _ = outlet::stderr().write_all(line.as_bytes());
}

/// `acp serve: key=value…`, each value through [`sanitize::log_value`] (quoted unless plain,
/// always inert): an agent's stderr line can neither reach the terminal raw nor forge a field
/// or a line of the log.
fn log_line(fields: &[(&str, &str)]) -> String {
    let mut line = String::from("acp serve:");
    for (key, value) in fields {
        let _ = write!(line, " {key}={}", sanitize::log_value(value));
    }
    line
}

/// An agent process per connection.
struct ProcessBackend {
    agent: Arc<Vec<OsString>>,
    close_grace: Duration,
}

impl Backend for ProcessBackend {
    fn ending(&self, connection_id: &str, reason: &str) {
        log(&[("event", "connection_ending"), ("conn", connection_id), ("reason", reason)]);
    }

    fn open(&self, connection_id: &str) -> BoxFuture<'_, io::Result<Endpoint>> {
        let id = connection_id.to_owned();
        Box::pin(async move {
            let (program, args) = self.agent.split_first().expect("checked non-empty in run");
            let mut command = Command::new(program);
            command.args(args);
            let prefix = id.clone();
            let options = SupervisorOptions::default()
                .with_stderr_lines(move |line| log(&[("event", "agent_stderr"), ("conn", &prefix), ("line", &line)]))
                .with_close_graces(self.close_grace, Duration::from_secs(1));
            let (supervisor, stdin, stdout) = Supervisor::spawn(command, options).inspect_err(|e| {
                log(&[("event", "agent_failed"), ("conn", &id), ("error", &e.to_string())]);
            })?;
            let pid = supervisor.id().to_string();
            log(&[("event", "connection_opened"), ("conn", &id), ("agent_pid", &pid)]);
            let reader = tokio::process::ChildStdout::from_std(stdout)?;
            let writer = tokio::process::ChildStdin::from_std(stdin)?;
            let started = Instant::now();
            let finish: BoxFuture<'static, ()> = Box::pin(async move {
                let status = tokio::task::spawn_blocking(move || supervisor.close(|| {})).await;
                let status = match status {
                    Ok(Ok(status)) => status.to_string(),
                    Ok(Err(e)) => format!("unknown ({e})"),
                    Err(e) => format!("unknown ({e})"),
                };
                let secs = format!("{:.3}", started.elapsed().as_secs_f64());
                log(&[("event", "connection_closed"), ("conn", &id), ("agent_exit", &status), ("secs", &secs)]);
            });
            Ok(Endpoint { reader: Box::new(reader), writer: Box::new(writer), finish })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::log_line;

    #[test]
    fn an_agent_stderr_line_is_logged_quoted_and_inert_whatever_it_holds() {
        let evil = "\x1b]0;owned\x07\x1b[2J\x1b[1A\rFAKE\u{9b}31m\u{202e}";
        let line = log_line(&[("event", "agent_stderr"), ("conn", "c1"), ("line", evil)]);
        assert_eq!(
            line,
            "acp serve: event=agent_stderr conn=c1 line=\"\\x1b]0;owned\\x07\\x1b[2J\\x1b[1A\\x0dFAKE\\u{9b}31m\\u{202e}\""
        );
        assert!(!line.chars().any(char::is_control), "{line:?}");
        let forged = log_line(&[("line", "x event=connection_closed\nacp serve: event=stopped")]);
        assert_eq!(forged, "acp serve: line=\"x event=connection_closed\\nacp serve: event=stopped\"");
        assert_eq!(log_line(&[("agent", "acp agent"), ("tls", "off")]), "acp serve: agent=\"acp agent\" tls=off");
    }
}
