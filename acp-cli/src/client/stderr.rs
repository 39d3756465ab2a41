//! The agent's stderr, read with bounded memory: each line keeps at most [`LINE_MAX`] bytes
//! (the rest is counted and dropped, the line ends with `… (N bytes cut)`), and the tail kept
//! for the report when the agent dies holds at most [`TAIL_LINES`] lines and [`TAIL_BYTES`]
//! bytes. So an agent writing one endless line costs the client a fixed amount of memory.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, PoisonError};

use super::UiEvent;

/// The bytes of one stderr line that are kept; the rest of the line is dropped.
pub(crate) const LINE_MAX: usize = 8 * 1024;
/// Lines of stderr kept for the report when the agent dies.
pub(crate) const TAIL_LINES: usize = 40;
/// Bytes of stderr kept for that report.
pub(crate) const TAIL_BYTES: usize = 16 * 1024;

/// The last lines, bounded in lines and bytes.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    lines: VecDeque<String>,
    bytes: usize,
}

impl Tail {
    /// Adds a line, dropping the oldest ones beyond the bounds.
    pub(crate) fn push(&mut self, line: String) {
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > TAIL_LINES || self.bytes > TAIL_BYTES {
            match self.lines.pop_front() {
                Some(old) => self.bytes -= old.len(),
                None => break,
            }
        }
    }

    /// The lines kept, oldest first.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.lines.iter().cloned().collect()
    }
}

/// Splits a byte stream into lines, keeping at most [`LINE_MAX`] bytes of each.
#[derive(Debug, Default)]
pub(crate) struct LineCutter {
    kept: Vec<u8>,
    cut: u64,
}

impl LineCutter {
    /// Takes the next bytes of the stream; calls `emit` with each line they complete.
    pub(crate) fn feed(&mut self, mut bytes: &[u8], emit: &mut impl FnMut(String)) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            self.keep(&bytes[..end]);
            emit(self.take_line());
            bytes = &bytes[end + 1..];
        }
        self.keep(bytes);
    }

    /// The end of the stream: emits the unfinished line, if any.
    pub(crate) fn end(&mut self, emit: &mut impl FnMut(String)) {
        if !self.kept.is_empty() || self.cut > 0 {
            emit(self.take_line());
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = LINE_MAX.saturating_sub(self.kept.len()).min(bytes.len());
        self.kept.extend_from_slice(&bytes[..room]);
        self.cut += (bytes.len() - room) as u64;
    }

    fn take_line(&mut self) -> String {
        let mut line = String::from_utf8_lossy(&self.kept).trim_end_matches('\r').to_owned();
        if self.cut > 0 {
            line.push_str(&format!("… ({} bytes cut)", self.cut));
        }
        self.kept.clear();
        self.cut = 0;
        line
    }
}

/// Reads `stderr` to its end: each line goes into `tail`, and to `ui` as
/// [`UiEvent::Stderr`] when `show` is set (blocking while the UI queue is full, which slows
/// the agent down rather than growing a queue).
pub(crate) fn drain(mut stderr: impl Read, tail: Arc<Mutex<Tail>>, show: bool, ui: SyncSender<UiEvent>) {
    let mut cutter = LineCutter::default();
    let mut buf = vec![0u8; 8192];
    let mut ui = Some(ui);
    let mut emit = |line: String| {
        if show
            && let Some(sender) = &ui
            && sender.send(UiEvent::Stderr(line.clone())).is_err()
        {
            ui = None;
        }
        tail.lock().unwrap_or_else(PoisonError::into_inner).push(line);
    };
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => cutter.feed(&buf[..n], &mut emit),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    cutter.end(&mut emit);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]]) -> Vec<String> {
        let mut cutter = LineCutter::default();
        let mut out = Vec::new();
        let mut emit = |l: String| out.push(l);
        for chunk in chunks {
            cutter.feed(chunk, &mut emit);
        }
        cutter.end(&mut emit);
        out
    }

    #[test]
    fn lines_are_split_across_chunks() {
        assert_eq!(lines(&[b"one\ntw", b"o\r\nthree"]), ["one", "two", "three"]);
        assert_eq!(lines(&[b"a\n\n"]), ["a", ""]);
        assert!(lines(&[b""]).is_empty());
    }

    #[test]
    fn a_long_line_is_cut_and_says_so() {
        let long = vec![b'x'; LINE_MAX + 100];
        let out = lines(&[&long, &long, b"\nnext\n"]);
        assert_eq!(out.len(), 2);
        assert!(out[0].starts_with(&"x".repeat(LINE_MAX)));
        assert!(out[0].ends_with(&format!("… ({} bytes cut)", LINE_MAX + 200)), "{}", &out[0][LINE_MAX..]);
        assert_eq!(out[1], "next");
    }

    #[test]
    fn the_tail_is_bounded_in_lines_and_bytes() {
        let mut tail = Tail::default();
        for i in 0..100 {
            tail.push(format!("line {i}"));
        }
        assert_eq!(tail.lines().len(), TAIL_LINES);
        assert_eq!(tail.lines()[TAIL_LINES - 1], "line 99");
        for _ in 0..10 {
            tail.push("y".repeat(LINE_MAX));
        }
        let kept: usize = tail.lines().iter().map(String::len).sum();
        assert!((LINE_MAX..=TAIL_BYTES).contains(&kept), "{kept}");
    }
}
