//! `acp client --protocol 2` against the official SDK's v2 agent (`common::sdk_v2_agent`), both
//! as processes talking over pipes, the client drawing on its stdout as for a person.
//!
//! The `acp` binary built here would lack the v2 feature (this workspace cannot build acp-cli's
//! binaries), so this test is one binary in three roles (`harness = false`, so that nothing but
//! the protocol reaches the agent's stdout), chosen by `ACP_INTEROP_ROLE`:
//!
//! * unset: the test: runs `ROLE=client` children and checks their output and exit status;
//! * `client`: acp-cli's client (`acp_cli::client::run`, what `acp client` runs) with
//!   `protocol: V2`, `--allow`, the prompt from its argument, and the agent
//!   `ROLE=sdk-v2-agent` (this executable again);
//! * `sdk-v2-agent`: the SDK v2 agent on stdin/stdout.
//!
//! Scenarios: the SDK agent's full turn (thought, message, a tool call with a diff chunk, a
//! permission ask, a plan, the message snapshot, usage, info, notice, `idle` `end_turn`): exit 0;
//! its `wait` turn interrupted with `SIGINT`: `session/cancel`, `idle` `cancelled`, exit 3.

mod common;

use std::ffi::OsString;
use std::io::Read;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use acp_cli::client::{ClientConfig, Policy};
use acp_cli::{Exit, Protocol};

const ROLE: &str = "ACP_INTEROP_ROLE";

fn main() -> ExitCode {
    match std::env::var(ROLE).as_deref() {
        Ok("sdk-v2-agent") => sdk_agent(),
        Ok("client") => client(),
        _ => {
            full_turn();
            println!("test acp_client_v2_against_sdk_v2_agent_full_turn ... ok");
            cancelled_turn();
            println!("test acp_client_v2_against_sdk_v2_agent_ctrl_c_cancels ... ok");
            ExitCode::SUCCESS
        }
    }
}

fn sdk_agent() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    match runtime.block_on(common::sdk_v2_agent::serve(tokio::io::stdin(), tokio::io::stdout())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sdk v2 agent: {e}");
            ExitCode::FAILURE
        }
    }
}

fn client() -> ExitCode {
    let exe = std::env::current_exe().expect("this executable");
    let mut config = ClientConfig::new(vec![exe.into_os_string()]);
    config.agent_env = vec![(OsString::from(ROLE), OsString::from("sdk-v2-agent"))];
    config.protocol = Protocol::V2;
    config.policy = Some(Policy::Allow);
    config.prompt = std::env::args().nth(1);
    config.cwd = Some(std::env::temp_dir());
    acp_cli::client::run(config).into()
}

/// Starts the client role with `prompt`.
fn start_client(prompt: &str) -> Child {
    Command::new(std::env::current_exe().expect("this executable"))
        .arg(prompt)
        .env(ROLE, "client")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the client starts")
}

/// Reads a pipe on a thread into a shared string.
fn collect(mut pipe: impl Read + Send + 'static) -> std::sync::Arc<std::sync::Mutex<String>> {
    let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let out = text.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.lock().expect("not poisoned").push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    text
}

/// Waits for the child's exit within [`common::LIMIT`] (killing it past that).
fn wait(child: &mut Child, stdout: &std::sync::Mutex<String>) -> i32 {
    let deadline = Instant::now() + common::LIMIT;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            std::thread::sleep(Duration::from_millis(50));
            return status.code().unwrap_or(-1);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the client did not end; it drew:\n{}", stdout.lock().expect("not poisoned"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn in_order(text: &str, parts: &[&str]) {
    let mut from = 0;
    for part in parts {
        let at = text[from..].find(part).unwrap_or_else(|| panic!("missing {part:?} after {from} in:\n{text}"));
        from += at + part.len();
    }
}

fn full_turn() {
    let mut child = start_client("hello sdk");
    let stdout = collect(child.stdout.take().expect("piped"));
    let stderr = collect(child.stderr.take().expect("piped"));
    let code = wait(&mut child, &stdout);
    let (out, err) = (stdout.lock().expect("not poisoned").clone(), stderr.lock().expect("not poisoned").clone());
    assert_eq!(code, i32::from(Exit::Ok.code()), "end_turn is exit 0; stdout:\n{out}\nstderr:\n{err}");
    in_order(
        &out,
        &[
            "(ACP protocol v2)",
            "session sdk-v2-session-1 · cwd",
            "> hello sdk",
            "echo: hello sdk",
            "▸ touch /tmp/sdk-v2  [edit · pending]",
            "? permission: touch /tmp/sdk-v2",
            "→ Allow",
            "✓ touch /tmp/sdk-v2: completed",
            "— end of turn",
        ],
    );
    // The tool call was opened once; its later updates (same id) are updates of it.
    assert_eq!(out.matches("▸ touch /tmp/sdk-v2").count(), 1, "{out}");
}

fn cancelled_turn() {
    let mut child = start_client("wait");
    let stdout = collect(child.stdout.take().expect("piped"));
    let stderr = collect(child.stderr.take().expect("piped"));
    let deadline = Instant::now() + common::LIMIT;
    while !stdout.lock().expect("not poisoned").contains("call-w2") {
        assert!(Instant::now() < deadline, "no tool call drawn:\n{}", stdout.lock().expect("not poisoned"));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(interrupt(&child), "SIGINT sent");
    let code = wait(&mut child, &stdout);
    let (out, err) = (stdout.lock().expect("not poisoned").clone(), stderr.lock().expect("not poisoned").clone());
    assert_eq!(code, i32::from(Exit::Cancelled.code()), "cancelled is exit 3; stdout:\n{out}\nstderr:\n{err}");
    in_order(&out, &["⏹ cancelling the turn", "cancelled", "⏹ turn cancelled"]);
}

/// Sends `SIGINT` to the child with `kill -INT` (no libc binding in this crate).
fn interrupt(child: &Child) -> bool {
    Command::new("kill").arg("-INT").arg(child.id().to_string()).status().is_ok_and(|s| s.success())
}
