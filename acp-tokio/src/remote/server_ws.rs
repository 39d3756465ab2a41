//! The server's WebSocket arm (feature `ws`): a `GET /acp` with `Upgrade: websocket` opens a
//! WebSocket that is one ACP connection with a [`Backend`](super::Backend) endpoint of its own,
//! served by the pump (`pump.rs`) or, for an in-process agent ([`Direct`]), by the agent's
//! driver on the frames themselves (`frames.rs`). Without `ws` the same endpoint serves
//! Streamable HTTP only (`server.rs`, `http.rs`).

use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::FromRequestParts;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::OwnedSemaphorePermit;

use super::CONNECTION_ID_HEADER;
use super::auth::Caller;
use super::frames::{self, FrameReader, FrameWriter, Socket, Stop};
use super::inflight::InFlight;
use super::pump::{Activity, Incoming, PumpLimits, pump};
use super::server::{BoxFuture, Endpoint, Shared, json_error};

/// An in-process agent that serves a WebSocket connection itself (feature `ws`; see
/// [`Backend::direct`](super::Backend::direct)).
pub struct Direct(pub(super) Box<dyn FnOnce(FrameReader<ServerSocket>, FrameWriter<ServerSocket>) -> Serving + Send>);

/// The future serving one connection.
type Serving = BoxFuture<'static, ()>;

impl std::fmt::Debug for Direct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Direct").finish_non_exhaustive()
    }
}

/// `GET /acp` with `Upgrade: websocket` (the caller was authorized): the upgrade's response,
/// which opens the WebSocket; `None` for a request that is no upgrade (a Streamable HTTP
/// stream, see `server.rs`).
/// On a server with resumable streams (feature `unstable_resumable_transport`), the socket is
/// a resumable connection's (`ws_resume.rs`).
pub(super) async fn upgrade(shared: &Arc<Shared>, parts: &mut Parts, caller: Caller) -> Option<Response> {
    let upgrade = WebSocketUpgrade::from_request_parts(parts, &()).await.ok()?;
    #[cfg(feature = "unstable_resumable_transport")]
    if shared.options.resumable.is_some() {
        return Some(super::ws_resume::upgraded(shared.clone(), parts, upgrade, caller).await);
    }
    Some(upgraded(shared.clone(), parts, upgrade, caller).await)
}

/// The answer to an upgrade request: `503` when the server is full or the agent could not
/// start, else `101` with the connection id, the connection then served on the socket.
async fn upgraded(shared: Arc<Shared>, parts: &Parts, upgrade: WebSocketUpgrade, caller: Caller) -> Response {
    // The WebSocket holds its TCP connection busy (no keep-alive deadline) while it is open.
    let busy = parts.extensions.get::<super::listen::Connection>().map(super::listen::Connection::busy);
    let Ok(slot) = shared.slots.clone().try_acquire_owned() else {
        return json_error(StatusCode::SERVICE_UNAVAILABLE, "too many connections; try again later");
    };
    let connection_id = match shared.new_connection_id() {
        Ok(id) => id,
        Err(refused) => return refused.into_response(),
    };
    let served = match shared.direct(&connection_id) {
        Some(direct) => Ok(Served::Direct(direct)),
        None => shared.open(&connection_id, &caller).await.map(Served::Pumped),
    };
    let served = match served {
        Ok(served) => served,
        Err(e) => return json_error(StatusCode::SERVICE_UNAVAILABLE, &format!("the agent could not start: {e}")),
    };
    let max = shared.options.max_message;
    let header = HeaderValue::from_str(&connection_id);
    let mut response =
        upgrade.max_message_size(max).max_frame_size(max).read_buffer_size(frames::READ_BUFFER).on_upgrade(
            move |socket| async move {
                let _busy = busy;
                match served {
                    Served::Direct(direct) => run_direct(socket, direct, shared, slot, connection_id).await,
                    Served::Pumped(endpoint) => run(socket, endpoint, shared, slot).await,
                }
            },
        );
    if let Ok(value) = header {
        response.headers_mut().insert(CONNECTION_ID_HEADER, value);
    }
    response
}

/// How a WebSocket connection is served.
enum Served {
    /// By an in-process agent's driver on the socket itself.
    Direct(Direct),
    /// By the pump, between the socket and the backend's lines.
    Pumped(Endpoint),
}

/// One connection served by an in-process agent on the socket itself (see `frames.rs`), from
/// the upgrade to the end of its agent (or the idle timeout).
async fn run_direct(
    socket: WebSocket,
    direct: Direct,
    shared: Arc<Shared>,
    _slot: OwnedSemaphorePermit,
    connection_id: String,
) {
    let activity = Arc::new(Activity::new());
    let mut stopping = shared.stop.clone();
    let signal = Box::pin(async move {
        let _ = stopping.wait_for(|stopping| *stopping).await;
    });
    let stop = Stop { signal, turns: Arc::new(InFlight::default()), patience: shared.options.drain_timeout / 2 };
    let max = shared.options.max_message;
    let (reader, writer) = frames::split(ServerSocket(socket), max, Some(activity.clone()), Some(stop));
    let serving = (direct.0)(reader, writer);
    match shared.options.idle_timeout {
        None => serving.await,
        Some(idle) => {
            tokio::select! {
                () = serving => {}
                () = activity.idle(idle) => shared.backend.ending(&connection_id, "idle"),
            }
        }
    }
}

/// The server's WebSocket as the driver's transport.
pub(crate) struct ServerSocket(WebSocket);

impl Socket for ServerSocket {
    fn poll_incoming(&mut self, cx: &mut Context<'_>) -> Poll<Option<Incoming>> {
        self.0.poll_next_unpin(cx).map(|next| next.and_then(Result::ok).map(incoming))
    }
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.poll_ready_unpin(cx).map_err(io::Error::other)
    }
    fn start_send(&mut self, text: String) -> io::Result<()> {
        self.0.start_send_unpin(Message::Text(text.into())).map_err(io::Error::other)
    }
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.poll_flush_unpin(cx).map_err(io::Error::other)
    }
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.poll_close_unpin(cx).map_err(io::Error::other)
    }
}

/// One connection, from the upgrade to the end of its agent.
async fn run(socket: WebSocket, endpoint: Endpoint, shared: Arc<Shared>, _slot: OwnedSemaphorePermit) {
    let limits = PumpLimits {
        max_line: shared.options.max_message,
        idle_timeout: shared.options.idle_timeout,
        answers_patience: shared.options.drain_timeout / 2,
    };
    let (sink, stream) = socket.split();
    let sink = sink.with(|text: String| std::future::ready(Ok::<_, axum::Error>(Message::Text(text.into()))));
    let stream = stream.map(|message| message.map(incoming));
    let mut stop = shared.stop.clone();
    let stopped = async move {
        let _ = stop.wait_for(|stopping| *stopping).await;
    };
    let Endpoint { reader, writer, finish } = endpoint;
    let turns = InFlight::default();
    pump(stream, Box::pin(sink), reader, writer, limits, stopped, Some(&turns)).await;
    finish.await;
}

/// An axum message as the pump sees it.
fn incoming(message: Message) -> Incoming {
    match message {
        Message::Text(text) => Incoming::Text(text.as_str().to_owned()),
        Message::Binary(_) => Incoming::Binary,
        Message::Close(_) => Incoming::Close,
        Message::Ping(_) | Message::Pong(_) => Incoming::Other,
    }
}
