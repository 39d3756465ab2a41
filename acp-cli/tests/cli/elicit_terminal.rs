//! Elicitations asked on the terminal, end to end: `acp client` (the built binary) on a
//! pseudo-terminal (`script`), without `--elicit`, against `acp agent` (its `elicit` form and
//! its `link` URL) and against scripted agents (hostile forms; an elicitation queued behind a
//! permission question; a question still on screen when the turn ends; `session/cancel` sent
//! before the answers it cancels); and URL elicitations declined when nobody is at a terminal.

use crate::common;

use common::*;

/// `acp client --deny --root DIR -- acp agent --quiet` on a terminal (`--root DIR` names the
/// client's processes, killed when the test ends).
fn client_on_a_terminal(dir: &TempDir) -> Option<Pty> {
    let acp = acp().display().to_string();
    let root = dir.path().display().to_string();
    Pty::start(dir.path(), &format!("{acp} client --deny --root {root} -- {acp} agent --quiet"), &root)
}

/// Asserts that `parts` appear in `text` in this order (each within a line: the line editor
/// redraws its prompt between the lines it prints).
fn in_order(text: &str, parts: &[&str]) {
    let mut from = 0;
    for part in parts {
        let at = text[from..].find(part).unwrap_or_else(|| panic!("missing {part:?} after {from} in:\n{text}"));
        from += at + part.len();
    }
}

