//! The scripted agent's side of the socket: every line both ways is timed and kept as the
//! scenario's transcript (bounded), and every message the client sent is parsed and kept for
//! the judges.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::check::report::{Dir, WireLine};

/// The longest line read from the client; a longer one is cut and counted as malformed.
const MAX_LINE: u64 = 8 * 1024 * 1024;
/// Lines kept in a transcript; later ones are counted, not kept.
const MAX_TRANSCRIPT: usize = 600;
/// Characters of a line kept in a transcript.
const MAX_SHOWN: usize = 2000;
/// Messages of the client kept for the judges.
const MAX_MESSAGES: usize = 2000;

/// What the client sent, in order: parsed messages, and lines that were not JSON-RPC.
#[derive(Debug, Default, Clone)]
pub(crate) struct Log {
    /// The transcript, both ways.
    pub(crate) lines: Vec<WireLine>,
    /// Lines beyond [`MAX_TRANSCRIPT`].
    pub(crate) dropped: usize,
    /// The client's messages that parsed as JSON objects.
    pub(crate) messages: Vec<Value>,
    /// The client's lines that did not parse as a JSON object (cut to [`MAX_SHOWN`]).
    pub(crate) malformed: Vec<String>,
}

impl Log {
    fn push(&mut self, dir: Dir, at: Duration, line: &str) {
        if self.lines.len() >= MAX_TRANSCRIPT {
            self.dropped += 1;
            return;
        }
        let mut line = line.to_owned();
        if line.len() > MAX_SHOWN {
            let mut cut = MAX_SHOWN;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        self.lines.push(WireLine { dir, at, line });
    }
}

/// The agent's end of one scenario's connection.
pub(crate) struct Wire {
    writer: UnixStream,
    incoming: Receiver<Value>,
    start: Instant,
    log: Arc<Mutex<Log>>,
    next_id: u64,
    /// The client's output ended (it closed the agent's stdin, or exited).
    pub(crate) eof: bool,
}

impl Wire {
    /// Starts reading `stream` on a thread of its own; `start` is the scenario's time zero.
    pub(crate) fn new(stream: UnixStream, start: Instant) -> std::io::Result<Wire> {
        Wire::with_batches(stream, start, false)
    }

    /// Like [`Wire::new`]; with `batches` a JSON array (a batch, v2) is a message too, not a
    /// malformed line.
    pub(crate) fn with_batches(stream: UnixStream, start: Instant, batches: bool) -> std::io::Result<Wire> {
        let reader = stream.try_clone()?;
        let log = Arc::new(Mutex::new(Log::default()));
        let (sender, incoming) = sync_channel(256);
        let shared = log.clone();
        thread::Builder::new()
            .name("check-wire".into())
            .spawn(move || read_lines(reader, start, &shared, &sender, batches))?;
        Ok(Wire { writer: stream, incoming, start, log, next_id: 0, eof: false })
    }

    /// A fresh request id, for a request sent by hand (in a batch).
    #[cfg_attr(not(feature = "unstable_protocol_v2"), allow(dead_code))]
    pub(crate) fn next_id(&mut self) -> Value {
        self.next_id += 1;
        Value::from(self.next_id)
    }

    /// Sends one message (a write error means the client is gone; its end of file follows).
    pub(crate) fn send(&mut self, message: &Value) {
        let line = message.to_string();
        self.lock().push(Dir::A2c, self.start.elapsed(), &line);
        let _ = self.writer.write_all(format!("{line}\n").as_bytes());
    }

    /// Sends a request; returns its id.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = Value::from(self.next_id);
        self.send(&serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a notification.
    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        self.send(&serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Answers a request of the client.
    pub(crate) fn respond(&mut self, id: &Value, result: Value) {
        self.send(&serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Answers a request of the client with an error.
    pub(crate) fn respond_error(&mut self, id: &Value, code: i64, message: &str) {
        self.send(&serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}));
    }

    /// The next message of the client, or `None` at `until` or at its end of file.
    pub(crate) fn next(&mut self, until: Instant) -> Option<Value> {
        if self.eof {
            return None;
        }
        match self.incoming.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(message) => Some(message),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                None
            }
        }
    }

    /// Closes the connection both ways (the agent "dies").
    pub(crate) fn close(&mut self) {
        let _ = self.writer.shutdown(std::net::Shutdown::Both);
    }

    /// Time since the scenario started.
    pub(crate) fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// A copy of what was logged so far.
    pub(crate) fn log(&self) -> Log {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        self.close();
    }
}

/// The reader thread: logs each line, hands each JSON object (and, with `batches`, each
/// array) to the scenario.
fn read_lines(stream: UnixStream, start: Instant, log: &Mutex<Log>, sender: &SyncSender<Value>, batches: bool) {
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match (&mut reader).take(MAX_LINE).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let complete = buf.last() == Some(&b'\n');
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        let parsed = if complete || (buf.len() as u64) < MAX_LINE {
            serde_json::from_str::<Value>(line).ok().filter(|v| v.is_object() || (batches && v.is_array()))
        } else {
            None
        };
        {
            let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
            log.push(Dir::C2a, start.elapsed(), line);
            match &parsed {
                Some(message) if log.messages.len() < MAX_MESSAGES => log.messages.push(message.clone()),
                Some(_) => {}
                None if log.malformed.len() < 16 => log.malformed.push(line.chars().take(MAX_SHOWN).collect()),
                None => {}
            }
        }
        if let Some(message) = parsed
            && sender.send(message).is_err()
        {
            return;
        }
    }
}
