//! The interactive loop's slash commands, end to end: `acp client` (the built binary) with
//! piped stdin lines against `acp agent`, against a small agent written with the official
//! Python SDK (`interop/python/sessions_agent.py`, for `/sessions` and `/load`, which the
//! reference agent does not advertise), and through a pseudo-terminal (`script`) for line
//! editing, completion and history while a turn streams.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

/// Runs `acp client -- acp agent --quiet` on the lines; the transcript (stdout).
fn repl(lines: &str) -> String {
    repl_in("1", lines)
}

/// [`repl`] in ACP `version`.
fn repl_in(version: &str, lines: &str) -> String {
    let dir = TempDir::new("repl");
    let acp = acp().display().to_string();
    let out = run(&client_args_in(version, &acp, &[]), dir.path(), lines);
    assert_eq!(out.code(), 0, "v{version}: {out:?}");
    out.stdout
}

/// Asserts that `parts` appear in `text` in this order.
fn in_order(text: &str, parts: &[&str]) {
    let mut from = 0;
    for part in parts {
        let at = text[from..].find(part).unwrap_or_else(|| panic!("missing {part:?} after {from} in:\n{text}"));
        from += at + part.len();
    }
}

#[test]
fn mode_lists_and_switches_and_the_agents_update_is_shown() {
    let out = repl("/mode\n/mode plan\n//status\n/mode nope\n/mode\n");
    in_order(
        &out,
        &[
            "> /mode\nmodes (/mode ID switches):\n* default (Default)",
            "  plan (Plan)",
            "> /mode plan\n",
            "mode set to `plan`",
            "status: mode plan, model ref-small",
            "error: no mode `nope`; modes: default, plan",
            "  default (Default)",
            "* plan (Plan)",
        ],
    );
    // The agent's current_mode_update, and its config_option_update that keeps the `mode`
    // option in sync (notifications: they may trail the answer to session/set_mode).
    in_order(&out, &["> /mode plan\n", "mode: plan\n"]);
    in_order(&out, &["> /mode plan\n", "config options: mode = plan, model = ref-small"]);
}

#[test]
fn model_and_config_set_session_config_options() {
    let out = repl("/model\n/model ref-large\n/config\n/config mode plan\n//status\n/config model gpt\n/config nope\n");
    in_order(
        &out,
        &[
            "models (/model ID picks one), option `model`:\n* ref-small (Reference small)\n  ref-large",
            "> /model ref-large\nmodel = ref-large",
            "config options (/config ID VALUE sets one):\n  mode = default (Mode) · values: default, plan\n  \
             model = ref-large (Model) · values: ref-small, ref-large",
            "> /config mode plan\n",
            "mode = plan",
            "status: mode plan, model ref-large",
            "error: `model` has no value `gpt`; values: ref-small, ref-large",
            "error: no config option `nope`; options: mode, model",
        ],
    );
}

#[test]
fn new_opens_a_session_that_takes_the_next_prompt() {
    let dir = TempDir::new("repl-new");
    let acp = acp().display().to_string();
    let args = ["client", "--show-stderr", "--", &acp, "agent"];
    let out = run(&args, dir.path(), "one\n/new\ntwo\n/mode\n");
    assert_eq!(out.code(), 0, "{out:?}");
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    in_order(&out.stdout, &["session sess-1", "echo: one", &format!("session sess-2 · cwd {}", cwd.display())]);
    in_order(&out.stdout, &["echo: two", "* default (Default)"]);
    in_order(&out.stderr, &["prompt on sess-1: \"one\"", "session sess-2 opened", "prompt on sess-2: \"two\""]);
}

#[test]
fn sessions_and_load_say_when_the_agent_does_not_advertise_them() {
    let out = repl("/sessions\n/load sess-1\n/load\n");
    in_order(
        &out,
        &[
            "the agent does not advertise session/list (sessionCapabilities.list)",
            "error: the agent does not advertise session/load (loadSession), so session sess-1 cannot be reopened",
            "error: /load needs a session id (/sessions lists them)",
        ],
    );
}

#[test]
fn unknown_commands_literal_slashes_and_the_agents_commands() {
    let out = repl("/status\n//status\ncommands\n/status\n/help\n/cancel\n");
    in_order(
        &out,
        &[
            // Not advertised yet: ours are listed, and how to send it anyway.
            "error: unknown command `/status`; commands: /help /cancel /steer /queue /mode /model /config /sessions /new /load \
             /quit /exit (//text sends /text as a prompt)",
            "> //status\necho: /status\nstatus: mode default, model ref-small",
            // The word `commands` makes the agent advertise `/status`.
            "commands available: /status",
            "> /status\necho: /status\nstatus: mode default",
            "the agent's commands (sent as prompts):\n  /status",
            "> /cancel\nno turn is running",
        ],
    );
}

