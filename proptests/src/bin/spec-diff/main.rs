//! `spec-diff OLD NEW`: what changed between two ACP schema folders (each with `meta.json`
//! and `schema.json`), the first step of upgrading the pinned schema (README, "Upgrading the
//! pinned schema").
//!
//! ```text
//! cargo run -p proptests --bin spec-diff -- spec/v1.19.0 spec/crate-1.20.0/v1
//! ```
//!
//! Prints methods added/removed per side (`meta.json`), `$defs` added/removed, per definition
//! present in both: properties added/removed, requiredness changes, `enum`/`oneOf`/`anyOf`
//! variants added/removed, `x-deserialize-*` annotations added/removed and property type
//! changes; and the capability flags (`…Capabilities.<property>`) added/removed.
//! `--unstable` compares `meta.unstable.json` / `schema.unstable.json` instead.

mod diff;
mod report;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;

fn read(dir: &Path, file: &str) -> Result<Value, String> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("parsing {}: {e}", path.display()))
}

/// The report comparing folder `old` with folder `new`.
fn run(old: &Path, new: &Path, unstable: bool) -> Result<String, String> {
    let (meta, schema) =
        if unstable { ("meta.unstable.json", "schema.unstable.json") } else { ("meta.json", "schema.json") };
    let d = diff::spec_diff(&read(old, meta)?, &read(old, schema)?, &read(new, meta)?, &read(new, schema)?);
    Ok(report::render(&format!("{} ({schema})", old.display()), &format!("{} ({schema})", new.display()), &d))
}

const USAGE: &str = "usage: spec-diff [--unstable] OLD_DIR NEW_DIR";

fn main() -> ExitCode {
    let mut unstable = false;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for arg in std::env::args_os().skip(1) {
        match arg.to_str() {
            Some("--unstable") => unstable = true,
            Some("-h" | "--help") => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ => dirs.push(arg.into()),
        }
    }
    let [old, new] = &dirs[..] else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match run(old, new, unstable) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("spec-diff: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests;
