//! No process outlives `acp client`, whatever way it ends: the turn ends, the agent dies,
//! a double Ctrl-C, `SIGTERM` (idle), `SIGHUP` (mid-turn), `SIGKILL`. The scripted
//! agent (in `sh`, as in `tests/cli/client.rs`) starts two terminals, `sleep 1000.MARK1` and
//! `setsid sleep 1000.MARK2` (which leaves the terminal's process group and session); the
//! test then looks in `/proc` for any process with those arguments, and kills leftovers
//! itself so that it never leaks one. A `SIGKILL`ed client runs nothing: there the kernel
//! kills the agent and the plain terminal (`PR_SET_PDEATHSIG`), but not the `setsid` one.
//! Linux only (`/proc`, `setsid`, `PR_SET_PDEATHSIG`).
#![cfg(target_os = "linux")]

use crate::common;

use std::process::Child;
use std::time::Duration;

use common::*;
use rustix::process::Signal;

/// How the scripted agent goes on once its terminals run.
#[derive(Clone, Copy)]
enum Then {
    /// Waits for the file `go`, then ends the turn `end_turn`.
    EndTurn,
    /// Waits for the file `go`, then exits mid-turn.
    Die,
    /// Becomes `sleep 1000.AGENT` (never answers, ignores its stdin).
    Hang,
}

struct Scenario {
    dir: TempDir,
    plain: String,
    escaped: String,
    agent: String,
    _cleanup: KillOnDrop,
}

impl Scenario {
    fn new(name: &str) -> Scenario {
        let (plain, escaped, agent) = (
            format!("1000.{}", unique_marker()),
            format!("1000.{}", unique_marker()),
            format!("1000.{}", unique_marker()),
        );
        let cleanup = KillOnDrop(vec![plain.clone(), escaped.clone(), agent.clone()]);
        Scenario { dir: TempDir::new(name), plain, escaped, agent, _cleanup: cleanup }
    }

    fn script(&self, then: Then) -> String {
        let go = self.dir.path().join("go");
        let create = |id: u32, command: &str, args: &str| {
            format!(
                "echo '{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"terminal/create\",\"params\":{{\"sessionId\":\"s1\",\
                 \"command\":\"{command}\",\"args\":[{args}]}}}}'; read r; "
            )
        };
        let wait_go = format!("until [ -e {} ]; do sleep 0.05; done; ", go.display());
        let then = match then {
            Then::EndTurn => format!("{wait_go}{END_TURN}while read l; do :; done"),
            Then::Die => format!("{wait_go}exit 1"),
            Then::Hang => format!("exec sleep {}", self.agent),
        };
        format!(
            "{HANDSHAKE}{}{}{then}",
            create(10, "sleep", &format!("\"{}\"", self.plain)),
            create(11, "setsid", &format!("\"sleep\",\"{}\"", self.escaped)),
        )
    }

    fn start(&self, then: Then, prompt: bool) -> (Child, Output) {
        let script = self.script(then);
        let mut args = vec!["client", "--allow", "--unconfined-terminals"];
        if prompt {
            args.extend(["-p", "run"]);
        }
        args.extend(["--", "sh", "-c", &script]);
        let mut child = start(&args, self.dir.path(), if prompt { "" } else { "run\n" }, !prompt);
        let output = Output(collect(child.stdout.take().unwrap()), collect(child.stderr.take().unwrap()));
        // Both commands run before anything ends.
        wait_for_process(&self.plain, Duration::from_secs(10));
        wait_for_process(&self.escaped, Duration::from_secs(10));
        (child, output)
    }

    fn go(&self) {
        std::fs::write(self.dir.path().join("go"), "").unwrap();
    }

    /// Nothing the client started is left (waits a little for the kernel to finish kills).
    fn assert_nothing_left(&self, how: &str) {
        for (what, marker) in [("the terminal", &self.plain), ("the setsid command", &self.escaped)] {
            let left = survivors(marker, Duration::from_secs(5));
            assert!(left.is_empty(), "{how}: {what} outlived the client: {left:?}");
        }
    }
}

struct Output(std::sync::Arc<std::sync::Mutex<String>>, std::sync::Arc<std::sync::Mutex<String>>);

fn end(child: Child, output: Output) -> Run {
    finish(child, output.0, output.1, Duration::from_secs(20))
}

#[test]
fn the_end_of_the_turn_ends_every_process() {
    let s = Scenario::new("procs-end");
    let (child, output) = s.start(Then::EndTurn, true);
    s.go();
    let out = end(child, output);
    assert_eq!(out.code(), 0, "{out:?}");
    s.assert_nothing_left("turn end");
}

#[test]
fn the_death_of_the_agent_ends_every_process() {
    let s = Scenario::new("procs-died");
    let (child, output) = s.start(Then::Die, true);
    s.go();
    let out = end(child, output);
    assert_eq!(out.code(), 7, "{out:?}");
    s.assert_nothing_left("agent death");
}

#[test]
fn a_double_ctrl_c_ends_every_process() {
    let s = Scenario::new("procs-sigint");
    let (child, output) = s.start(Then::Hang, true);
    wait_for_process(&s.agent, Duration::from_secs(10));
    signal(&child, Signal::INT);
    wait_for(&output.0, "cancelling the turn", Duration::from_secs(10));
    signal(&child, Signal::INT);
    let out = end(child, output);
    assert_eq!(out.code(), 130, "{out:?}");
    s.assert_nothing_left("double Ctrl-C");
    assert!(survivors(&s.agent, Duration::from_secs(5)).is_empty(), "the agent outlived the client");
}

#[test]
fn sigterm_quits_an_idle_client_and_ends_every_process() {
    let s = Scenario::new("procs-sigterm");
    let (child, output) = s.start(Then::EndTurn, false);
    s.go();
    wait_for(&output.0, "— end of turn", Duration::from_secs(10));
    signal(&child, Signal::TERM);
    let out = end(child, output);
    assert_eq!(out.code(), 143, "{out:?}");
    s.assert_nothing_left("SIGTERM");
}

#[test]
fn sighup_mid_turn_ends_every_process() {
    let s = Scenario::new("procs-sighup");
    let (child, output) = s.start(Then::Hang, true);
    wait_for_process(&s.agent, Duration::from_secs(10));
    // One is enough (it used to take two, as Ctrl-C does), and the agent never answers.
    signal(&child, Signal::HUP);
    let out = end(child, output);
    assert_eq!(out.code(), 129, "{out:?}");
    assert!(out.stdout.contains("SIGHUP: ending the agent and the client"), "{out:?}");
    s.assert_nothing_left("SIGHUP");
    assert!(survivors(&s.agent, Duration::from_secs(5)).is_empty(), "the agent outlived the client");
}

#[test]
fn the_agent_dies_with_a_killed_client() {
    let s = Scenario::new("procs-sigkill");
    let (mut child, _output) = s.start(Then::Hang, true);
    wait_for_process(&s.agent, Duration::from_secs(10));
    signal(&child, Signal::KILL);
    let _ = child.wait();
    let left = survivors(&s.agent, Duration::from_secs(5));
    assert!(left.is_empty(), "the agent outlived a SIGKILLed client: {left:?}");
    // The terminal command was started through `acp __exec-child` too. The `setsid` one
    // forked away from it, which no death signal follows (the guard kills it after the test).
    let left = survivors(&s.plain, Duration::from_secs(5));
    assert!(left.is_empty(), "the terminal outlived a SIGKILLed client: {left:?}");
}
