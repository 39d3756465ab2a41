//! `acp client` on a pseudo-terminal (`script` from util-linux): keys typed in, the screen
//! read back, as a user at a terminal sees it.

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{KillOnDrop, Run, collect, finish, wait_for};

/// How long a test waits for what it expects on the screen.
pub const SCREEN_WAIT: Duration = Duration::from_secs(15);

/// `script`, which runs a command on a pseudo-terminal, or `None` after a skip notice (a
/// failure under `ACP_REQUIRE_INTEROP=1`).
pub fn script() -> Option<&'static str> {
    let ok = Command::new("script").arg("--version").output().is_ok_and(|o| o.status.success());
    match ok {
        true => Some("script"),
        false if std::env::var("ACP_REQUIRE_INTEROP").is_ok_and(|v| v == "1") => {
            panic!("ACP_REQUIRE_INTEROP=1 but `script` (util-linux) is not installed")
        }
        false => {
            eprintln!("SKIPPED: the terminal test needs `script` (util-linux)");
            None
        }
    }
}

/// A command running on a pseudo-terminal.
pub struct Pty {
    child: Child,
    keys: ChildStdin,
    /// Everything the terminal was sent.
    pub screen: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    _cleanup: KillOnDrop,
}

impl Pty {
    /// Runs the shell `command` in `dir` on a 120x40 terminal, without colours, its state in
    /// `dir/state`; `marker` is an argument of the command's processes, killed on drop.
    /// `None` when `script` is missing (see [`script`]).
    pub fn start(dir: &Path, command: &str, marker: &str) -> Option<Pty> {
        let script = script()?;
        let command = format!("stty cols 120 rows 40; exec {command}");
        let mut child = Command::new(script)
            .args(["-qec", &command, "/dev/null"])
            .current_dir(dir)
            .env("ACP_STATE_DIR", dir.join("state"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let keys = child.stdin.take().unwrap();
        let screen = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        Some(Pty { child, keys, screen, stderr, _cleanup: KillOnDrop(vec![marker.to_owned()]) })
    }

    /// Types `text` (`\r` is Enter, `\x03` Ctrl-C, `\x04` Ctrl-D).
    pub fn keys(&mut self, text: &str) {
        self.keys.write_all(text.as_bytes()).unwrap();
        self.keys.flush().unwrap();
    }

    /// Waits until the screen shows `needle` (or panics after [`SCREEN_WAIT`]).
    pub fn wait_for(&self, needle: &str) {
        wait_for(&self.screen, needle, SCREEN_WAIT);
    }

    /// Waits until the screen shows `needle` after what it showed when `from` was taken.
    pub fn wait_after(&self, from: usize, needle: &str) {
        let deadline = std::time::Instant::now() + SCREEN_WAIT;
        while !self.screen.lock().unwrap()[from..].contains(needle) {
            assert!(std::time::Instant::now() < deadline, "timed out waiting for {needle:?} in:\n{}", self.text());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// How much the screen has shown so far.
    pub fn len(&self) -> usize {
        self.screen.lock().unwrap().len()
    }

    /// The screen so far, without carriage returns.
    pub fn text(&self) -> String {
        self.screen.lock().unwrap().replace('\r', "")
    }

    /// Waits for the command to exit (Ctrl-D first, if it should).
    pub fn finish(self) -> Run {
        let Pty { child, keys, screen, stderr, _cleanup } = self;
        // Open until the end: `script` ends when its input does.
        let _keys = keys;
        finish(child, screen, stderr, Duration::from_secs(10))
    }
}
