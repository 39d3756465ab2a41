//! The client side: an ACP client connected to a remote agent over WebSocket.

use std::io;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};

use super::dial::{RemoteInfo, Target, Transport};
use super::frames::{self, FrameReader, FrameWriter, Socket};
use super::pump::{Incoming, PumpLimits, pump};
use super::{CONNECTION_ID_HEADER, DEFAULT_MAX_MESSAGE};
use crate::{Client, ClientConnection, ClientOptions, Error};

/// How [`connect_ws`] connects.
#[derive(Debug, Clone)]
pub struct WsClientOptions {
    /// The connection's own options (the core's limits and timings, buffers).
    pub client: ClientOptions,
    /// Sent as `Authorization: Bearer TOKEN` on the upgrade request.
    pub bearer_token: Option<String>,
    /// Further headers of the upgrade request (e.g. `Cookie`, to reach the same backend again).
    pub headers: Vec<(String, String)>,
    /// Largest message accepted from the agent, and the longest line sent to it. Default 16 MiB.
    pub max_message: usize,
    /// How long the TCP connect and the upgrade may take. Default 10 s.
    pub connect_timeout: Duration,
    /// Whom a `wss://` server must prove to be: `None` trusts the platform's roots. The
    /// WebSocket upgrade offers ALPN `http/1.1` whatever this config names.
    #[cfg(feature = "tls")]
    pub tls: Option<super::TlsClient>,
    /// Resume a lost socket (feature `unstable_resumable_transport`; see [`Reconnect`](super::Reconnect)),
    /// when the server is resumable. Default none: a lost socket ends the connection.
    #[cfg(feature = "unstable_resumable_transport")]
    pub reconnect: Option<super::Reconnect>,
}

impl Default for WsClientOptions {
    fn default() -> Self {
        WsClientOptions {
            client: ClientOptions::default(),
            bearer_token: None,
            headers: Vec::new(),
            max_message: DEFAULT_MAX_MESSAGE,
            connect_timeout: Duration::from_secs(10),
            #[cfg(feature = "tls")]
            tls: None,
            #[cfg(feature = "unstable_resumable_transport")]
            reconnect: None,
        }
    }
}

/// Connects `client` to the agent at `url` (`ws://host:port/acp`). The connection behaves as
/// one over stdio: call [`ClientConnection::initialize`] first; dropping or closing it closes
/// the WebSocket.
///
/// ```no_run
/// # async fn run() -> Result<(), acp_tokio::Error> {
/// use acp_tokio::acp_proto::types::*;
/// use acp_tokio::remote::{WsClientOptions, connect_ws};
///
/// struct Editor;
/// impl acp_tokio::Client for Editor {}
///
/// let (conn, info) = connect_ws(Editor, "ws://127.0.0.1:8765/acp", WsClientOptions::default()).await?;
/// let init = conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await?;
/// println!("connection {:?}, agent {:?}", info.connection_id, init.agent_info);
/// # Ok(()) }
/// ```
pub async fn connect_ws<C: Client>(
    client: C,
    url: &str,
    options: WsClientOptions,
) -> Result<(ClientConnection, RemoteInfo), Error> {
    dial_ws(url, options, |reader, writer, options| {
        let handlers = crate::handlers::SendHandlers::new(client);
        ClientConnection::start(crate::runtime::Tokio, handlers, reader, writer, &options)
    })
    .await
}

/// ACP v2 over WebSocket (feature `unstable_protocol_v2`), re-exported as
/// `remote::v2::connect_ws`.
#[cfg(feature = "unstable_protocol_v2")]
pub(super) mod v2 {
    use super::{Error, RemoteInfo, WsClientOptions, dial_ws};

