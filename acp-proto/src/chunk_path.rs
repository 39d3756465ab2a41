//! The text-chunk path: `session/update` notifications that carry a plain text message chunk,
//! decoded and encoded without serde's generic machinery.
//!
//! Streamed message chunks are most of what crosses an ACP connection (an agent streams its
//! reply token by token), and the shape every SDK writes is fixed:
//!
//! ```text
//! {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":S,"update":
//!  {"sessionUpdate":K,"content":{"type":"text","text":T}[,"messageId":M]}}}
//! ```
//!
//! with K one of `user_message_chunk`, `agent_message_chunk`, `agent_thought_chunk`, compact
//! (no whitespace) and in this key order. [`decode`] recognizes exactly that byte layout and
//! builds the typed notification directly; anything else at all (another order, whitespace,
//! another field, annotations, `_meta`, an invalid string) returns `None` and the frame takes the
//! general path ([`fast_path`](crate::fast_path), then [`jsonrpc::parse`](crate::jsonrpc::parse)).
//! Strings with escapes are decoded by `serde_json` itself, so they mean exactly what they mean on
//! the general path. The tests check that both paths agree.
//!
//! [`encode`] writes such a notification (no annotations, no `_meta`) byte for byte as the general
//! encoder (serde_json) does; strings that need escaping are escaped by `serde_json` itself, the
//! others (found 8 bytes at a time) are copied as they are.

use std::sync::Arc;

use crate::Side;
use crate::methods::{AgentNotification, Method, Notification};
use crate::swar;
use crate::types::{ContentBlock, ContentChunk, MessageId, SessionId, SessionNotification, SessionUpdate, TextContent};

const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"#;
const UPDATE: &[u8] = br#","update":{"sessionUpdate":""#;
const CONTENT: &[u8] = br#"","content":{"type":"text","text":"#;
const MESSAGE_ID: &[u8] = br#","messageId":"#;
const KINDS: [&str; 3] = ["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"];

/// A cursor over the frame.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn eat(&mut self, literal: &[u8]) -> Option<()> {
        let rest = &self.text.as_bytes()[self.pos..];
        rest.starts_with(literal).then(|| self.pos += literal.len())
    }

    /// A JSON string starting at the cursor (its opening quote). Borrowed when it has no escape,
    /// decoded by serde_json when it has; `None` for anything invalid.
    fn string(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        let bytes = self.text.as_bytes();
        if bytes.get(self.pos) != Some(&b'"') {
            return None;
        }
        let start = self.pos + 1;
        let mut i = start;
        let mut escaped = false;
        loop {
            // Jump over the plain bytes (8 at a time) to the next quote, backslash or control.
            i += swar::first_escape(bytes.get(i..)?);
            match *bytes.get(i)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                _ => return None,
            }
        }
        self.pos = i + 1;
        if escaped {
            serde_json::from_str::<String>(&self.text[start - 1..=i]).ok().map(std::borrow::Cow::Owned)
        } else {
            Some(std::borrow::Cow::Borrowed(&self.text[start..i]))
        }
    }

    /// A plain identifier between quotes already eaten, up to the closing quote (no escapes).
    fn word(&mut self) -> Option<&'a [u8]> {
        let bytes = &self.text.as_bytes()[self.pos..];
        let len = bytes.iter().take(32).position(|&b| b == b'"')?;
        self.pos += len;
        Some(&bytes[..len])
    }
}

