//! Newline-delimited framing.
//!
//! ACP's stdio transport sends one JSON-RPC message per line. The [`Framer`] turns a byte
//! stream, chunked any way at all, into those lines:
//!
//! * `\n` (LF) ends a frame. Only the byte `0x0A` splits: U+2028/U+2029 and escaped `\n` inside
//!   JSON strings are ordinary content.
//! * One `\r` right before the LF is stripped, also when the CR and the LF arrive in different
//!   chunks. A CR anywhere else stays in the frame.
//! * Blank lines (empty, or only spaces, tabs and CRs) are skipped without error: peers use
//!   them as keep-alives.
//! * A final line without LF at end of input is still a frame (its trailing CR is stripped as
//!   if the LF had come).
//! * A line longer than `max_frame_len` (measured after the CR strip) is reported as
//!   [`FrameEvent::Oversized`] in its position among the frames, then skipped up to its LF
//!   **without being buffered**: memory stays at most `max_frame_len + 1` bytes whatever the
//!   peer sends. A line of exactly `max_frame_len` bytes passes.
//!
//! Frames that lie entirely inside one input chunk are handed out as slices of that chunk
//! (no copy, no allocation); only a line split across chunks is assembled in the internal
//! buffer, which is reused.
//!
//! # Invariants
//! * `buffered() <= max_frame_len + 1` (the `+ 1` is a trailing CR whose LF has not arrived).
//! * Every byte consumed is accounted for exactly once:
//!   `consumed == frame_bytes + newline_bytes + blank_bytes + skipped_bytes + buffered()`
//!   (see [`FramerStats`]). The fuzz target `framer` checks this.
//! * A frame never contains a LF and is never longer than `max_frame_len`.
//!
//! The unit test `tests::module_docs_example` frames a CRLF frame, a blank line, a frame split
//! across chunks and an oversized line.
//!
//! ## Internal
//!
//! A [`Connection`](crate::Connection) frames its own input (and the wire checker and the
//! observer theirs), so an application never needs this: it is not part of the API. Feature
//! `test-exports` makes it public for the `framer` fuzz target (proptests) only.

use std::ops::ControlFlow;

use crate::swar;

/// The default maximum frame length: 64 MiB.
pub const DEFAULT_MAX_FRAME_LEN: usize = 64 * 1024 * 1024;

/// What the framer found, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameEvent<'a> {
    /// A complete line, without its LF (and without the CR before it). Never empty, never
    /// longer than the limit.
    Frame(&'a [u8]),
    /// A line longer than the limit. `len` is its length when its LF had already arrived, or
    /// the number of bytes seen so far (a lower bound) when it was detected before the LF. The
    /// rest of the line is skipped.
    Oversized {
        /// Length of the line, or a lower bound of it.
        len: u64,
    },
}

/// Byte accounting of a [`Framer`], cumulative since it was created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FramerStats {
    /// Bytes consumed by `push` so far.
    pub consumed: u64,
    /// Frames handed out.
    pub frames: u64,
    /// Bytes inside the frames handed out.
    pub frame_bytes: u64,
    /// LF bytes ending frames or oversized lines, plus the CRs stripped before them.
    pub newline_bytes: u64,
    /// Blank lines skipped.
    pub blank_lines: u64,
    /// Bytes of blank lines, terminators included.
    pub blank_bytes: u64,
    /// Oversized lines reported.
    pub oversized: u64,
    /// Bytes of oversized lines discarded (their terminators count as `newline_bytes`).
    pub skipped_bytes: u64,
}

/// A newline-delimited framer with a bounded buffer. See the [module docs](self).
#[derive(Debug)]
pub struct Framer {
    /// The start of a line whose LF has not arrived yet. Invariant: `len <= max + 1`.
    buf: Vec<u8>,
    max: usize,
    /// Inside an oversized line that was already reported: discard up to the next LF.
    skipping: bool,
    stats: FramerStats,
}

impl Default for Framer {
    fn default() -> Self {
        Framer::new(DEFAULT_MAX_FRAME_LEN)
    }
}

impl Framer {
    /// A framer that accepts lines of up to `max_frame_len` bytes (at least 1).
    pub fn new(max_frame_len: usize) -> Framer {
        Framer { buf: Vec::new(), max: max_frame_len.max(1), skipping: false, stats: FramerStats::default() }
    }

    /// The maximum frame length.
    pub fn max_frame_len(&self) -> usize {
        self.max
    }