    /// [`connect_ws`](super::connect_ws) for an ACP v2 client: the same WebSocket, with a
    /// [`v2::ClientConnection`](crate::v2::ClientConnection) driving it. Call its
    /// [`initialize`](crate::v2::ClientConnection::initialize) first.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), acp_tokio::Error> {
    /// use acp_tokio::acp_proto::v2;
    /// use acp_tokio::remote::{WsClientOptions, v2::connect_ws};
    ///
    /// struct Editor;
    /// impl acp_tokio::v2::Client for Editor {}
    ///
    /// let (conn, _) = connect_ws(Editor, "ws://127.0.0.1:8765/acp", WsClientOptions::default()).await?;
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
    pub async fn connect_ws<C: crate::v2::Client>(
        client: C,
        url: &str,
        options: WsClientOptions,
    ) -> Result<(crate::v2::ClientConnection, RemoteInfo), Error> {
        dial_ws(url, options, |reader, writer, options| {
            crate::v2::ClientConnection::over(crate::runtime::Tokio, client, reader, writer, options)
        })
        .await
    }
}

/// Opens the WebSocket and has `connect` put a client's driver on it: the driver reads and
/// writes the frames itself (see `frames.rs`).
async fn dial_ws<T>(
    url: &str,
    options: WsClientOptions,
    connect: impl FnOnce(FrameReader<ClientSocket>, FrameWriter<ClientSocket>, ClientOptions) -> T,
) -> Result<(T, RemoteInfo), Error> {
    let (ws, info) = open(url, &options).await?;
    #[cfg(feature = "unstable_resumable_transport")]
    let socket = match super::ws_reconnect::resuming(&info, url, &options) {
        Some(link) => ClientSocket::Resuming(link.start(ws).into()),
        None => ClientSocket::Direct(ws),
    };
    #[cfg(not(feature = "unstable_resumable_transport"))]
    let socket = ClientSocket::Direct(ws);
    let (reader, writer) = frames::split(socket, options.max_message, None, None);
    Ok((connect(reader, writer, options.client), info))
}

/// An open WebSocket to a remote agent, not yet pumping: for a client on another runtime (such
/// as acp-blocking's, over a socket pair) or a proxy, which speaks newline-delimited lines.
pub struct WsLink {
    ws: WsStream,
    info: RemoteInfo,
    max_message: usize,
    /// The URL and options, for a link that resumes.
    #[cfg(feature = "unstable_resumable_transport")]
    dialed: (String, WsClientOptions),
}

pub(super) type WsStream = tokio_tungstenite::WebSocketStream<Box<dyn Transport>>;

impl std::fmt::Debug for WsLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsLink").field("info", &self.info).finish_non_exhaustive()
    }
}

impl WsLink {
    /// What the server said when the WebSocket opened.
    pub fn info(&self) -> &RemoteInfo {
        &self.info
    }

    /// Pumps messages until both directions ended: each line read from `lines_out` goes to the
    /// agent as one text frame; each message from the agent is written to `lines_in` as one
    /// line. The end of `lines_out` closes the WebSocket; the agent's close closes `lines_in`.
    /// With `WsClientOptions::reconnect` (feature `unstable_resumable_transport`), a lost socket is resumed underneath.
    pub async fn pump(
        self,
        lines_out: impl tokio::io::AsyncRead + Unpin,
        lines_in: impl tokio::io::AsyncWrite + Unpin,
    ) {
        let limits = PumpLimits { max_line: self.max_message, idle_timeout: None, answers_patience: Duration::ZERO };
        #[cfg(feature = "unstable_resumable_transport")]
        if let Some(link) = super::ws_reconnect::resuming(&self.info, &self.dialed.0, &self.dialed.1) {
            return pump_resuming(link.start(self.ws), lines_out, lines_in, limits).await;
        }
        let (sink, stream) = self.ws.split();
        let sink = sink.with(|text: String| std::future::ready(Ok::<_, tungstenite::Error>(Message::text(text))));
        let stream = stream.map(|message| message.map(incoming));
        pump(stream, Box::pin(sink), lines_out, lines_in, limits, std::future::pending(), None).await;
    }
}

