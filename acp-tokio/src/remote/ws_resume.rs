//! Resumable WebSockets on the server (features `ws` and `unstable_resumable_transport`, a
//! server with [`Resumable`](super::Resumable) options), after the draft RFD "durable &
//! resumable transport".
//!
//! Rules, each with a test (`tests/tokio/remote_ws_resume.rs`):
//! * **The connection outlives its socket.** An upgrade opens a connection (its agent, its
//!   `Acp-Connection-Id` in the `101`) served as a Streamable HTTP one with a single stream
//!   (`http.rs`): the socket reads that stream and writes the client's messages to the agent.
//!   A socket that closes, fails, or stays silent for [`SILENT_INTERVALS`] keepalive intervals
//!   is gone, its connection detached: the agent and its turn live on for the grace period,
//!   and what the agent sends meanwhile waits in the stream, inside its byte budgets. A close
//!   frame from the client is no loss but its end: the connection ends as on `DELETE` (the
//!   backend hears `closed`).
//! * **Cursors.** Every agent message carries its stream cursor in its envelope, at
//!   `_meta["acp/cursor"]` (a string: `"1"`, `"2"`, …; in each message of a batch).
//! * **Resume.** An upgrade naming the connection in `Acp-Connection-Id` (with the credential
//!   that opened it; else `404` before any upgrade) whose first frame is the control message
//!   `stream/resume` with `params.cursor` (the last cursor the client handled) gets the
//!   retained messages after that cursor, with their cursors, then the live stream. A
//!   `stream/resume` sent as a request (with an id) is answered first, with each session's
//!   turn state at `result._meta["acp/turnState"]` and, at `result._meta["acp/received"]`, how
//!   many of the client's frames on this connection reached the agent (counted once the older
//!   socket let go), so that a client sends again just what a dying socket lost.
//! * **Never a stream with a hole.** A cursor the stream cannot go on from (never sent, or its
//!   successors left the ring), or a first frame that is no `stream/resume`, is answered with a
//!   `stream/resume_failed` notification (`params.reason`) and the close code [`REFUSED`].
//! * **The newest socket wins.** A resume while an older socket still holds the stream (half
//!   open: the server has not seen it die) takes the stream over; the older socket is closed
//!   with [`REFUSED`].
//! * The connection's end (its agent's output ended, the idle timeout, the grace period, a
//!   shutdown's drain) closes the socket after what was queued.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use acp_proto::jsonrpc::RequestId;
use acp_proto::resume::{self, ResumeAnswer, ResumeRequest};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::auth::Caller;
use super::http::{HttpConnection, end, find_id};
use super::pump::{BINARY_FRAME_ERROR, CONTROL_QUEUE};
use super::server::{Shared, json_error};
use super::streams::{Frame, KEEPALIVE, Refusal};
use super::{CONNECTION_ID_HEADER, frames, inflight};

/// Keepalive intervals without a frame from the client after which its socket is taken for
/// dead (the draft's five).
pub(crate) const SILENT_INTERVALS: u32 = 5;
/// The close code of a refused resume and of a socket another one took over from.
pub(crate) const REFUSED: u16 = 4409;
/// How long a resuming client may take to send its `stream/resume`.
const RESUME_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a resume waits for the older socket to let go of the stream.
const TAKEOVER_TIMEOUT: Duration = Duration::from_secs(5);

/// The answer to an upgrade on a server with resumable streams: a new connection, or (with
/// `Acp-Connection-Id`) a resume of `caller`'s.
pub(super) async fn upgraded(
    shared: Arc<Shared>,
    parts: &Parts,
    upgrade: WebSocketUpgrade,
    caller: Caller,
) -> Response {
    let busy = parts.extensions.get::<super::listen::Connection>().map(super::listen::Connection::busy);
    let max = shared.options.max_message;
    let upgrade = upgrade.max_message_size(max).max_frame_size(max).read_buffer_size(frames::READ_BUFFER);
    let stop = shared.stop.clone();
    let serving = shared.clone();
    if let Some(id) = parts.headers.get(CONNECTION_ID_HEADER) {
        let found = id.to_str().map_err(|_| ()).and_then(|id| find_id(&shared, id, &caller, true).map_err(|_| ()));
        let Ok(connection) = found else {
            return json_error(StatusCode::NOT_FOUND, "unknown Acp-Connection-Id");
        };
        let id = id.clone();
        let mut response = upgrade.on_upgrade(move |socket| async move {
            let _busy = busy;
            resume(shared, socket, connection, stop).await;
        });
        response.headers_mut().insert(CONNECTION_ID_HEADER, id);
        return response;
    }
    let connection = match HttpConnection::start(&shared, caller, true).await {
        Ok(connection) => connection,
        Err(refused) => return refused,
    };
    let id = connection.id.clone();
    let mut response = upgrade.on_upgrade(move |socket| async move {
        let _busy = busy;
        serve(&serving, socket, &connection, None, None, &stop).await;
    });
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(CONNECTION_ID_HEADER, value);
    }
    response
}

