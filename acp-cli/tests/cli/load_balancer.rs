//! Past one machine: nginx (Debian's package, not a router of ours) in front of two `acp serve`
//! instances, with affinity on the `Acp-Connection-Id` header for Streamable HTTP (each
//! instance starts its connection ids with its `--node-id`, which nginx maps to it) and on the
//! upgraded connection for WebSocket. Sessions driven through nginx by the official Python
//! SDK's clients and by `acp client --connect` must all succeed: a request routed to the wrong
//! instance would find no connection there (`404`) and fail its session.
//!
//! `remote_resume.rs` runs its failover case on the same setup: an instance killed mid-session,
//! and a client that reloads its session on the other one.
//!
//! Needs `nginx` on PATH (or `/usr/sbin/nginx`) and the Python SDK venv of `interop_python.rs`;
//! without them it prints a skip notice and passes, unless `ACP_REQUIRE_INTEROP=1` (CI), which
//! makes their absence a failure.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;

fn required() -> bool {
    std::env::var("ACP_REQUIRE_INTEROP").is_ok_and(|v| v == "1")
}

pub(crate) fn nginx() -> Option<PathBuf> {
    let found = ["nginx", "/usr/sbin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| Command::new(p).arg("-v").output().is_ok_and(|o| o.status.success()));
    if found.is_none() {
        assert!(!required(), "ACP_REQUIRE_INTEROP=1 but nginx is not installed (apt-get install nginx-light)");
        eprintln!("SKIPPED: the load-balancer test needs nginx (apt-get install nginx-light)");
    }
    found
}

fn python() -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../interop/python/.venv/bin/python");
    let ok = Command::new(&python).args(["-c", "import acp.http, acp.ws"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(!required(), "ACP_REQUIRE_INTEROP=1 but the Python SDK venv is missing (interop/python/)");
        eprintln!("SKIPPED: the load-balancer test needs the Python SDK venv (interop/python/)");
    }
    ok.then_some(python)
}

/// One `acp serve --node-id NODE` of `acp agent`; its address and log.
pub(crate) struct Instance {
    pub(crate) child: Child,
    pub(crate) log: Arc<Mutex<String>>,
    addr: String,
}

impl Instance {
    fn start(node: &str, cwd: &Path) -> Instance {
        Instance::with_agent(node, cwd, &[])
    }

    /// [`Instance::start`] of `acp agent --quiet AGENT_ARGS`.
    pub(crate) fn with_agent(node: &str, cwd: &Path, agent_args: &[&str]) -> Instance {
        let acp = acp();
        let acp = acp.to_str().unwrap();
        let mut args = vec!["serve", "--listen", "127.0.0.1:0", "--node-id", node, "--", acp, "agent", "--quiet"];
        args.extend(agent_args);
        let Serving { child, stderr: log, addr } = start_serving(&args, cwd);
        Instance { child, log, addr }
    }

    fn connections(&self) -> usize {
        self.log.lock().unwrap().matches("event=connection_opened").count()
    }
}

impl Drop for Instance {
    /// `SIGTERM`: the server drains and reaps its agents before it exits.
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// `SIGTERM`, up to 5 s to exit, then `SIGKILL`; reaped either way.
fn stop(child: &mut Child) {
    if child.try_wait().ok().flatten().is_some() {
        return; // ended (and reaped) already
    }
    signal(child, rustix::process::Signal::TERM);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while child.try_wait().ok().flatten().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// nginx on a free loopback port in front of `a` and `b`.
pub(crate) struct Nginx {
    child: Child,
    pub(crate) port: u16,
}

impl Drop for Nginx {
    /// `SIGTERM` to the master, which stops its workers (`SIGKILL` would orphan them).
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Routes a request naming a connection to the instance its id names (the other one when that
/// one is down: it answers `404` for a connection it does not hold, which tells a resuming
/// client to reload its session), anything else round robin.
pub(crate) fn start_nginx(nginx: &Path, dir: &TempDir, a: &Instance, b: &Instance) -> Nginx {
    let port = free_port();
    let root = dir.path().display().to_string();
    let config = format!(
        r#"
worker_processes 1;
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {root}/access.log;
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    # Streamable HTTP and a WebSocket resume: the connection id names its instance (the
    # other one stands in when it is down); a request without one (initialize, a new
    # WebSocket) goes round robin.
    map $http_acp_connection_id $acp_backend {{
        ~^a- to_a;
        ~^b- to_b;
        default acp_pool;
    }}
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        '' '';
    }}
    upstream acp_pool {{ server {a}; server {b}; }}
    upstream to_a {{ server {a}; server {b} backup; }}
    upstream to_b {{ server {b}; server {a} backup; }}
    server {{
        listen 127.0.0.1:{port};
        location /acp {{
            proxy_pass http://$acp_backend;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_buffering off;
            proxy_read_timeout 1h;
        }}
    }}
}}
"#,
        a = a.addr,
        b = b.addr,
    );
    let path = dir.path().join("nginx.conf");
    std::fs::write(&path, config).unwrap();
    let child = Command::new(nginx)
        .args(["-c", path.to_str().unwrap(), "-p", &root, "-e", &format!("{root}/error.log")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nginx");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "nginx did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    Nginx { child, port }
}

#[test]
fn nginx_routes_every_request_of_a_connection_to_the_instance_that_holds_it() {
    let (Some(nginx), Some(python)) = (nginx(), python()) else { return };
    let dir = TempDir::new("load-balancer");
    let file = dir.file("notes.txt", "balanced\n");
    let (a, b) = (Instance::start("a", dir.path()), Instance::start("b", dir.path()));
    let proxy = start_nginx(&nginx, &dir, &a, &b);
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("../interop/python/remote_client.py");
    let mut runs = 0;
    for round in 0..2 {
        for (flag, scheme) in [(Some("--http"), "http"), (None, "ws")] {
            let url = format!("{scheme}://127.0.0.1:{}/acp", proxy.port);
            let mut command = Command::new(&python);
            command.arg(&client);
            if let Some(flag) = flag {
                command.arg(flag);
            }
            let out = command.args([&url, &file]).stdin(Stdio::null()).output().unwrap();
            assert!(
                out.status.success(),
                "round {round}, {scheme}: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            runs += 1;
        }
    }
    let url = format!("ws://127.0.0.1:{}/acp", proxy.port);
    let ours = run(&["client", "--allow", "--connect", &url, "-p", &format!("read {file}")], dir.path(), "");
    assert_eq!(ours.code(), 0, "{}\n{}", ours.stdout, ours.stderr);
    assert!(ours.stdout.contains("balanced"), "{}", ours.stdout);
    runs += 1;
    wait_for(&a.log, "event=connection_closed", Duration::from_secs(10));
    wait_for(&b.log, "event=connection_closed", Duration::from_secs(10));
    let (on_a, on_b) = (a.connections(), b.connections());
    assert_eq!(on_a + on_b, runs, "a: {on_a}, b: {on_b}");
    assert!(on_a > 0 && on_b > 0, "both instances served (a: {on_a}, b: {on_b})");
}