#[test]
fn a_form_is_filled_on_the_terminal_field_by_field() {
    let dir = TempDir::new("elicit-pty");
    let Some(mut pty) = client_on_a_terminal(&dir) else { return };
    pty.wait_for("Type a prompt");
    pty.keys("elicit\r");
    pty.wait_for("? form: Who is asking?");
    // Fields in name order: colour, count, greeting, name, subscribe.
    pty.wait_for("  colour: ");
    pty.keys("2\r");
    pty.wait_for("  count: ");
    let at = pty.len();
    pty.keys("11\r");
    pty.wait_after(at, "the answer is more than 10");
    pty.keys("3\r");
    pty.wait_for("  greeting: ");
    pty.keys("\r");
    pty.wait_for("  name: ");
    pty.keys("\r");
    pty.wait_for("this field is required");
    pty.keys("Ada\r");
    pty.wait_for("  subscribe: ");
    pty.keys("y\r");
    pty.wait_for("accept (a), decline (d) or cancel (c)");
    pty.keys("a\r");
    // What the agent received, as it says it.
    pty.wait_for(r#"form accepted: colour="green" count=3 greeting="hello" name="Ada" subscribe=true"#);
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    let text = out.stdout.replace('\r', "");
    in_order(
        &text,
        &[
            "? form: Who is asking?\n",
            "  About you\n",
            "  [1/5] Favourite colour (colour · one choice, by number or value)\n",
            "    [1] Red\n",
            "    [2] Green\n",
            "    [3] Blue\n",
            "  [2/5] How many (count · whole number 1 to 10)",
            "  [3/5] Greeting (greeting · text · default \"hello\")",
            "  [4/5] Your name (name · required · text, 1 to 40 characters)",
            "  [5/5] Subscribe (subscribe · y/n)\n",
            "    Send me the news.\n",
            r#"  answers: colour="green" count=3 greeting="hello" name="Ada" subscribe=true"#,
            "  → accepted (your answers: colour, count, greeting, name, subscribe)",
        ],
    );
    // The answers stay out of the history; the prompt does not.
    let history = std::fs::read_to_string(dir.path().join("state/history")).unwrap();
    assert_eq!(history.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>(), ["elicit"], "{history}");
}

#[test]
fn a_form_is_declined_or_cancelled_on_the_terminal_and_the_turn_goes_on() {
    let dir = TempDir::new("elicit-pty-no");
    let Some(mut pty) = client_on_a_terminal(&dir) else { return };
    pty.wait_for("Type a prompt");
    pty.keys("elicit\r");
    for field in ["colour", "count", "greeting", "name", "subscribe"] {
        pty.wait_for(&format!("  {field}: "));
        pty.keys(if field == "name" { "Bob\r" } else { "\r" });
    }
    pty.wait_for("accept (a), decline (d) or cancel (c)");
    pty.keys("d\r");
    pty.wait_for("form declined");
    let at = pty.len();
    pty.keys("elicit\r");
    pty.wait_after(at, "  colour: ");
    // Ctrl-C cancels the form, not the turn.
    pty.keys("\x03");
    pty.wait_after(at, "form cancelled");
    pty.wait_after(at, "— end of turn");
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    let text = out.stdout.replace('\r', "");
    in_order(
        &text,
        &["  → declined (your answer)", "form declined", "  → cancelled (Ctrl-C)", "form cancelled\n", "done"],
    );
    assert!(!text.contains("turn cancelled"), "{text}");
}

#[test]
fn a_url_is_asked_on_the_terminal_and_declined_without_one() {
    let dir = TempDir::new("elicit-url");
    let acp = acp().display().to_string();
    // No terminal: declined, and the agent is told so.
    let out = run(&client_args(&acp, &["--deny", "-p", "link"]), dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    in_order(
        &out.stdout,
        &[
            "? open: https://example.org/acp-reference/sign-in\n  Sign in to continue (elicitation link-1)",
            "  → declined (no terminal to ask on)",
            "url declined",
        ],
    );
    // On a terminal: the user accepts, and the agent completes it.
    let Some(mut pty) = client_on_a_terminal(&dir) else { return };
    pty.wait_for("Type a prompt");
    pty.keys("link\r");
    pty.wait_for("opened it? accept (y) or decline (n)");
    pty.keys("maybe\r");
    pty.wait_for("type y (accept) or n (decline)");
    pty.keys("y\r");
    pty.wait_for("url accepted");
    // A notification: it may trail the turn's updates.
    pty.wait_for("elicitation link-1 completed");
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    let text = out.stdout.replace('\r', "");
    in_order(
        &text,
        &["? open: https://example.org/acp-reference/sign-in", "  → accepted (your answer)", "url accepted"],
    );
    in_order(&text, &["  → accepted (your answer)", "elicitation link-1 completed"]);
}

/// Control sequences a hostile peer may send: window title, clipboard, erase, 8-bit CSI.
const EVIL: &str = "\u{1b}]0;pwned\u{7}\u{1b}]52;c;cm0gLXJm\u{7}\u{1b}[2J\u{9b}1A\r";

#[test]
fn a_hostile_form_stays_inert_and_a_huge_one_is_declined() {
    let dir = TempDir::new("elicit-evil");
    let mut huge = serde_json::Map::new();
    for i in 0..10_000 {
        huge.insert(format!("f{i}"), serde_json::json!({"type": "string", "title": EVIL}));
    }
    let request = |id: &str, schema: serde_json::Value| {
        let params = serde_json::json!({"sessionId": "s1", "mode": "form", "message": format!("{EVIL}{}", "x".repeat(5000)),
            "requestedSchema": schema});
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params}).to_string()
    };
    let evil_field = serde_json::json!({"type": "string", "title": EVIL, "description": EVIL,
        "oneOf": [{"const": EVIL, "title": EVIL}]});
    let evil_schema = serde_json::json!({"type": "object", "title": EVIL, "description": EVIL,
        "properties": {EVIL: evil_field}, "required": [EVIL]});
    let first = dir.file("huge.json", &request("e1", serde_json::json!({"type": "object", "properties": huge})));
    let second = dir.file("evil.json", &request("e2", evil_schema));
    let seen = dir.path().join("answers");
    let script = format!(
        "{HANDSHAKE}cat '{first}'; echo; read -r l; printf '%s\\n' \"$l\" >> '{seen}'; \
         cat '{second}'; echo; read -r l; printf '%s\\n' \"$l\" >> '{seen}'; {END_TURN}while read l; do :; done",
        seen = seen.display()
    );
    let acp = acp().display().to_string();
    let root = dir.path().display().to_string();
    let script_file = dir.file("agent.sh", &script);
    let command = format!("{acp} client --deny --root {root} -- sh {script_file}");
    let Some(mut pty) = Pty::start(dir.path(), &command, &root) else { return };
    pty.wait_for("Type a prompt");
    pty.keys("hi\r");
    pty.wait_for("  → declined (the form has 10000 fields, more than 64)");
    pty.wait_for("    [1] ");
    pty.keys("1\r");
    pty.wait_for("accept (a), decline (d) or cancel (c)");
    pty.keys("a\r");
    pty.wait_for("— end of turn");
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    let answers = std::fs::read_to_string(&seen).unwrap();
    let answers: Vec<serde_json::Value> = answers.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers[0]["result"], serde_json::json!({"action": "decline"}));
    assert_eq!(answers[1]["result"], serde_json::json!({"action": "accept", "content": {EVIL: EVIL}}));
    // Nothing of the peer's reached the terminal as a control: every attempt is shown escaped.
    let screen = &out.stdout;
    for raw in ["\u{1b}]0;", "\u{1b}]52;", "\u{1b}[2J", "\u{9b}"] {
        assert!(!screen.contains(raw), "{raw:?} reached the terminal:\n{screen}");
    }
    assert!(screen.contains(r"\x1b]0;pwned\x07\x1b]52;c;cm0gLXJm\x07\x1b[2J\u{9b}1A\x0d"), "{screen}");
    // Bounded: the message is cut, and the huge form is not drawn at all.
    assert!(screen.len() < 40_000, "{} bytes drawn", screen.len());
    assert!(!screen.contains(&"x".repeat(1001)), "the message is cut");
}

