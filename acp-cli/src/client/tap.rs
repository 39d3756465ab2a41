//! A tap on the byte streams between the client and the agent, for `--format json` and
//! `--quiet` (see [`super::Output`]).
//!
//! [`Tap::wrap`] puts a [`TapReader`] around what the connection reads from the agent and a
//! [`TapWriter`] around where it writes; both split the bytes on newlines and hand each line
//! to the tap, which writes it as one NDJSON record (`--format json`) and feeds it to the
//! [`Summary`]. It works on any transport: an agent's pipes or the socket pair of
//! `--connect`.
//!
//! A line the client writes is recorded before it is written, and a line the agent writes as
//! soon as it is read (before the connection parses it), so a request always precedes its
//! answer in the output. A line longer than the connection's frame limit is recorded cut at
//! that limit, with `"truncated": true` (the memory held per direction is that limit).

use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::Value;
use serde_json::value::RawValue;

use super::summary::{Dir, Summary, object};

/// The shared end of the tap: where records go and what they add up to.
#[derive(Clone)]
pub(crate) struct Tap {
    inner: Arc<Mutex<State>>,
}

struct State {
    /// Where frame records are written (`--format json`); `None`: not written.
    out: Option<Box<dyn Write + Send>>,
    start: Instant,
    summary: Summary,
    /// Set once the run is over: later lines are not recorded.
    closed: bool,
}

impl Tap {
    /// A tap writing frame records to `out` (or only summing them up).
    pub(crate) fn new(out: Option<Box<dyn Write + Send>>) -> Tap {
        let state = State { out, start: Instant::now(), summary: Summary::default(), closed: false };
        Tap { inner: Arc::new(Mutex::new(state)) }
    }

    /// The connection's writer and reader, tapped; lines are kept up to `max_line` bytes.
    pub(crate) fn wrap<W: Write, R: Read>(
        &self,
        writer: W,
        reader: R,
        max_line: usize,
    ) -> (TapWriter<W>, TapReader<R>) {
        let writer = TapWriter { inner: writer, lines: Lines::new(max_line), tap: self.clone() };
        let reader = TapReader { inner: reader, lines: Lines::new(max_line), tap: self.clone() };
        (writer, reader)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records one line that went `dir`.
    fn record(&self, dir: Dir, line: &[u8], truncated: bool) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let mut state = self.state();
        if state.closed {
            return;
        }
        let t_ms = state.start.elapsed().as_secs_f64() * 1000.0;
        let json = if truncated { None } else { std::str::from_utf8(line).ok().filter(|text| is_json(text)) };
        if let Some(text) = json
            && let Ok(msg) = serde_json::from_str::<Value>(text)
        {
            state.summary.observe(dir, &msg);
        }
        if state.out.is_none() {
            return;
        }
        let mut fields = vec![
            ("type", "\"frame\"".to_owned()),
            ("dir", format!("\"{}\"", dir.as_str())),
            ("t_ms", format!("{t_ms:.3}")),
        ];
        match json {
            Some(text) => fields.push(("msg", text.trim().to_owned())),
            None => fields.push(("raw", Value::from(String::from_utf8_lossy(line)).to_string())),
        }
        if truncated {
            fields.push(("truncated", "true".to_owned()));
        }
        state.write_line(&object(&fields));
    }

    /// Ends the tap: nothing more is recorded. With a frame output, writes the summary record
    /// (with `exit`) there. Returns the assistant's text.
    pub(crate) fn finish(&self, exit: u8) -> String {
        let mut state = self.state();
        state.closed = true;
        if state.out.is_some() {
            let record = state.summary.record(exit);
            state.write_line(&record);
        }
        state.summary.text().to_owned()
    }
}

impl State {
    /// Writes a record; a failed output (a closed stdout) is dropped, the run goes on.
    fn write_line(&mut self, line: &str) {
        if let Some(out) = &mut self.out
            && (writeln!(out, "{line}").is_err() || out.flush().is_err())
        {
            self.out = None;
        }
    }
}

/// Whether `text` is one JSON value (checked without building it).
fn is_json(text: &str) -> bool {
    serde_json::from_str::<&RawValue>(text.trim()).is_ok()
}

/// Splits a byte stream into lines of at most `max` bytes (longer ones are cut).
struct Lines {
    buf: Vec<u8>,
    max: usize,
    truncated: bool,
}

impl Lines {
    fn new(max: usize) -> Lines {
        Lines { buf: Vec::new(), max, truncated: false }
    }

