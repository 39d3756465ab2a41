//! No process outlives the client: the client is a child subreaper, so descendants that
//! leave their process group or session (`setsid`, double forks) are re-parented to it and
//! not to init, and [`end_all_processes`] kills and reaps every child left at shutdown.

use std::time::{Duration, Instant};

use acp_services::ClientServices;

/// How long [`end_all_processes`] keeps killing new orphans before giving up.
const END_DEADLINE: Duration = Duration::from_secs(3);
const ROUND: Duration = Duration::from_millis(10);

/// Makes this process the subreaper of its descendants (Linux; elsewhere a no-op).
pub(crate) fn become_subreaper() -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        rustix::process::set_child_subreaper(Some(rustix::process::Pid::INIT)).map_err(|e| e.to_string())
    }
    #[cfg(not(target_os = "linux"))]
    Ok(())
}

/// Ends every process the client started except the agent (ended by
/// [`super::process::AgentProcess::terminate`]): the terminals, what they started, and the
/// orphans re-parented to the client.
pub(crate) fn end_all_processes(services: &ClientServices, agent: Option<u32>) {
    // The terminals first (their groups killed, pending waits released), then whatever was
    // re-parented to this subreaper (`setsid` escapees); last, any child still listed.
    services.shutdown();
    #[cfg(target_os = "linux")]
    {
        let spare: Vec<u32> = agent.into_iter().collect();
        let _ = acp_services::terminal::kill_orphans(&spare);
    }
    let deadline = Instant::now() + END_DEADLINE;
    loop {
        let children: Vec<Child> = children().into_iter().filter(|c| Some(c.pid) != agent).collect();
        if children.is_empty() || Instant::now() >= deadline {
            return;
        }
        for child in &children {
            kill(child);
        }
        std::thread::sleep(ROUND);
    }
}

/// A child of this process, from `/proc`.
#[derive(Debug, Clone, Copy)]
struct Child {
    pid: u32,
    zombie: bool,
}

/// This process's children (Linux; elsewhere none are found).
fn children() -> Vec<Child> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (state, ppid) = parse_stat(&stat)?;
            (ppid == me).then_some(Child { pid, zombie: state == 'Z' })
        })
        .collect()
}

/// The state and the parent pid from `/proc/PID/stat` (`pid (comm) state ppid …`, where
/// `comm` may hold spaces and parentheses: the last `)` ends it).
fn parse_stat(stat: &str) -> Option<(char, u32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

#[cfg(unix)]
fn kill(child: &Child) {
    use rustix::process::{Pid, Signal, WaitOptions, kill_process, kill_process_group, waitpid};
    let Some(pid) = i32::try_from(child.pid).ok().and_then(Pid::from_raw) else { return };
    if child.zombie {
        // Orphans are reaped only here (a terminal's own waiter thread may get there first).
        let _ = waitpid(Some(pid), WaitOptions::NOHANG);
        return;
    }
    // A terminal leads its own process group: end what it started too.
    if rustix::process::getpgid(Some(pid)).is_ok_and(|group| group == pid) {
        let _ = kill_process_group(pid, Signal::KILL);
    }
    let _ = kill_process(pid, Signal::KILL);
}

#[cfg(not(unix))]
fn kill(_: &Child) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        assert_eq!(parse_stat("42 (sleep) S 7 42 42 0"), Some(('S', 7)));
        assert_eq!(parse_stat("42 (a) b) (c) Z 9 1"), Some(('Z', 9)));
        assert_eq!(parse_stat("garbage"), None);
    }
}
