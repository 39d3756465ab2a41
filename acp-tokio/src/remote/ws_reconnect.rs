//! A WebSocket client that resumes its connection (features `ws` and
//! `unstable_resumable_transport`, with [`WsClientOptions::reconnect`]), after the draft RFD
//! "durable & resumable transport"; the server's side is `ws_resume.rs`.
//!
//! A task owns the socket; the client's driver (or a line pump) talks to it through two
//! bounded channels, so a socket can be swapped for the next without the driver seeing it.
//!
//! Rules, each with a test (`tests/tokio/remote_reconnect.rs`):
//! * **Lost is not closed.** A socket that closes or fails without the server's close frame, or
//!   from which nothing came (not even a ping) for [`Reconnect::silent_after`], is lost; the
//!   server's close frame, or the client's own close, ends the link as before.
//! * **Resume.** A lost socket of a resumable server (its messages carry cursors at
//!   `_meta["acp/cursor"]`, and it named the connection in `Acp-Connection-Id`) is resumed: a new
//!   upgrade naming the connection, with the same credential and the cookies the server set,
//!   whose first frame is `stream/resume` with the last cursor seen. Tries wait a jittered
//!   backoff (a random half to all of a delay that doubles from [`Reconnect::first_backoff`] up
//!   to [`Reconnect::max_backoff`]), at most [`Reconnect::attempts`] in a row.
//! * **Nothing lost either way.** The server replays what came after the cursor. The client
//!   keeps the frames it sent last (up to [`Reconnect::kept_bytes`]) and sends again those past
//!   the count of frames that reached the agent, which the resume's answer carries at
//!   `_meta["acp/received"]`; the answer itself is the transport's, not the client's.
//! * **A refusal is the end.** `401`, `403`, `404`, `409` or `410` to the upgrade, a
//!   `stream/resume_failed`, a lost frame no longer kept, or the attempts spent end the link as
//!   a lost socket did before: the client's connection sees its peer gone.
//! * Each loss, resume and failure is reported on [`Reconnect::events`] (never blocking: a full
//!   channel drops the report).

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use acp_proto::resume::{ResumeAnswer, ResumeRequest, cursor_of};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

use super::CONNECTION_ID_HEADER;
use super::client::{WsClientOptions, WsStream, handshake};
use super::dial::RemoteInfo;
use super::frames::Socket;
use super::pump::Incoming;
use super::reconnect::{Backoff, LinkEvent, Reconnect, ResumedTurn, Try, refused_for_good};

/// The id of the transport's own `stream/resume` request.
const RESUME_ID: &str = "acp/resume";
/// How long the answer to `stream/resume` may take.
const RESUME_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the close handshake and the agent's last messages are awaited after the client
/// closed.
const CLOSE_PATIENCE: Duration = Duration::from_secs(5);
/// Messages between the task and the driver, each way.
const CHANNEL: usize = 64;

/// The driver's ends of a resuming link.
pub(crate) struct Channels {
    /// The agent's messages (and the server's close).
    pub(crate) incoming: mpsc::Receiver<Incoming>,
    /// The client's messages; dropping it closes the link.
    pub(crate) outgoing: mpsc::Sender<String>,
    /// The task: done once the socket is closed.
    pub(crate) task: tokio::task::JoinHandle<()>,
}

/// The driver's side of a resuming link as its socket: sending waits for room in the
/// channel; closing drops the sender, then waits for the task to finish the close handshake.
pub(crate) struct ResumingSocket {
    incoming: mpsc::Receiver<Incoming>,
    outgoing: Option<mpsc::Sender<String>>,
    reserving: Option<Pin<Box<dyn Future<Output = Reserved> + Send>>>,
    permit: Option<mpsc::OwnedPermit<String>>,
    task: tokio::task::JoinHandle<()>,
}

type Reserved = Result<mpsc::OwnedPermit<String>, mpsc::error::SendError<()>>;

impl From<Channels> for ResumingSocket {
    fn from(channels: Channels) -> Self {
        let Channels { incoming, outgoing, task } = channels;
        ResumingSocket { incoming, outgoing: Some(outgoing), reserving: None, permit: None, task }
    }
}

impl Socket for ResumingSocket {
    fn poll_incoming(&mut self, cx: &mut Context<'_>) -> Poll<Option<Incoming>> {
        self.incoming.poll_recv(cx)
    }
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.permit.is_some() {
            return Poll::Ready(Ok(()));
        }
        let reserving = match (&mut self.reserving, &self.outgoing) {
            (Some(reserving), _) => reserving,
            (None, Some(outgoing)) => self.reserving.insert(Box::pin(outgoing.clone().reserve_owned())),
            (None, None) => return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
        };
        let reserved = ready!(reserving.as_mut().poll(cx));
        self.reserving = None;
        self.permit = Some(reserved.map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?);
        Poll::Ready(Ok(()))
    }
    fn start_send(&mut self, text: String) -> io::Result<()> {
        let permit = self.permit.take().ok_or_else(|| io::Error::other("start_send before poll_ready"))?;
        permit.send(text);
        Ok(())
    }
    fn poll_flush(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        (self.outgoing, self.reserving, self.permit) = (None, None, None);
        let _ = ready!(Pin::new(&mut self.task).poll(cx));
        Poll::Ready(Ok(()))
    }
}

