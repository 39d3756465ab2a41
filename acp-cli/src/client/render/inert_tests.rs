//! The hostile catalogue through every entry point of the renderer: no peer text reaches the
//! terminal with a control character in it (see [`crate::sanitize`]).

use acp_blocking::acp_proto::types::*;
use serde_json::{Value, json};

use super::super::event::Activity;
use super::tests::Buf;
use super::{Renderer, Style};

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
    let bad = |c: char| c != '\n' && c != '\t' && (c.is_control() || crate::sanitize::is_unsafe(c));
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
