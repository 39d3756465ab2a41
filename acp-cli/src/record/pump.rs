//! Forwarding one direction: bytes go through unchanged and at once; a copy of each line goes
//! to the transcript's queue (cut at [`LINE_CAP`]).

use std::io::{self, Read, Write};
use std::time::Instant;

use super::transcript::{Dir, LINE_CAP, Line, Queue};

/// Bytes read at a time.
const CHUNK: usize = 64 * 1024;

/// Cuts a byte stream into lines, keeping at most [`LINE_CAP`] bytes of each.
#[derive(Debug, Default)]
pub(crate) struct LineSplitter {
    kept: Vec<u8>,
    len: usize,
}

impl LineSplitter {
    /// Feeds bytes; `line(kept, full_len)` for each line completed.
    pub(crate) fn feed(&mut self, mut bytes: &[u8], line: &mut impl FnMut(Vec<u8>, usize)) {
        while !bytes.is_empty() {
            let (part, rest, ended) = match bytes.iter().position(|b| *b == b'\n') {
                Some(at) => (&bytes[..at], &bytes[at + 1..], true),
                None => (bytes, &[][..], false),
            };
            let room = LINE_CAP.saturating_sub(self.kept.len());
            self.kept.extend_from_slice(&part[..part.len().min(room)]);
            self.len += part.len();
            if ended {
                line(std::mem::take(&mut self.kept), std::mem::take(&mut self.len));
            }
            bytes = rest;
        }
    }

    /// The end of the stream: a last line without a newline counts too.
    pub(crate) fn finish(&mut self, line: &mut impl FnMut(Vec<u8>, usize)) {
        if self.len > 0 {
            line(std::mem::take(&mut self.kept), std::mem::take(&mut self.len));
        }
    }
}

/// Milliseconds since `start`.
pub(crate) fn millis(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Copies `from` to `to` until `from` ends, recording each line. When `to` fails (its reader
/// went away), the rest is still read and recorded but no longer written, unless `stop_on_error`.
pub(crate) fn pump(
    mut from: impl Read,
    mut to: impl Write,
    dir: Dir,
    start: Instant,
    queue: &Queue,
    stop_on_error: bool,
) -> io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    let mut splitter = LineSplitter::default();
    let mut record = |bytes: Vec<u8>, len: usize| queue.push(start, Line { t_ms: 0, dir, bytes, len });
    let mut writable = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                splitter.finish(&mut record);
                return Err(e);
            }
        };
        // Recorded before it is forwarded: the peer's answer to a line is read only after the
        // line was written, so the transcript keeps cause before effect across directions.
        splitter.feed(&buf[..n], &mut record);
        if writable && to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
            writable = false;
            if stop_on_error {
                break;
            }
        }
    }
    splitter.finish(&mut record);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cut_across_chunks_and_capped() {
        let mut splitter = LineSplitter::default();
        let mut lines = Vec::new();
        let mut push = |kept: Vec<u8>, len: usize| lines.push((kept.len(), len));
        splitter.feed(b"ab", &mut push);
        splitter.feed(b"c\n\nde", &mut push);
        splitter.feed(&vec![b'x'; LINE_CAP + 5], &mut push);
        splitter.feed(b"\nlast", &mut push);
        splitter.finish(&mut push);
        assert_eq!(lines, [(3, 3), (0, 0), (LINE_CAP, LINE_CAP + 7), (4, 4)]);
    }
}
