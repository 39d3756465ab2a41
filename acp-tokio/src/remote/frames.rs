//! The WebSocket as the driver's transport: the connection's driver reads frames from and
//! writes frames to the WebSocket itself, with no in-memory pipe and no task of its own per
//! direction (what [`pump`](super::pump) needs for a backend that speaks lines, like an agent
//! process). Used by [`connect_ws`](super::connect_ws) and, for an in-process agent
//! ([`AgentBackend`](super::AgentBackend)), by the server.
//!
//! The driver sees bytes: [`FrameReader`] hands it each text frame as one line and
//! [`FrameWriter`] turns each line it writes into one text frame. Both share the socket behind
//! an uncontended mutex (one task, the driver, polls both). The pump's rules hold here too, each
//! with a test below:
//! * A text frame becomes one line: its raw line breaks (legal only as JSON whitespace) become
//!   spaces. Frames already received are handed over together, as many as fit the read.
//! * A line becomes one text frame without its `\n` (and a `\r` before it); blank lines none.
//!   Frames are queued as the driver writes its batch and sent by its one flush per batch (the
//!   socket writes to the network on its own once its write buffer, 128 KiB, is full, and
//!   refuses more until that is written: the output stays bounded for a slow reader).
//! * A line longer than the limit is skipped (the socket itself refuses oversized frames).
//! * A binary frame is answered with a JSON-RPC error (`-32600`, `id: null`); at most
//!   [`CONTROL_QUEUE`] answers wait, more are dropped.
//! * The peer's close frame, an error or the end of the socket is the end of the input.
//! * `stop` (the server shutting down) first gives the agent a `session/cancel` per prompt in
//!   flight, goes on reading until they were answered or the patience ran out, then ends the
//!   input (see `inflight.rs`); a prompt read meanwhile is cancelled right after it.
//! * Every frame in or out counts as activity for the idle timeout ([`Activity`]).
//! * The socket is read only when it woke us since it last had nothing ([`ReadGate`]): the
//!   driver polls its reader on every round, and each read attempt of the WebSocket library
//!   first zeroes its read buffer, so polling it needlessly costs more than the frames do.
//! * That read buffer is [`READ_BUFFER`] (16 KiB), not the library's 128 KiB, on both ends:
//!   after each frame the socket is read once more (more frames may be buffered), and that
//!   attempt zeroes the whole buffer even when the socket has nothing (two 128 KiB `memset`s
//!   per message were 6% of a W2 round trip's CPU). A frame longer than the buffer is read in
//!   several reads.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use futures_util::task::AtomicWaker;
use tokio::time::Instant;

use super::inflight::{self, InFlight};
use super::pump::{Activity, BINARY_FRAME_ERROR, CONTROL_QUEUE, Incoming};
use crate::io::{ReadBytes, WriteBytes};

/// The WebSocket library's read buffer (bytes asked of the socket per read; see the module docs).
pub(crate) const READ_BUFFER: usize = 16 << 10;

/// A WebSocket as the frame transport polls it (tungstenite's on the client, axum's on the
/// server).
pub(crate) trait Socket: Send + Unpin + 'static {
    /// The next message; `None` once the socket ended or failed.
    fn poll_incoming(&mut self, cx: &mut Context<'_>) -> Poll<Option<Incoming>>;
    /// Ready to queue one more frame.
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    /// Queues a text frame (after `poll_ready`).
    fn start_send(&mut self, text: String) -> io::Result<()>;
    /// Writes what was queued.
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    /// Sends the close frame and flushes.
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
}

/// The server's shutdown, as the reader sees it.
pub(crate) struct Stop {
    /// Resolves when the shutdown begins.
    pub(crate) signal: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// The prompts in flight (recorded as frames pass).
    pub(crate) turns: Arc<InFlight>,
    /// How long the answers to the cancelled prompts are awaited at most.
    pub(crate) patience: Duration,
}

/// What the two halves share.
struct Shared<S> {
    socket: S,
    /// Answers to binary frames not yet queued on the socket.
    control: VecDeque<&'static str>,
    /// A control answer was queued but not yet flushed.
    control_unflushed: bool,
    activity: Option<Arc<Activity>>,
    turns: Option<Arc<InFlight>>,
}

impl<S: Socket> Shared<S> {
    /// Queues and flushes the answers to binary frames, as far as the socket lets us now.
    fn drive_control(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        while !self.control.is_empty() {
            match self.socket.poll_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => return Ok(()),
            }
            let answer = self.control.pop_front().unwrap_or(BINARY_FRAME_ERROR);
            self.socket.start_send(answer.to_owned())?;
            self.control_unflushed = true;
        }
        if self.control_unflushed && self.socket.poll_flush(cx)?.is_ready() {
            self.control_unflushed = false;
        }
        Ok(())
    }

    fn touch(&self) {
        if let Some(activity) = &self.activity {
            activity.touch();
        }
    }
}

