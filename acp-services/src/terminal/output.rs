//! The captured output of a terminal: UTF-8 text, keeping only the newest `limit` bytes.

/// Keep dropped text around until this much has piled up (or `limit`, if larger), so that
/// trimming the front costs amortized O(1) per byte.
const COMPACT_AFTER: usize = 64 * 1024;

/// Output text, decoded incrementally (a character split across two reads is kept whole,
/// invalid bytes become U+FFFD) and truncated from the start, at a character boundary, to
/// at most `limit` bytes. Memory is bounded by about `2 * max(limit, 64 KiB)` plus a read.
#[derive(Debug)]
pub(crate) struct OutputBuffer {
    text: String,
    /// Where the retained text starts in `text` (a character boundary).
    start: usize,
    limit: usize,
    truncated: bool,
    /// The start of a multi-byte character cut by the end of the last read (at most 3 bytes).
    carry: Vec<u8>,
}

impl OutputBuffer {
    pub(crate) fn new(limit: usize) -> OutputBuffer {
        OutputBuffer { text: String::new(), start: 0, limit, truncated: false, carry: Vec::new() }
    }

    /// Appends bytes read from the process.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let joined;
        let data = if self.carry.is_empty() {
            bytes
        } else {
            joined = [std::mem::take(&mut self.carry).as_slice(), bytes].concat();
            joined.as_slice()
        };
        let keep = incomplete_tail(data);
        let (complete, tail) = data.split_at(data.len() - keep);
        self.decode(complete);
        self.carry.extend_from_slice(tail);
        self.enforce_limit();
    }

    /// The process closed its output: a character left incomplete becomes U+FFFD.
    pub(crate) fn finish(&mut self) {
        if !self.carry.is_empty() {
            self.carry.clear();
            self.text.push(char::REPLACEMENT_CHARACTER);
            self.enforce_limit();
        }
    }

    /// The retained text.
    pub(crate) fn text(&self) -> &str {
        &self.text[self.start..]
    }

    /// Whether older text was dropped.
    pub(crate) fn truncated(&self) -> bool {
        self.truncated
    }

    fn decode(&mut self, bytes: &[u8]) {
        for chunk in bytes.utf8_chunks() {
            self.text.push_str(chunk.valid());
            if !chunk.invalid().is_empty() {
                self.text.push(char::REPLACEMENT_CHARACTER);
            }
        }
    }

    fn enforce_limit(&mut self) {
        if self.text.len() - self.start > self.limit {
            let mut cut = self.text.len() - self.limit;
            // The end of the text is a boundary, so this stops.
            while !self.text.is_char_boundary(cut) {
                cut += 1;
            }
            self.start = cut;
            self.truncated = true;
        }
        if self.start > self.limit.max(COMPACT_AFTER) {
            self.text.drain(..self.start);
            self.start = 0;
        }
    }
}

/// How many bytes at the end of `bytes` start a UTF-8 character that is not complete yet.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            continue; // a continuation byte: look further back for the lead
        }
        let needed = match b {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if needed > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(limit: usize, reads: &[&[u8]]) -> OutputBuffer {
        let mut out = OutputBuffer::new(limit);
        for r in reads {
            out.push(r);
        }
        out.finish();
        out
    }

    #[test]
    fn characters_split_across_reads_stay_whole() {
        let e = "é€😀".as_bytes();
        // Every way of cutting the bytes in two.
        for at in 0..=e.len() {
            let out = feed(100, &[&e[..at], &e[at..]]);
            assert_eq!(out.text(), "é€😀", "split at {at}");
            assert!(!out.truncated());
        }
        // One byte per read.
        let singles: Vec<&[u8]> = e.chunks(1).collect();
        assert_eq!(feed(100, &singles).text(), "é€😀");
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        assert_eq!(feed(100, &[b"a\xffb"]).text(), "a\u{FFFD}b");
        // A lead byte cut off by the end of the output.
        assert_eq!(feed(100, &[b"ok\xe2\x82"]).text(), "ok\u{FFFD}");
        // A lead byte followed by something that is not a continuation.
        assert_eq!(feed(100, &[b"\xe2", b"x"]).text(), "\u{FFFD}x");
    }

    #[test]
    fn truncation_keeps_the_newest_bytes_at_a_character_boundary() {
        // "aéb" is 4 bytes; the last 2 would start inside `é`, so only "b" is kept.
        let out = feed(2, &["aéb".as_bytes()]);
        assert_eq!((out.text(), out.truncated()), ("b", true));
        let out = feed(3, &["aéb".as_bytes()]);
        assert_eq!((out.text(), out.truncated()), ("éb", true));
        let out = feed(4, &["aéb".as_bytes()]);
        assert_eq!((out.text(), out.truncated()), ("aéb", false));
        let out = feed(0, &[b"x"]);
        assert_eq!((out.text(), out.truncated()), ("", true));
        let out = feed(0, &[]);
        assert_eq!((out.text(), out.truncated()), ("", false));
        // A limit smaller than one character keeps nothing of it.
        let out = feed(3, &["😀".as_bytes()]);
        assert_eq!((out.text(), out.truncated()), ("", true));
    }

    #[test]
    fn long_streams_stay_bounded_and_exact() {
        let mut out = OutputBuffer::new(10);
        let mut all = String::new();
        for i in 0..100_000u32 {
            let piece = format!("{i}é;");
            all.push_str(&piece);
            out.push(piece.as_bytes());
            assert!(out.text.len() <= COMPACT_AFTER + 10 + piece.len());
        }
        assert!(out.truncated() && out.text().len() <= 10);
        assert!(all.ends_with(out.text()));
        assert!(out.text().len() >= 10 - 1, "at most one character short: {:?}", out.text());
    }

    #[test]
    fn incomplete_tails() {
        assert_eq!(incomplete_tail(b""), 0);
        assert_eq!(incomplete_tail(b"abc"), 0);
        assert_eq!(incomplete_tail("é".as_bytes()), 0);
        assert_eq!(incomplete_tail(&"é".as_bytes()[..1]), 1);
        assert_eq!(incomplete_tail(&"😀".as_bytes()[..3]), 3);
        assert_eq!(incomplete_tail(&"😀".as_bytes()[..2]), 2);
        assert_eq!(incomplete_tail(b"\x80\x80\x80"), 0);
    }
}
