//! The pump: copies JSON-RPC messages between a WebSocket (one message per text frame) and a
//! newline-delimited byte stream pair (what the core's driver, or an agent process, speaks).
//!
//! Rules, each with a test below:
//! * A text frame becomes one line: its raw line breaks (legal only as JSON whitespace, never
//!   inside a JSON string) become spaces, so a pretty-printed message stays one frame.
//! * A line becomes one text frame, without its `\n` (and a `\r` before it).
//! * A binary frame is no ACP message: the peer gets a JSON-RPC error (`-32600`, `id: null`) and
//!   the connection goes on. At most [`CONTROL_QUEUE`] such answers wait; more are dropped.
//! * A line longer than the limit is not buffered: it is skipped up to its newline (the
//!   WebSocket library itself refuses oversized frames from the peer, closing with 1009).
//! * The two directions run independently, so a full input never stops the output from being
//!   drained (the core pauses its input while its output is full: one task for both ways
//!   could deadlock).
//! * The end: the peer's close (or error) closes the line writer (end of input for the core or
//!   the process); the end of the lines closes the WebSocket. Nothing moved for the idle
//!   timeout ends both. `stop` (a server shutting down) ends the inbound direction only, so
//!   the agent sees the end of its input and the answers it still writes reach the peer.
//! * With [`InFlight`] (the server's side), `stop` first sends the agent a `session/cancel`
//!   for each prompt turn in flight and goes on carrying the peer's messages until every such
//!   prompt was answered (a prompt the peer sends meanwhile is cancelled right after it), or
//!   `answers_patience` passed; only then does the agent's input end (see `inflight.rs`).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::{Sink, SinkExt, Stream, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::inflight::{self, InFlight};
use super::line::read_line;

/// Answers to binary frames that may wait for the outbound direction.
pub(crate) const CONTROL_QUEUE: usize = 8;

/// What the pump needs to know of a WebSocket message from the peer.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A text frame: one JSON-RPC message.
    Text(String),
    /// A binary frame.
    Binary,
    /// Ping, pong (answered by the WebSocket library) or a raw frame: nothing for the pump.
    Other,
    /// The peer's close frame.
    Close,
}

/// How the pump is bounded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PumpLimits {
    /// Longest line forwarded to the peer (bytes, without the `\n`).
    pub(crate) max_line: usize,
    /// Ends the connection when nothing moved in either direction for this long.
    pub(crate) idle_timeout: Option<Duration>,
    /// After `stop`, how long the answers to the cancelled prompts are awaited at most.
    pub(crate) answers_patience: Duration,
}

/// The answer to a binary frame.
pub(crate) const BINARY_FRAME_ERROR: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: binary WebSocket frames carry no ACP message; send one JSON-RPC message per text frame"}}"#;

/// Copies messages both ways until both directions ended (or the idle timeout). `stream` and
/// `sink` are the WebSocket's halves, `lines_out` the lines for the peer, `lines_in` where the
/// peer's messages are written; `stop` resolving ends the inbound direction (once the prompts
/// in flight were cancelled and answered, with `turns`).
pub(crate) async fn pump<St, Si, E, R, W>(
    stream: St,
    sink: Si,
    lines_out: R,
    lines_in: W,
    limits: PumpLimits,
    stop: impl Future<Output = ()>,
    turns: Option<&InFlight>,
) where
    St: Stream<Item = Result<Incoming, E>> + Unpin,
    Si: Sink<String> + Unpin,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let activity = Activity::new();
    let (control_tx, control_rx) = mpsc::channel(CONTROL_QUEUE);
    let inbound = inbound(stream, lines_in, control_tx, &activity, stop, turns, limits.answers_patience);
    let outbound = outbound(BufReader::new(lines_out), sink, control_rx, limits.max_line, &activity, turns);
    let both = async { tokio::join!(inbound, outbound) };
    match limits.idle_timeout {
        None => {
            both.await;
        }
        Some(idle) => {
            tokio::select! {
                _ = both => {}
                () = activity.idle(idle) => {}
            }
        }
    }
}

/// When something last moved, in milliseconds since the pump started.
pub(crate) struct Activity {
    start: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    pub(crate) fn new() -> Activity {
        Activity { start: Instant::now(), last_ms: Arc::new(AtomicU64::new(0)) }
    }