#[test]
fn cancel_ends_a_slow_turn_cancelled_on_each_version() {
    for &version in versions() {
        let out = repl_in(version, "slow\n/cancel\n");
        in_order(&out, &["echo: slow", "⏹ turn cancelled"]);
        assert!(!out.contains("done"), "v{version}: the turn did not run to its end: {out}");
    }
}

/// The client's own commands, and what it says of a slash line it does not know, are the
/// same whatever the version.
#[test]
fn help_unknown_commands_and_literal_slashes_on_each_version() {
    for &version in versions() {
        let out = repl_in(version, "/nosuch\n//nosuch\n/help\n/cancel\n/queue\n");
        in_order(
            &out,
            &[
                "error: unknown command `/nosuch`; commands: /help /cancel /steer /queue /mode /model /config /sessions \
                 /new /load /quit /exit (//text sends /text as a prompt)",
                "> //nosuch\n",
                "echo: /nosuch",
                "  /steer TEXT ",
                "> /cancel\nno turn is running",
            ],
        );
    }
}

/// The interpreter with the official Python SDK, or `None` after a skip notice (a failure
/// under `ACP_REQUIRE_INTEROP=1`).
fn python() -> Option<PathBuf> {
    // find_spec, not an import: importing the SDK takes seconds on a loaded machine.
    sdk_python(
        "import importlib.util, sys; sys.exit(importlib.util.find_spec('acp') is None)",
        "`acp` (interop/python/requirements.txt)",
        "/sessions and /load need the official Python SDK in interop/python/.venv",
    )
}

#[test]
fn sessions_and_load_against_the_python_sdk_agent() {
    let Some(python) = python() else { return };
    let dir = TempDir::new("repl-py");
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("../interop/python/sessions_agent.py");
    let (python, agent) = (python.display().to_string(), agent.display().to_string());
    let lines = "hello one\n/sessions\n/new\nhello two\n/sessions\n/load py-1\nagain\n";
    let out = run(&["client", "--", &python, &agent], dir.path(), lines);
    assert_eq!(out.code(), 0, "{out:?}");
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let cwd = cwd.display();
    in_order(
        &out.stdout,
        &[
            "python echo py-1: hello one",
            &format!("the agent's sessions (/load ID reopens one):\n* py-1 \"hello one\" · {cwd}"),
            "session py-2",
            "python echo py-2: hello two",
            &format!("  py-1 \"hello one\" · {cwd}\n* py-2 \"hello two\" · {cwd}"),
            "> /load py-1\n",
            "session py-1 loaded",
            // py-1 takes the prompts again.
            "python echo py-1: again",
        ],
    );
    // session/load replayed the conversation (notifications: they may trail the answer).
    in_order(&out.stdout, &["> /load py-1\n", "you: hello one\npython echo py-1: hello one"]);
}

/// Issue 30 §2 against an agent nobody here wrote: the Python SDK agent does not advertise
/// `_session/steering`, so what is typed during its turn waits, and is sent as the next
/// prompt when the turn ends; `/queue` shows it waiting.
#[test]
fn lines_typed_during_a_python_sdk_agents_turn_are_queued() {
    let Some(python) = python() else { return };
    let dir = TempDir::new("repl-py-queue");
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("../interop/python/sessions_agent.py");
    let (python, agent) = (python.display().to_string(), agent.display().to_string());
    let out = run(
        &["client", "--", &python, &agent],
        dir.path(),
        "slow news
more news
/queue
",
    );
    assert_eq!(out.code(), 0, "{out:?}");
    in_order(
        &out.stdout,
        &[
            "/queue\nqueued for when this turn ends (1):\n  1. more news\n",
            "python echo py-1: slow news",
            "python echo py-1: more news",
        ],
    );
    assert!(!out.stdout.contains("steered"), "{}", out.stdout);
}