/// The `sh` line of a scripted agent that reads one message from the client into
/// `dir/answers` (see [`answers`]).
fn answer_line(dir: &TempDir) -> String {
    format!("read -r l; printf '%s\\n' \"$l\" >> '{}'; ", dir.path().join("answers").display())
}

/// The messages a scripted agent read with [`answer_line`].
fn answers(dir: &TempDir) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.path().join("answers")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `acp client --ask` on a terminal against the `sh` agent `script`, which then reads its
/// input to the end.
fn client_asking_a_scripted_agent(dir: &TempDir, script: &str) -> Option<Pty> {
    let acp = acp().display().to_string();
    let root = dir.path().display().to_string();
    let script_file = dir.file("agent.sh", &format!("{script}while read l; do :; done"));
    Pty::start(dir.path(), &format!("{acp} client --ask --root {root} -- sh {script_file}"), &root)
}

#[test]
fn an_elicitation_waits_behind_the_permission_question_on_screen() {
    let dir = TempDir::new("elicit-queue");
    let permission = r#"{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1",
        "toolCall":{"toolCallId":"c1","title":"Do it"},"options":[{"optionId":"ok","name":"Allow","kind":"allow_once"},
        {"optionId":"no","name":"Reject","kind":"reject_once"}]}}"#;
    let url = r#"{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"sessionId":"s1","mode":"url",
        "message":"Open it","elicitationId":"u1","url":"https://example.org/x"}}"#;
    let one_line = |json: &str| serde_json::from_str::<serde_json::Value>(json).unwrap().to_string();
    let (permission, url) = (dir.file("permission.json", &one_line(permission)), dir.file("url.json", &one_line(url)));
    let answer = answer_line(&dir);
    let script = format!("{HANDSHAKE}cat '{permission}'; echo; cat '{url}'; echo; {answer}{answer}{END_TURN}");
    let Some(mut pty) = client_asking_a_scripted_agent(&dir, &script) else { return };
    pty.wait_for("Type a prompt");
    pty.keys("hi\r");
    pty.wait_for("? permission: Do it");
    pty.keys("1\r");
    pty.wait_for("? open: https://example.org/x");
    pty.keys("n\r");
    pty.wait_for("— end of turn");
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    // The URL was shown only once the permission question was answered.
    in_order(&out.stdout, &["? permission: Do it", "  → Allow (your answer)", "? open: https://example.org/x"]);
    in_order(&out.stdout, &["? open: https://example.org/x", "  → declined (your answer)", "— end of turn"]);
    let answers = answers(&dir);
    assert_eq!(answers[0]["id"], "p1");
    assert_eq!(answers[0]["result"]["outcome"], serde_json::json!({"outcome": "selected", "optionId": "ok"}));
    assert_eq!(answers[1], serde_json::json!({"jsonrpc": "2.0", "id": "e1", "result": {"action": "decline"}}));
}