    pub(crate) fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// Resolves once nothing moved for `idle`.
    pub(crate) async fn idle(&self, idle: Duration) {
        loop {
            let last = self.start + Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            let deadline = last + idle;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

/// Peer → lines. Ends at the peer's close or error (or `stop`, see [`pump`]), then closes the
/// line writer.
async fn inbound<St, E, W>(
    mut stream: St,
    mut lines_in: W,
    control: mpsc::Sender<&'static str>,
    activity: &Activity,
    stop: impl Future<Output = ()>,
    turns: Option<&InFlight>,
    patience: Duration,
) where
    St: Stream<Item = Result<Incoming, E>> + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut stop = std::pin::pin!(stop);
    // First polled when the shutdown begins: the answers' deadline counts from then.
    let mut drained = std::pin::pin!(async {
        if let Some(turns) = turns {
            turns.settled_by(Instant::now() + patience).await;
        }
    });
    let mut draining = false;
    loop {
        let message = tokio::select! {
            next = stream.next() => match next {
                Some(Ok(message)) => message,
                Some(Err(_)) | None => break,
            },
            () = &mut stop, if !draining => {
                let Some(turns) = turns else { break };
                draining = true;
                if write_lines(&mut lines_in, turns.cancels()).await.is_err() {
                    break;
                }
                continue;
            }
            () = &mut drained, if draining => break,
        };
        activity.touch();
        match message {
            Incoming::Text(text) => {
                let prompt = turns.and_then(|turns| turns.client_text(&text));
                if write_line(&mut lines_in, text).await.is_err() {
                    break;
                }
                // A turn started while the server shuts down is cancelled at once.
                let cancel = prompt.filter(|_| draining).map(|session| vec![inflight::cancel(&session)]);
                if write_lines(&mut lines_in, cancel.unwrap_or_default()).await.is_err() {
                    break;
                }
            }
            Incoming::Binary => {
                // Full: the peer floods binary frames faster than we answer; drop the answer.
                let _ = control.try_send(BINARY_FRAME_ERROR);
            }
            Incoming::Other => {}
            Incoming::Close => break,
        }
    }
    let _ = lines_in.shutdown().await;
}

/// Writes messages of our own (one line each).
async fn write_lines(lines_in: &mut (impl AsyncWrite + Unpin), lines: Vec<String>) -> io::Result<()> {
    for line in lines {
        write_line(lines_in, line).await?;
    }
    Ok(())
}

/// Writes one message as one line.
async fn write_line(lines_in: &mut (impl AsyncWrite + Unpin), text: String) -> io::Result<()> {
    let mut line = text.into_bytes();
    for byte in &mut line {
        if *byte == b'\n' || *byte == b'\r' {
            *byte = b' ';
        }
    }
    line.push(b'\n');
    lines_in.write_all(&line).await?;
    lines_in.flush().await
}

/// Lines → peer, and the answers to binary frames. Ends at the end of the lines or when the
/// peer is gone, then closes the WebSocket.
async fn outbound<R, Si>(
    mut lines: BufReader<R>,
    mut sink: Si,
    mut control: mpsc::Receiver<&'static str>,
    max_line: usize,
    activity: &Activity,
    turns: Option<&InFlight>,
) where
    R: AsyncRead + Unpin,
    Si: Sink<String> + Unpin,
{
    let mut line = Vec::new();
    let mut control_open = true;
    loop {
        let next = tokio::select! {
            biased;
            answer = control.recv(), if control_open => match answer {
                Some(answer) => Some(answer.to_owned()),
                None => {
                    control_open = false;
                    continue;
                }
            },
            read = read_line(&mut lines, &mut line, max_line) => match read {
                Ok(true) => {
                    if let Some(turns) = turns {
                        turns.agent_line(&line);
                    }
                    Some(String::from_utf8_lossy(&line).into_owned())
                }
                Ok(false) => None,
                Err(_) => None,
            },
        };
        let Some(text) = next else { break };
        activity.touch();
        // While more lines are already buffered, queue the frame without flushing: a burst of
        // updates leaves in few writes.
        let sent = if lines.buffer().is_empty() { sink.send(text).await } else { sink.feed(text).await };
        if sent.is_err() {
            return;
        }
    }
    let _ = sink.close().await;
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use std::pin::Pin;

    use futures_util::stream;
    use tokio::io::AsyncReadExt;

    use super::*;

    fn limits() -> PumpLimits {
        PumpLimits { max_line: 32, idle_timeout: None, answers_patience: Duration::ZERO }
    }

    /// Runs the pump over `incoming` frames and `lines_out` bytes; returns what reached the
    /// peer and what reached the lines.
    async fn run(incoming: Vec<Incoming>, lines_out: &[u8], limits: PumpLimits) -> (Vec<String>, String) {
        let (lines_in, mut lines_in_peer) = tokio::io::duplex(1 << 16);
        let frames = stream::iter(incoming.into_iter().map(Ok::<_, Infallible>));
        let sink = collecting_sink();
        let sent = sink.1.clone();
        pump(frames, sink.0, lines_out, lines_in, limits, std::future::pending(), None).await;
        let mut written = String::new();
        lines_in_peer.read_to_string(&mut written).await.expect("read");
        let sent = sent.lock().expect("lock").clone();
        (sent, written)
    }

    type Sent = Arc<std::sync::Mutex<Vec<String>>>;

    /// A sink that keeps what it is sent.
    fn collecting_sink() -> (Pin<Box<dyn Sink<String, Error = ()>>>, Sent) {
        let sent = Sent::default();
        let sink = futures_util::sink::unfold(sent.clone(), |sent: Sent, text: String| async move {
            sent.lock().expect("lock").push(text);
            Ok::<_, ()>(sent)
        });
        (Box::pin(sink), sent)
    }

    #[tokio::test]
    async fn a_text_frame_becomes_one_line_with_its_line_breaks_as_spaces() {
        let frames = vec![Incoming::Text("{\n  \"a\": 1\r\n}".into()), Incoming::Text("{}".into())];
        let (_, written) = run(frames, b"", limits()).await;
        assert_eq!(written, "{   \"a\": 1  }\n{}\n");
    }

    #[tokio::test]
    async fn a_line_becomes_one_text_frame_and_blank_lines_none() {
        let (sent, _) = run(vec![], b"{\"a\":1}\r\n\n{\"b\":2}\n{\"c\":3}", limits()).await;
        assert_eq!(sent, ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }

    #[tokio::test]
    async fn an_oversized_line_is_skipped_and_the_next_goes_out() {
        let long = format!("{}\n{{\"ok\":true}}\n", "x".repeat(100));
        let (sent, _) = run(vec![], long.as_bytes(), limits()).await;
        assert_eq!(sent, ["{\"ok\":true}"]);
    }

    #[tokio::test]
    async fn a_binary_frame_is_answered_with_an_invalid_request_error_and_the_rest_goes_on() {
        let frames = vec![Incoming::Binary, Incoming::Text("{}".into())];
        let (sent, written) = run(frames, b"", limits()).await;
        assert_eq!(sent, [BINARY_FRAME_ERROR]);
        let error: serde_json::Value = serde_json::from_str(&sent[0]).expect("json");
        assert_eq!(error["error"]["code"], -32600);
        assert!(error["id"].is_null());
        assert_eq!(written, "{}\n");
    }

    #[tokio::test]
    async fn the_peers_close_ends_the_lines_it_writes() {
        let frames = vec![Incoming::Text("1".into()), Incoming::Close, Incoming::Text("2".into())];
        let (_, written) = run(frames, b"", limits()).await;
        assert_eq!(written, "1\n");
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_moving_for_the_idle_timeout_ends_the_pump() {
        let peer_stream = stream::pending::<Result<Incoming, Infallible>>();
        let (lines_out, _keep_open) = tokio::io::duplex(64);
        let (lines_in, _lines_in_peer) = tokio::io::duplex(64);
        let limits =
            PumpLimits { max_line: 32, idle_timeout: Some(Duration::from_secs(30)), answers_patience: Duration::ZERO };
        let started = Instant::now();
        pump(peer_stream, collecting_sink().0, lines_out, lines_in, limits, std::future::pending(), None).await;
        assert!(started.elapsed() >= Duration::from_secs(30), "ended early: {:?}", started.elapsed());
    }
}
