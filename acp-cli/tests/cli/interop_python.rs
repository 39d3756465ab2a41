//! Remote interop with the official Python SDK (`agent-client-protocol[http]` 0.12.1, pinned in
//! `interop/python/requirements.txt`): the SDK's WebSocket and Streamable HTTP clients
//! (`interop/python/remote_client.py`) against `acp serve -- acp agent`, and `acp client
//! --connect` against the SDK's WebSocket and Streamable HTTP server (one ASGI app serves both)
//! hosting a small Python agent (`interop/python/ws_agent.py`), and the SDK's WebSocket
//! client holding a session that `acp client --attach` joins (`interop/python/shared_host.py`).
//!
//! Needs the virtual environment `interop/python/.venv` with those packages (`.ci/run` makes
//! it; `$ACP_PYTHON` may name another interpreter). Without it each test prints a skip notice
//! and passes, unless `ACP_REQUIRE_INTEROP=1` (set by CI), which makes its absence a failure.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::Value;

fn python_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("interop").join("python")
}

/// The interpreter with the SDK, or `None` (after the skip notice) when it is not there.
fn python() -> Option<PathBuf> {
    let python = std::env::var_os("ACP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| python_dir().join(".venv").join("bin").join("python"));
    let check = Command::new(&python)
        .args(["-c", "import importlib.metadata as m; print(m.version('agent-client-protocol'))"])
        .output();
    let why = match check {
        Err(e) => Some(format!("{} cannot run: {e}", python.display())),
        Ok(out) if !out.status.success() => Some(format!("{} has no agent-client-protocol", python.display())),
        Ok(out) if String::from_utf8_lossy(&out.stdout).trim() != "0.12.1" => {
            Some(format!("the SDK installed is {}, not 0.12.1", String::from_utf8_lossy(&out.stdout).trim()))
        }
        Ok(_) => None,
    };
    match why {
        None => Some(python),
        Some(why) if std::env::var("ACP_REQUIRE_INTEROP").is_ok_and(|v| v == "1") => {
            panic!("ACP_REQUIRE_INTEROP=1 but {why} (see interop/python/requirements.txt)")
        }
        Some(why) => {
            eprintln!("SKIPPED: Python interop needs the official SDK: {why}");
            None
        }
    }
}

/// Starts `acp serve` of `acp agent` on an ephemeral loopback port; returns it and its URL.
fn serve_reference_agent(cwd: &Path) -> (Child, std::sync::Arc<std::sync::Mutex<String>>, String) {
    let acp = acp();
    let acp = acp.to_str().unwrap();
    let Serving { child, stderr, addr } =
        start_serving(&["serve", "--listen", "127.0.0.1:0", "--", acp, "agent", "--quiet"], cwd);
    (child, stderr, format!("ws://{addr}/acp"))
}

/// Runs the SDK's client (`--http` or not) against `acp serve -- acp agent`.
fn python_client_drives_acp_serve(python: &Path, http: bool) {
    let dir = TempDir::new("py-remote-client");
    let file = dir.file("notes.txt", "python was here\n");
    let (server, log, url) = serve_reference_agent(dir.path());
    let mut command = Command::new(python);
    command.arg(python_dir().join("remote_client.py"));
    let url = if http {
        command.arg("--http");
        url.replace("ws://", "http://")
    } else {
        url
    };
    let out = command.args([&url, &file]).stdin(Stdio::null()).output().expect("run the Python client");
    signal(&server, rustix::process::Signal::TERM);
    let stdout = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let served = finish(server, stdout, log, Duration::from_secs(10));
    assert!(
        out.status.success(),
        "the Python client failed:\nstdout:\n{}\nstderr:\n{}\nserver:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        served.stderr
    );
    let summary: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(summary["stop_reasons"], serde_json::json!(["end_turn", "end_turn", "cancelled"]), "{summary}");
    assert_eq!((summary["permissions"].clone(), summary["reads"].clone()), (2.into(), 2.into()), "{summary}");
    assert_eq!(served.code(), 0, "{}", served.stderr);
    assert!(served.stderr.contains("event=connection_closed"), "{}", served.stderr);
}

#[test]
fn the_python_sdk_websocket_client_drives_acp_serve() {
    let Some(python) = python() else { return };
    python_client_drives_acp_serve(&python, false);
}

#[test]
fn the_python_sdk_streamable_http_client_drives_acp_serve() {
    let Some(python) = python() else { return };
    python_client_drives_acp_serve(&python, true);
}

/// Starts the Python SDK's WebSocket server with its agent; returns it and its URL.
fn python_agent(python: &Path) -> (Child, String) {
    let mut child = Command::new(python)
        .arg(python_dir().join("ws_agent.py"))
        .arg("0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the Python agent");
    let stdout = collect(child.stdout.take().unwrap());
    let _stderr = collect(child.stderr.take().unwrap());
    wait_for(&stdout, "listening ", Duration::from_secs(30));
    let port = stdout.lock().unwrap().trim().trim_start_matches("listening ").to_owned();
    (child, format!("ws://127.0.0.1:{port}/acp"))
}

#[test]
fn acp_client_connects_to_the_python_sdk_websocket_server() {
    let Some(python) = python() else { return };
    let dir = TempDir::new("py-ws-server");
    let file = dir.file("remote.txt", "read across the socket\n");
    let (mut agent, url) = python_agent(&python);
    let read = run(&["client", "--allow", "--connect", &url, "-p", &format!("read {file}")], dir.path(), "");
    let echo = run(&["client", "--deny", "--connect", &url, "-p", "hello python"], dir.path(), "");
    let _ = agent.kill();
    let _ = agent.wait();
    assert_eq!(read.code(), 0, "stdout:\n{}\nstderr:\n{}", read.stdout, read.stderr);
    assert!(read.stdout.contains("connected to python-ws-agent"), "{}", read.stdout);
    assert!(read.stdout.contains("permission"), "{}", read.stdout);
    assert!(read.stdout.contains("python agent read: read across the socket"), "{}", read.stdout);
    assert_eq!(echo.code(), 0, "{}", echo.stdout);
    assert!(echo.stdout.contains("python agent echo: hello python"), "{}", echo.stdout);
}

#[test]
fn acp_client_connects_to_the_python_sdk_streamable_http_server() {
    let Some(python) = python() else { return };
    let dir = TempDir::new("py-http-server");
    let file = dir.file("remote.txt", "read across POSTs and SSE\n");
    let (mut agent, url) = python_agent(&python);
    // The same app, reached by Streamable HTTP (HTTP/1.1: uvicorn speaks no HTTP/2).
    let url = url.replacen("ws://", "http://", 1);
    let read = run(&["client", "--allow", "--connect", &url, "-p", &format!("read {file}")], dir.path(), "");
    let denied = run(&["client", "--deny", "--connect", &url, "-p", &format!("read {file}")], dir.path(), "");
    let echo = run(&["client", "--deny", "--connect", &url, "-p", "hello python"], dir.path(), "");
    let _ = agent.kill();
    let _ = agent.wait();
    assert_eq!(read.code(), 0, "stdout:\n{}\nstderr:\n{}", read.stdout, read.stderr);
    assert!(read.stdout.contains(&format!("connected to {url}")), "{}", read.stdout);
    assert!(read.stdout.contains("connected to python-ws-agent"), "{}", read.stdout);
    assert!(read.stdout.contains("permission"), "{}", read.stdout);
    assert!(read.stdout.contains("python agent read: read across POSTs and SSE"), "{}", read.stdout);
    assert_eq!(denied.code(), 0, "{}", denied.stdout);
    assert!(denied.stdout.contains("not allowed to read"), "{}", denied.stdout);
    assert_eq!(echo.code(), 0, "{}", echo.stdout);
    assert!(echo.stdout.contains("python agent echo: hello python"), "{}", echo.stdout);
}

/// Shared sessions with a real peer as the host: the Python SDK's WebSocket client holds a
/// session on `acp serve --share` (`interop/python/shared_host.py`), `acp client --attach`
/// watches it and runs a turn in it; the SDK's client takes the server's added capability,
/// the guest's turn and a `$/cancel_request` for an ask answered elsewhere in its stride.
#[test]
fn acp_client_attaches_to_a_session_the_python_sdk_client_holds() {
    use std::io::Write;
    let Some(python) = python() else { return };
    let dir = TempDir::new("py-shared-host");
    let acp = acp();
    let acp = acp.to_str().unwrap();
    let Serving { child: server, stderr: log, addr } =
        start_serving(&["serve", "--listen", "127.0.0.1:0", "--share", "--", acp, "agent", "--quiet"], dir.path());
    let url = format!("ws://{addr}/acp");
    let mut host = Command::new(&python)
        .arg(python_dir().join("shared_host.py"))
        .arg(&url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the Python host");
    let mut host_in = host.stdin.take().unwrap();
    let host_out = collect(host.stdout.take().unwrap());
    let host_err = collect(host.stderr.take().unwrap());
    wait_for(&host_out, "session ", Duration::from_secs(30));
    let session = host_out.lock().unwrap().lines().next().unwrap().trim_start_matches("session ").trim().to_owned();

    let mut observer = start_interactive(&["client", "--connect", &url, "--attach", &session, "--observe"], dir.path());
    let observer_in = observer.stdin.take();
    let observer_out = collect(observer.stdout.take().unwrap());
    let observer_err = collect(observer.stderr.take().unwrap());
    let attached = format!("attached to session {session} as observer");
    wait_for(&observer_out, &attached, Duration::from_secs(20));

    writeln!(host_in, "hello from python").unwrap();
    wait_for(&host_out, "turn end_turn", Duration::from_secs(20));
    wait_for(&observer_out, "echo: hello from python", Duration::from_secs(20));
    wait_for(&observer_out, "permission for call-1: host chose allow", Duration::from_secs(20));

    let guest = run(&["client", "--allow", "--connect", &url, "--attach", &session, "-p", "from acp"], dir.path(), "");
    assert_eq!(guest.code(), 0, "{}\n{}", guest.stdout, guest.stderr);
    assert!(guest.stdout.contains("echo: from acp"), "{}", guest.stdout);
    wait_for(&observer_out, "echo: from acp", Duration::from_secs(20));

    writeln!(host_in, "again from python").unwrap();
    drop(host_in);
    let host = finish(host, host_out, host_err, Duration::from_secs(30));
    assert_eq!(host.code(), 0, "the Python host failed:\n{}\n{}", host.stdout, host.stderr);
    let summary: Value = serde_json::from_str(host.stdout.lines().last().unwrap()).expect("the summary line");
    assert_eq!(summary["stop_reasons"], serde_json::json!(["end_turn", "end_turn"]), "{summary}");
    let texts = summary["texts"].as_str().unwrap();
    assert!(texts.contains("echo: from acp"), "the host saw the guest's turn: {summary}");
    assert!(texts.contains("echo: again from python"), "{summary}");

    drop(observer_in);
    let watched = finish(observer, observer_out, observer_err, Duration::from_secs(20));
    assert_eq!(watched.code(), 0, "{}\n{}", watched.stdout, watched.stderr);
    assert!(watched.stdout.contains("echo: again from python"), "{}", watched.stdout);
    let served = stop_serving(server, log);
    assert!(served.stderr.contains("share=on"), "{}", served.stderr);
}