/// Opens a WebSocket to the agent at `url` (see [`WsLink`]); [`connect_ws`] does this and
/// connects a [`ClientConnection`] over it.
pub async fn open_ws(url: &str, options: &WsClientOptions) -> Result<WsLink, Error> {
    let (ws, info) = open(url, options).await?;
    Ok(WsLink {
        ws,
        info,
        max_message: options.max_message,
        #[cfg(feature = "unstable_resumable_transport")]
        dialed: (url.to_owned(), options.clone()),
    })
}

/// A resuming link's pump: the lines cross the link's channels. Once the link is over (its
/// channel of the agent's messages ended), the pump ends without waiting for `lines_out` to
/// end: nothing can be sent any more, and the line reader's end tells the client so at once
/// (an idle client would otherwise learn it only from its next message).
#[cfg(feature = "unstable_resumable_transport")]
async fn pump_resuming(
    channels: super::ws_reconnect::Channels,
    lines_out: impl tokio::io::AsyncRead + Unpin,
    lines_in: impl tokio::io::AsyncWrite + Unpin,
    limits: PumpLimits,
) {
    let super::ws_reconnect::Channels { mut incoming, outgoing, task } = channels;
    let (over_tx, over) = tokio::sync::oneshot::channel::<()>();
    let mut over_tx = Some(over_tx);
    let stream = futures_util::stream::poll_fn(move |cx| {
        let next = ready!(incoming.poll_recv(cx));
        if next.is_none() {
            over_tx.take().map(|over| over.send(()));
        }
        Poll::Ready(next.map(Ok::<_, io::Error>))
    });
    let sink = futures_util::sink::unfold(outgoing, |outgoing, text: String| async move {
        outgoing.send(text).await.map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        Ok::<_, io::Error>(outgoing)
    });
    let pumping = pump(stream, Box::pin(sink), lines_out, lines_in, limits, std::future::pending(), None);
    // Every message before the end was written when the end was read: a moment to close the
    // line writer after them.
    let link_over = async {
        if over.await.is_ok() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        () = pumping => {}
        () = link_over => {}
    }
    let _ = task.await;
}

/// Opens the WebSocket.
async fn open(url: &str, options: &WsClientOptions) -> Result<(WsStream, RemoteInfo), Error> {
    handshake(url, options).await.map_err(|(e, _)| e)
}

/// Opens the WebSocket; a failure comes with the HTTP status the server refused the upgrade
/// with, if it did.
pub(super) async fn handshake(
    url: &str,
    options: &WsClientOptions,
) -> Result<(WsStream, RemoteInfo), (Error, Option<u16>)> {
    let invalid = |message: String| (invalid(message), None);
    let mut request = url.into_client_request().map_err(|e| invalid(format!("{url}: {e}")))?;
    let headers = request.headers_mut();
    if let Some(token) = &options.bearer_token {
        let value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|e| invalid(e.to_string()))?;
        headers.insert("authorization", value);
    }
    for (name, value) in &options.headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| invalid(e.to_string()))?;
        headers.append(name, HeaderValue::from_str(value).map_err(|e| invalid(e.to_string()))?);
    }
    let config = WebSocketConfig::default()
        .max_message_size(Some(options.max_message))
        .max_frame_size(Some(options.max_message))
        .read_buffer_size(frames::READ_BUFFER);
    let connecting = async {
        let transport = transport(request.uri(), options).await.map_err(tungstenite::Error::Io)?;
        tokio_tungstenite::client_async_with_config(request, transport, Some(config)).await
    };
    let (ws, response) = match tokio::time::timeout(options.connect_timeout, connecting).await {
        Err(_) => {
            let timed_out = io::Error::new(io::ErrorKind::TimedOut, format!("{url}: connect timed out"));
            return Err((Error::Io(timed_out), None));
        }
        Ok(Err(tungstenite::Error::Http(response))) => {
            let status = response.status();
            let kind = if status.as_u16() == 401 { io::ErrorKind::PermissionDenied } else { io::ErrorKind::Other };
            let refused = io::Error::new(kind, format!("{url}: the server answered {status}"));
            return Err((Error::Io(refused), Some(status.as_u16())));
        }
        Ok(Err(tungstenite::Error::Io(e))) => {
            return Err((Error::Io(io::Error::new(e.kind(), format!("{url}: {e}"))), None));
        }
        Ok(Err(e)) => return Err((Error::Io(io::Error::other(format!("{url}: {e}"))), None)),
        Ok(Ok(open)) => open,
    };
    let connection_id = response.headers().get(CONNECTION_ID_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let cookies = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next())
        .map(|v| v.trim().to_owned())
        .collect();
    Ok((ws, RemoteInfo { connection_id, cookies }))
}

