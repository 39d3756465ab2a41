//! The client side of Streamable HTTP: an ACP client connected to a remote agent by `POST`s
//! (its messages) and SSE `GET` streams (the agent's), on hyper.
//!
//! The flow, as the RFD describes it (where it is silent, as the Python SDK 0.12.1's client
//! does it):
//! * `initialize` is POSTed without a connection id; the `200` answer's body is the response,
//!   its `Acp-Connection-Id` header names the connection. Then the connection-scoped stream
//!   (`GET`, `Accept: text/event-stream`) opens.
//! * Every other message is POSTed with the connection id (`202 Accepted`); the methods the
//!   RFD calls session-scoped (`session/prompt`, `session/cancel`, `session/set_mode`,
//!   `session/set_config_option`, `session/close`) carry `Acp-Session-Id`, and so does our
//!   answer to an agent request of a session whose stream is open (the RFD's "permission
//!   responses"; the Python client sends those without it, which servers accept too).
//! * A successful answer to `session/new`, `session/load`, `session/resume` or `session/fork`
//!   opens that session's stream (its `sessionId` from the result, or from the request for
//!   `load`/`resume`, whose results carry none).
//! * POSTs leave one at a time, in the order the core wrote them (so a `session/cancel` never
//!   overtakes its prompt). A request whose POST fails (network error, or a status other than
//!   `200`/`202`, like `401`) is answered to the core with a JSON-RPC error naming the
//!   status (and, when the server refused it, `data: {"httpStatus": N}`), so no caller
//!   waits forever.
//! * The agent's messages reach the core in the order of each stream; streams interleave.
//! * The end of the core's output (the connection closed) ends the streams and sends
//!   `DELETE`; [`ClientConnection::close`] returns once that was answered (or timed out). The
//!   end of the connection-scoped stream (the server closed it, or the network
//!   failed) ends the core's input, as the Python client does.
//! * With [`HttpClientOptions::reconnect`] (feature `unstable_resumable_transport`), a stream
//!   lost to the network (its body failed, or nothing came, not even a keepalive, for
//!   `Reconnect::silent_after`) is opened again with `Last-Event-ID`: the last event id it
//!   dispatched, after a jittered backoff; a refusal (`404`, `409`, …) or the tries spent end
//!   it as before. A stream whose server named no event id is not resumed. POSTs are not
//!   retried: a failed one is answered as above. Without it, no reconnection, no replay: the
//!   application opens a new connection, then `session/load` or `session/resume`.
//!
//! Bounded: bodies and SSE events of at most `max_message` bytes, [`INBOX`] messages waiting
//! for the core (a full inbox stops reading the streams, so TCP pushes back on the server),
//! and the tables of sessions and pending requests (see `http_run.rs`).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::Uri;
use hyper::body::Bytes;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::TokioExecutor;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::{mpsc, oneshot};

use super::DEFAULT_MAX_MESSAGE;
use super::bridge::{ClosedAfter, bridge};
use super::dial::{RemoteInfo, Target};
use super::http_connect::{ALPN, Connector};
use super::http_run::Run;
use super::line::read_line;
use crate::{Client, ClientConnection, ClientOptions, Error};

/// Messages from the agent that may wait for the core.
pub(crate) const INBOX: usize = 64;

/// The HTTP client the link uses.
pub(crate) type HttpClient = HyperClient<Connector, Full<Bytes>>;

/// How [`connect_http`] connects.
#[derive(Debug, Clone)]
pub struct HttpClientOptions {
    /// The connection's own options (the core's limits and timings, buffers).
    pub client: ClientOptions,
    /// Sent as `Authorization: Bearer TOKEN` on every request.
    pub bearer_token: Option<String>,
    /// Further headers of every request.
    pub headers: Vec<(String, String)>,
    /// Largest message (POST answer body, SSE event) accepted from the agent, and the longest
    /// line sent to it. Default 16 MiB.
    pub max_message: usize,
    /// How long a TCP connect may take. Default 10 s.
    pub connect_timeout: Duration,
    /// Speak HTTP/2 without negotiation ("prior knowledge", h2c). The RFD requires HTTP/2, but
    /// over cleartext nothing can negotiate it, and a server that only speaks HTTP/1.1 (the
    /// Python SDK's app under uvicorn) would refuse it: so the default, `false`, speaks
    /// HTTP/1.1 on `http://` URLs, as the Python SDK's client (httpx) does. Our server
    /// ([`serve_ws`](super::serve_ws)) speaks both. Over `https://` ALPN decides (HTTP/2 when
    /// the server picks `h2`), whatever this says.
    pub http2_prior_knowledge: bool,
    /// Whom an `https://` server must prove to be: `None` trusts the platform's roots. The
    /// connection offers ALPN `h2` and `http/1.1` whatever this config names.
    #[cfg(feature = "tls")]
    pub tls: Option<super::TlsClient>,
    /// Resume a stream lost to the network (feature `unstable_resumable_transport`; see
    /// `Reconnect`), when the server named event ids. Default none: a lost connection-scoped
    /// stream ends the connection.
    #[cfg(feature = "unstable_resumable_transport")]
    pub reconnect: Option<super::Reconnect>,
}

