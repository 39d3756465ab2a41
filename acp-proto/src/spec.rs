//! Test-only: the pinned protocol specification, vendored in the repository's `spec/` (see
//! `spec/PROVENANCE.md`), for the table tests of `methods` (`proptests::spec` serves the
//! oracle tests).
//!
//! Every test finds it; there is no skip path: a missing file is a failure.
//! `ACP_SPEC_DIR` points the tests at another copy of the pinned version for a one-off run.

use std::path::{Path, PathBuf};

/// The pinned schema version.
pub(crate) const SPEC_VERSION: &str = "crate-1.20.0/v1";

/// The vendored `spec/` directory of the repository.
pub(crate) fn vendored() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec")
}

/// The directory of the pinned version: `$ACP_SPEC_DIR` if set, else `spec/crate-1.20.0/v1`.
///
/// # Panics
/// When it holds no `schema.json` (`test` names the caller in the message).
pub(crate) fn spec_dir(test: &str) -> PathBuf {
    let dir = std::env::var_os("ACP_SPEC_DIR").map_or_else(|| vendored().join(SPEC_VERSION), PathBuf::from);
    assert!(dir.join("schema.json").is_file(), "{test}: no schema.json in {}", dir.display());
    dir
}

/// Reads and parses a JSON file of a spec directory.
///
/// # Panics
/// When the file cannot be read or parsed (a broken spec copy is a test failure).
pub(crate) fn read_json(dir: &Path, file: &str) -> serde_json::Value {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}
