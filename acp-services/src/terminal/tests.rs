use super::*;
use crate::testutil::TempDir;
use acp_proto::types::EnvVariable;
use std::path::Path;

fn terminals(dir: &TempDir) -> Terminals {
    Terminals::new(TerminalConfig::new([dir.path()])).unwrap()
}

fn kind(e: &RpcError) -> Option<ErrorKind> {
    ErrorKind::of(e)
}

#[test]
fn defaults() {
    let c = TerminalConfig::new(["/a", "/b"]);
    assert_eq!(c.default_cwd.as_deref(), Some(Path::new("/a")));
    assert!(!c.shell && c.inherit_env);
    assert_eq!((c.max_terminals, c.default_output_byte_limit), (16, 1 << 20));
    assert_eq!(TerminalConfig::default().default_cwd, None);
}

#[test]
fn bad_commands_and_env_are_refused_before_spawning() {
    let dir = TempDir::new("term-bad");
    let t = terminals(&dir);
    let create = |f: &dyn Fn(&mut CreateTerminalRequest)| {
        let mut r = CreateTerminalRequest::new("s", "true");
        f(&mut r);
        t.create(&r).map(|_| ()).unwrap_err()
    };
    let e = create(&|r| r.command = String::new());
    assert_eq!((e.code.0, kind(&e)), (-32602, Some(ErrorKind::InvalidCommand)));
    assert_eq!(kind(&create(&|r| r.command = "  ".into())), Some(ErrorKind::InvalidCommand));
    assert_eq!(kind(&create(&|r| r.command = "a\0b".into())), Some(ErrorKind::InvalidCommand));
    assert_eq!(kind(&create(&|r| r.args = Some(vec!["\0".into()]))), Some(ErrorKind::InvalidCommand));
    for (name, value) in [("", "v"), ("A=B", "v"), ("A\0", "v"), ("A", "v\0")] {
        let e = create(&|r| r.env = Some(vec![EnvVariable::new(name, value)]));
        assert_eq!(kind(&e), Some(ErrorKind::InvalidEnv), "{name:?}={value:?}");
    }
    let e = create(&|r| r.cwd = Some("relative".into()));
    assert_eq!(kind(&e), Some(ErrorKind::NotAbsolute));
    let e = create(&|r| r.cwd = Some("/".into()));
    assert_eq!(kind(&e), Some(ErrorKind::OutsideRoots));
    let e = create(&|r| r.cwd = Some(dir.join("missing")));
    assert_eq!((e.code.0, kind(&e)), (-32002, Some(ErrorKind::NotFound)));
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let e = create(&|r| r.cwd = Some(dir.join("file")));
    assert_eq!(kind(&e), Some(ErrorKind::NotADirectory));
    assert_eq!(t.live(), 0);
}

#[test]
fn a_missing_program_is_not_found() {
    let dir = TempDir::new("term-missing");
    let t = terminals(&dir);
    let e = t.create(&CreateTerminalRequest::new("s", "acp-services-no-such-program")).unwrap_err();
    assert_eq!((e.code.0, kind(&e)), (-32002, Some(ErrorKind::CommandNotFound)));
    assert_eq!(t.live(), 0);
    // The slot was given back.
    assert_eq!(lock(&t.registry).starting, 0);
}

#[test]
fn without_a_default_cwd_a_cwd_is_required() {
    let dir = TempDir::new("term-nocwd");
    let mut config = TerminalConfig::new([dir.path()]);
    config.default_cwd = None;
    let t = Terminals::new(config).unwrap();
    let e = t.create(&CreateTerminalRequest::new("s", "true")).unwrap_err();
    assert_eq!(kind(&e), Some(ErrorKind::NoWorkingDirectory));
}

#[test]
fn construction_checks_the_directories() {
    let dir = TempDir::new("term-new");
    assert!(Terminals::new(TerminalConfig::new([dir.path().join("missing")])).is_err());
    let mut config = TerminalConfig::new([dir.path()]);
    config.default_cwd = Some(dir.path().join("missing"));
    assert!(Terminals::new(config).is_err());
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let mut config = TerminalConfig::new([dir.path()]);
    config.default_cwd = Some(dir.path().join("file"));
    assert_eq!(Terminals::new(config).unwrap_err().kind(), io::ErrorKind::NotADirectory);
}

#[test]
fn unknown_ids_answer_resource_not_found() {
    let dir = TempDir::new("term-unknown");
    let t = terminals(&dir);
    let e = t.output(&TerminalOutputRequest::new("s", "term-0")).unwrap_err();
    assert_eq!((e.code.0, kind(&e)), (-32002, Some(ErrorKind::UnknownTerminal)));
    assert!(t.kill(&KillTerminalRequest::new("s", "nope")).is_err());
    assert!(t.release(&ReleaseTerminalRequest::new("s", "nope")).is_err());
    assert!(t.wait_for_exit(&WaitForTerminalExitRequest::new("s", "nope")).is_err());
    assert!(t.try_wait_for_exit(&WaitForTerminalExitRequest::new("s", "nope")).is_err());
    let w = WaitForTerminalExitRequest::new("s", "nope");
    assert!(t.wait_for_exit_timeout(&w, Duration::ZERO).is_err());
    assert_eq!(t.release_session(&SessionId::from("s")), 0);
}