    /// Bytes of an incomplete line held in the buffer.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Byte accounting so far.
    pub fn stats(&self) -> FramerStats {
        self.stats
    }

    /// Feeds `data`, calling `sink` for every frame and oversize report in stream order.
    ///
    /// `sink` may return `ControlFlow::Break(())` to stop right after the event it was given:
    /// `push` then returns the number of bytes consumed so far (just past the LF that ended
    /// that line) and the caller feeds the rest again later. Otherwise all of `data` is
    /// consumed (an incomplete last line goes into the buffer) and `data.len()` is returned.
    pub fn push(&mut self, data: &[u8], mut sink: impl FnMut(FrameEvent<'_>) -> ControlFlow<()>) -> usize {
        let mut pos = 0;
        while pos < data.len() {
            let rest = &data[pos..];
            let Some(nl) = find_newline(rest) else {
                self.push_partial(rest, &mut sink);
                pos = data.len();
                break;
            };
            pos += nl + 1;
            let flow = if self.skipping {
                self.skipping = false;
                self.stats.skipped_bytes += nl as u64;
                self.stats.newline_bytes += 1;
                ControlFlow::Continue(())
            } else {
                self.line(&rest[..nl], &mut sink)
            };
            if flow.is_break() {
                break;
            }
        }
        self.stats.consumed += pos as u64;
        debug_assert!(self.buf.len() <= self.max + 1);
        pos
    }

    /// Signals end of input: a final line without LF becomes a frame. The framer is reset and
    /// may be reused.
    pub fn finish(&mut self, mut sink: impl FnMut(FrameEvent<'_>) -> ControlFlow<()>) {
        if self.skipping {
            self.skipping = false;
            return;
        }
        if self.buf.is_empty() {
            return;
        }
        let mut line = std::mem::take(&mut self.buf);
        let cr = line.last() == Some(&b'\r');
        if cr {
            line.pop();
            self.stats.newline_bytes += 1;
        }
        if is_blank(&line) {
            self.stats.blank_lines += 1;
            self.stats.blank_bytes += line.len() as u64;
        } else {
            // At most max + 1 bytes were buffered, the + 1 only for a trailing CR.
            debug_assert!(line.len() <= self.max);
            self.stats.frames += 1;
            self.stats.frame_bytes += line.len() as u64;
            let _ = sink(FrameEvent::Frame(&line));
        }
        line.clear();
        self.buf = line;
    }

    /// A line whose LF is in the current chunk; `tail` is its part inside the chunk.
    fn line(&mut self, tail: &[u8], sink: &mut impl FnMut(FrameEvent<'_>) -> ControlFlow<()>) -> ControlFlow<()> {
        let total = self.buf.len() + tail.len();
        let last = tail.last().or(self.buf.last()).copied();
        let cr = last == Some(b'\r');
        let len = total - usize::from(cr);
        self.stats.newline_bytes += 1 + u64::from(cr);
        if len > self.max {
            self.stats.oversized += 1;
            self.stats.skipped_bytes += len as u64;
            self.buf.clear();
            return sink(FrameEvent::Oversized { len: len as u64 });
        }
        let line: &[u8] = if self.buf.is_empty() {
            &tail[..len]
        } else {
            self.buf.extend_from_slice(tail);
            self.buf.truncate(len);
            &self.buf
        };
        let flow = if is_blank(line) {
            self.stats.blank_lines += 1;
            // The terminator was counted as newline bytes; count the content here.
            self.stats.blank_bytes += len as u64;
            ControlFlow::Continue(())
        } else {
            self.stats.frames += 1;
            self.stats.frame_bytes += len as u64;
            sink(FrameEvent::Frame(line))
        };
        self.buf.clear();
        flow
    }

    /// Bytes of a line whose LF has not arrived.
    fn push_partial(&mut self, rest: &[u8], sink: &mut impl FnMut(FrameEvent<'_>) -> ControlFlow<()>) {
        if self.skipping {
            self.stats.skipped_bytes += rest.len() as u64;
            return;
        }
        let total = self.buf.len() + rest.len();
        let ends_with_cr = rest.last() == Some(&b'\r');
        // A trailing CR may still be stripped, so it does not count against the limit yet.
        if total - usize::from(ends_with_cr) > self.max {
            self.stats.oversized += 1;
            self.stats.skipped_bytes += total as u64;
            self.buf.clear();
            self.skipping = true;
            // The line is reported now, in its position; a Break changes nothing more here.
            let _ = sink(FrameEvent::Oversized { len: total as u64 });
            return;
        }
        self.buf.extend_from_slice(rest);
    }
}

/// Spaces, tabs and CRs only (or nothing).
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Index of the first LF, scanning eight bytes at a time.
pub(crate) fn find_newline(data: &[u8]) -> Option<usize> {
    let (words, tail) = data.as_chunks::<8>();
    for (n, word) in words.iter().enumerate() {
        let found = swar::has_zero(swar::load_u64(word) ^ swar::splat(b'\n'));
        if found != 0 {
            return Some(n * 8 + swar::first_index(found));
        }
    }
    let base = words.len() * 8;
    tail.iter().position(|&b| b == b'\n').map(|i| base + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example that the module docs describe (it was their doctest while the module was
    /// public).
    #[test]
    fn module_docs_example() {
        use super::{FrameEvent, Framer};
        let mut framer = Framer::new(16);
        let mut frames = Vec::new();
        for chunk in [&b"{\"a\":1}\r"[..], b"\n\n{\"b\"", b":2}\n", b"0123456789abcdefXYZ\n"] {
            framer.push(chunk, |ev| {
                frames.push(match ev {
                    FrameEvent::Frame(f) => String::from_utf8_lossy(f).into_owned(),
                    FrameEvent::Oversized { len } => format!("<oversized {len}>"),
                });
                std::ops::ControlFlow::Continue(())
            });
        }
        assert_eq!(frames, ["{\"a\":1}", "{\"b\":2}", "<oversized 19>"]);
    }

    #[derive(Debug, PartialEq, Eq, Clone)]
    enum Out {
        F(Vec<u8>),
        Big(u64),
    }

    fn run(framer: &mut Framer, chunks: &[&[u8]], eof: bool) -> Vec<Out> {
        let mut out = Vec::new();
        let mut sink = |ev: FrameEvent<'_>| {
            out.push(match ev {
                FrameEvent::Frame(f) => Out::F(f.to_vec()),
                FrameEvent::Oversized { len } => Out::Big(len),
            });
            ControlFlow::Continue(())
        };
        for c in chunks {
            assert_eq!(framer.push(c, &mut sink), c.len());
        }
        if eof {
            framer.finish(&mut sink);
        }
        out
    }

    fn frames(max: usize, input: &[u8]) -> Vec<Out> {
        run(&mut Framer::new(max), &[input], true)
    }

    fn f(s: &str) -> Out {
        Out::F(s.as_bytes().to_vec())
    }

    fn check_accounting(framer: &Framer) {
        let s = framer.stats();
        assert_eq!(
            s.consumed,
            s.frame_bytes + s.newline_bytes + s.blank_bytes + s.skipped_bytes + framer.buffered() as u64,
            "{s:?} buffered={}",
            framer.buffered()
        );
    }

    #[test]
    fn lf_ends_a_frame() {
        assert_eq!(frames(100, b"a\nbc\n"), [f("a"), f("bc")]);
    }

    #[test]
    fn cr_before_lf_is_stripped_even_across_chunks() {
        let mut fr = Framer::new(100);
        assert_eq!(run(&mut fr, &[b"ab\r", b"\ncd\r\n"], false), [f("ab"), f("cd")]);
        let mut fr = Framer::new(100);
        assert_eq!(run(&mut fr, &[b"ab", b"\r", b"\n"], false), [f("ab")]);
        // Only one CR, and only right before the LF.
        assert_eq!(frames(100, b"a\rb\r\r\n"), [f("a\rb\r")]);
    }

    #[test]
    fn blank_lines_are_skipped() {
        let mut fr = Framer::new(100);
        assert_eq!(run(&mut fr, &[b"\n\r\n  \t\n{}\n\n"], true), [f("{}")]);
        assert_eq!(fr.stats().blank_lines, 4);
        check_accounting(&fr);
    }

    #[test]
    fn final_line_without_lf_is_a_frame() {
        assert_eq!(frames(100, b"a\nlast"), [f("a"), f("last")]);
        assert_eq!(frames(100, b"a\nlast\r"), [f("a"), f("last")]);
        assert_eq!(frames(100, b"a\n  "), [f("a")]);
        let mut fr = Framer::new(100);
        assert_eq!(run(&mut fr, &[b"x"], false), []);
        assert_eq!(fr.buffered(), 1);
    }

    #[test]
    fn rechunking_gives_the_same_frames() {
        let input = "{\"t\":\"h\u{e9}llo \u{1F600}\"}\r\n\n{\"x\":\"\u{2028}\"}\nthis-line-is-way-too-long\ntail";
        let bytes = input.as_bytes();
        let want = frames(20, bytes);
        assert_eq!(want, [f("{\"t\":\"h\u{e9}llo \u{1F600}\"}"), f("{\"x\":\"\u{2028}\"}"), Out::Big(25), f("tail")]);
        // One byte at a time, which splits every UTF-8 character, and every two-way split.
        let ones: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(shape(&run(&mut Framer::new(20), &ones, true)), shape(&want));
        for cut in 0..=bytes.len() {
            let mut fr = Framer::new(20);
            let (a, b) = bytes.split_at(cut);
            let got = run(&mut fr, &[a, b], true);
            // Oversize detected before its LF reports a lower bound; compare shapes only there.
            assert_eq!(shape(&got), shape(&want), "cut at {cut}");
            check_accounting(&fr);
        }
    }

    fn shape(v: &[Out]) -> Vec<Out> {
        v.iter()
            .map(|o| match o {
                Out::Big(_) => Out::Big(0),
                other => other.clone(),
            })
            .collect()
    }

    #[test]
    fn oversized_line_is_reported_in_position_and_skipped() {
        let mut fr = Framer::new(4);
        let out = run(&mut fr, &[b"ok\n123456789\nyes\n"], true);
        assert_eq!(out, [f("ok"), Out::Big(9), f("yes")]);
        check_accounting(&fr);
    }

    #[test]
    fn oversized_line_is_not_buffered() {
        let mut fr = Framer::new(8);
        let mut out = Vec::new();
        let mut sink = |ev: FrameEvent<'_>| {
            out.push(matches!(ev, FrameEvent::Oversized { .. }));
            ControlFlow::Continue(())
        };
        fr.push(b"{}\n", &mut sink);
        for _ in 0..10_000 {
            fr.push(&[b'x'; 1000], &mut sink);
            assert!(fr.buffered() <= 9);
        }
        fr.push(b"\n{\"a\":1}\n", &mut sink);
        assert_eq!(out, [false, true, false]);
        assert_eq!(fr.stats().skipped_bytes, 10_000_000);
        check_accounting(&fr);
    }

    #[test]
    fn line_of_exactly_the_limit_passes() {
        assert_eq!(frames(4, b"1234\n12345\n"), [f("1234"), Out::Big(5)]);
        // The CR before the LF does not count, even split across chunks.
        let mut fr = Framer::new(4);
        assert_eq!(run(&mut fr, &[b"1234\r", b"\n"], true), [f("1234")]);
        let mut fr = Framer::new(4);
        assert_eq!(run(&mut fr, &[b"12", b"34\r"], true), [f("1234")]);
        let mut fr = Framer::new(4);
        assert_eq!(run(&mut fr, &[b"1234x"], true), [Out::Big(5)]);
    }

    #[test]
    fn frames_never_contain_newlines() {
        let input = b"a\nb\r\nc\r\r\n\n\nd";
        for o in frames(100, input) {
            if let Out::F(frame) = o {
                assert!(!frame.contains(&b'\n'));
            }
        }
    }

    #[test]
    fn break_stops_after_the_event() {
        let mut fr = Framer::new(100);
        let data = b"a\nb\nc";
        let mut seen = Vec::new();
        let n = fr.push(data, |ev| {
            if let FrameEvent::Frame(f) = ev {
                seen.push(f.to_vec());
            }
            ControlFlow::Break(())
        });
        assert_eq!(n, 2);
        assert_eq!(seen, [b"a".to_vec()]);
        let n2 = fr.push(&data[n..], |_| ControlFlow::Continue(()));
        assert_eq!(n2, 3);
        assert_eq!(fr.buffered(), 1);
    }

    #[test]
    fn find_newline_matches_naive_search() {
        let mut data = vec![b'a'; 40];
        assert_eq!(find_newline(&data), None);
        for i in 0..40 {
            data[i] = b'\n';
            assert_eq!(find_newline(&data), Some(i));
            data[i] = 0x8a; // high bit set, must not be a false positive
            assert_eq!(find_newline(&data), None);
            data[i] = b'a';
        }
    }
}
