//! Replays every committed fuzz input (`fuzz/corpus/<target>/*` and
//! `fuzz/regressions/<target>/*`) through the same functions the fuzz targets call, on stable,
//! so CI exercises them without nightly or libFuzzer.

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut files = Vec::new();
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
        for entry in entries {
            let path = entry.expect("readable corpus directory").path();
            if path.is_file() {
                let data = std::fs::read(&path).expect("readable corpus file");
                files.push((path, data));
            }
        }
    }
    files.sort();
    files
}

fn replay(target: &str, run: impl Fn(&[u8])) -> usize {
    let files = inputs(target);
    assert!(!files.is_empty(), "no committed inputs for the `{target}` target");
    for (path, data) in &files {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(data)));
        assert!(result.is_ok(), "`{target}` fails on {}", path.display());
    }
    println!("fuzz corpus: {target}: {} inputs replayed", files.len());
    files.len()
}

#[test]
fn framer_corpus() {
    replay("framer", proptests::fuzzing::framer);
}

#[test]
fn envelope_corpus() {
    replay("envelope", proptests::fuzzing::envelope);
}

#[test]
fn typed_corpus() {
    replay("typed", proptests::fuzzing::typed);
}

#[test]
fn connection_corpus() {
    replay("connection", proptests::fuzzing::connection);
}

#[test]
fn sim_corpus() {
    replay("sim", |data| {
        let _ = proptests::sim::run_bytes(data);
    });
}
