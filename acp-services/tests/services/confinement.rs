//! Terminal commands are confined to the roots by the kernel (Landlock), real processes.
//!
//! Each test has a root `R` and, outside it, a directory `S` holding a secret. Without
//! Landlock these tests fail, unless `ACP_ALLOW_NO_LANDLOCK=1` is set: then they say they
//! skipped.
#![cfg(target_os = "linux")]

use crate::common;

use std::path::Path;

use acp_proto::types::*;
use acp_services::terminal::landlock_status;
use acp_services::{TerminalConfig, Terminals};
use common::{TempDir, kind};

const S: &str = "sess";
const SECRET: &str = "the-secret-words-7d1f";

/// Whether the kernel can confine; panics if not, unless `ACP_ALLOW_NO_LANDLOCK=1`.
fn landlock_or_skip(test: &str) -> bool {
    match landlock_status() {
        Ok(_) => true,
        Err(why) if std::env::var("ACP_ALLOW_NO_LANDLOCK").as_deref() == Ok("1") => {
            eprintln!("SKIPPED {test}: no Landlock ({why}) and ACP_ALLOW_NO_LANDLOCK=1");
            false
        }
        Err(why) => panic!("{test}: Landlock is not available ({why}); set ACP_ALLOW_NO_LANDLOCK=1 to skip"),
    }
}

/// The root `R`, the outside directory `S` with `S/secret`, and confined terminals on `R`.
fn setup(tag: &str) -> Option<(TempDir, TempDir, Terminals)> {
    if !landlock_or_skip(tag) {
        return None;
    }
    let (root, outside) = (TempDir::new(&format!("{tag}-root")), TempDir::new(&format!("{tag}-outside")));
    std::fs::write(outside.path().join("secret"), SECRET).unwrap();
    let terminals = Terminals::new(TerminalConfig::new([root.path()])).unwrap();
    Some((root, outside, terminals))
}

/// Runs `program args…` to its end: (exit code, output).
fn run(t: &Terminals, program: &str, args: &[&str]) -> (Option<u32>, String) {
    let mut r = CreateTerminalRequest::new(S, program);
    r.args = Some(args.iter().map(|a| (*a).to_owned()).collect());
    let id = t.create(&r).unwrap().terminal_id;
    let exit = t.wait_for_exit(&WaitForTerminalExitRequest::new(S, id.clone())).unwrap();
    let out = t.output(&TerminalOutputRequest::new(S, id.clone())).unwrap().output;
    t.release(&ReleaseTerminalRequest::new(S, id)).unwrap();
    (exit.exit_code, out)
}

fn sh(t: &Terminals, script: &str) -> (Option<u32>, String) {
    run(t, "sh", &["-c", script])
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn reading_outside_the_roots_fails() {
    let Some((_root, outside, t)) = setup("conf-read") else { return };
    let secret = path(&outside.path().join("secret"));
    let (code, out) = run(&t, "cat", &[&secret]);
    assert_ne!(code, Some(0), "{out}");
    assert!(!out.contains(SECRET), "{out}");
    let (code, out) = sh(&t, &format!("ls {}; head -c 100 < {secret}", path(outside.path())));
    assert_ne!(code, Some(0), "{out}");
    assert!(!out.contains(SECRET) && !out.lines().any(|l| l == "secret"), "{out}");
    // The client's own threads are not confined.
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), SECRET);
}

#[test]
fn writing_outside_the_roots_fails() {
    let Some((_root, outside, t)) = setup("conf-write") else { return };
    let new = outside.path().join("new");
    let (code, out) = sh(&t, &format!("echo x > {}", path(&new)));
    assert_ne!(code, Some(0), "{out}");
    assert!(!new.exists());
    let (code, _) = sh(&t, &format!("rm {}/secret", path(outside.path())));
    assert_ne!(code, Some(0));
    assert!(outside.path().join("secret").exists());
    // Nor is the shared /tmp writable by default.
    let stray = std::env::temp_dir().join(format!("acp-services-conf-stray-{}", std::process::id()));
    let (code, _) = sh(&t, &format!("echo x > {}", path(&stray)));
    assert_ne!(code, Some(0));
    assert!(!stray.exists());
}

