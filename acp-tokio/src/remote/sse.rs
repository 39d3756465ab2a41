//! Reading Server-Sent Events, as the Streamable HTTP client needs them: the `data:` fields of
//! each `message` event (one JSON-RPC message), and the last event id (the cursor a resume
//! names in `Last-Event-ID`). Comments (`: keepalive`) and `retry:` are ignored.
//!
//! Rules (the HTML Standard's event-stream parsing, reduced to `data`), each with a test:
//! * Lines end with `\n`, `\r\n` or `\r`; a blank line dispatches the event.
//! * Several `data:` lines of one event are joined with `\n`; one space after the colon is
//!   dropped.
//! * An event without data dispatches nothing; nor does one whose `event:` type is other than
//!   `message` (a resumed stream's `acp/turnState` is no JSON-RPC message: its data is kept
//!   apart, for the resume's report).
//! * The last event id is the `id:` of the last event dispatched (or skipped for its type);
//!   an event without one keeps the previous. An `id:` read before the stream broke, its
//!   event not yet complete, is not the last event id.
//! * Bounded: an event (or a line) longer than the limit is not buffered; it is skipped up to
//!   its blank line.

/// An incremental SSE parser: feed it the body's chunks as they arrive.
#[derive(Debug)]
pub(crate) struct SseParser {
    max: usize,
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    /// The event names a type other than `message`.
    other_type: bool,
    /// The event is a resumed stream's `acp/turnState`.
    turn_state_type: bool,
    /// The data of the last `acp/turnState` event, until taken.
    turn_state: Option<String>,
    /// The `id:` read last (the last event id once its event is complete).
    id_buffer: Option<String>,
    last_id: Option<String>,
    oversized: bool,
    /// The previous chunk ended with `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

impl SseParser {
    /// A parser whose events (their data) are at most `max` bytes.
    pub(crate) fn new(max: usize) -> SseParser {
        SseParser {
            max,
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            other_type: false,
            turn_state_type: false,
            turn_state: None,
            id_buffer: None,
            last_id: None,
            oversized: false,
            after_cr: false,
        }
    }

    /// The data of the last `acp/turnState` event (a resumed stream's first), once.
    pub(crate) fn take_turn_state(&mut self) -> Option<String> {
        self.turn_state.take()
    }

    /// The id of the last complete event, if the stream named one.
    pub(crate) fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Parses `chunk`, calling `event` with each complete event's data.
    pub(crate) fn feed(&mut self, chunk: &[u8], mut event: impl FnMut(String)) {
        let mut rest = chunk;
        if self.after_cr && rest.first() == Some(&b'\n') {
            rest = &rest[1..];
        }
        self.after_cr = false;
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.push(&rest[..end]);
            self.end_line(&mut event);
            let crlf = rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n');
            if rest[end] == b'\r' && end + 1 == rest.len() {
                self.after_cr = true;
            }
            rest = &rest[end + if crlf { 2 } else { 1 }..];
        }
        self.push(rest);
    }