impl Default for HttpClientOptions {
    fn default() -> Self {
        HttpClientOptions {
            client: ClientOptions::default(),
            bearer_token: None,
            headers: Vec::new(),
            max_message: DEFAULT_MAX_MESSAGE,
            connect_timeout: Duration::from_secs(10),
            http2_prior_knowledge: false,
            #[cfg(feature = "tls")]
            tls: None,
            #[cfg(feature = "unstable_resumable_transport")]
            reconnect: None,
        }
    }
}

/// Connects `client` to the agent at `url` (`http://host:port/acp`) over Streamable HTTP. The
/// connection behaves as one over stdio: call [`ClientConnection::initialize`] first (its POST
/// opens the remote connection; a refusal such as `401` comes back as its error); dropping or
/// closing the connection sends `DELETE`.
///
/// The [`RemoteInfo`] has no connection id: over HTTP the server names the connection only
/// when it answers `initialize`.
///
/// ```no_run
/// # async fn run() -> Result<(), acp_tokio::Error> {
/// use acp_tokio::acp_proto::types::*;
/// use acp_tokio::remote::{HttpClientOptions, connect_http};
///
/// struct Editor;
/// impl acp_tokio::Client for Editor {}
///
/// let (conn, _) = connect_http(Editor, "http://127.0.0.1:8765/acp", HttpClientOptions::default()).await?;
/// let init = conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await?;
/// println!("agent {:?}", init.agent_info);
/// # Ok(()) }
/// ```
pub async fn connect_http<C: Client>(
    client: C,
    url: &str,
    options: HttpClientOptions,
) -> Result<(ClientConnection, RemoteInfo), Error> {
    dial_http(url, options, |reader, writer, options| ClientConnection::connect(client, reader, writer, options)).await
}

/// ACP v2 over Streamable HTTP (feature `unstable_protocol_v2`), re-exported as
/// `remote::v2::connect_http`.
#[cfg(feature = "unstable_protocol_v2")]
pub(super) mod v2 {
    use super::{Error, HttpClientOptions, RemoteInfo, dial_http};

    /// [`connect_http`](super::connect_http) for an ACP v2 client: the same Streamable HTTP
    /// link, with a [`v2::ClientConnection`](crate::v2::ClientConnection) driving it. Call its
    /// [`initialize`](crate::v2::ClientConnection::initialize) first (its POST opens the remote
    /// connection).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), acp_tokio::Error> {
    /// use acp_tokio::acp_proto::v2;
    /// use acp_tokio::remote::{HttpClientOptions, v2::connect_http};
    ///
    /// struct Editor;
    /// impl acp_tokio::v2::Client for Editor {}
    ///
    /// let (conn, _) = connect_http(Editor, "http://127.0.0.1:8765/acp", HttpClientOptions::default()).await?;
    /// let request = v2::InitializeRequest {
    ///     protocol_version: v2::ProtocolVersion(2),
    ///     info: v2::Implementation::new("my-editor", "1.0.0"),
    ///     capabilities: v2::ClientCapabilities::default(),
    ///     meta: None,
    /// };
    /// let init = conn.initialize(request).await?;
    /// println!("agent {}", init.info.name);
    /// # Ok(()) }
    /// ```
    pub async fn connect_http<C: crate::v2::Client>(
        client: C,
        url: &str,
        options: HttpClientOptions,
    ) -> Result<(crate::v2::ClientConnection, RemoteInfo), Error> {
        dial_http(url, options, |reader, writer, options| {
            crate::v2::ClientConnection::connect(client, reader, writer, options)
        })
        .await
    }
}

/// Opens the link and has `connect` put a client's driver on its lines (see `dial::bridge`).
async fn dial_http<T>(
    url: &str,
    options: HttpClientOptions,
    connect: impl FnOnce(ReadHalf<DuplexStream>, ClosedAfter<WriteHalf<DuplexStream>>, ClientOptions) -> T,
) -> Result<(T, RemoteInfo), Error> {
    let link = open_http(url, &options).await?;
    let info = link.info().clone();
    let client_options = options.client;
    let pump = |lines_out, lines_in, deleted| link.run(lines_out, lines_in, Some(deleted));
    Ok(bridge(info, pump, |reader, writer| connect(reader, writer, client_options)))
}

/// A Streamable HTTP link to a remote agent, not yet pumping: for a client on another runtime
/// (such as acp-blocking's, over a socket pair) or a proxy, which speaks newline-delimited
/// lines. [`open_http`] checks that the server accepts TCP connections; the remote connection
/// itself opens with the `initialize` the lines carry.
pub struct HttpLink {
    http: HttpClient,
    uri: Uri,
    options: HttpClientOptions,
    info: RemoteInfo,
    alpn: Option<Vec<u8>>,
}

impl std::fmt::Debug for HttpLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpLink").field("uri", &self.uri).finish_non_exhaustive()
    }
}

impl HttpLink {
    /// What is known of the remote connection when the link opens (over HTTP: nothing yet).
    pub fn info(&self) -> &RemoteInfo {
        &self.info
    }