#[test]
fn inside_the_roots_commands_work() {
    let Some((root, _outside, t)) = setup("conf-inside") else { return };
    std::fs::write(root.path().join("file"), "inside\n").unwrap();
    let r = path(root.path());
    let script = format!("cat {r}/file; echo y > {r}/out; mkdir sub && mv out sub/ && ls sub; rm -r sub; ls");
    let (code, out) = sh(&t, &script);
    assert_eq!((code, out.as_str()), (Some(0), "inside\nout\nfile\n"));
    // A program of the root may be executed.
    std::fs::write(root.path().join("tool.sh"), "#!/bin/sh\necho tool ran\n").unwrap();
    let (code, out) = sh(&t, "chmod +x tool.sh && ./tool.sh");
    assert_eq!((code, out.as_str()), (Some(0), "tool ran\n"));
}

#[test]
fn system_directories_can_be_read_and_executed() {
    let Some((root, _outside, t)) = setup("conf-system") else { return };
    let (code, out) = run(&t, "/bin/sh", &["-c", "ls /usr/bin >/dev/null && echo ok >/dev/null && echo done"]);
    assert_eq!((code, out.as_str()), (Some(0), "done\n"));
    // `git` in a repository of the root (its system config is in /etc, $HOME is out of reach).
    let (code, out) = sh(&t, "git init -q . && echo hi > a && git status --porcelain");
    assert_eq!((code, out.as_str()), (Some(0), "?? a\n"), "in {}", path(root.path()));
}

#[test]
fn a_symlink_in_the_roots_is_no_way_out() {
    let Some((root, outside, t)) = setup("conf-link") else { return };
    std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
    let (code, out) = run(&t, "cat", &["link/secret"]);
    assert_ne!(code, Some(0), "{out}");
    assert!(!out.contains(SECRET), "{out}");
    let (code, _) = sh(&t, "echo x > link/new; cd link && echo x > new2");
    assert_ne!(code, Some(0));
    assert!(!outside.path().join("new").exists() && !outside.path().join("new2").exists());
}

#[test]
fn signals_do_not_leave_the_sandbox() {
    let Some((_root, _outside, t)) = setup("conf-signal") else { return };
    if landlock_status().unwrap() < 6 {
        panic!("Landlock ABI 6 (signal scoping) is needed; this machine has {:?}", landlock_status());
    }
    // `kill -0` only checks the right to signal: this test process is outside the domain.
    let (code, _) = sh(&t, &format!("kill -0 {}", std::process::id()));
    assert_ne!(code, Some(0));
    // Within the sandbox it may.
    let (code, out) = sh(&t, "sleep 1000 & kill $! && wait $!; echo $?");
    assert_eq!(code, Some(0));
    assert!(out.ends_with("143\n"), "{out}");
}

#[test]
fn loader_variables_are_refused() {
    let dir = TempDir::new("conf-env");
    let mut config = TerminalConfig::new([dir.path()]);
    config.confine = false; // the refusal comes first, whatever the kernel
    let t = Terminals::new(config).unwrap();
    for name in ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GLIBC_TUNABLES", "DYLD_INSERT_LIBRARIES"] {
        let mut r = CreateTerminalRequest::new(S, "true");
        r.env = Some(vec![EnvVariable::new(name, "/tmp/evil.so")]);
        let e = t.create(&r).unwrap_err();
        assert_eq!((e.code.0, kind(&e).as_deref()), (-32602, Some("forbidden_env")), "{name}");
    }
    assert_eq!(t.live(), 0);
}

#[test]
fn unconfined_terminals_are_what_they_were() {
    // The opt-out is honoured: the same read that confinement stops succeeds.
    let (root, outside) = (TempDir::new("conf-off-root"), TempDir::new("conf-off-outside"));
    std::fs::write(outside.path().join("secret"), SECRET).unwrap();
    let mut config = TerminalConfig::new([root.path()]);
    config.confine = false;
    let t = Terminals::new(config).unwrap();
    let (code, out) = run(&t, "cat", &[&path(&outside.path().join("secret"))]);
    assert_eq!((code, out.as_str()), (Some(0), SECRET));
}

#[test]
fn extra_system_paths_can_be_granted() {
    let Some((root, outside, _)) = setup("conf-extra") else { return };
    let mut config = TerminalConfig::new([root.path()]);
    config.system_paths.push((outside.path().to_owned(), acp_services::terminal::PathAccess::Read));
    let t = Terminals::new(config).unwrap();
    let (code, out) = run(&t, "cat", &[&path(&outside.path().join("secret"))]);
    assert_eq!((code, out.as_str()), (Some(0), SECRET));
    let (code, _) = sh(&t, &format!("echo x > {}/new", path(outside.path())));
    assert_ne!(code, Some(0));
    assert!(!outside.path().join("new").exists());
}