fn lock<S>(shared: &Mutex<Shared<S>>) -> MutexGuard<'_, Shared<S>> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Remembers whether the socket woke us since it last said it had nothing to read.
struct ReadGate {
    /// Set by the socket's wake-up (and after every message: more may be buffered).
    woken: AtomicBool,
    /// The driver's waker, woken in turn.
    driver: AtomicWaker,
}

impl Wake for ReadGate {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.driver.wake();
    }
}

/// The reading half: the peer's text frames, one line each.
pub(crate) struct FrameReader<S> {
    shared: Arc<Mutex<Shared<S>>>,
    gate: Arc<ReadGate>,
    /// `gate` as a waker, given to the socket when it is read.
    gate_waker: Waker,
    /// The current frame as a line; `line[at..]` is still to hand over.
    line: Vec<u8>,
    at: usize,
    ended: bool,
    stop: Option<Stop>,
    /// Set once the shutdown began: resolves when the cancelled prompts were answered.
    draining: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// Lines of our own (cancels) to hand over before the next frame.
    extra: VecDeque<String>,
}

/// The writing half: each line, one text frame.
pub(crate) struct FrameWriter<S> {
    shared: Arc<Mutex<Shared<S>>>,
    /// The start of a line whose end was not written yet.
    partial: Vec<u8>,
    oversized: bool,
    max_line: usize,
}

/// Splits `socket` into the driver's two halves; lines longer than `max_line` are not sent.
/// `activity` is touched by every frame; `stop` is the server's shutdown.
pub(crate) fn split<S: Socket>(
    socket: S,
    max_line: usize,
    activity: Option<Arc<Activity>>,
    stop: Option<Stop>,
) -> (FrameReader<S>, FrameWriter<S>) {
    let turns = stop.as_ref().map(|stop| stop.turns.clone());
    let shared =
        Arc::new(Mutex::new(Shared { socket, control: VecDeque::new(), control_unflushed: false, activity, turns }));
    let gate = Arc::new(ReadGate { woken: AtomicBool::new(true), driver: AtomicWaker::new() });
    let reader = FrameReader {
        shared: shared.clone(),
        gate_waker: Waker::from(gate.clone()),
        gate,
        line: Vec::new(),
        at: 0,
        ended: false,
        stop,
        draining: None,
        extra: VecDeque::new(),
    };
    (reader, FrameWriter { shared, partial: Vec::new(), oversized: false, max_line })
}

/// One message as one line: raw line breaks become spaces, then a `\n`.
fn to_line(text: String) -> Vec<u8> {
    let mut line = text.into_bytes();
    for byte in &mut line {
        if *byte == b'\n' || *byte == b'\r' {
            *byte = b' ';
        }
    }
    line.push(b'\n');
    line
}

impl<S: Socket> FrameReader<S> {
    /// Copies what is left of the current line into `buf`.
    fn copy_out(&mut self, buf: &mut [u8]) -> usize {
        let n = (self.line.len() - self.at).min(buf.len());
        buf[..n].copy_from_slice(&self.line[self.at..self.at + n]);
        self.at += n;
        n
    }

    /// The server's shutdown: starts draining once it began, ends the input once drained.
    fn poll_stop(&mut self, cx: &mut Context<'_>) {
        let Some(stop) = &mut self.stop else { return };
        if let Some(draining) = &mut self.draining {
            if draining.as_mut().poll(cx).is_ready() {
                self.ended = true;
            }
            return;
        }
        if stop.signal.as_mut().poll(cx).is_pending() {
            return;
        }
        self.extra.extend(stop.turns.cancels());
        let (turns, deadline) = (stop.turns.clone(), Instant::now() + stop.patience);
        let mut draining: Pin<Box<dyn Future<Output = ()> + Send>> =
            Box::pin(async move { turns.settled_by(deadline).await });
        // Polled once now, so that its timer and the answers wake this task.
        if draining.as_mut().poll(cx).is_ready() && self.extra.is_empty() {
            self.ended = true;
        }
        self.draining = Some(draining);
    }

