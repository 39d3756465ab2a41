//! `--auth ID` with a `terminal` authentication method: the client runs the agent's own
//! command line with the method's `args` appended and its `env` set, attached to the user's
//! terminal (stdin, stdout and stderr inherited), waits for it, and only then sends
//! `authenticate`. Advertised (`auth.terminal`) only for an agent the client spawns, whose
//! command line it knows.

use std::ffi::OsString;
use std::process::Command;

use acp_blocking::acp_proto::types::AuthMethodTerminal;

/// The command line run for `method`: the agent's, then the method's `args`.
pub(crate) fn command_line(agent: &[OsString], method: &AuthMethodTerminal) -> Vec<OsString> {
    let mut line = agent.to_vec();
    line.extend(method.args.iter().flatten().map(OsString::from));
    line
}

/// Runs `method` on the user's terminal and waits for it; `Err(why)` when it could not be
/// run or did not exit successfully.
pub(crate) fn run(agent: &[OsString], method: &AuthMethodTerminal) -> Result<(), String> {
    let line = command_line(agent, method);
    let Some((program, args)) = line.split_first() else {
        return Err("a terminal authentication method needs the agent's command line (not --connect)".to_owned());
    };
    let mut command = Command::new(program);
    command.args(args);
    for (key, value) in method.env.iter().flatten() {
        command.env(key, value);
    }
    let status = command.status().map_err(|e| format!("cannot run {}: {e}", program.to_string_lossy()))?;
    if status.success() { Ok(()) } else { Err(format!("the login command ended with {status}")) }
}