#[test]
fn on_a_terminal_the_line_being_typed_survives_streamed_output() {
    let Some(script) = script() else { return };
    let dir = TempDir::new("repl-pty");
    let acp = acp().display().to_string();
    // `--root DIR` names the client's process (after `exec`) for the Ctrl-C below.
    let root = dir.path().display().to_string();
    let command =
        format!("stty cols 120 rows 40; exec {acp} client --deny --root {root} -- {acp} agent --quiet --slow-ms 60000");
    let mut child = Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir.path())
        .env("ACP_STATE_DIR", dir.path().join("state"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _cleanup = KillOnDrop(vec![root.clone()]);
    let mut keys = child.stdin.take().unwrap();
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    let mut type_keys = |text: &str| {
        keys.write_all(text.as_bytes()).unwrap();
        keys.flush().unwrap();
    };
    let wait = Duration::from_secs(15);
    wait_for(&stdout, "Type a prompt", wait);
    type_keys("slow\r");
    wait_for(&stdout, "echo: slow", wait);
    // Half a line, typed while the turn runs...
    type_keys("//sta");
    wait_for(&stdout, "//sta", wait);
    // ...then the turn is cancelled (Ctrl-C as a signal) and its end printed above it.
    let clients = processes_with_arg(&root);
    assert_eq!(clients.len(), 1, "the client's process: {clients:?}");
    let pid = rustix::process::Pid::from_raw(clients[0] as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    wait_for(&stdout, "turn cancelled", wait);
    type_keys("tus\r");
    wait_for(&stdout, "status: mode default, model ref-small", wait);
    // Tab completes `/sess` to `/sessions`.
    type_keys("/sess\t\r");
    wait_for(&stdout, "does not advertise session/list", wait);
    type_keys("\x04");
    let out = finish(child, stdout, stderr, Duration::from_secs(10));
    assert_eq!(out.code(), 0, "{out:?}");
    let text = out.stdout.replace('\r', "");
    // The editor redrew the half-typed line under each line printed while it was typed.
    in_order(&text, &["echo: slow", "//sta", "cancelling the turn", "> //sta", "turn cancelled", "> //sta"]);
    in_order(&text, &["echo: /status", "> /sessions"]);
    let history = std::fs::read_to_string(dir.path().join("state/history")).unwrap();
    in_order(&history, &["slow", "//status", "/sessions"]);
}

/// Issue 30 §2: `/steer TEXT` during a turn of an agent that advertises `_session/steering`
/// (`acp agent`) joins the running turn (piped lines are typed ahead: they stay prompts, see
/// the next test). One that does not (`--no-steering`) gets what is typed queued and sent when
/// the turn ends; `/queue` lists what waits.
#[test]
fn lines_typed_during_a_turn_steer_it_or_wait_for_its_end() {
    let dir = TempDir::new("steer");
    let acp = acp().display().to_string();
    let args = ["client", "--", &acp, "agent", "--quiet", "--slow-ms", "2000"];
    let lines = "slow news\n/steer focus on the tests\n/steer and the docs\n";
    let out = run(&args, dir.path(), lines);
    assert_eq!(out.code(), 0, "{out:?}");
    in_order(&out.stdout, &["> slow news\n", "/steer focus on the tests\n", "/steer and the docs\n", "done"]);
    for said in [
        "steered the running turn: focus on the tests",
        "steered: focus on the tests",
        "steered the running turn: and the docs",
        "steered: and the docs",
    ] {
        assert!(out.stdout.contains(said), "missing {said:?} in:\n{}", out.stdout);
    }
    assert_eq!(out.stdout.matches("echo: ").count(), 1, "one turn only:\n{}", out.stdout);

    let args = ["client", "--", &acp, "agent", "--quiet", "--slow-ms", "1000", "--no-steering"];
    let out = run(&args, dir.path(), "slow news\nmore news\n/queue\n");
    assert_eq!(out.code(), 0, "{out:?}");
    in_order(
        &out.stdout,
        &["/queue\nqueued for when this turn ends (1):\n  1. more news\n", "done", "echo: more news", "done"],
    );
    assert!(!out.stdout.contains("steered"), "{}", out.stdout);
}

/// Issue 30 §2 on a terminal: a plain line typed while a turn runs steers it when the agent
/// advertises `_session/steering`.
#[test]
fn on_a_terminal_a_line_typed_during_a_turn_steers_it() {
    let dir = TempDir::new("repl-steer");
    let acp = acp().display().to_string();
    let root = dir.path().display().to_string();
    let command = format!("{acp} client --deny --root {root} -- {acp} agent --quiet --slow-ms 60000");
    let Some(mut pty) = Pty::start(dir.path(), &command, &root) else { return };
    pty.wait_for("Type a prompt");
    pty.keys("slow\r");
    pty.wait_for("echo: slow");
    pty.keys("focus on the tests\r");
    pty.wait_for("steered: focus on the tests");
    pty.keys("/cancel\r");
    pty.wait_for("turn cancelled");
    pty.keys("\x04");
    let text = pty.text();
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
    in_order(&text, &["echo: slow", "steered the running turn: focus on the tests", "turn cancelled"]);
    assert_eq!(text.matches("echo: ").count(), 1, "the line joined the turn, no second prompt:\n{text}");
}