/// Decodes a text-chunk `session/update` laid out as every SDK writes it, or `None` (also when
/// `side` does not receive `session/update`).
#[inline]
pub(crate) fn decode(frame: &[u8], side: Side) -> Option<Notification> {
    if !frame.starts_with(PREFIX) || !Method::SessionUpdate.row().received_by(side) {
        return None;
    }
    let text = std::str::from_utf8(frame).ok()?;
    let mut c = Cursor { text, pos: PREFIX.len() };
    let session = c.string()?;
    c.eat(UPDATE)?;
    let kind = c.word()?;
    c.eat(CONTENT)?;
    let body = c.string()?;
    c.eat(b"}")?;
    let message_id = match c.eat(MESSAGE_ID) {
        Some(()) => Some(c.string()?),
        None => None,
    };
    c.eat(b"}}}")?;
    if c.pos != frame.len() {
        return None;
    }
    let variant: fn(ContentChunk) -> SessionUpdate = match kind {
        b"agent_message_chunk" => SessionUpdate::AgentMessageChunk,
        b"agent_thought_chunk" => SessionUpdate::AgentThoughtChunk,
        b"user_message_chunk" => SessionUpdate::UserMessageChunk,
        _ => return None,
    };
    // Built in one expression, straight into the result (no intermediate moves of the large
    // enums).
    Some(Notification::Agent(AgentNotification::SessionUpdate(SessionNotification {
        session_id: SessionId(Arc::from(&*session)),
        update: variant(ContentChunk {
            content: ContentBlock::Text(TextContent { annotations: None, text: body.into_owned(), meta: None }),
            message_id: message_id.map(|m| MessageId(Arc::from(&*m))),
            meta: None,
        }),
        meta: None,
    })))
}

/// Whether `s` can be written between quotes as it is.
fn is_plain(s: &str) -> bool {
    swar::first_escape(s.as_bytes()) == s.len()
}

