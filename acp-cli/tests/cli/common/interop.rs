//! The peers of the interop tests (`interop/`): where they are, and whether they are installed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `interop/` of the workspace.
pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("interop")
}

/// Whether node and the TypeScript SDK (`interop/node_modules`) are there; panics when they
/// are required (`ACP_REQUIRE_INTEROP=1`, as in CI) and missing, else prints a skip notice.
pub fn typescript_sdk_available() -> bool {
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    let installed = interop_dir().join("node_modules/@agentclientprotocol/sdk/package.json").exists();
    if node && installed {
        return true;
    }
    assert!(
        !std::env::var("ACP_REQUIRE_INTEROP").is_ok_and(|v| v == "1"),
        "ACP_REQUIRE_INTEROP=1 but node or the TypeScript SDK (interop/node_modules) is missing"
    );
    eprintln!("SKIPPED: needs node and the TypeScript SDK in interop/ (npm ci)");
    false
}

/// The Python interpreter with the official SDK (`ACP_PYTHON`, else `interop/python/.venv`),
/// if `python -c CHECK` succeeds; else a skip notice naming `skip`, or a panic naming
/// `missing` when the SDK is required (`ACP_REQUIRE_INTEROP=1`, as in CI).
pub fn sdk_python(check: &str, missing: &str, skip: &str) -> Option<PathBuf> {
    let python = std::env::var_os("ACP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| interop_dir().join("python").join(".venv").join("bin").join("python"));
    let ok = Command::new(&python).args(["-c", check]).output().is_ok_and(|o| o.status.success());
    match ok {
        true => Some(python),
        false if std::env::var("ACP_REQUIRE_INTEROP").is_ok_and(|v| v == "1") => {
            panic!("ACP_REQUIRE_INTEROP=1 but {} has no {missing}", python.display())
        }
        false => {
            eprintln!("SKIPPED: {skip}");
            None
        }
    }
}
