//! [`kill_orphans`]: ends the processes that escaped their terminal's process group.

use std::io;

use rustix::io::Errno;
use rustix::process::{Pid, Signal, WaitOptions};

/// How many times to look again: killing an orphan hands its own children to this process.
const MAX_ROUNDS: usize = 16;

/// Kills (`SIGKILL`) and reaps every direct child of this process that is not in `spare`;
/// returns their pids. Linux only (it reads `/proc/<pid>/stat`).
///
/// A terminal command that calls `setsid` (or `setpgid`) leaves the process group that
/// [`Terminals`](super::Terminals) kills, and outlives its terminal. When its parent dies it
/// is handed to the nearest *child subreaper* among its ancestors, else to init. A client
/// that makes itself a subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`, e.g. with
/// `rustix::process::set_child_subreaper`) at start-up therefore becomes the parent of every
/// such orphan, and ends them all with this function when it quits:
///
/// 1. [`Terminals::shutdown`](super::Terminals::shutdown), which kills and reaps the
///    terminals' own children (do that first: this function would otherwise kill and reap
///    them behind their waiter threads' backs);
/// 2. `kill_orphans(&[agent_pid, …])`, sparing every child that other code of the process
///    still owns and waits for (the agent's `Child`, helpers of its own): those are neither
///    killed nor reaped here.
///
/// A process group led by an orphan is killed whole. The scan is repeated (a bounded number
/// of times) as long as it finds new orphans, since an orphan's own children come to this
/// process when it dies. Reaping blocks until each killed process is gone.
///
/// ```no_run
/// # #[cfg(target_os = "linux")] {
/// // At start-up, before spawning anything:
/// rustix::process::set_child_subreaper(Some(rustix::process::getpid())).unwrap();
/// // … serve the agent; when quitting, after `Terminals::shutdown()`:
/// let agent_pid = 4242; // `Child::id()` of the agent, which is waited for elsewhere
/// let killed = acp_services::terminal::kill_orphans(&[agent_pid]).unwrap();
/// eprintln!("ended {} stray processes", killed.len());
/// # }
/// ```
pub fn kill_orphans(spare: &[u32]) -> io::Result<Vec<u32>> {
    let mut killed: Vec<u32> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let found: Vec<Child> = children()?.into_iter().filter(|c| !spare.contains(&c.pid)).collect();
        if found.is_empty() {
            break;
        }
        for child in &found {
            kill(child);
        }
        for child in &found {
            reap(child.pid);
            if !killed.contains(&child.pid) {
                killed.push(child.pid);
            }
        }
    }
    Ok(killed)
}

/// A direct child of this process, as `/proc` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Child {
    pid: u32,
    group: u32,
}

/// The direct children of this process.
fn children() -> io::Result<Vec<Child>> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        // A process that ended since the listing has no `stat` any more: skip it.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        if let Some((parent, group)) = parent_and_group(&stat)
            && parent == me
        {
            found.push(Child { pid, group });
        }
    }
    Ok(found)
}

/// The parent pid and process group of a `/proc/<pid>/stat` line: `pid (comm) state ppid
/// pgrp …`, where `comm` may hold spaces and parentheses (hence the last `)`).
fn parent_and_group(stat: &str) -> Option<(u32, u32)> {
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let _state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some((parent, group))
}

/// `SIGKILL` to the child, and to its whole group if it leads one. The pid is safe to
/// signal: an unreaped child's pid cannot be reused, and only this process reaps it.
fn kill(child: &Child) {
    let Some(pid) = i32::try_from(child.pid).ok().and_then(Pid::from_raw) else { return };
    if child.group == child.pid {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    }
    let _ = rustix::process::kill_process(pid, Signal::KILL);
}

/// Waits for the killed child `pid` and reaps it.
fn reap(pid: u32) {
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else { return };
    loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Err(Errno::INTR) => continue,
            // Reaped, or (`ECHILD`) reaped by someone else in the meantime.
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_parsed_past_odd_command_names() {
        assert_eq!(parent_and_group("12 (sh) S 7 12 12 0 -1"), Some((7, 12)));
        assert_eq!(parent_and_group("12 (a) b (c) R 7 9 9 0"), Some((7, 9)));
        assert_eq!(parent_and_group("12 (x)"), None);
        assert_eq!(parent_and_group("garbage"), None);
    }

    #[test]
    fn this_process_children_are_listed() {
        let mut child = std::process::Command::new("sleep").arg("1000").spawn().unwrap();
        let listed = children().unwrap().iter().any(|c| c.pid == child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(listed);
    }
}
