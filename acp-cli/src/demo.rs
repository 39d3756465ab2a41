//! `acp demo`: `acp client` against the built-in reference agent (`acp agent`, spawned from
//! this same executable), with a sample prompt naming a temporary file, so that one command
//! shows a whole ACP session: the handshake, streamed text, a thought, a plan, a tool call, a
//! permission question, a sandboxed `fs/read_text_file` and the stop reason.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::Exit;
use crate::client::{self, ClientConfig, Policy, Style};

/// The file the demo's agent reads.
const NOTES: &str = "\
# Notes for the ACP demo

The Agent Client Protocol lets an editor (the client) drive a coding agent
over JSON-RPC on the agent's stdin and stdout. The agent asked for permission
to read this file, and the client read it from a sandbox confined to the
demo's temporary directory.
";

/// What `acp demo` runs.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DemoConfig {
    /// How the permission question is answered; `None`: ask on a terminal, allow otherwise
    /// (so that a piped demo shows the whole turn).
    pub policy: Option<Policy>,
    /// Show the agent's stderr.
    pub show_stderr: bool,
    /// How to draw; `None`: from the environment.
    pub style: Option<Style>,
    /// The ACP version the client and the agent speak (v2 needs the feature
    /// `unstable_protocol_v2`; in v2 the agent cannot read the file: v2 has no `fs/*`).
    pub protocol: crate::Protocol,
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("acp-demo-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        // The sandbox resolves symbolic links (macOS's /tmp is one): show the real path.
        Ok(TempDir(std::fs::canonicalize(&dir)?))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the demo; returns the client's exit status.
pub fn run(config: DemoConfig) -> Exit {
    if let Err(e) = config.protocol.available() {
        eprintln!("acp demo: {e}");
        return Exit::Usage;
    }
    let exe: PathBuf = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("acp demo: cannot find this executable to start `acp agent`: {e}");
            return Exit::Failure;
        }
    };
    let dir = match TempDir::new() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("acp demo: cannot create a temporary directory: {e}");
            return Exit::Failure;
        }
    };
    let file = dir.path().join("notes.md");
    if let Err(e) = std::fs::write(&file, NOTES) {
        eprintln!("acp demo: cannot write {}: {e}", file.display());
        return Exit::Failure;
    }

    let interactive = std::io::stdin().is_terminal();
    let mut agent = vec![exe.clone().into_os_string(), OsString::from("agent")];
    let v2 = config.protocol == crate::Protocol::V2;
    if v2 {
        agent.extend([OsString::from("--protocol"), OsString::from("2")]);
    }
    let mut client = ClientConfig::new(agent);
    client.protocol = config.protocol;
    client.roots = vec![dir.path().to_path_buf()];
    client.cwd = Some(dir.path().to_path_buf());
    client.prompt = Some(format!("Please read {} and tell me what it says", file.display()));
    if config.policy.is_none() && !interactive {
        client.policy_note = Some("stdin is not a terminal, so the demo allows; `acp demo --ask` asks".to_owned());
    }
    client.policy = config.policy.or(Some(if interactive { Policy::Ask } else { Policy::Allow }));
    client.show_stderr = config.show_stderr;
    client.style = config.style;
    // The agent is this executable: it knows `__exec-child`.
    client.die_with_client = true;
    client.banner = if v2 {
        vec![
            "acp demo --protocol 2: `acp client` and the reference agent speak ACP v2 (Preview).".to_owned(),
            format!("The agent will ask before touching {};", file.display()),
            "v2 has no fs/* methods, so it reports the file without reading it.".to_owned(),
            String::new(),
        ]
    } else {
        vec![
            "acp demo: `acp client` drives the built-in reference agent (`acp agent`) over its stdin/stdout."
                .to_owned(),
            format!("The agent will ask to read {} through the client;", file.display()),
            format!("the client serves files only inside {}.", dir.path().display()),
            String::new(),
        ]
    };
    let exit = client::run(client);
    // Ended by `SIGTERM` or `SIGHUP`: nobody is there to read a hint.
    if matches!(exit, Exit::Terminated | Exit::HungUp) {
        return exit;
    }
    let acp = command_name(&exe);
    let flag = if v2 { " --protocol 2" } else { "" };
    // Through the client's outlet, after what it wrote (and never held by an output nobody reads).
    let mut out = crate::outlet::stdout();
    let _ = write!(
        out,
        "\nNext: `{acp} client{flag} -- {acp} agent{flag}` for an interactive session with the same agent,\n\
         or `{acp} client -- <any ACP agent command>` (see `{acp} client --help`).\n"
    );
    crate::outlet::drain();
    exit
}

/// `acp` when that name on `PATH` is this executable (installed), else its full path (as
/// under `cargo run`).
fn command_name(exe: &Path) -> String {
    let on_path = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            let candidate = dir.join("acp");
            std::fs::canonicalize(candidate).ok().zip(std::fs::canonicalize(exe).ok()).is_some_and(|(a, b)| a == b)
        })
    });
    if on_path { "acp".to_owned() } else { exe.display().to_string() }
}