    /// The ALPN protocol an `https://` server chose when [`open_http`] connected (`h2` for
    /// HTTP/2, which the link's requests then speak); `None` over `http://`.
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        self.alpn.as_deref()
    }

    /// Pumps messages until the connection ended: each line read from `lines_out` is POSTed
    /// (see the module's rules); each message from the agent is written to `lines_in` as one
    /// line. The end of `lines_out` ends the streams and sends `DELETE`; the end of the
    /// connection-scoped stream closes `lines_in`.
    pub async fn pump(self, lines_out: impl AsyncRead + Unpin, lines_in: impl AsyncWrite + Unpin) {
        self.run(lines_out, lines_in, None).await;
    }

    /// [`pump`](Self::pump), dropping `deleted` once the `DELETE` was answered (or timed out).
    async fn run(
        self,
        lines_out: impl AsyncRead + Unpin,
        lines_in: impl AsyncWrite + Unpin,
        deleted: Option<oneshot::Sender<()>>,
    ) {
        let (inbox, received) = mpsc::channel(INBOX);
        let run = Arc::new(Run::new(self.http, self.uri, &self.options, inbox));
        let max_line = self.options.max_message;
        let outbound = async {
            outbound(&run, lines_out, max_line).await;
            drop(deleted);
        };
        tokio::join!(outbound, inbound(&run, received, lines_in));
    }
}

/// Opens a Streamable HTTP link to the agent at `url` (see [`HttpLink`]); [`connect_http`]
/// does this and connects a [`ClientConnection`] over it. Fails when the URL is not
/// `http://…` or `https://…` (the latter needs the `tls` feature), when nothing accepts TCP
/// connections there (within the connect timeout), or when the TLS handshake fails (an
/// untrusted certificate says so).
pub async fn open_http(url: &str, options: &HttpClientOptions) -> Result<HttpLink, Error> {
    let uri: Uri = url.parse().map_err(|e| invalid(format!("{url}: {e}")))?;
    let target = Target::of(&uri, "http", "https").map_err(Error::Io)?;
    let trust = trust(options, target.secure);
    let probe = target.dial(&trust, &ALPN);
    let alpn = match tokio::time::timeout(options.connect_timeout, probe).await {
        Err(_) => return Err(Error::Io(io::Error::new(io::ErrorKind::TimedOut, format!("{url}: connect timed out")))),
        Ok(Err(e)) => return Err(Error::Io(io::Error::new(e.kind(), format!("{url}: {e}")))),
        Ok(Ok((_, alpn))) => alpn,
    };
    let http = http_client(options, trust, target.secure);
    Ok(HttpLink { http, uri, options: options.clone(), info: RemoteInfo::default(), alpn })
}

/// The options' trust; for `https://` the platform's roots are loaded here once, not on every
/// connection.
#[cfg(feature = "tls")]
fn trust(options: &HttpClientOptions, secure: bool) -> super::dial::Trust {
    match &options.tls {
        Some(tls) => Some(tls.clone()),
        // Failing here, each connection tries again and says why.
        None if secure => super::TlsClient::trusting(None).ok(),
        None => None,
    }
}

#[cfg(not(feature = "tls"))]
fn trust(_: &HttpClientOptions, _: bool) -> super::dial::Trust {
    super::dial::Trust
}

/// The HTTP client: HTTP/1.1 or HTTP/2 by prior knowledge over `http://`, as ALPN chose over
/// `https://`.
fn http_client(options: &HttpClientOptions, trust: super::dial::Trust, secure: bool) -> HttpClient {
    let connector = Connector::new(trust, options.connect_timeout);
    let prior_knowledge = options.http2_prior_knowledge && !secure;
    HyperClient::builder(TokioExecutor::new()).http2_only(prior_knowledge).build(connector)
}

fn invalid(message: String) -> Error {
    Error::Io(io::Error::new(io::ErrorKind::InvalidInput, message))
}

/// The core's lines → POSTs, one at a time. At the end: `DELETE`, and everything stops.
async fn outbound(run: &Arc<Run>, lines_out: impl AsyncRead + Unpin, max_line: usize) {
    let mut lines = BufReader::new(lines_out);
    let mut line = Vec::new();
    while let Ok(true) = read_line(&mut lines, &mut line, max_line).await {
        run.send(Bytes::copy_from_slice(&line)).await;
    }
    run.close().await;
}

/// The agent's messages → the core's input, until the connection ended.
async fn inbound(run: &Run, mut received: mpsc::Receiver<String>, mut lines_in: impl AsyncWrite + Unpin) {
    let mut ended = run.ended();
    loop {
        let text = tokio::select! {
            // Messages already received still reach the core after the end.
            biased;
            text = received.recv() => text,
            _ = ended.wait_for(|e| *e) => None,
        };
        let Some(text) = text else { break };
        let mut line = text.into_bytes();
        for byte in &mut line {
            if *byte == b'\n' || *byte == b'\r' {
                *byte = b' ';
            }
        }
        line.push(b'\n');
        if lines_in.write_all(&line).await.is_err() || lines_in.flush().await.is_err() {
            break;
        }
    }
    let _ = lines_in.shutdown().await;
}
