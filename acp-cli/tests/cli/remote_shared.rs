//! `acp serve --share` and `acp client --attach` (issue 32 §3): one client holds a session,
//! a second watches it as an observer, a third joins it as a controller and runs a turn in
//! it (the host and the controller over WebSocket, the observer over Streamable HTTP); every
//! one of them sees the turns, the observer cannot act, a caller with another
//! credential cannot attach, and once the host is gone the session is no longer found.

use crate::common;

use std::io::Write;
use std::process::{Child, ChildStdin};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;

const WAIT: Duration = Duration::from_secs(20);

/// An interactive `acp client` whose stdin the test types into.
struct Typed {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Typed {
    fn start(args: &[&str], cwd: &std::path::Path) -> Typed {
        let mut child = start_interactive(args, cwd);
        let stdin = child.stdin.take();
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        Typed { child, stdin, stdout, stderr }
    }

    fn line(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(format!("{text}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    fn wait_for(&self, needle: &str) {
        wait_for(&self.stdout, needle, WAIT);
    }

    /// Closes stdin; the client must end with `code`.
    fn end(mut self, code: i32) -> Run {
        self.stdin = None;
        let run = finish(self.child, self.stdout, self.stderr, WAIT);
        assert_eq!(run.code(), code, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
        run
    }
}

#[test]
fn an_observer_and_a_controller_join_a_live_session_and_see_its_turns() {
    let dir = TempDir::new("remote-shared");
    let tokens = dir.file("tokens", "alpha\nbeta\n");
    let alpha = dir.file("alpha", "alpha\n");
    let beta = dir.file("beta", "beta\n");
    let acp = acp();
    let acp = acp.to_str().unwrap();
    let marker = unique_marker();
    let _reaper = KillOnDrop(vec![marker.clone()]);
    let serve = [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--share",
        "--token-file",
        &tokens,
        "--",
        acp,
        "agent",
        "--quiet",
        "--slow-ms",
        &marker,
    ];
    let Serving { child: server, stderr: server_log, addr } = start_serving(&serve, dir.path());
    assert!(server_log.lock().unwrap().contains(" share=on "), "the log says sessions are shared");
    let url = format!("ws://{addr}/acp");
    // The observer comes over Streamable HTTP: both transports share.
    let http = format!("http://{addr}/acp");

    let mut host = Typed::start(&["client", "--allow", "--connect", &url, "--token-file", &alpha], dir.path());
    host.wait_for(" · cwd ");
    let session = {
        let out = host.stdout.lock().unwrap();
        let at = out.find("session ").expect("the session line") + "session ".len();
        out[at..].split_whitespace().next().expect("an id").to_owned()
    };

    // Another credential cannot attach: the session is not found for it.
    let stranger =
        run(&["client", "--connect", &url, "--token-file", &beta, "--attach", &session, "-p", "hi"], dir.path(), "");
    assert_eq!(stranger.code(), 1, "{}\n{}", stranger.stdout, stranger.stderr);
    assert!(
        stranger.stdout.contains(&format!("could not attach session {session}: session not found")),
        "{}",
        stranger.stdout
    );

    let mut observer = Typed::start(
        &["client", "--connect", &http, "--token-file", &alpha, "--attach", &session, "--observe"],
        dir.path(),
    );
    observer.wait_for(&format!("attached to session {session} as observer; clients: host (controller), guest-"));

    // The host's turn: the observer sees it, and who answered the permission ask.
    host.line("hello from the host");
    host.wait_for("echo: hello from the host");
    observer.wait_for("echo: hello from the host");
    observer.wait_for(": host chose allow");

    // A controller joins for one prompt: its turn runs in the host's session, everyone sees it.
    let controller = run(
        &["client", "--allow", "--connect", &url, "--token-file", &alpha, "--attach", &session, "-p", "from the guest"],
        dir.path(),
        "",
    );
    assert_eq!(controller.code(), 0, "{}\n{}", controller.stdout, controller.stderr);
    assert!(controller.stdout.contains("as controller"), "{}", controller.stdout);
    assert!(controller.stdout.contains("echo: from the guest"), "{}", controller.stdout);
    host.wait_for("echo: from the guest");
    observer.wait_for("echo: from the guest");

    // The observer cannot act.
    observer.line("may I?");
    observer.wait_for("an observer of a shared session cannot act in it");

    // The host leaves: the session is gone for the observer too.
    host.end(0);
    let mut gone = false;
    for _ in 0..50 {
        observer.line("anyone?");
        std::thread::sleep(Duration::from_millis(200));
        if observer.stdout.lock().unwrap().contains("session not found") {
            gone = true;
            break;
        }
    }
    assert!(gone, "the session outlived its host:\n{}", observer.stdout.lock().unwrap());
    let watched = observer.end(0);
    assert!(!watched.stdout.contains("echo: may I?"), "{}", watched.stdout);
    let log = stop_serving(server, server_log).stderr;
    assert!(!log.contains("alpha\n") && !log.contains("beta\n"), "no token is logged");
}

/// A server that shares nothing passes `session/attach` on to its agent, which does not know
/// it: the client says so, and what to run instead.
#[test]
fn attaching_on_a_server_that_does_not_share_says_so() {
    let dir = TempDir::new("remote-not-shared");
    let acp = acp();
    let acp = acp.to_str().unwrap();
    let marker = unique_marker();
    let _reaper = KillOnDrop(vec![marker.clone()]);
    let serve = ["serve", "--listen", "127.0.0.1:0", "--", acp, "agent", "--quiet", "--slow-ms", &marker];
    let Serving { child: server, stderr: server_log, addr } = start_serving(&serve, dir.path());
    assert!(server_log.lock().unwrap().contains(" share=off "), "the log says nothing is shared");
    let url = format!("ws://{addr}/acp");
    let run = run(&["client", "--connect", &url, "--attach", "sess-1", "--observe"], dir.path(), "");
    assert_eq!(run.code(), 1, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("could not attach session sess-1:"), "{}", run.stdout);
    assert!(run.stdout.contains("(-32601)"), "{}", run.stdout);
    assert!(
        run.stdout.contains("the server does not share sessions (it must run `acp serve --share`)"),
        "{}",
        run.stdout
    );
    stop_serving(server, server_log);
}
