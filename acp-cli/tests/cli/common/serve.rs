//! `acp serve` as the remote tests start and stop it.

use std::path::Path;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Run, collect, finish, signal, start_interactive, wait_for};

/// A started `acp serve`: the process, its stderr as it comes, and the `addr=` it logged.
pub struct Serving {
    pub child: Child,
    pub stderr: Arc<Mutex<String>>,
    pub addr: String,
}

/// Starts `acp ARGS` (an `acp serve --listen 127.0.0.1:0 …` command line) in `cwd`, collects
/// its stdout and stderr, waits up to 10 s for `event=listening` and reads the address it
/// logged.
pub fn start_serving(args: &[&str], cwd: &Path) -> Serving {
    let mut child = start_interactive(args, cwd);
    let stderr = collect(child.stderr.take().unwrap());
    let _stdout = collect(child.stdout.take().unwrap());
    wait_for(&stderr, "event=listening", Duration::from_secs(10));
    let addr = {
        let log = stderr.lock().unwrap();
        let at = log.find("addr=").expect("addr") + 5;
        log[at..].split_whitespace().next().expect("an address").to_owned()
    };
    Serving { child, stderr, addr }
}

/// SIGTERM, then the server must exit 0 within 10 s; what it ran to.
pub fn stop_serving(child: Child, stderr: Arc<Mutex<String>>) -> Run {
    signal(&child, rustix::process::Signal::TERM);
    let run = finish(child, Arc::new(Mutex::new(String::new())), stderr, Duration::from_secs(10));
    assert_eq!(run.code(), 0, "{}", run.stderr);
    run
}