    /// Takes `bytes` in; `emit` gets each finished line (without its newline) and whether it
    /// was cut.
    fn feed(&mut self, mut bytes: &[u8], mut emit: impl FnMut(&[u8], bool)) {
        while !bytes.is_empty() {
            let (part, ended) = match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            let room = self.max.saturating_sub(self.buf.len());
            self.buf.extend_from_slice(&part[..part.len().min(room)]);
            self.truncated |= part.len() > room;
            if ended {
                emit(&self.buf, self.truncated);
                self.buf.clear();
                self.truncated = false;
                bytes = &bytes[part.len() + 1..];
            } else {
                bytes = &[];
            }
        }
    }

    /// The last line, when the stream ended without a newline.
    fn end(&mut self, emit: impl FnOnce(&[u8], bool)) {
        if !self.buf.is_empty() {
            emit(&self.buf, self.truncated);
            self.buf.clear();
        }
    }
}

/// What the connection writes to the agent, recorded (`c2a`) before it is written.
pub(crate) struct TapWriter<W> {
    inner: W,
    lines: Lines,
    tap: Tap,
}

impl<W: Write> Write for TapWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let tap = &self.tap;
        self.lines.feed(buf, |line, cut| tap.record(Dir::C2a, line, cut));
        self.inner.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// What the connection reads from the agent, recorded (`a2c`) as it is read.
pub(crate) struct TapReader<R> {
    inner: R,
    lines: Lines,
    tap: Tap,
}

impl<R: Read> Read for TapReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let tap = &self.tap;
        if n == 0 {
            self.lines.end(|line, cut| tap.record(Dir::A2c, line, cut));
        } else {
            self.lines.feed(&buf[..n], |line, cut| tap.record(Dir::A2c, line, cut));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shared buffer to write records into.
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn records(buf: &Buf) -> Vec<Value> {
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    #[test]
    fn lines_split_across_reads_long_ones_cut_and_non_json_raw() {
        let buf = Buf::default();
        let tap = Tap::new(Some(Box::new(buf.clone())));
        let input: &[u8] = b"{\"id\":1,\n\"a\"  :  [1,2]}\nnot json\n\n0123456789abcdef\n{\"x\":1}";
        let (_, mut reader) = tap.wrap(Vec::new(), input, 8);
        let mut sink = Vec::new();
        let mut small = [0u8; 5];
        loop {
            let n = reader.read(&mut small).unwrap();
            sink.extend_from_slice(&small[..n]);
            if n == 0 {
                break;
            }
        }
        assert_eq!(sink, input, "bytes pass unchanged");
        tap.finish(7);
        let got = records(&buf);
        // `{"id":1,` is not JSON; the second line is cut at 8 bytes.
        assert_eq!(got[0]["raw"], "{\"id\":1,");
        assert_eq!(got[1]["raw"], "\"a\"  :  ");
        assert_eq!(got[1]["truncated"], true);
        assert_eq!(got[2]["raw"], "not json");
        assert_eq!(got[3]["truncated"], true);
        assert_eq!(got[4]["msg"], serde_json::json!({"x": 1}));
        assert!(got.iter().take(5).all(|r| r["dir"] == "a2c" && r["type"] == "frame"));
        assert_eq!(got[5]["type"], "summary");
        assert_eq!(got[5]["exit"], 7);
        assert_eq!(got.len(), 6);
    }

    #[test]
    fn written_lines_keep_the_frame_text_and_nothing_is_recorded_after_finish() {
        let buf = Buf::default();
        let tap = Tap::new(Some(Box::new(buf.clone())));
        let (mut writer, _) = tap.wrap(Vec::new(), io::empty(), 1 << 20);
        writer.write_all(b"{\"b\":1, \"a\":2}\n{\"id\"").unwrap();
        writer.write_all(b":3}\n").unwrap();
        tap.finish(0);
        writer.write_all(b"{\"late\":1}\n").unwrap();
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("{\"type\":\"frame\",\"dir\":\"c2a\",\"t_ms\":"), "{}", lines[0]);
        assert!(lines[0].ends_with(",\"msg\":{\"b\":1, \"a\":2}}"), "{}", lines[0]);
        assert_eq!(records(&buf)[1]["msg"]["id"], 3);
        assert_eq!(lines.len(), 3);
        assert_eq!(writer.inner, b"{\"b\":1, \"a\":2}\n{\"id\":3}\n{\"late\":1}\n");
    }
}
