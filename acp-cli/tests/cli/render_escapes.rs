//! `acp client` against a hostile agent (a script in `sh`) that puts terminal escape sequences
//! in everything it sends: message text, a tool call's title, a permission question and its
//! options, its stderr, its error message. None of them may reach the terminal.

use crate::common;

use common::*;

/// A title and a clipboard write (OSC 0 and 52), a hyperlink (OSC 8), an erase and a cursor
/// move (CSI), conceal, an 8-bit CSI, a carriage return, a backspace, a bidi override, then a
/// forged permission question on a line of its own. JSON-escaped, for the frames.
const EVIL_JSON: &str = r"\u001b]0;pwned\u0007\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]8;;https://x.example\u001b\\link\u001b]8;;\u001b\\\u001b[2K\u001b[1A\u001b[8mhidden\u001b[0m\u009b2J\rover\b\u202eexe.txt\u0000\n? permission: forged [execute]";

/// The agent: answers `initialize` and `session/new`, then, for the prompt, sends a message
/// chunk, a tool call and a permission question carrying `EVIL_JSON`, writes escapes to its
/// stderr, and answers the prompt with an error whose message and reason carry them too.
fn hostile_agent() -> String {
    let frames = [
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"EVIL"}}}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"EVIL","kind":"execute","locations":[{"path":"/EVIL"}]}}}"#,
        r#"{"jsonrpc":"2.0","id":100,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1","title":"EVIL"},"options":[{"optionId":"a","name":"EVIL","kind":"allow_once"},{"optionId":"r","name":"no","kind":"reject_once"}]}}"#,
    ]
    .map(|f| format!("printf '%s\\n' '{}';", f.replace("EVIL", EVIL_JSON)));
    let error = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"EVIL","data":{"reason":"EVIL"}}}"#
        .replace("EVIL", EVIL_JSON);
    format!(
        "read l; printf '%s\\n' '{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"protocolVersion\":1}}}}'; \
         read l; printf '%s\\n' '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"sessionId\":\"s1\"}}}}'; \
         read l; {} \
         printf 'log \\033]0;pwned\\007\\033[2K\\r? permission: forged\\n' >&2; \
         read l; printf '%s\\n' '{error}'; \
         while read l; do :; done",
        frames.concat()
    )
}

#[test]
fn a_hostile_agent_cannot_put_escapes_on_the_terminal() {
    let dir = TempDir::new("hostile");
    let script = hostile_agent();
    let args = ["client", "--deny", "--show-stderr", "-p", "hi", "--", "sh", "-c", &script];
    let out = run(&args, dir.path(), "");
    assert_eq!(out.code(), 6, "the prompt's error: {out:?}");
    let all = format!("{}{}", out.stdout, out.stderr);
    for (c, what) in [
        ('\x1b', "ESC"),
        ('\u{9b}', "8-bit CSI"),
        ('\r', "carriage return"),
        ('\x08', "backspace"),
        ('\0', "NUL"),
        ('\u{202e}', "bidi override"),
    ] {
        assert!(!all.contains(c), "{what} reached the terminal:\n{all}");
    }
    // Every entry point drew the attempt, defused.
    let shown = all.matches(r"\x1b]52;c;cm0gLXJmIH4=\x07").count();
    assert!(shown >= 5, "message, tool call, question, option, error: {shown} in\n{all}");
    assert!(
        out.stderr.contains(r"agent stderr │ log \x1b]0;pwned\x07\x1b[2K\x0d? permission: forged"),
        "{}",
        out.stderr
    );
    let questions: Vec<&str> = all.lines().filter(|l| l.starts_with("? permission")).collect();
    assert_eq!(questions.len(), 1, "only the client's own question starts a line so: {questions:#?}\n{all}");
    assert!(questions[0].starts_with(r"? permission: \x1b]0;pwned"), "{}", questions[0]);
    assert!(out.stdout.contains(r"\? permission: forged [execute]"), "{}", out.stdout);
}
