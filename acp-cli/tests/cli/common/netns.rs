//! A network namespace for fault tests: `ip netns add`, a veth pair between it and the test's
//! namespace, `acp serve` run inside it (`ip netns exec`), and Linux's own tools to hurt the
//! link: `tc qdisc … netem` (delay, loss), `ip link set … down` (a stall: every packet
//! dropped, the TCP connections kept), `ss -K` (the server's TCP connections killed).
//!
//! A test that cannot create one (not root, no `ip`/`tc`/`ss`, no permission) prints why and is
//! skipped, unless `ACP_REQUIRE_NETNS=1` (set in CI), when it fails. A kernel without
//! `sch_netem` skips only the tests that need netem, unless `ACP_REQUIRE_NETEM=1`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{acp, collect, wait_for};

/// A namespace `name` joined to the test's by a veth pair: `host_ip` on this side, `ns_ip`
/// inside. Dropping it deletes the namespace (and with it the pair).
pub struct NetNs {
    name: String,
    /// The namespace's end of the veth pair.
    ns_if: String,
    /// This side's end.
    host_if: String,
    pub ns_ip: String,
    pub host_ip: String,
}

/// Runs `program args`; its stderr when it fails (or could not start).
fn sh(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{program} {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{program} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

fn required(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v == "1")
}

impl NetNs {
    /// A fresh namespace for `test`, or `None` (with a message saying why) when this machine
    /// cannot make one and `ACP_REQUIRE_NETNS` is not `1`.
    pub fn create(test: &str) -> Option<NetNs> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        // Interface names have at most 15 bytes; the /30 subnet is unique to this process and
        // namespace (10.64.0.0/10, 2^20 subnets).
        let tag = format!("{}x{n}", pid % 1_000_000);
        let slot = (pid.wrapping_mul(64).wrapping_add(n)) % (1 << 20);
        let base = (10u32 << 24) | (64 << 16) | (slot << 2);
        let ip = |i: u32| std::net::Ipv4Addr::from(base + i).to_string();
        let ns = NetNs {
            name: format!("acp-test-{tag}"),
            ns_if: format!("acpn{tag}"),
            host_if: format!("acph{tag}"),
            ns_ip: ip(2),
            host_ip: ip(1),
        };
        match ns.set_up() {
            Ok(()) => Some(ns),
            Err(why) if required("ACP_REQUIRE_NETNS") => panic!("{test}: cannot create a network namespace: {why}"),
            Err(why) => {
                eprintln!(
                    "{test}: skipped: cannot create a network namespace ({why}); ACP_REQUIRE_NETNS=1 fails instead"
                );
                None
            }
        }
    }

    fn set_up(&self) -> Result<(), String> {
        // rustix's getuid: a clear reason instead of `ip`'s "Operation not permitted".
        if !rustix::process::getuid().is_root() {
            return Err("not root".into());
        }
        for tool in ["ip", "tc", "ss"] {
            sh(tool, &["-V"]).map_err(|e| format!("`{tool}` is needed (iproute2): {e}"))?;
        }
        sh("ip", &["netns", "add", &self.name])?;
        let (ns, nsif, hostif) = (self.name.as_str(), self.ns_if.as_str(), self.host_if.as_str());
        sh("ip", &["link", "add", hostif, "type", "veth", "peer", "name", nsif])?;
        sh("ip", &["link", "set", nsif, "netns", ns])?;
        sh("ip", &["addr", "add", &format!("{}/30", self.host_ip), "dev", hostif])?;
        sh("ip", &["link", "set", hostif, "up"])?;
        self.exec("ip", &["addr", "add", &format!("{}/30", self.ns_ip), "dev", nsif])?;
        self.exec("ip", &["link", "set", nsif, "up"])?;
        self.exec("ip", &["link", "set", "lo", "up"])
    }

    /// Runs `program args` inside the namespace.
    pub fn exec(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let mut all = vec!["netns", "exec", &self.name, program];
        all.extend_from_slice(args);
        sh("ip", &all)
    }

    /// `tc qdisc replace … root netem SPEC` on both ends of the pair (so both directions suffer
    /// it): `Ok(false)`, with a message, when the kernel has no netem and `ACP_REQUIRE_NETEM`
    /// is not `1` (the caller then skips its test).
    pub fn netem(&self, test: &str, spec: &str) -> Result<bool, String> {
        let spec: Vec<&str> = spec.split_whitespace().collect();
        let mut args = vec!["qdisc", "replace", "dev", &self.ns_if, "root", "netem"];
        args.extend_from_slice(&spec);
        match self.exec("tc", &args) {
            Ok(()) => {}
            Err(why) if why.contains("unknown") && !required("ACP_REQUIRE_NETEM") => {
                eprintln!("{test}: skipped: this kernel has no netem qdisc (sch_netem): {why}");
                return Ok(false);
            }
            Err(why) => return Err(why),
        }
        let mut host = vec!["qdisc", "replace", "dev", &self.host_if, "root", "netem"];
        host.extend_from_slice(&spec);
        sh("tc", &host)?;
        Ok(true)
    }

    /// Takes the namespace's end of the link down (every packet either way is dropped; the TCP
    /// connections live on and retransmit) or up again.
    pub fn link(&self, up: bool) {
        let state = if up { "up" } else { "down" };
        self.exec("ip", &["link", "set", &self.ns_if, state]).expect("ip link set");
    }

    /// Kills every established TCP connection inside the namespace (`ss -K`): both ends see a
    /// reset, as when a middlebox drops the connection.
    pub fn kill_connections(&self) {
        self.exec("ss", &["-K", "state", "established"]).expect("ss -K");
    }

    /// The established TCP connections inside the namespace (`ss -tnH`, one a line).
    pub fn connections(&self) -> Vec<String> {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.name, "ss", "-tnH", "state", "established"])
            .output()
            .expect("ss");
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
    }

    /// Starts `acp serve --listen NS_IP:PORT --token-file TOKEN ARGS` inside the namespace
    /// (`ip netns exec` execs it: the child's pid is the server's), waits up to 10 s for
    /// `event=listening`; the process and its stderr as it comes.
    pub fn serve(&self, port: u16, token: &str, args: &[&str], cwd: &Path) -> (Child, Arc<Mutex<String>>) {
        let listen = format!("{}:{port}", self.ns_ip);
        let mut child = Command::new("ip")
            .args(["netns", "exec", &self.name])
            .arg(acp())
            .args(["serve", "--listen", &listen, "--token-file", token])
            .args(args)
            .current_dir(cwd)
            .env_remove("ACP_CONFIG")
            .env("XDG_CONFIG_HOME", std::env::temp_dir().join("acp-tests-no-config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("ip netns exec acp serve");
        let stderr = collect(child.stderr.take().unwrap());
        wait_for(&stderr, "event=listening", Duration::from_secs(10));
        (child, stderr)
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        // Deleting the namespace deletes its end of the pair, and with it this end.
        let _ = sh("ip", &["netns", "del", &self.name]);
        let _ = sh("ip", &["link", "del", &self.host_if]);
    }
}