#[cfg(unix)]
#[test]
fn slots_are_capped_and_given_back() {
    let dir = TempDir::new("term-cap");
    let mut config = TerminalConfig::new([dir.path()]);
    config.max_terminals = 1;
    let t = Terminals::new(config).unwrap();
    let id = t.create(&CreateTerminalRequest::new("s", "true")).unwrap().terminal_id;
    let e = t.create(&CreateTerminalRequest::new("s", "true")).unwrap_err();
    assert_eq!((e.code.0, kind(&e)), (-32603, Some(ErrorKind::TooManyTerminals)));
    t.release(&ReleaseTerminalRequest::new("s", id)).unwrap();
    let id = t.create(&CreateTerminalRequest::new("s", "true")).unwrap().terminal_id;
    assert_eq!(t.live(), 1);
    t.wait_for_exit(&WaitForTerminalExitRequest::new("s", id)).unwrap();
}

#[cfg(unix)]
#[test]
fn huge_limits_and_graces_do_not_overflow() {
    let dir = TempDir::new("term-huge");
    let mut config = TerminalConfig::new([dir.path()]);
    config.exit_drain_grace = Duration::MAX;
    let t = Terminals::new(config).unwrap();
    let mut r = CreateTerminalRequest::new("s", "echo");
    r.args = Some(vec!["hi".into()]);
    r.output_byte_limit = Some(u64::MAX);
    let id = t.create(&r).unwrap().terminal_id;
    let w = WaitForTerminalExitRequest::new("s", id.clone());
    let exit = t.wait_for_exit_timeout(&w, Duration::MAX).unwrap().unwrap();
    assert_eq!(exit.exit_code, Some(0));
    assert_eq!(t.output(&TerminalOutputRequest::new("s", id)).unwrap().output, "hi\n");
}

#[cfg(unix)]
#[test]
fn released_terminals_keep_no_output() {
    let dir = TempDir::new("term-released");
    let t = terminals(&dir);
    let mut r = CreateTerminalRequest::new("s", "sh");
    r.args = Some(vec!["-c".into(), "echo hello; exec sleep 1000".into()]);
    let id = t.create(&r).unwrap().terminal_id;
    let proc = t.find(&SessionId::from("s"), &id).unwrap();
    while lock(&proc.state).output.text().is_empty() {
        thread::sleep(Duration::from_millis(1));
    }
    t.release(&ReleaseTerminalRequest::new("s", id)).unwrap();
    let st = lock(&proc.state);
    assert!(st.released && st.output.text().is_empty());
}

#[test]
fn confinement_defaults() {
    let c = TerminalConfig::new(["/a"]);
    assert!(c.confine && !c.allow_partial_confinement);
    let has = |p: &str, a: PathAccess| c.system_paths.contains(&(PathBuf::from(p), a));
    assert!(has("/usr", PathAccess::Read) && has("/etc", PathAccess::Read) && has("/proc", PathAccess::Read));
    assert!(has("/dev/null", PathAccess::ReadWrite));
    // Nothing shared is writable, and /tmp is not even readable.
    assert!(!c.system_paths.iter().any(|(p, _)| p.starts_with("/tmp")));
    let writable: Vec<_> = c.system_paths.iter().filter(|(_, a)| *a == PathAccess::ReadWrite).collect();
    assert!(writable.iter().all(|(p, _)| p.starts_with("/dev/")), "{writable:?}");
}

#[test]
fn loader_variables_are_named() {
    for name in
        ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_DEBUG_OUTPUT", "GLIBC_TUNABLES", "DYLD_INSERT_LIBRARIES"]
    {
        assert!(loader_variable(name), "{name}");
    }
    for name in ["LDFLAGS", "PATH", "ld_preload", "OLD_PRELOAD", "GLIBC_TUNABLES_X"] {
        assert!(!loader_variable(name), "{name}");
    }
}

#[cfg(unix)]
#[test]
fn creation_after_shutdown_is_refused() {
    let dir = TempDir::new("term-race");
    let mut config = TerminalConfig::new([dir.path()]);
    config.confine = false;
    let t = Terminals::new(config).unwrap();
    t.shutdown();
    let e = t.create(&CreateTerminalRequest::new("s", "true")).unwrap_err();
    assert_eq!((e.code.0, kind(&e)), (-32603, Some(ErrorKind::ShutDown)));
    assert_eq!((t.live(), lock(&t.registry).starting), (0, 0));
}

#[cfg(target_os = "linux")]
#[test]
fn a_launcher_starts_each_command_and_may_run_confined() {
    // A launcher outside the roots and the system paths: only its own grant lets the
    // confined spawner execute it.
    let (root, elsewhere) = (TempDir::new("term-launch"), TempDir::new("term-launcher"));
    let launcher = elsewhere.path().join("env");
    std::fs::copy("/usr/bin/env", &launcher).unwrap();
    let mut config = TerminalConfig::new([root.path()]);
    assert!(config.confine);
    config.launcher = vec![launcher.into(), "LAUNCHED=yes".into()];
    let t = Terminals::new(config).unwrap();
    let mut r = CreateTerminalRequest::new("s", "sh");
    r.args = Some(vec!["-c".into(), "echo launched=$LAUNCHED".into()]);
    let id = t.create(&r).unwrap().terminal_id;
    let exit = t.wait_for_exit(&WaitForTerminalExitRequest::new("s", id.clone())).unwrap();
    assert_eq!(exit.exit_code, Some(0));
    assert_eq!(t.output(&TerminalOutputRequest::new("s", id)).unwrap().output, "launched=yes\n");
    // A missing program is refused before the launcher runs, as without one.
    let e = t.create(&CreateTerminalRequest::new("s", "acp-services-no-such-program")).unwrap_err();
    assert_eq!(kind(&e), Some(ErrorKind::CommandNotFound));
    let e = t.create(&CreateTerminalRequest::new("s", "./missing")).unwrap_err();
    assert_eq!(kind(&e), Some(ErrorKind::CommandNotFound));
    assert_eq!(t.live(), 1);
}