/// The link to run over a socket when it can resume (the options ask for it and the server
/// named the connection).
pub(crate) fn resuming(info: &RemoteInfo, url: &str, options: &WsClientOptions) -> Option<Link> {
    let (Some(reconnect), Some(id)) = (options.reconnect.clone(), info.connection_id.clone()) else {
        return None;
    };
    let mut resume_options = options.clone();
    resume_options.headers.push((CONNECTION_ID_HEADER.to_owned(), id));
    if !info.cookies.is_empty() {
        resume_options.headers.push(("cookie".to_owned(), info.cookies.join("; ")));
    }
    Some(Link {
        url: url.to_owned(),
        options: resume_options,
        reconnect,
        cursor: None,
        sent: 0,
        kept: VecDeque::new(),
        kept_bytes: 0,
    })
}

/// A resuming link: the task's state.
pub(crate) struct Link {
    url: String,
    /// The client's options, with the connection's id and cookies for the resumes.
    options: WsClientOptions,
    reconnect: Reconnect,
    /// The last cursor seen; none yet: the server is not resumable (or sent nothing).
    cursor: Option<String>,
    /// How many frames the client sent on this connection.
    sent: u64,
    /// The last frames sent (the last is frame number `sent`).
    kept: VecDeque<String>,
    kept_bytes: usize,
}

/// How one socket's service ended.
enum Served {
    /// The link is over (closed by either side, or the driver is gone).
    Ended,
    /// The socket was lost, for this reason.
    Lost(String),
}

impl Link {
    /// Runs the link over `ws` in a task of its own.
    pub(crate) fn start(self, ws: WsStream) -> Channels {
        let (incoming_tx, incoming) = mpsc::channel(CHANNEL);
        let (outgoing, outgoing_rx) = mpsc::channel(CHANNEL);
        let task = tokio::spawn(self.run(ws, outgoing_rx, incoming_tx));
        Channels { incoming, outgoing, task }
    }

    async fn run(mut self, mut ws: WsStream, mut outgoing: mpsc::Receiver<String>, incoming: mpsc::Sender<Incoming>) {
        loop {
            let reason = match self.serve(&mut ws, &mut outgoing, &incoming).await {
                Served::Ended => return,
                Served::Lost(reason) => reason,
            };
            let Some(cursor) = self.cursor.clone() else { return };
            self.report(LinkEvent::Lost { reason });
            match self.resume(&cursor, &incoming).await {
                Ok((next, resent, turns)) => {
                    ws = next;
                    self.report(LinkEvent::Resumed { cursor, resent, turns });
                }
                Err(reason) => return self.report(LinkEvent::Failed { reason }),
            }
        }
    }

    fn report(&self, event: LinkEvent) {
        self.reconnect.report(event);
    }

    /// Relays frames both ways over `ws` until the link ends or the socket is lost.
    async fn serve(
        &mut self,
        ws: &mut WsStream,
        outgoing: &mut mpsc::Receiver<String>,
        incoming: &mpsc::Sender<Incoming>,
    ) -> Served {
        let mut heard = Instant::now();
        loop {
            tokio::select! {
                frame = ws.next() => {
                    heard = Instant::now();
                    let message = match frame {
                        Some(Ok(Message::Text(text))) => {
                            if let Some(cursor) = cursor_of(text.as_str()) {
                                self.cursor = Some(cursor);
                            }
                            Incoming::Text(text.as_str().to_owned())
                        }
                        Some(Ok(Message::Binary(_))) => Incoming::Binary,
                        Some(Ok(Message::Close(_))) => {
                            let _ = incoming.send(Incoming::Close).await;
                            return Served::Ended;
                        }
                        Some(Ok(_)) => continue,
                        Some(Err(e)) => return Served::Lost(e.to_string()),
                        None => return Served::Lost("the socket closed without a close frame".to_owned()),
                    };
                    if incoming.send(message).await.is_err() {
                        let _ = ws.close(None).await;
                        return Served::Ended;
                    }
                    // Silence counts while the socket is read: not while a slow client
                    // made room for this message.
                    heard = Instant::now();
                }
                text = outgoing.recv() => {
                    let Some(text) = text else {
                        close(ws, incoming).await;
                        return Served::Ended;
                    };
                    self.keep(&text);
                    if let Err(e) = ws.send(Message::text(text)).await {
                        return Served::Lost(e.to_string());
                    }
                }
                () = tokio::time::sleep_until(heard + self.reconnect.silent_after) => {
                    let silent = self.reconnect.silent_after;
                    return Served::Lost(format!("nothing came from the server for {silent:?}"));
                }
            }
        }
    }