/// The TCP connection to the URL's host, with TLS for `wss://` (the upgrade offers ALPN
/// `http/1.1` whatever the options' config names).
async fn transport(uri: &tungstenite::http::Uri, options: &WsClientOptions) -> io::Result<Box<dyn Transport>> {
    let target = Target::of(uri, "ws", "wss")?;
    #[cfg(feature = "tls")]
    let trust = &options.tls;
    #[cfg(not(feature = "tls"))]
    let trust = &{
        let _ = options;
        super::dial::Trust
    };
    Ok(target.dial(trust, &[b"http/1.1"]).await?.0)
}

fn invalid(message: String) -> Error {
    Error::Io(io::Error::new(io::ErrorKind::InvalidInput, message))
}

/// The client's WebSocket as the driver's transport.
pub(crate) enum ClientSocket {
    /// The socket itself: its loss is the connection's end.
    Direct(WsStream),
    /// A resuming link's channels (`ws_reconnect.rs`).
    #[cfg(feature = "unstable_resumable_transport")]
    Resuming(super::ws_reconnect::ResumingSocket),
}

fn io_error(e: tungstenite::Error) -> io::Error {
    match e {
        tungstenite::Error::Io(e) => e,
        e => io::Error::other(e),
    }
}

impl Socket for ClientSocket {
    fn poll_incoming(&mut self, cx: &mut Context<'_>) -> Poll<Option<Incoming>> {
        match self {
            ClientSocket::Direct(ws) => ws.poll_next_unpin(cx).map(|next| next.and_then(Result::ok).map(incoming)),
            #[cfg(feature = "unstable_resumable_transport")]
            ClientSocket::Resuming(link) => link.poll_incoming(cx),
        }
    }
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            ClientSocket::Direct(ws) => ws.poll_ready_unpin(cx).map_err(io_error),
            #[cfg(feature = "unstable_resumable_transport")]
            ClientSocket::Resuming(link) => link.poll_ready(cx),
        }
    }
    fn start_send(&mut self, text: String) -> io::Result<()> {
        match self {
            ClientSocket::Direct(ws) => ws.start_send_unpin(Message::text(text)).map_err(io_error),
            #[cfg(feature = "unstable_resumable_transport")]
            ClientSocket::Resuming(link) => link.start_send(text),
        }
    }
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            ClientSocket::Direct(ws) => ws.poll_flush_unpin(cx).map_err(io_error),
            #[cfg(feature = "unstable_resumable_transport")]
            ClientSocket::Resuming(link) => link.poll_flush(cx),
        }
    }
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            ClientSocket::Direct(ws) => close_direct(ws, cx),
            #[cfg(feature = "unstable_resumable_transport")]
            ClientSocket::Resuming(link) => link.poll_close(cx),
        }
    }
}

/// Sends the close frame on the socket itself.
fn close_direct(ws: &mut WsStream, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
    match ready!(ws.poll_close_unpin(cx)) {
        // Already closed (the agent closed first): nothing left to send.
        Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => Poll::Ready(Ok(())),
        other => Poll::Ready(other.map_err(io_error)),
    }
}

/// A tungstenite message as the pump sees it.
fn incoming(message: Message) -> Incoming {
    match message {
        Message::Text(text) => Incoming::Text(text.as_str().to_owned()),
        Message::Binary(_) => Incoming::Binary,
        Message::Close(_) => Incoming::Close,
        Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => Incoming::Other,
    }
}
