//! Scenario tests of `terminal/*` through [`Terminals`] (Unix: they run `sh`, `printf`...).
#![cfg(unix)]

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_proto::types::*;
use acp_services::{TerminalConfig, Terminals};
use common::{TempDir, kind};

const S: &str = "sess";

fn terminals(dir: &TempDir) -> Terminals {
    Terminals::new(TerminalConfig::new([dir.path()])).unwrap()
}

fn run(t: &Terminals, command: &str, args: &[&str]) -> TerminalId {
    let mut r = CreateTerminalRequest::new(S, command);
    r.args = Some(args.iter().map(|a| (*a).to_owned()).collect());
    t.create(&r).unwrap().terminal_id
}

fn sh(t: &Terminals, script: &str) -> TerminalId {
    run(t, "sh", &["-c", script])
}

fn output(t: &Terminals, id: &TerminalId) -> TerminalOutputResponse {
    t.output(&TerminalOutputRequest::new(S, id.clone())).unwrap()
}

fn wait(t: &Terminals, id: &TerminalId) -> WaitForTerminalExitResponse {
    t.wait_for_exit(&WaitForTerminalExitRequest::new(S, id.clone())).unwrap()
}

fn release(t: &Terminals, id: &TerminalId) {
    t.release(&ReleaseTerminalRequest::new(S, id.clone())).unwrap();
}

/// Polls the output until `done` holds (the command prints, then keeps running).
fn output_until(t: &Terminals, id: &TerminalId, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = output(t, id).output;
        if done(&out) {
            return out;
        }
        assert!(Instant::now() < deadline, "timed out; output so far: {out:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The first line of output, as a pid.
fn printed_pid(t: &Terminals, id: &TerminalId) -> u32 {
    let out = output_until(t, id, |o| o.contains('\n'));
    out.lines().next().unwrap().trim().parse().unwrap()
}

/// Whether `pid` is gone or a zombie (dead, not yet reaped by its new parent).
#[cfg(target_os = "linux")]
fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => matches!(stat.rsplit(')').next().and_then(|s| s.trim_start().chars().next()), Some('Z' | 'X')),
    }
}

