//! Peer text made inert for the terminal and for logs: the one sanitizer of every subcommand.
//!
//! Whatever a peer sends (an agent's message text, titles, paths, plan entries, option names,
//! error reasons, session ids, stop reasons, method names, its stderr; a client's lines under
//! `acp check client`; a transcript's lines under `acp replay`) may contain control characters that a terminal obeys: set the window
//! title or the clipboard (OSC 0/2/52), move the cursor and erase what we drew (CSI), conceal
//! text, return to the start of the line (`\r`), or reorder what is displayed (bidi
//! overrides). [`clean`] replaces each such character with a visible escape, so the terminal
//! only ever sees printable text from the peer:
//!
//! | characters | shown as |
//! |---|---|
//! | C0 controls except `\t` and `\n` (so ESC, `\r`, BS, BEL, NUL…), and DEL | `\x1b`, `\x0d`, `\x08`… (two hex digits) |
//! | C1 controls U+0080..U+009F (8-bit CSI U+009B, OSC U+009D, DCS U+0090…) | `\u{9b}`… |
//! | bidi embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069), the marks U+200E, U+200F, U+061C, and the separators U+2028, U+2029 | `\u{202e}`… |
//!
//! Replacing the introducer (ESC, or the C1 character) defuses a whole escape sequence (CSI,
//! OSC … BEL/ST, DCS, APC, PM, SOS, two-character escapes): what followed it is printable and
//! stays visible as text, e.g. `\x1b]0;title\x07`, which shows the attempt rather than hiding
//! it. [`clean_line`] also escapes `\n` (as `\n`), for text drawn on one line of our own
//! (titles, paths, plan entries…), so that a peer cannot start a line of its choosing there.
//!
//! [`log_value`] writes a value of a `key=value` log line (`acp serve`): bare when it is plain,
//! otherwise quoted with `\\`, `\"`, `\n` and `\t` escaped as well, so that a peer's text can
//! neither reach the terminal nor forge a field or a line of the log.
//!
//! Where peer text is printed: the client's renderer (`client::render`, and through it `acp
//! replay`'s drawing), `acp check`'s text report (reasons and the wire transcript), `acp
//! replay --summary` and `--check`, `acp sessions list|show` (and the agent's `session/list`),
//! `acp serve`'s log, `acp record`'s relay of the agent's stderr, `acp agent`'s log (what the
//! client sent), and `acp client --quiet`'s final text when stdout is a terminal (piped, it is
//! the agent's text unchanged).
//!
//! Text with nothing to replace is returned borrowed.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character except `\n` and `\t` (and every bidi control)
/// replaced by a visible escape (see the [module docs](self)).
pub(crate) fn clean(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// Like [`clean`], and `\n` is shown as `\n` too: `text` stays on one line.
pub(crate) fn clean_line(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, one_line: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| is_unsafe(c) || (one_line && c == '\n');
    let Some(first) = text.find(unsafe_char) else { return Cow::Borrowed(text) };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        match c {
            '\n' if one_line => out.push_str("\\n"),
            c => push_inert(&mut out, c),
        }
    }
    Cow::Owned(out)
}

/// Pushes `c`, or its visible escape when it [is unsafe](is_unsafe).
fn push_inert(out: &mut String, c: char) {
    if is_unsafe(c) {
        let code = u32::from(c);
        let _ = if code < 0x80 { write!(out, "\\x{code:02x}") } else { write!(out, "\\u{{{code:x}}}") };
    } else {
        out.push(c);
    }
}

/// `text` as the value of a `key=value` log line: as it is when it is non-empty and holds no
/// whitespace, `"`, `=`, `\` or unsafe character; otherwise in double quotes, with `\`, `"`,
/// `\n` and `\t` escaped by a backslash and the rest as [`clean`] escapes it.
pub(crate) fn log_value(text: &str) -> Cow<'_, str> {
    let special = |c: char| c.is_whitespace() || matches!(c, '"' | '=' | '\\') || is_unsafe(c);
    if !text.is_empty() && !text.contains(special) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => push_inert(&mut out, c),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

/// `text` (already [`clean`]) with a `?` that starts a line shown as `\?`: the first line
/// starts a line when `at_line_start`. Our permission question starts its line with `?`; a
/// peer's streamed text cannot.
pub(crate) fn guard_line_starts(text: &str, at_line_start: bool) -> Cow<'_, str> {
    let forged = |(i, c): (usize, char)| c == '?' && if i == 0 { at_line_start } else { text[..i].ends_with('\n') };
    if !text.char_indices().any(forged) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 4);
    for (i, c) in text.char_indices() {
        if forged((i, c)) {
            out.push('\\');
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// A character a terminal may act on rather than print (`\n` and `\t` excepted).
pub(crate) fn is_unsafe(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\0'..='\x1f' | '\x7f'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{2028}' | '\u{2029}' => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_and_kept() {
        let text = "héllo\tworld\n→ ✓ 日本";
        assert!(matches!(clean(text), Cow::Borrowed(t) if t == text));
        assert_eq!(clean_line("a\nb\tc"), "a\\nb\tc");
    }

    #[test]
    fn every_control_becomes_visible() {
        let cases = [
            ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
            ("\x1b]52;c;aGk=\x1b\\", "\\x1b]52;c;aGk=\\x1b\\"),
            ("\x1b[2K\x1b[1A", "\\x1b[2K\\x1b[1A"),
            ("\u{9b}31m", "\\u{9b}31m"),
            ("\u{90}q\u{9c}", "\\u{90}q\\u{9c}"),
            ("a\rb\x08c\0d\x7f", "a\\x0db\\x08c\\x00d\\x7f"),
            ("\u{202e}txt.exe", "\\u{202e}txt.exe"),
            ("\u{2067}x\u{2069}", "\\u{2067}x\\u{2069}"),
        ];
        for (input, shown) in cases {
            assert_eq!(clean(input), shown, "{input:?}");
            assert!(!clean(input).chars().any(is_unsafe));
        }
        assert_eq!(clean("a\nb"), "a\nb");
    }

    #[test]
    fn log_values_are_bare_only_when_plain_and_otherwise_quoted_and_inert() {
        assert!(matches!(log_value("conn-1"), Cow::Borrowed("conn-1")));
        let cases = [
            ("", "\"\""),
            ("two words", "\"two words\""),
            ("\x1b]0;PASSED\x07\x1b[2J", "\"\\x1b]0;PASSED\\x07\\x1b[2J\""),
            ("a=b", "\"a=b\""),
            ("say\"hi\"\\", "\"say\\\"hi\\\"\\\\\""),
            ("x\nacp serve: event=forged", "\"x\\nacp serve: event=forged\""),
            ("tab\there", "\"tab\\there\""),
            ("\u{202e}exe", "\"\\u{202e}exe\""),
        ];
        for (input, shown) in cases {
            assert_eq!(log_value(input), shown, "{input:?}");
            assert!(!log_value(input).chars().any(|c| c.is_control() || is_unsafe(c)), "{input:?}");
        }
    }

    #[test]
    fn a_question_mark_starting_a_line_is_escaped() {
        assert_eq!(guard_line_starts("? permission: x\nok?\n?y", true), "\\? permission: x\nok?\n\\?y");
        assert_eq!(guard_line_starts("?mid-line", false), "?mid-line");
        assert!(matches!(guard_line_starts("why? because", true), Cow::Borrowed(_)));
    }
}
