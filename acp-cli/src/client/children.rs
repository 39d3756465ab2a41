//! No process outlives the client: the client is a child subreaper, so descendants that
//! leave their process group or session (`setsid`, double forks) are re-parented to it and
//! not to init, and [`end_all_processes`] kills and reaps every child left at shutdown.

use acp_services::ClientServices;

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
/// [`super::process::AgentProcess::terminate`]): the terminals (their groups killed, pending
/// waits released), then what was re-parented to this subreaper (`setsid` escapees and what
/// they started), through [`acp_services::terminal::kill_orphans`].
pub(crate) fn end_all_processes(services: &ClientServices, agent: Option<u32>) {
    services.shutdown();
    end_orphans(agent);
}

/// Kills and reaps what was re-parented to this subreaper, except the `agent` (the v2 client,
/// which starts no terminals, calls only this).
pub(crate) fn end_orphans(agent: Option<u32>) {
    #[cfg(target_os = "linux")]
    {
        let spare: Vec<u32> = agent.into_iter().collect();
        let _ = acp_services::terminal::kill_orphans(&spare);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = agent;
}