/// Appends `s` as a JSON string, exactly as serde_json writes it.
fn write_str(out: &mut Vec<u8>, s: &str) {
    if is_plain(s) {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // A `Vec` writer and a `str` cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

/// What this path writes of a notification, if it is a plain text chunk: the chunk kind, the
/// session id, the text and the message id. The patterns name every field of every struct
/// (no `..`), so a field added to one of them is a compile error here, not a silent drop.
fn chunk_parts(n: &SessionNotification) -> Option<(&'static str, &str, &str, Option<&MessageId>)> {
    let SessionNotification { session_id, update, meta: None } = n else { return None };
    let (kind, chunk) = match update {
        SessionUpdate::AgentMessageChunk(c) => (KINDS[0], c),
        SessionUpdate::AgentThoughtChunk(c) => (KINDS[1], c),
        SessionUpdate::UserMessageChunk(c) => (KINDS[2], c),
        _ => return None,
    };
    let ContentChunk { content, message_id, meta: None } = chunk else { return None };
    let ContentBlock::Text(TextContent { annotations: None, text, meta: None }) = content else { return None };
    Some((kind, &session_id.0, text, message_id.as_ref()))
}

/// Appends the frame of a text-chunk notification (with its `\n`) and returns true, or returns
/// false (writing nothing) when the notification is not one this path writes.
pub(crate) fn encode(out: &mut Vec<u8>, notification: &Notification) -> bool {
    let Notification::Agent(AgentNotification::SessionUpdate(n)) = notification else { return false };
    let Some((kind, session_id, text, message_id)) = chunk_parts(n) else { return false };
    out.reserve(PREFIX.len() + UPDATE.len() + CONTENT.len() + kind.len() + text.len() + session_id.len() + 16);
    out.extend_from_slice(PREFIX);
    write_str(out, session_id);
    out.extend_from_slice(UPDATE);
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(CONTENT);
    write_str(out, text);
    out.push(b'}');
    if let Some(id) = message_id {
        out.extend_from_slice(MESSAGE_ID);
        write_str(out, &id.0);
    }
    out.extend_from_slice(b"}}}\n");
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fast_path::{self, Fast};
    use crate::jsonrpc;

    fn general_encode(n: &Notification) -> Vec<u8> {
        let mut out = Vec::new();
        jsonrpc::encode_notification(&mut out, n.wire(), Some(n)).unwrap();
        out
    }

    fn general_decode(frame: &[u8]) -> Option<Notification> {
        match fast_path::parse(frame, Side::Client)? {
            Fast::Notification(n) => Some(n),
            Fast::Request { .. } => None,
        }
    }

    /// Strings that exercise the scanner: escapes, controls, quotes, Unicode, 8-byte edges.
    fn samples() -> Vec<String> {
        let mut v: Vec<String> = [
            "",
            "x",
            "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ._",
            "line\nbreak",
            "tab\tand \"quotes\" and \\ backslash",
            "\u{0}\u{1f}\u{7f}",
            "héllo wörld ✓ 🦀",
            "\u{2028}\u{2029}",
            "1234567\"",
            "12345678\\",
            "</script>",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in 0..40 {
            let s: String = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    const ALPHABET: [char; 12] =
                        ['a', 'Z', '"', '\\', '\n', '\u{1}', 'é', '🦀', ' ', '/', '\u{7f}', '0'];
                    ALPHABET[(seed % 12) as usize]
                })
                .collect();
            v.push(s);
        }
        v
    }

    #[test]
    fn encodes_exactly_as_the_general_encoder() {
        for s in samples() {
            for kind in 0..3 {
                for message_id in [None, Some(s.clone())] {
                    let mut chunk = ContentChunk::new(ContentBlock::text(s.clone()));
                    chunk.message_id = message_id.map(MessageId::from);
                    let update = match kind {
                        0 => SessionUpdate::AgentMessageChunk(chunk),
                        1 => SessionUpdate::AgentThoughtChunk(chunk),
                        _ => SessionUpdate::UserMessageChunk(chunk),
                    };
                    let n = Notification::Agent(AgentNotification::SessionUpdate(SessionNotification::new(
                        format!("s-{s}"),
                        update,
                    )));
                    let mut fast = Vec::new();
                    assert!(encode(&mut fast, &n));
                    let general = general_encode(&n);
                    assert_eq!(String::from_utf8_lossy(&fast), String::from_utf8_lossy(&general));
                    // And the decoder reads back what both wrote, as the general decoder does.
                    let line = &general[..general.len() - 1];
                    assert_eq!(decode(line, Side::Client), Some(n.clone()));
                    assert_eq!(decode(line, Side::Client), general_decode(line));
                }
            }
        }
    }

    #[test]
    fn other_notifications_are_left_to_the_general_encoder() {
        let mut text = TextContent::new("x");
        text.annotations = Some(Default::default());
        let annotated = SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(text)));
        let mut with_meta =
            SessionNotification::new("s", SessionUpdate::AgentMessageChunk(ContentChunk::new("x".into())));
        with_meta.meta = Some(Default::default());
        for n in [
            SessionNotification::new("s", annotated),
            with_meta,
            SessionNotification::new("s", SessionUpdate::Plan(crate::types::Plan::new(vec![]))),
        ] {
            let mut out = Vec::new();
            assert!(!encode(&mut out, &Notification::Agent(AgentNotification::SessionUpdate(n))));
            assert!(out.is_empty());
        }
    }

    #[test]
    fn decoding_agrees_with_the_general_path_or_declines() {
        let base = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#;
        let mut frames: Vec<String> = vec![base.to_owned()];
        // Every truncation, and every single-byte change to a few interesting bytes.
        for cut in 0..base.len() {
            frames.push(base[..cut].to_owned());
        }
        for (at, _) in base.char_indices() {
            for b in ["\"", "\\", " ", "x", "}", "\u{1}", "é"] {
                let mut f = base.to_owned();
                f.replace_range(at..at + 1, b);
                frames.push(f);
            }
        }
        frames.extend(
            [
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","annotations":null}}}}"#,
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","content":{"type":"text","text":"hi"}}}}"#,
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m"}}}"#,
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":7}}}"#,
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\u0041","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\ud83e\udd80\n"}}}}"#,
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\ud800"}}}}"#,
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"bad \q"}}}}"#,
            ]
            .map(str::to_owned),
        );
        // An agent does not receive session/update: the path leaves it to the general one.
        assert_eq!(decode(base.as_bytes(), Side::Agent), None);
        let mut taken = 0;
        for f in &frames {
            if let Some(n) = decode(f.as_bytes(), Side::Client) {
                taken += 1;
                assert_eq!(Some(n), general_decode(f.as_bytes()), "{f}");
            }
        }
        assert!(taken > 10, "the chunk path took only {taken} frames");
    }
}
