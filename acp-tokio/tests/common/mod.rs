//! Test support of acp-tokio's test binaries: what both adapters' tests share (the scripted
//! [`TestClient`], the echo agents, the helpers and scenarios) is acp-scenarios's library,
//! re-exported here; what only acp-tokio's tests need (test certificates, a raw HTTP peer, the
//! example binaries, memory readings) is here.
#![allow(dead_code, unreachable_pub)]

pub mod certs;
#[cfg(feature = "__remote")]
pub mod raw_http;

use std::path::PathBuf;

pub use acp_scenarios::*;

/// An example binary built next to this test binary (`cargo test` builds the examples).
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary");
    // target/<profile>/deps/<test>-<hash> → target/<profile>/examples/<name>
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>");
    let path = profile_dir.join("examples").join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} is missing: `cargo test` builds the examples", path.display());
    path
}

/// This process's resident set now (`VmRSS`), in KiB.
pub fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number")
}
