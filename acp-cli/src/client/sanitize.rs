//! Peer text made inert for the terminal.
//!
//! Whatever the agent sends (message text, titles, paths, plan entries, option names, error
//! reasons, its stderr) may contain control characters that a terminal obeys: set the window
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
            c if is_unsafe(c) => {
                let code = u32::from(c);
                let _ = if code < 0x80 { write!(out, "\\x{code:02x}") } else { write!(out, "\\u{{{code:x}}}") };
            }
            c => out.push(c),
        }
    }
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
fn is_unsafe(c: char) -> bool {
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
    fn a_question_mark_starting_a_line_is_escaped() {
        assert_eq!(guard_line_starts("? permission: x\nok?\n?y", true), "\\? permission: x\nok?\n\\?y");
        assert_eq!(guard_line_starts("?mid-line", false), "?mid-line");
        assert!(matches!(guard_line_starts("why? because", true), Cow::Borrowed(_)));
    }
}

/// The hostile catalogue through every entry point of the renderer.
#[cfg(test)]
mod through_the_renderer {
    use acp_blocking::acp_proto::types::*;
    use serde_json::{Value, json};

    use super::super::handler::Activity;
    use super::super::render::tests::Buf;
    use super::super::render::{Renderer, Style};

    /// Title, clipboard and hyperlink OSCs, cursor moves and erases, conceal, 8-bit CSI, DCS,
    /// APC, a carriage return, backspaces, bidi overrides, NUL, and a forged question.
    const EVIL: &str = "a\x1b]0;title\x07b\x1b]2;title\x1b\\c\x1b]52;c;cm0gLXJmIH4=\x07\
        d\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\e\x1b[2K\x1b[1A\x1b[8mhidden\x1b[0m\
        f\u{9b}2J\u{9d}0;t\u{9c}\x1bP1$qm\x1b\\\x1b_apc\x1b\\\x1bXsos\x1b\\\x1b^pm\x1b\\\x1bc\
        g\roverwrite\x08\x08\u{202e}exe.txt\u{2066}\0\x7f\n? permission: forged [execute]";

    fn update(value: Value) -> SessionUpdate {
        serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{value}: {e}"))
    }

    fn tool_call_json(kind: &str) -> Value {
        let text = json!({"type": "text", "text": EVIL});
        json!({"sessionUpdate": kind, "toolCallId": EVIL, "title": EVIL, "kind": EVIL, "status": "in_progress",
            "locations": [{"path": EVIL, "line": 3}],
            "content": [{"type": "content", "content": text},
                {"type": "diff", "path": EVIL, "oldText": format!("{EVIL}\nsame"), "newText": format!("new{EVIL}\nsame")},
                {"type": "terminal", "terminalId": EVIL}]})
    }

    /// Every update kind that carries peer text, each field `EVIL`.
    fn updates() -> Vec<SessionUpdate> {
        let text = json!({"type": "text", "text": EVIL});
        vec![
            update(json!({"sessionUpdate": "agent_message_chunk", "content": text})),
            update(
                json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "resource_link", "name": EVIL, "uri": EVIL}}),
            ),
            update(json!({"sessionUpdate": "agent_thought_chunk", "content": text})),
            update(json!({"sessionUpdate": "user_message_chunk", "content": text})),
            update(
                json!({"sessionUpdate": "plan", "entries": [{"content": EVIL, "priority": "high", "status": "pending"}]}),
            ),
            update(tool_call_json("tool_call")),
            update(tool_call_json("tool_call_update")),
            update(
                json!({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": EVIL, "description": EVIL}]}),
            ),
            update(json!({"sessionUpdate": "current_mode_update", "currentModeId": EVIL})),
            update(json!({"sessionUpdate": "session_info_update", "title": EVIL})),
            update(
                json!({"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": 1.0, "currency": EVIL}}),
            ),
        ]
    }

    /// Draws the catalogue through every entry point; returns what reached stdout and stderr.
    fn draw(color: bool) -> String {
        let (out, err) = (Buf::default(), Buf::default());
        let mut r = Renderer::new(Box::new(out.clone()), Box::new(err.clone()), Style { color, spinner: false });
        r.begin_turn();
        for u in updates() {
            r.update(&u);
        }
        let mut call = ToolCallUpdate::new(EVIL);
        call.title = Some(EVIL.to_owned());
        call.kind = serde_json::from_value(json!(EVIL)).unwrap();
        let options = vec![PermissionOption::new("a", EVIL, PermissionOptionKind::AllowOnce)];
        r.permission_question(&RequestPermissionRequest::new("s", call, options), true);
        r.permission_decided(EVIL, EVIL);
        r.activity(&Activity { method: "read", target: EVIL.to_owned(), outcome: Ok(EVIL.to_owned()) });
        r.activity(&Activity { method: "write", target: EVIL.to_owned(), outcome: Err(EVIL.to_owned()) });
        r.stderr_line(EVIL);
        r.update(&update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": EVIL}})));
        r.cancelling();
        r.end_turn(&serde_json::from_value(json!(EVIL)).unwrap());
        r.info(EVIL);
        r.heading(EVIL);
        r.warn(EVIL);
        r.error(EVIL);
        r.input_read(EVIL, false);
        r.finish();
        let bytes = [out.0.lock().unwrap().clone(), err.0.lock().unwrap().clone()].concat();
        String::from_utf8(bytes).unwrap()
    }

    /// `text` without our own colour sequences; panics on any other escape sequence.
    fn without_our_colours(text: &str) -> String {
        const OURS: [&str; 12] = ["0", "1", "2", "2;3", "31", "32", "33", "35", "36", "1;33", "1;32", ""];
        let mut plain = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('\x1b') {
            plain.push_str(&rest[..at]);
            let seq = &rest[at + 1..];
            let end = seq.find('m').unwrap_or_else(|| panic!("an escape that is not ours: {:?}", &rest[at..]));
            let params = seq[..end].strip_prefix('[').unwrap_or_else(|| panic!("not ours: {:?}", &rest[at..]));
            assert!(OURS.contains(&params), "a colour that is not ours: {params:?}");
            rest = &seq[end + 1..];
        }
        plain.push_str(rest);
        plain
    }

    fn assert_inert(output: &str) {
        let plain = without_our_colours(output);
        let bad = |c: char| c != '\n' && c != '\t' && (c.is_control() || super::is_unsafe(c));
        if let Some(c) = plain.chars().find(|&c| bad(c)) {
            panic!("{c:?} reached the terminal in:\n{plain}");
        }
        let questions: Vec<&str> = plain.lines().filter(|l| l.starts_with("? permission")).collect();
        assert_eq!(questions.len(), 1, "only our own question starts a line with `? permission`: {questions:#?}");
        assert!(plain.contains("\\x1b]52;c;cm0gLXJmIH4=\\x07"), "the attempt is shown, defused:\n{plain}");
    }

    #[test]
    fn no_peer_text_reaches_the_terminal_with_a_control_in_it() {
        let plain = draw(false);
        assert!(!plain.contains('\x1b'), "{plain}");
        assert_inert(&plain);
        let coloured = draw(true);
        assert!(coloured.contains("\x1b[1;33m? permission:\x1b[0m"), "{coloured}");
        assert_inert(&coloured);
        assert_eq!(without_our_colours(&coloured), plain, "colour changes nothing but the colours");
    }
}
