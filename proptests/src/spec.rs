//! Locating the pinned protocol specification for the oracle tests (it reads the environment
//! and the filesystem, so it lives here and not in the I/O-free core).
//!
//! Tests that compare the implementation against `schema.json`, `meta.json` or the protocol
//! pages find them with [`spec_dir`]. When the directory is absent they print that they skipped
//! and pass, unless `ACP_REQUIRE_SPEC=1` is set (as `.ci/run` does), which makes absence a
//! failure.

use std::path::PathBuf;

/// The pinned schema version.
pub const SPEC_VERSION: &str = "v1.19.0";

/// The spec directory: `$ACP_SPEC_DIR` if set, else `../shared/acp-spec/v1.19.0` beside the
/// workspace. `None` (after printing a skip notice naming `test`) when it does not exist.
///
/// # Panics
/// When the directory is missing and `ACP_REQUIRE_SPEC=1`.
pub fn spec_dir(test: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("ACP_SPEC_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/acp-spec").join(SPEC_VERSION),
    };
    if dir.join("schema.json").is_file() {
        return Some(dir);
    }
    let required = std::env::var("ACP_REQUIRE_SPEC").is_ok_and(|v| v == "1");
    assert!(!required, "{test}: ACP_REQUIRE_SPEC=1 but the pinned spec is missing at {}", dir.display());
    eprintln!("{test}: SKIPPED, pinned spec not found at {} (set ACP_SPEC_DIR)", dir.display());
    None
}

/// Reads and parses a JSON file of the spec directory.
///
/// # Panics
/// When the file cannot be read or parsed (a broken spec checkout is a test failure).
pub fn read_json(dir: &std::path::Path, file: &str) -> serde_json::Value {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}