    /// Appends part of the current line, unless it got too long.
    fn push(&mut self, bytes: &[u8]) {
        if self.oversized {
            return;
        }
        if self.line.len() + bytes.len() > self.max + "data: ".len() {
            self.oversized = true;
            self.line.clear();
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self, event: &mut impl FnMut(String)) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.last_id.clone_from(&self.id_buffer);
            if self.has_data && !self.oversized && !self.other_type {
                event(String::from_utf8_lossy(&self.data).into_owned());
            } else if self.has_data && !self.oversized && self.turn_state_type {
                self.turn_state = Some(String::from_utf8_lossy(&self.data).into_owned());
            }
            self.data.clear();
            self.has_data = false;
            self.other_type = false;
            self.turn_state_type = false;
            self.oversized = false;
            return;
        }
        if self.oversized || line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => (&line[..colon], line[colon + 1..].strip_prefix(b" ").unwrap_or(&line[colon + 1..])),
            None => (&line[..], &[][..]),
        };
        if field == b"id" && !value.contains(&0) {
            self.id_buffer = Some(String::from_utf8_lossy(value).into_owned());
            return;
        }
        if field == b"event" {
            self.other_type = value != b"message";
            self.turn_state_type = value == b"acp/turnState";
            return;
        }
        if field != b"data" {
            return;
        }
        let newline = usize::from(self.has_data);
        if self.data.len() + newline + value.len() > self.max {
            self.oversized = true;
            self.data.clear();
            return;
        }
        if self.has_data {
            self.data.push(b'\n');
        }
        self.data.extend_from_slice(value);
        self.has_data = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]], max: usize) -> Vec<String> {
        let mut parser = SseParser::new(max);
        let mut events = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, |e| events.push(e));
        }
        events
    }

    #[test]
    fn a_data_line_and_a_blank_line_make_one_event_and_comments_are_ignored() {
        let events = parse(&[b": keepalive\n\ndata: {\"a\":1}\n\ndata:{}\n\n"], 1024);
        assert_eq!(events, ["{\"a\":1}", "{}"]);
    }

    #[test]
    fn events_split_anywhere_across_chunks_come_out_whole() {
        let whole = b"data: {\"id\":1}\r\n\r\nevent: message\nid: 7\ndata: 2\n\n";
        for cut in 0..whole.len() {
            let events = parse(&[&whole[..cut], &whole[cut..]], 1024);
            assert_eq!(events, ["{\"id\":1}", "2"], "cut at {cut}");
        }
    }

    #[test]
    fn the_last_event_id_is_that_of_the_last_complete_event() {
        let mut parser = SseParser::new(1024);
        let mut events = Vec::new();
        parser
            .feed(b"id: 1\ndata: a\n\ndata: b\n\nevent: acp/turnState\ndata: {}\n\nid: 2\ndata: c", |e| events.push(e));
        assert_eq!(events, ["a", "b"]);
        assert_eq!(parser.last_event_id(), Some("1"), "event 2 is not complete");
        parser.feed(b"\n\n", |e| events.push(e));
        assert_eq!(parser.last_event_id(), Some("2"));
    }

    #[test]
    fn only_message_events_are_dispatched() {
        let mut parser = SseParser::new(1024);
        let mut events = Vec::new();
        let stream =
            b"event: acp/turnState\ndata: {}\n\ndata: 1\n\nevent: other\ndata: 0\n\nevent: message\ndata: 2\n\n";
        parser.feed(stream, |e| events.push(e));
        assert_eq!(events, ["1", "2"]);
        assert_eq!(parser.take_turn_state().as_deref(), Some("{}"), "a turn state is kept apart");
        assert_eq!(parser.take_turn_state(), None);
    }

    #[test]
    fn data_lines_join_with_newlines_and_an_event_without_data_is_nothing() {
        let events = parse(&[b"data: a\ndata: b\n\nevent: ping\n\n\n"], 1024);
        assert_eq!(events, ["a\nb"]);
    }

    #[test]
    fn bare_carriage_returns_end_lines() {
        let events = parse(&[b"data: x\r", b"\r", b"data: y\r\r"], 1024);
        assert_eq!(events, ["x", "y"]);
    }

    #[test]
    fn an_oversized_event_is_skipped_and_the_next_one_arrives() {
        let long = format!("data: {}\n\ndata: a\ndata: {}\n\ndata: ok\n\n", "x".repeat(100), "y".repeat(20));
        let events = parse(&[long.as_bytes()], 16);
        assert_eq!(events, ["ok"]);
    }

    #[test]
    fn an_endless_line_is_not_buffered() {
        let mut parser = SseParser::new(16);
        for _ in 0..1000 {
            parser.feed(&[b'x'; 64], |_| panic!("no event"));
        }
        assert!(parser.line.capacity() < 1024, "buffered {}", parser.line.capacity());
        let mut events = Vec::new();
        parser.feed(b"\n\ndata: ok\n\n", |e| events.push(e));
        assert_eq!(events, ["ok"]);
    }
}