#[cfg(target_os = "linux")]
fn assert_dies(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !dead(pid) {
        assert!(Instant::now() < deadline, "process {pid} survived");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn combined_output_and_exit_code() {
    let dir = TempDir::new("term-basic");
    let t = terminals(&dir);
    let id = sh(&t, "echo out; echo err >&2; exit 3");
    let exit = wait(&t, &id);
    assert_eq!((exit.exit_code, exit.signal.as_deref()), (Some(3), None));
    let out = output(&t, &id);
    assert_eq!((out.output.as_str(), out.truncated), ("out\nerr\n", false));
    assert_eq!(
        serde_json::to_value(&out).unwrap(),
        serde_json::json!({"output": "out\nerr\n", "truncated": false, "exitStatus": {"exitCode": 3}})
    );
    // Waiting again answers at once, the same.
    assert_eq!(wait(&t, &id), exit);
    release(&t, &id);
}

#[test]
fn arguments_are_passed_verbatim_without_a_shell() {
    let dir = TempDir::new("term-args");
    let t = terminals(&dir);
    let id = run(&t, "printf", &["%s|", "a b", "$HOME", "*", "it's", ""]);
    assert_eq!(wait(&t, &id).exit_code, Some(0));
    assert_eq!(output(&t, &id).output, "a b|$HOME|*|it's||");
    // A command line is not a program name.
    let e = t.create(&CreateTerminalRequest::new(S, "echo hi")).unwrap_err();
    assert_eq!((e.code.0, kind(&e).as_deref()), (-32002, Some("command_not_found")));
}

#[test]
fn the_shell_option() {
    let dir = TempDir::new("term-shell");
    let mut config = TerminalConfig::new([dir.path()]);
    config.shell = true;
    let t = Terminals::new(config).unwrap();
    let id = run(&t, "echo $((1 + 2)) && printf '%s|'", &["a b", "it's", "$HOME"]);
    assert_eq!(wait(&t, &id).exit_code, Some(0));
    assert_eq!(output(&t, &id).output, "3\na b|it's|$HOME|");
}

#[test]
fn environment() {
    let dir = TempDir::new("term-env");
    let t = terminals(&dir);
    let mut r = CreateTerminalRequest::new(S, "sh");
    r.args = Some(vec!["-c".into(), "echo \"$GREETING ${HOME:+has-home}\"".into()]);
    r.env = Some(vec![EnvVariable::new("GREETING", "hello there")]);
    let id = t.create(&r).unwrap().terminal_id;
    wait(&t, &id);
    let home = if std::env::var_os("HOME").is_some_and(|h| !h.is_empty()) { "has-home" } else { "" };
    assert_eq!(output(&t, &id).output, format!("hello there {home}\n"));

    let mut config = TerminalConfig::new([dir.path()]);
    config.inherit_env = false;
    let clean = Terminals::new(config).unwrap();
    r.command = "/bin/sh".into();
    let id = clean.create(&r).unwrap().terminal_id;
    clean.wait_for_exit(&WaitForTerminalExitRequest::new(S, id.clone())).unwrap();
    assert_eq!(clean.output(&TerminalOutputRequest::new(S, id)).unwrap().output, "hello there \n");
}

#[test]
fn working_directories() {
    let dir = TempDir::new("term-cwd");
    std::fs::create_dir_all(dir.path().join("sub/inner")).unwrap();
    std::os::unix::fs::symlink("sub/inner", dir.path().join("link")).unwrap();
    let t = terminals(&dir);
    let pwd = |cwd: Option<String>| {
        let mut r = CreateTerminalRequest::new(S, "pwd");
        r.args = Some(vec!["-P".into()]);
        r.cwd = cwd;
        let id = t.create(&r).unwrap().terminal_id;
        wait(&t, &id);
        output(&t, &id).output
    };
    assert_eq!(pwd(None), format!("{}\n", dir.path().display()));
    assert_eq!(pwd(Some(dir.join("sub"))), format!("{}/sub\n", dir.path().display()));
    assert_eq!(pwd(Some(dir.join("link"))), format!("{}/sub/inner\n", dir.path().display()));
    std::os::unix::fs::symlink("/", dir.path().join("out")).unwrap();
    let mut r = CreateTerminalRequest::new(S, "pwd");
    for (cwd, k) in
        [(dir.join("out"), "symlink_escape"), (dir.join(".."), "path_traversal"), ("/".into(), "outside_roots")]
    {
        r.cwd = Some(cwd);
        let e = t.create(&r).unwrap_err();
        assert_eq!((e.code.0, kind(&e).as_deref()), (-32602, Some(k)), "{r:?}");
    }
    assert_eq!(t.live(), 3);
}

#[test]
fn truncation_from_the_start_at_a_character_boundary() {
    let dir = TempDir::new("term-trunc");
    let t = terminals(&dir);
    for (limit, expect, truncated) in [(2, "b", true), (3, "éb", true), (4, "aéb", false), (0, "", true)] {
        let mut r = CreateTerminalRequest::new(S, "printf");
        r.args = Some(vec!["aéb".into()]);
        r.output_byte_limit = Some(limit);
        let id = t.create(&r).unwrap().terminal_id;
        wait(&t, &id);
        let out = output(&t, &id);
        assert_eq!((out.output.as_str(), out.truncated), (expect, truncated), "limit {limit}");
        release(&t, &id);
    }
    // Invalid UTF-8 is replaced, not dropped.
    let id = run(&t, "printf", &["\\377ok"]);
    wait(&t, &id);
    assert_eq!(output(&t, &id).output, "\u{FFFD}ok");
}

#[test]
fn a_chatty_process_never_blocks() {
    let dir = TempDir::new("term-chatty");
    let t = terminals(&dir);
    let mut r = CreateTerminalRequest::new(S, "sh");
    // 8 MB through a 64 KiB pipe: only a reader that keeps draining lets this finish.
    r.args = Some(vec!["-c".into(), "yes 0123456789abcdef | head -c 8000000; echo; echo END".into()]);
    r.output_byte_limit = Some(1000);
    let id = t.create(&r).unwrap().terminal_id;
    assert_eq!(wait(&t, &id).exit_code, Some(0));
    let out = output(&t, &id);
    assert!(out.truncated && out.output.len() <= 1000 && out.output.len() > 900);
    assert!(out.output.ends_with("\nEND\n"), "{:?}", &out.output[out.output.len() - 40..]);
}

#[test]
fn kill_keeps_the_terminal_release_forgets_it() {
    let dir = TempDir::new("term-kill");
    let t = terminals(&dir);
    let id = sh(&t, "echo ready; exec sleep 1000");
    output_until(&t, &id, |o| o == "ready\n");
    let w = WaitForTerminalExitRequest::new(S, id.clone());
    assert_eq!(output(&t, &id).exit_status, None);
    assert_eq!(t.try_wait_for_exit(&w).unwrap(), None);
    assert_eq!(t.wait_for_exit_timeout(&w, Duration::from_millis(5)).unwrap(), None);

    t.kill(&KillTerminalRequest::new(S, id.clone())).unwrap();
    let exit = wait(&t, &id);
    assert_eq!((exit.exit_code, exit.signal.as_deref()), (None, Some("SIGKILL")));
    let out = output(&t, &id);
    assert_eq!(out.output, "ready\n");
    assert_eq!(out.exit_status.unwrap().signal.as_deref(), Some("SIGKILL"));
    assert_eq!(t.try_wait_for_exit(&w).unwrap(), Some(exit));
    // Killing an exited command is a no-op.
    t.kill(&KillTerminalRequest::new(S, id.clone())).unwrap();

    release(&t, &id);
    assert_eq!(t.live(), 0);
    let not_found = |e: acp_proto::RpcError| (e.code.0, kind(&e));
    let gone = (-32002, Some("unknown_terminal".to_owned()));
    assert_eq!(not_found(t.output(&TerminalOutputRequest::new(S, id.clone())).unwrap_err()), gone);
    assert_eq!(not_found(t.wait_for_exit(&w).unwrap_err()), gone);
    assert_eq!(not_found(t.kill(&KillTerminalRequest::new(S, id.clone())).unwrap_err()), gone);
    assert_eq!(not_found(t.release(&ReleaseTerminalRequest::new(S, id.clone())).unwrap_err()), gone);
}

#[test]
fn terminals_belong_to_their_session() {
    let dir = TempDir::new("term-session");
    let t = terminals(&dir);
    let id = sh(&t, "exec sleep 1000");
    let other = t.output(&TerminalOutputRequest::new("other", id.clone())).unwrap_err();
    assert_eq!(other.code.0, -32002);
    assert!(t.release(&ReleaseTerminalRequest::new("other", id.clone())).is_err());
    let second = sh(&t, "exec sleep 1000");
    assert_eq!(t.release_session(&SessionId::from("other")), 0);
    assert_eq!(t.release_session(&SessionId::from(S)), 2);
    assert_eq!(t.live(), 0);
    assert!(t.output(&TerminalOutputRequest::new(S, second)).is_err());
}

#[test]
fn ids_are_unique() {
    let dir = TempDir::new("term-ids");
    let t = terminals(&dir);
    let u = terminals(&dir);
    let mut ids: Vec<TerminalId> = (0..5).flat_map(|_| [run(&t, "true", &[]), run(&u, "true", &[])]).collect();
    for id in &ids {
        assert!(id.as_str().starts_with("term-"));
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 10);
}

#[test]
fn one_instance_shared_by_threads() {
    let dir = TempDir::new("term-threads");
    let mut config = TerminalConfig::new([dir.path()]);
    config.max_terminals = 64;
    let t = Arc::new(Terminals::new(config).unwrap());
    // A thread blocked in wait_for_exit is woken by a kill from another.
    let id = sh(&t, "exec sleep 1000");
    let waiter = {
        let (t, id) = (t.clone(), id.clone());
        std::thread::spawn(move || wait(&t, &id))
    };
    let workers: Vec<_> = (0..4)
        .map(|i| {
            let t = t.clone();
            std::thread::spawn(move || {
                for j in 0..3 {
                    let id = run(&t, "echo", &[&format!("{i}-{j}")]);
                    assert_eq!(wait(&t, &id).exit_code, Some(0));
                    assert_eq!(output(&t, &id).output, format!("{i}-{j}\n"));
                    release(&t, &id);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    t.kill(&KillTerminalRequest::new(S, id.clone())).unwrap();
    assert_eq!(waiter.join().unwrap().signal.as_deref(), Some("SIGKILL"));
    release(&t, &id);
}

#[cfg(target_os = "linux")]
#[test]
fn kill_reaches_the_whole_process_group() {
    let dir = TempDir::new("term-group");
    let t = terminals(&dir);
    let id = sh(&t, "sleep 1000 & echo $!; wait");
    let grandchild = printed_pid(&t, &id);
    assert!(!dead(grandchild));
    t.kill(&KillTerminalRequest::new(S, id.clone())).unwrap();
    assert_eq!(wait(&t, &id).signal.as_deref(), Some("SIGKILL"));
    assert_dies(grandchild);
    release(&t, &id);
}

#[cfg(target_os = "linux")]
#[test]
fn release_kills_a_running_command() {
    let dir = TempDir::new("term-release");
    let t = terminals(&dir);
    let id = sh(&t, "echo $$; exec sleep 1000");
    let pid = printed_pid(&t, &id);
    release(&t, &id);
    assert_dies(pid);
}

#[cfg(target_os = "linux")]
#[test]
fn a_descendant_holding_the_pipe_delays_the_exit_by_the_grace_only() {
    let dir = TempDir::new("term-straggler");
    let mut config = TerminalConfig::new([dir.path()]);
    config.exit_drain_grace = Duration::from_millis(20);
    let t = Terminals::new(config).unwrap();
    // The shell exits at once; its background `sleep` keeps the output pipe open.
    let id = sh(&t, "sleep 1000 & echo $!");
    assert_eq!(wait(&t, &id).exit_code, Some(0));
    let straggler: u32 = output(&t, &id).output.trim().parse().unwrap();
    assert!(!dead(straggler));
    // The group outlives its leader: release still reaches it.
    release(&t, &id);
    assert_dies(straggler);
}

#[cfg(target_os = "linux")]
#[test]
fn drop_kills_and_reaps_everything() {
    let dir = TempDir::new("term-drop");
    let (pid, released_pid, grandchild) = {
        let t = terminals(&dir);
        let a = sh(&t, "echo $$; exec sleep 1000");
        let b = sh(&t, "echo $$; exec sleep 1000");
        let c = sh(&t, "sleep 1000 & echo $!; wait");
        let pids = (printed_pid(&t, &a), printed_pid(&t, &b), printed_pid(&t, &c));
        release(&t, &b);
        pids
    };
    // Our own children are reaped by the time `drop` returns: no zombie left.
    assert!(std::fs::metadata(format!("/proc/{pid}")).is_err(), "{pid} not reaped");
    assert_dies(released_pid);
    assert_dies(grandchild);
}

/// Whether `pid` no longer exists at all (reaped, not even a zombie).
#[cfg(target_os = "linux")]
fn reaped(pid: u32) -> bool {
    std::fs::metadata(format!("/proc/{pid}")).is_err()
}

#[cfg(target_os = "linux")]
#[test]
fn shutdown_ends_a_blocked_wait_and_its_process() {
    let dir = TempDir::new("term-shutdown");
    let t = Arc::new(terminals(&dir));
    let id = sh(&t, "echo $$; exec sleep 1000");
    let pid = printed_pid(&t, &id);
    let waiter = {
        let (t, id) = (t.clone(), id.clone());
        std::thread::spawn(move || t.wait_for_exit(&WaitForTerminalExitRequest::new(S, id)))
    };
    // Give the waiter time to block (it returns the same either way: this is no timing test).
    std::thread::sleep(Duration::from_millis(50));
    t.shutdown();
    // Our own child is killed and reaped by the time `shutdown` returns.
    assert!(reaped(pid), "{pid} survived the shutdown");
    let shut_down_or_killed = |r: Result<WaitForTerminalExitResponse, acp_proto::RpcError>| match r {
        Ok(exit) => exit.signal.as_deref() == Some("SIGKILL"),
        Err(e) => (e.code.0, kind(&e).as_deref()) == (-32603, Some("shut_down")),
    };
    let pending = waiter.join().unwrap();
    assert!(shut_down_or_killed(pending.clone()), "{pending:?}");
    // Later waits return at once too, and nothing new starts.
    let later = t.wait_for_exit(&WaitForTerminalExitRequest::new(S, id.clone()));
    assert!(shut_down_or_killed(later.clone()), "{later:?}");
    let e = t.create(&CreateTerminalRequest::new(S, "true")).unwrap_err();
    assert_eq!((e.code.0, kind(&e).as_deref()), (-32603, Some("shut_down")));
    assert_eq!(output(&t, &id).output, format!("{pid}\n"));
    t.shutdown();
}

#[cfg(target_os = "linux")]
#[test]
fn shutdown_reaches_every_terminal_and_groups_that_outlived_their_leader() {
    let dir = TempDir::new("term-shutdown-groups");
    let t = terminals(&dir);
    // The shell exits at once; its background `sleep` stays in the group.
    let id = sh(&t, "sleep 1000 & echo $!");
    let straggler = printed_pid(&t, &id);
    wait(&t, &id);
    let running = sh(&t, "echo $$; exec sleep 1000");
    let pid = printed_pid(&t, &running);
    t.shutdown();
    assert!(reaped(pid));
    assert_dies(straggler);
    release(&t, &id);
}

#[test]
fn a_wait_can_be_given_up() {
    let dir = TempDir::new("term-cancel");
    let t = Arc::new(terminals(&dir));
    let id = sh(&t, "exec sleep 1000");
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let waiter = {
        let (t, id, cancel) = (t.clone(), id.clone(), cancel.clone());
        std::thread::spawn(move || {
            let w = WaitForTerminalExitRequest::new(S, id);
            t.wait_for_exit_until(&w, &|| cancel.load(std::sync::atomic::Ordering::SeqCst))
        })
    };
    cancel.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(waiter.join().unwrap().unwrap(), None);
    // Giving up the wait left the command running.
    assert_eq!(output(&t, &id).exit_status, None);
    t.kill(&KillTerminalRequest::new(S, id.clone())).unwrap();
    let exit = t.wait_for_exit_until(&WaitForTerminalExitRequest::new(S, id.clone()), &|| false).unwrap().unwrap();
    assert_eq!(exit.signal.as_deref(), Some("SIGKILL"));
    release(&t, &id);
}