/// A resuming socket: its first frame must be `stream/resume`.
async fn resume(
    shared: Arc<Shared>,
    mut socket: WebSocket,
    connection: Arc<HttpConnection>,
    stop: watch::Receiver<bool>,
) {
    let first = tokio::time::timeout(RESUME_TIMEOUT, socket.next()).await;
    let text = match first {
        Ok(Some(Ok(Message::Text(text)))) => text,
        _ => return refuse(socket, "the first frame of a resume must be stream/resume").await,
    };
    let Some(request) = ResumeRequest::read(text.as_str()) else {
        return refuse(socket, "the first frame of a resume must be stream/resume with params.cursor").await;
    };
    serve(&shared, socket, &connection, Some(request.cursor), request.id, &stop).await;
}

/// Refuses a resume: `stream/resume_failed` with `reason`, then the close.
async fn refuse(mut socket: WebSocket, reason: &str) {
    let _ = socket.send(Message::Text(resume::resume_failed(reason).into())).await;
    let _ = socket.send(close(reason)).await;
}

/// A close frame with [`REFUSED`]; its reason is cut to what a control frame carries
/// (123 bytes, on a character boundary).
fn close(reason: &str) -> Message {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    Message::Close(Some(CloseFrame { code: REFUSED, reason: reason[..end].into() }))
}

