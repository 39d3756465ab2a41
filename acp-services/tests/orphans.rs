//! `kill_orphans`: a command that calls `setsid` escapes every process-group kill; a client
//! that is a child subreaper inherits it and ends it. Its own test binary, as it makes the
//! whole test process a subreaper and kills its children.
#![cfg(target_os = "linux")]

mod common;

use std::time::{Duration, Instant};

use acp_proto::types::*;
use acp_services::terminal::{kill_orphans, landlock_status};
use acp_services::{TerminalConfig, Terminals};
use common::TempDir;

const S: &str = "sess";

/// The parent pid of `pid` (`None`: gone).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !matches!(stat.rsplit_once(')').and_then(|(_, s)| s.trim_start().chars().next()), Some('Z'))
}

#[test]
fn a_setsid_escapee_is_found_and_killed() {
    let me = rustix::process::getpid();
    rustix::process::set_child_subreaper(Some(me)).unwrap();
    let dir = TempDir::new("orphans");
    let mut config = TerminalConfig::new([dir.path()]);
    // Confinement is not what this tests (and its domain does not stop our signals).
    config.confine = landlock_status().is_ok();
    config.exit_drain_grace = Duration::from_millis(20);
    let t = Terminals::new(config).unwrap();
    let mut r = CreateTerminalRequest::new(S, "sh");
    r.args = Some(vec!["-c".into(), "setsid sh -c 'echo $$; exec sleep 1000' &".into()]);
    let id = t.create(&r).unwrap().terminal_id;
    t.wait_for_exit(&WaitForTerminalExitRequest::new(S, id.clone())).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let escapee: u32 = loop {
        let out = t.output(&TerminalOutputRequest::new(S, id.clone())).unwrap().output;
        if let Some(pid) = out.lines().next().and_then(|l| l.trim().parse().ok()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "no pid printed: {out:?}");
        std::thread::sleep(Duration::from_millis(2));
    };
    // The defect: the terminals' own kill cannot reach it.
    t.shutdown();
    assert!(alive(escapee), "{escapee} died with its group: the test proves nothing");
    // Its shell is gone, so this subreaper is its parent now.
    assert_eq!(parent_of(escapee), Some(std::process::id()));
    // A child that other code owns is spared.
    let mut owned = std::process::Command::new("sleep").arg("1000").spawn().unwrap();

    let killed = kill_orphans(&[owned.id()]).unwrap();

    assert_eq!(killed, vec![escapee]);
    assert!(std::fs::metadata(format!("/proc/{escapee}")).is_err(), "{escapee} not killed and reaped");
    assert!(owned.try_wait().unwrap().is_none(), "the spared child was touched");
    owned.kill().unwrap();
    owned.wait().unwrap();
    assert_eq!(kill_orphans(&[]).unwrap(), Vec::<u32>::new());
}