    /// The next line to hand over: ours first, then the peer's next frame.
    fn poll_next_line(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<Vec<u8>>>> {
        if let Some(line) = self.extra.pop_front() {
            return Poll::Ready(Ok(Some(to_line(line))));
        }
        self.poll_stop(cx);
        if !self.extra.is_empty() {
            return self.poll_next_line(cx);
        }
        let mut shared = lock(&self.shared);
        shared.drive_control(cx)?;
        loop {
            if self.ended {
                return Poll::Ready(Ok(None));
            }
            // Nothing new since the socket last had nothing: not read again (see the module docs).
            self.gate.driver.register(cx.waker());
            if !self.gate.woken.swap(false, Ordering::AcqRel) {
                return Poll::Pending;
            }
            let Poll::Ready(message) = shared.socket.poll_incoming(&mut Context::from_waker(&self.gate_waker)) else {
                return Poll::Pending;
            };
            self.gate.woken.store(true, Ordering::Release);
            shared.touch();
            match message {
                Some(Incoming::Text(text)) => {
                    let prompt = shared.turns.as_ref().and_then(|turns| turns.client_text(&text));
                    // A turn started while the server shuts down is cancelled at once.
                    if let Some(session) = prompt.filter(|_| self.draining.is_some()) {
                        self.extra.push_back(inflight::cancel(&session));
                    }
                    return Poll::Ready(Ok(Some(to_line(text))));
                }
                Some(Incoming::Binary) => {
                    // Full: the peer floods binary frames faster than we answer; drop the answer.
                    if shared.control.len() < CONTROL_QUEUE {
                        shared.control.push_back(BINARY_FRAME_ERROR);
                    }
                    shared.drive_control(cx)?;
                }
                Some(Incoming::Other) => {}
                Some(Incoming::Close) | None => self.ended = true,
            }
        }
    }
}

impl<S: Socket> ReadBytes for FrameReader<S> {
    fn poll_read_bytes(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let mut filled = 0;
        loop {
            filled += self.copy_out(&mut buf[filled..]);
            if filled == buf.len() {
                return Poll::Ready(Ok(filled));
            }
            match self.poll_next_line(cx) {
                Poll::Ready(Ok(Some(line))) => {
                    self.line = line;
                    self.at = 0;
                }
                Poll::Ready(Ok(None)) => return Poll::Ready(Ok(filled)),
                Poll::Ready(Err(e)) if filled == 0 => return Poll::Ready(Err(e)),
                Poll::Ready(Err(_)) | Poll::Pending if filled > 0 => return Poll::Ready(Ok(filled)),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl<S: Socket> FrameWriter<S> {
    /// The line `partial` + `rest` (without its `\n`) as a frame, `None` when there is none to
    /// send (blank or oversized).
    fn take_line(&mut self, rest: &[u8]) -> Option<String> {
        let oversized = std::mem::take(&mut self.oversized);
        let mut line = std::mem::take(&mut self.partial);
        if oversized || line.len() + rest.len() > self.max_line {
            return None;
        }
        line.extend_from_slice(rest);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.is_empty() {
            return None;
        }
        Some(String::from_utf8(line).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }
}

impl<S: Socket> WriteBytes for FrameWriter<S> {
    fn poll_write_bytes(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let socket = self.shared.clone();
        let mut shared = lock(&socket);
        shared.drive_control(cx)?;
        let mut taken = 0;
        while taken < buf.len() {
            let Some(end) = buf[taken..].iter().position(|&b| b == b'\n') else {
                // The start of a line: kept (up to the limit) until its end comes.
                if self.oversized || self.partial.len() + (buf.len() - taken) > self.max_line {
                    self.oversized = true;
                    self.partial.clear();
                } else {
                    self.partial.extend_from_slice(&buf[taken..]);
                }
                taken = buf.len();
                break;
            };
            // A line ends here: its frame needs room on the socket before its bytes are taken.
            match shared.socket.poll_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) if taken == 0 => return Poll::Ready(Err(e)),
                Poll::Ready(Err(_)) | Poll::Pending => break,
            }
            let text = self.take_line(&buf[taken..taken + end]);
            taken += end + 1;
            if let Some(text) = text {
                if let Some(turns) = &shared.turns {
                    turns.agent_line(text.as_bytes());
                }
                shared.socket.start_send(text)?;
                shared.touch();
            }
        }
        if taken == 0 { Poll::Pending } else { Poll::Ready(Ok(taken)) }
    }

    fn poll_flush_bytes(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut shared = lock(&self.shared);
        shared.control_unflushed = false;
        shared.socket.poll_flush(cx)
    }

    fn poll_close_bytes(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        lock(&self.shared).socket.poll_close(cx)
    }
}

#[cfg(test)]
#[path = "frames_tests.rs"]
mod tests;