/// `acp client --ask` on a terminal against `acp agent`, with a `tee` in front of the agent
/// that writes what it received to `c2a`.
fn client_asking_with_a_witness(dir: &TempDir) -> Option<(Pty, std::path::PathBuf)> {
    let acp = acp().display().to_string();
    let root = dir.path().display().to_string();
    let c2a = dir.path().join("c2a.log");
    let agent = format!("tee '{}' | {acp} agent --quiet", c2a.display());
    let pty = Pty::start(dir.path(), &format!("{acp} client --ask --root {root} -- sh -c \"{agent}\""), &root)?;
    Some((pty, c2a))
}

/// The messages the agent received: its answers to our requests' ids, and our notifications.
fn received(c2a: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(c2a).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// Asserts that the agent received `result` as an answer and a `session/cancel`.
fn answered_then_cancelled(messages: &[serde_json::Value], result: &serde_json::Value) {
    let answer = messages.iter().position(|m| m.get("result") == Some(result));
    let cancel = messages.iter().position(|m| m["method"] == "session/cancel");
    assert!(answer.is_some() && cancel.is_some(), "{result} and session/cancel in {messages:#?}");
}

#[test]
fn cancel_typed_at_a_permission_question_cancels_the_turn() {
    let dir = TempDir::new("cancel-permission");
    let Some((mut pty, c2a)) = client_asking_with_a_witness(&dir) else { return };
    pty.wait_for("Type a prompt");
    pty.keys("hello\r");
    pty.wait_for("? permission: ");
    pty.keys("/cancel\r");
    pty.wait_for("turn cancelled");
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(!out.stdout.contains("is not one of the options"), "/cancel was taken as an answer:\n{}", out.stdout);
    let messages = received(&c2a);
    answered_then_cancelled(&messages, &serde_json::json!({"outcome": {"outcome": "cancelled"}}));
    assert!(!messages.iter().any(|m| m["result"]["outcome"]["outcome"] == "selected"), "{messages:#?}");
}

#[test]
fn cancel_typed_at_a_form_field_cancels_the_form_and_the_turn() {
    let dir = TempDir::new("cancel-form");
    let Some((mut pty, c2a)) = client_asking_with_a_witness(&dir) else { return };
    pty.wait_for("Type a prompt");
    pty.keys("elicit\r");
    pty.wait_for("  colour: ");
    pty.keys("/cancel\r");
    pty.wait_for("turn cancelled");
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    let text = out.stdout.replace('\r', "");
    assert!(!text.contains("form accepted") && !text.contains("[2/5]"), "/cancel was taken as a field:\n{text}");
    answered_then_cancelled(&received(&c2a), &serde_json::json!({"action": "cancel"}));
}

/// A file in `dir` holding the agent's `session/request_permission` `p1` ("Later", one option:
/// Allow), on one line.
fn later_permission(dir: &TempDir) -> String {
    let permission = serde_json::json!({"jsonrpc": "2.0", "id": "p1", "method": "session/request_permission",
        "params": {"sessionId": "s1", "toolCall": {"toolCallId": "c1", "title": "Later"},
            "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}});
    dir.file("permission.json", &permission.to_string())
}

#[test]
fn cancel_typed_at_a_question_between_turns_cancels_the_question() {
    let dir = TempDir::new("cancel-idle");
    let permission = later_permission(&dir);
    // The turn ends, then the agent asks.
    let script = format!("{HANDSHAKE}{END_TURN}cat '{permission}'; echo; {}", answer_line(&dir));
    let Some(mut pty) = client_asking_a_scripted_agent(&dir, &script) else { return };
    pty.wait_for("Type a prompt");
    pty.keys("hi\r");
    // Between turns: the turn's end is drawn too (before or after the question: the ask may
    // reach the UI first).
    pty.wait_for("? permission: Later");
    pty.wait_for("— end of turn");
    pty.keys("/cancel\r");
    pty.wait_for("questions cancelled (no turn is running)");
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(!out.stdout.contains("is not one of the options"), "{}", out.stdout);
    let answers = answers(&dir);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], "p1");
    assert_eq!(answers[0]["result"]["outcome"], serde_json::json!({"outcome": "cancelled"}));
}

/// `acp client --ask` on a terminal against a scripted agent that asks `p1` in the turn, then,
/// once the test created the returned file, ends the turn without waiting for the answer, then
/// reads its answer. So the question is on screen when the turn ends, as when the agent's ask
/// right after its turn's response reaches the client's UI before that response does.
fn a_question_on_screen_as_the_turn_ends(dir: &TempDir) -> Option<(Pty, std::path::PathBuf)> {
    let permission = later_permission(dir);
    let go = dir.path().join("go");
    let wait = format!("while [ ! -e '{}' ]; do sleep 0.05; done; ", go.display());
    let script = format!("{HANDSHAKE}cat '{permission}'; echo; {wait}{END_TURN}{}", answer_line(dir));
    let mut pty = client_asking_a_scripted_agent(dir, &script)?;
    pty.wait_for("Type a prompt");
    pty.keys("hi\r");
    pty.wait_for("? permission: Later");
    std::fs::write(&go, "").unwrap();
    pty.wait_for("— end of turn");
    Some((pty, go))
}

#[test]
fn a_question_on_screen_when_the_turn_ends_is_still_answered() {
    let dir = TempDir::new("question-outlives-turn");
    let Some((mut pty, _)) = a_question_on_screen_as_the_turn_ends(&dir) else { return };
    pty.keys("1\r");
    pty.wait_for("→ Allow (your answer)");
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    // Asked again below the end of the turn, and the answer was not sent as a prompt.
    in_order(&out.stdout, &["? permission: Later", "— end of turn", "choose 1-1 (y/n)", "  → Allow (your answer)"]);
    assert!(!out.stdout.contains("> 1"), "{}", out.stdout);
    let answers = answers(&dir);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], "p1");
    assert_eq!(answers[0]["result"]["outcome"], serde_json::json!({"outcome": "selected", "optionId": "ok"}));
}

