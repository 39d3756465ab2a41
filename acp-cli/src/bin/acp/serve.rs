//! `acp serve`: a stdio agent served to remote clients over WebSocket and Streamable HTTP.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use acp_cli::serve::{self, ServeConfig};
use clap::Args;

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  acp serve --listen 127.0.0.1:8765 -- acp agent\n  \
acp serve --listen 0.0.0.0:8765 --token-file /etc/acp/token -- npx @zed-industries/claude-code-acp\n  \
acp serve --listen 0.0.0.0:8443 --token-file /etc/acp/token --tls-cert cert.pem --tls-key key.pem -- acp agent\n  \
acp client --connect ws://127.0.0.1:8765/acp\n  \
acp client --connect http://127.0.0.1:8765/acp\n  \
acp client --connect wss://acp.example.com:8443/acp --token-file token --ca-file ca.pem\n  \
acp client --connect https://acp.example.com:8443/acp --token-file token --ca-file ca.pem\n\n\
Endpoint /acp: a WebSocket upgrade (one JSON-RPC message per text frame) or Streamable HTTP \
(POST each message, GET the SSE streams, DELETE to end); health check /healthz. With --tls-cert and --tls-key \
the same endpoint is served over TLS only (https://, wss://; ALPN h2 and http/1.1). SIGTERM, SIGINT or SIGHUP: \
stop accepting, send session/cancel for every prompt turn in flight, wait for the answers (up to 5 s), end every \
agent's input, reap the agents, exit.")]
pub(crate) struct ServeArgs {
    /// Address and port to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
    listen: std::net::SocketAddr,
    /// A file holding the bearer token every client must send (required to listen on
    /// anything but loopback); one token per line for several, each a credential of its own
    /// (a Streamable HTTP connection answers only the token that opened it).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Serve TLS with this certificate chain (PEM, leaf first); needs --tls-key.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Connections served at once (one more gets 503).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_connections: u64,
    /// Start every connection id with this name (`NAME-…`), so that a load balancer can route
    /// by the Acp-Connection-Id header to the instance that holds the connection.
    #[arg(long, value_name = "NAME", value_parser = node_id)]
    node_id: Option<String>,
    /// Close a connection on which nothing moved for this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
    /// Close a TCP connection that has not sent a complete request head this many seconds
    /// after it opened (or after the first byte of a later one).
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    header_timeout: u64,
    /// Answer 408 to a POST whose body has not arrived whole after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    body_timeout: u64,
    /// Close a TCP connection with no request in flight for this many seconds (at most
    /// --idle-timeout; an open stream or WebSocket is a request in flight).
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    keep_alive_timeout: u64,
    /// TCP connections held that have not sent an accepted token yet (without --token-file:
    /// no complete request yet); one more closes the oldest of them.
    #[arg(long, value_name = "N", default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_unauthenticated: u64,
    /// Resumable streams (Streamable HTTP and WebSocket): how long a connection whose stream
    /// no client reads keeps its agent and its turn, waiting for the client to resume it (then
    /// it ends as on DELETE).
    #[cfg(feature = "unstable_resumable_transport")]
    #[arg(long, value_name = "SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    resume_grace: u64,
    /// Let a client of another connection join a live session (`acp client --attach ID`)
    /// as an observer or a controller, when it holds the credential that opened the
    /// session's connection (the same --token-file line; without tokens, anyone who can reach
    /// the loopback address). Unstable (the draft RFD "multi-client session attach").
    #[arg(long)]
    share: bool,
    /// The agent's command line, after `--`.
    #[arg(last = true, required = true, value_name = "AGENT_CMD")]
    agent: Vec<OsString>,
}

/// A node id: letters, digits, `_` (it becomes part of a header value and a routing key).
fn node_id(text: &str) -> Result<String, String> {
    let ok = !text.is_empty() && text.len() <= 32 && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok { Ok(text.to_owned()) } else { Err("1 to 32 letters, digits or _".to_owned()) }
}

impl ServeArgs {
    /// The server's settings these arguments ask for; an unreadable token file or TLS key is
    /// an error (a usage error: exit code 2).
    fn config(self) -> Result<ServeConfig, String> {
        let mut config = ServeConfig::new(self.listen, self.agent);
        if let Some(path) = &self.token_file {
            config.tokens = acp_cli::files::read_tokens(path)?;
        }
        let options = &mut config.options;
        options.max_connections = usize::try_from(self.max_connections).unwrap_or(usize::MAX);
        options.idle_timeout = Some(Duration::from_secs(self.idle_timeout));
        options.header_timeout = Duration::from_secs(self.header_timeout);
        options.body_timeout = Duration::from_secs(self.body_timeout);
        options.keep_alive_timeout = Duration::from_secs(self.keep_alive_timeout);
        options.max_unauthenticated = usize::try_from(self.max_unauthenticated).unwrap_or(usize::MAX);
        options.node_id = self.node_id;
        options.share_sessions = self.share;
        #[cfg(feature = "unstable_resumable_transport")]
        if let Some(resumable) = options.resumable.as_mut() {
            resumable.grace = Duration::from_secs(self.resume_grace);
        }
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            let pem = |path: &Path| {
                acp_cli::files::check_regular(path, acp_cli::files::MAX_PEM_BYTES)
                    .map_err(|e| std::io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display())))
            };
            let tls = pem(cert)
                .and_then(|()| pem(key))
                .and_then(|()| acp_tokio::remote::TlsServer::from_pem_files(cert, key))
                .map_err(|e| e.to_string())?;
            options.tls = Some(tls);
        }
        Ok(config)
    }
}

/// Serves until a signal ends the server.
pub(crate) fn run(args: ServeArgs) -> ExitCode {
    let config = match args.config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("acp serve: {e}");
            return ExitCode::from(2);
        }
    };
    match serve::run(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp serve: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Command, parse};

    fn config(args: &[&str]) -> Result<ServeConfig, String> {
        match parse(&[&["serve"], args, &["--", "acp", "agent"]].concat()) {
            Command::Serve(args) => args.config(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_flags_become_the_servers_settings() {
        let c = config(&["--listen", "127.0.0.1:9", "--max-connections", "5", "--idle-timeout", "7", "--share"])
            .expect("a config");
        assert_eq!(c.listen, "127.0.0.1:9".parse().unwrap());
        assert_eq!(c.agent, ["acp", "agent"].map(OsString::from));
        assert_eq!(c.options.max_connections, 5);
        assert_eq!(c.options.idle_timeout, Some(Duration::from_secs(7)));
        assert_eq!(c.options.header_timeout, Duration::from_secs(10), "the default");
        assert!(c.options.share_sessions && c.tokens.is_empty() && c.options.tls.is_none());
    }

    #[test]
    fn an_unreadable_token_file_is_an_error_that_names_it() {
        let Err(e) = config(&["--token-file", "/nonexistent/acp-token"]) else {
            panic!("an unreadable token file is refused")
        };
        assert!(e.contains("/nonexistent/acp-token"), "{e}");
    }
}
