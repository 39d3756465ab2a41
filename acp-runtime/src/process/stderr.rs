//! An agent's stderr, kept with bounded memory: the last bytes in a [`StderrTail`], and lines
//! cut at [`LINE_MAX`] bytes by a [`LineCutter`] (so one endless line costs a fixed amount).

use std::collections::VecDeque;

/// The bytes of one stderr line that are kept; the rest of the line is counted and dropped,
/// and the line ends with `… (N bytes cut)`.
pub const LINE_MAX: usize = 8 * 1024;

/// The last lines of a stream, at most `capacity` bytes of them (but always the newest line),
/// each cut at [`LINE_MAX`] bytes by a [`LineCutter`], plus the line still being written.
#[derive(Debug)]
pub struct StderrTail {
    cutter: LineCutter,
    lines: VecDeque<String>,
    bytes: usize,
    capacity: usize,
}

impl StderrTail {
    /// An empty tail keeping at most `capacity` bytes of lines.
    pub fn new(capacity: usize) -> StderrTail {
        StderrTail { cutter: LineCutter::default(), lines: VecDeque::new(), bytes: 0, capacity }
    }

    /// Takes the next bytes of the stream.
    pub fn push(&mut self, data: &[u8]) {
        let mut done = Vec::new();
        self.cutter.feed(data, &mut |line| done.push(line));
        done.into_iter().for_each(|line| self.keep(line));
    }

    /// The end of the stream: the unfinished line becomes a line.
    pub fn end(&mut self) {
        let mut done = Vec::new();
        self.cutter.end(&mut |line| done.push(line));
        done.into_iter().for_each(|line| self.keep(line));
    }

    fn keep(&mut self, line: String) {
        self.bytes += line.len() + 1;
        self.lines.push_back(line);
        while self.bytes > self.capacity && self.lines.len() > 1 {
            if let Some(old) = self.lines.pop_front() {
                self.bytes -= old.len() + 1;
            }
        }
    }

    /// The lines kept, each with its line end, then the line still being written.
    pub fn text(&self) -> String {
        let mut text = String::with_capacity(self.bytes + self.cutter.kept.len());
        for line in &self.lines {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&String::from_utf8_lossy(&self.cutter.kept));
        text
    }

    /// The last `max` lines kept (without the one still being written).
    pub fn lines(&self, max: usize) -> Vec<String> {
        self.lines.iter().skip(self.lines.len().saturating_sub(max)).cloned().collect()
    }
}

/// Splits a byte stream into lines, keeping at most [`LINE_MAX`] bytes of each (a trailing
/// `\r` is dropped).
#[derive(Debug, Default)]
pub struct LineCutter {
    kept: Vec<u8>,
    cut: u64,
}

impl LineCutter {
    /// Takes the next bytes of the stream; calls `emit` with each line they complete.
    pub fn feed(&mut self, mut bytes: &[u8], emit: &mut impl FnMut(String)) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            self.keep(&bytes[..end]);
            emit(self.take_line());
            bytes = &bytes[end + 1..];
        }
        self.keep(bytes);
    }

    /// The end of the stream: emits the unfinished line, if any.
    pub fn end(&mut self, emit: &mut impl FnMut(String)) {
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
    fn the_tail_keeps_the_last_lines_and_the_one_being_written() {
        let mut tail = StderrTail::new(12);
        tail.push(b"hello\nwor");
        assert_eq!(tail.text(), "hello\nwor");
        tail.push(b"ld\nagain\n");
        // 18 bytes of lines for a capacity of 12: the oldest went.
        assert_eq!(tail.text(), "world\nagain\n");
        assert_eq!(tail.lines(1), ["again"]);
        tail.push(b"unfinished");
        tail.end();
        assert_eq!(tail.lines(10), ["unfinished"]);
    }

    #[test]
    fn an_endless_line_is_kept_cut() {
        let mut tail = StderrTail::new(64);
        for _ in 0..100 {
            tail.push(&[b'x'; 4096]);
        }
        tail.push(b"\n");
        let lines = tail.lines(1);
        assert!(lines[0].ends_with(&format!("… ({} bytes cut)", 100 * 4096 - LINE_MAX)), "{}", &lines[0][LINE_MAX..]);
    }

    #[test]
    fn the_tail_is_bounded_in_lines_and_bytes() {
        let mut tail = StderrTail::new(16 * 1024);
        for i in 0..100 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        assert_eq!(tail.lines(1000).len(), 100);
        let lines = tail.lines(40);
        assert_eq!(lines.len(), 40);
        assert_eq!(lines[39], "line 99");
        for _ in 0..10 {
            tail.push(&[b'y'; LINE_MAX]);
            tail.push(b"\n");
        }
        let kept: usize = tail.lines(40).iter().map(String::len).sum();
        assert!((LINE_MAX..=16 * 1024).contains(&kept), "{kept}");
    }
}