    /// Counts a frame sent and keeps it (the oldest kept go past [`Reconnect::kept_bytes`]).
    fn keep(&mut self, text: &str) {
        self.sent += 1;
        self.kept.push_back(text.to_owned());
        self.kept_bytes += text.len();
        while self.kept_bytes > self.reconnect.kept_bytes
            && let Some(old) = self.kept.pop_front()
        {
            self.kept_bytes -= old.len();
        }
    }

    /// Tries to resume from after `cursor` until a try succeeds, one is refused, or the
    /// attempts are spent (or the driver went away meanwhile).
    async fn resume(
        &mut self,
        cursor: &str,
        incoming: &mpsc::Sender<Incoming>,
    ) -> Result<(WsStream, usize, Vec<ResumedTurn>), String> {
        let mut backoff = Backoff::new(&self.reconnect);
        while backoff.wait().await {
            if incoming.is_closed() {
                return Err("the client's connection ended".to_owned());
            }
            match self.try_resume(cursor).await {
                Ok(resumed) => return Ok(resumed),
                Err(Try::Again(why)) => backoff.failed(why),
                Err(Try::Never(why)) => return Err(why),
            }
        }
        Err(backoff.spent())
    }

    /// One try: the upgrade, `stream/resume`, its answer, and the frames to send again.
    async fn try_resume(&mut self, cursor: &str) -> Result<(WsStream, usize, Vec<ResumedTurn>), Try> {
        let (mut ws, _) = handshake(&self.url, &self.options).await.map_err(|(e, status)| match status {
            Some(status) if refused_for_good(status) => Try::Never(e.to_string()),
            _ => Try::Again(e.to_string()),
        })?;
        let again = |e: tokio_tungstenite::tungstenite::Error| Try::Again(e.to_string());
        let request = ResumeRequest::new(cursor).with_id(RESUME_ID).to_frame();
        ws.send(Message::text(request)).await.map_err(again)?;
        let (received, turns) = loop {
            let frame = tokio::time::timeout(RESUME_TIMEOUT, ws.next()).await;
            match frame {
                Err(_) => return Err(Try::Again("the server did not answer stream/resume in time".to_owned())),
                Ok(None) => return Err(Try::Again("the socket closed before the resume's answer".to_owned())),
                Ok(Some(Err(e))) => return Err(again(e)),
                Ok(Some(Ok(Message::Text(text)))) => break acknowledged(text.as_str()).map_err(Try::Never)?,
                Ok(Some(Ok(Message::Close(_)))) => return Err(Try::Never("the server closed the resume".to_owned())),
                Ok(Some(Ok(_))) => {}
            }
        };
        let lost = self.sent.checked_sub(received).ok_or_else(|| {
            Try::Never(format!("the server counts {received} frames from this client, which sent {}", self.sent))
        })?;
        let lost = usize::try_from(lost).unwrap_or(usize::MAX);
        if lost > self.kept.len() {
            return Err(Try::Never(format!("{lost} frames sent before the loss never arrived and are no longer kept")));
        }
        for text in self.kept.range(self.kept.len() - lost..) {
            ws.send(Message::text(text.clone())).await.map_err(again)?;
        }
        Ok((ws, lost, turns))
    }
}

/// The client closed: the close frame, then the agent's last messages until the server's
/// close (or [`CLOSE_PATIENCE`]).
async fn close(ws: &mut WsStream, incoming: &mpsc::Sender<Incoming>) {
    if ws.close(None).await.is_err() {
        return;
    }
    let _ = tokio::time::timeout(CLOSE_PATIENCE, async {
        while let Some(Ok(message)) = ws.next().await {
            if let Message::Text(text) = message
                && incoming.send(Incoming::Text(text.as_str().to_owned())).await.is_err()
            {
                return;
            }
        }
    })
    .await;
}

/// How many of the client's frames reached the agent, and the sessions' turns, read from the
/// answer to the link's `stream/resume`; the refusal's reason otherwise.
fn acknowledged(text: &str) -> Result<(u64, Vec<ResumedTurn>), String> {
    let answer = ResumeAnswer::read(text, &RESUME_ID.into())?;
    Ok((answer.received, answer.turns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_kept_stays_within_its_bytes_and_counts_every_frame() {
        let reconnect = Reconnect { kept_bytes: 10, ..Reconnect::default() };
        let mut link = Link {
            url: String::new(),
            options: WsClientOptions::default(),
            reconnect,
            cursor: None,
            sent: 0,
            kept: VecDeque::new(),
            kept_bytes: 0,
        };
        for text in ["aaaa", "bbbb", "cccc"] {
            link.keep(text);
        }
        assert_eq!((link.sent, link.kept_bytes), (3, 8));
        assert_eq!(link.kept, ["bbbb", "cccc"]);
    }
}