#[test]
fn cancel_typed_at_a_question_on_screen_when_the_turn_ended_cancels_it() {
    let dir = TempDir::new("cancel-after-turn");
    let Some((mut pty, _)) = a_question_on_screen_as_the_turn_ends(&dir) else { return };
    pty.keys("/cancel\r");
    pty.wait_for("questions cancelled (no turn is running)");
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    let answers = answers(&dir);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], "p1");
    assert_eq!(answers[0]["result"]["outcome"], serde_json::json!({"outcome": "cancelled"}));
}

/// Types `/cancel` at the question `request` (a file in `dir`, id `id`) of a scripted agent,
/// once the screen shows `shown`, and returns the first two messages the agent then received:
/// `session/cancel` must come before the question's answer (an agent that read the answer
/// first could end its turn `end_turn`, never having seen the cancel).
fn cancel_at_a_question(dir: &TempDir, request: &str, shown: &str) -> Option<Vec<serde_json::Value>> {
    let answer = answer_line(dir);
    let stopped = r#"echo '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}'; "#;
    let script = format!("{HANDSHAKE}cat '{request}'; echo; {answer}{answer}{stopped}");
    let mut pty = client_asking_a_scripted_agent(dir, &script)?;
    pty.wait_for("Type a prompt");
    pty.keys("hi\r");
    pty.wait_for(shown);
    pty.keys("/cancel\r");
    pty.wait_for("turn cancelled");
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    let answers = answers(dir);
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["method"], "session/cancel", "{answers:?}");
    Some(answers)
}

#[test]
fn cancel_typed_at_a_form_sends_session_cancel_before_the_forms_answer() {
    let dir = TempDir::new("cancel-form-order");
    let form = serde_json::json!({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
        "params": {"sessionId": "s1", "mode": "form", "message": "Who?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}});
    let form = dir.file("form.json", &form.to_string());
    let Some(answers) = cancel_at_a_question(&dir, &form, "  name: ") else { return };
    assert_eq!(answers[1], serde_json::json!({"jsonrpc": "2.0", "id": "e1", "result": {"action": "cancel"}}));
}

#[test]
fn cancel_typed_at_a_permission_question_sends_session_cancel_before_the_answer() {
    let dir = TempDir::new("cancel-permission-order");
    let permission = later_permission(&dir);
    let Some(answers) = cancel_at_a_question(&dir, &permission, "? permission: Later") else { return };
    assert_eq!(answers[1]["id"], "p1");
    assert_eq!(answers[1]["result"]["outcome"], serde_json::json!({"outcome": "cancelled"}));
}