/// Takes the connection's stream for a new socket, from `resume_after` when it resumes: an
/// older socket sees the reader count move and lets go (waited for up to
/// [`TAKEOVER_TIMEOUT`]). Hands back the frames, the reader count and this reader's number,
/// or why the stream cannot be taken.
async fn take<'a>(
    connection: &'a HttpConnection,
    resume_after: Option<&str>,
) -> Result<(impl futures_util::Stream<Item = Frame> + 'a, watch::Receiver<u64>, u64), &'static str> {
    connection.readers.send_modify(|n| *n += 1);
    let mut readers = connection.readers.subscribe();
    let me = *readers.borrow_and_update();
    let mut held = connection.connection.held();
    let _ = tokio::time::timeout(TAKEOVER_TIMEOUT, held.wait_for(|h| !*h)).await;
    match connection
        .connection
        .frames(connection.closed.subscribe(), resume_after, |seq, text| resume::with_cursor(text, seq))
    {
        Ok(frames) => Ok((frames, readers, me)),
        Err(Refusal::Gone) => Err("the stream cannot go on from this cursor (unknown, or no longer retained): \
                                   resume the session instead"),
        Err(Refusal::Busy) => Err("another socket holds this connection's stream"),
    }
}

/// The answer to a `stream/resume` sent with `id`, once the stream is taken (no older socket
/// writes to the agent any more): each session's turn state, and how many of the client's
/// frames reached the agent.
async fn acknowledgement(connection: &HttpConnection, id: RequestId) -> String {
    // The older socket's writes still in flight are counted first.
    let _counted = connection.counting.write().await;
    let received = connection.received.load(Ordering::Relaxed);
    ResumeAnswer { received, turns: connection.turns.turn_states() }.to_frame(&id)
}

/// The socket as the reader of the connection's stream (from after `resume_after`, the
/// acknowledgement of the resume request `resume_id` first) and the writer of its client's
/// messages, until either side ends or a newer socket takes over. It takes the stream over
/// from an older socket first.
async fn serve(
    shared: &Shared,
    socket: WebSocket,
    connection: &Arc<HttpConnection>,
    resume_after: Option<String>,
    resume_id: Option<RequestId>,
    stop: &watch::Receiver<bool>,
) {
    let (frames, mut readers, me) = match take(connection, resume_after.as_deref()).await {
        Ok(taken) => taken,
        Err(why) => return refuse(socket, why).await,
    };
    let ack = match resume_id {
        Some(id) => Some(acknowledgement(connection, id).await),
        None => None,
    };
    let mut frames = std::pin::pin!(frames);
    let (mut sink, mut incoming) = socket.split();
    let started = Instant::now();
    let heard = AtomicU64::new(0);
    let silent = || started.elapsed().saturating_sub(Duration::from_millis(heard.load(Ordering::Relaxed)));
    let (control, mut controls) = mpsc::channel::<&'static str>(CONTROL_QUEUE);
    let outbound = async {
        if let Some(ack) = ack {
            sink.send(Message::Text(ack.into())).await.ok()?;
        }
        loop {
            let message = tokio::select! {
                frame = frames.next() => match frame {
                    Some(Frame::Message(text)) => Message::Text(text.into()),
                    Some(Frame::Keepalive) if silent() > KEEPALIVE * SILENT_INTERVALS => return None,
                    Some(Frame::Keepalive) => Message::Ping(Default::default()),
                    None => {
                        // The connection ended: the socket closes after what was queued.
                        let _ = sink.send(Message::Close(None)).await;
                        return Some(());
                    }
                },
                Some(answer) = controls.recv() => Message::Text(answer.into()),
            };
            sink.send(message).await.ok()?;
        }
    };
    // Whether the client closed the socket on purpose (a close frame).
    let inbound = async {
        while let Some(Ok(message)) = incoming.next().await {
            heard.store(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX), Ordering::Relaxed);
            match message {
                Message::Text(text) => {
                    if !deliver(connection, text.as_str(), stop).await {
                        return false;
                    }
                }
                Message::Binary(_) => {
                    let _ = control.try_send(BINARY_FRAME_ERROR);
                }
                Message::Close(_) => return true,
                Message::Ping(_) | Message::Pong(_) => {}
            }
        }
        false
    };
    let superseded = readers.wait_for(|n| *n != me);
    let ended = tokio::select! {
        _ = outbound => Ended::Lost,
        closed = inbound => if closed { Ended::Closed } else { Ended::Lost },
        _ = superseded => Ended::Superseded,
    };
    match ended {
        Ended::Closed => {
            // As DELETE: the agent's input ends, and with its output the connection.
            shared.backend.ending(&connection.id, "closed");
            end(shared, connection).await;
        }
        Ended::Superseded => {
            let _ = sink.send(close("another socket resumed this connection")).await;
        }
        // Dropping `frames` gives the stream back: detached until a resume, or the grace
        // period.
        Ended::Lost => {}
    }
}

/// How a socket's service ended.
enum Ended {
    /// The client sent a close frame: the connection ends.
    Closed,
    /// The socket closed, failed, or went silent: the connection is detached.
    Lost,
    /// A newer socket took the stream over.
    Superseded,
}

/// Writes one client message to the agent (its line breaks flattened, as the pump does); a
/// prompt sent while the server shuts down is cancelled at once. `false` once the agent's
/// input is gone.
async fn deliver(connection: &Arc<HttpConnection>, text: &str, stop: &watch::Receiver<bool>) -> bool {
    let prompt = connection.turns.client_text(text);
    let line = text.bytes().map(|b| if b == b'\n' || b == b'\r' { b' ' } else { b }).collect();
    // Counted once written, even if this socket is taken over meanwhile.
    if !connection.deliver_line(line, true).await {
        return false;
    }
    if let Some(session) = prompt.filter(|_| *stop.borrow()) {
        return connection.deliver_line(inflight::cancel(&session).into_bytes(), false).await;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_reason_fits_a_control_frame() {
        let long = "é".repeat(100);
        let Message::Close(Some(frame)) = close(&long) else { panic!("a close frame") };
        assert_eq!(frame.code, REFUSED);
        assert_eq!(frame.reason.as_str(), "é".repeat(61));
        let Message::Close(Some(frame)) = close("short") else { panic!("a close frame") };
        assert_eq!(frame.reason.as_str(), "short");
    }
}
