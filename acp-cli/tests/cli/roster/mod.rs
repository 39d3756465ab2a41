//! The coverage roster (`acp-cli/src/check/roster.jsonl`) follows the spec: every clause the
//! vendored pages and schema say (see `extract`) is in it, with the same id, page, anchor,
//! level and text, and nothing else is. A page whose clauses change fails this test until the
//! roster follows:
//!
//! ```sh
//! ACP_BLESS=1 cargo test -p acp-cli --test cli roster::
//! ```
//!
//! rewrites it, keeping each clause's status (`checked` by which requirements, `not-checkable`
//! and why, `not-yet`) by id; a new or reworded clause starts `not-yet`. Then `acp check
//! --coverage` prints the table, which this test also checks against the roster.

mod extract;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use acp_cli::check::coverage::{Clause, LEVELS, Ledger, Status};

fn roster_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join("check").join("roster.jsonl")
}

fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("spec")
}

/// The roster the pages make, with the statuses of `committed` kept by id.
fn regenerate(committed: &Ledger) -> String {
    let statuses: HashMap<&str, &Status> = committed.clauses.iter().map(|c| (c.id.as_str(), &c.status)).collect();
    let mut text = String::new();
    for found in extract::all(&spec_dir()) {
        let status = statuses.get(found.id.as_str()).map_or(Status::NotYet, |s| (*s).clone());
        let clause = Clause {
            id: found.id,
            spec: found.spec,
            page: found.page,
            anchor: found.anchor,
            level: found.level.to_owned(),
            text: found.text,
            status,
        };
        text.push_str(&clause.to_line());
        text.push('\n');
    }
    text
}

#[test]
fn the_roster_follows_the_pages() {
    let path = roster_path();
    let committed_text = std::fs::read_to_string(&path).unwrap_or_default();
    let committed = Ledger::parse(&committed_text).expect("the roster parses");
    let fresh = regenerate(&committed);
    if fresh == committed_text {
        return;
    }
    if std::env::var("ACP_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &fresh).unwrap();
        eprintln!("rewrote {}", path.display());
        return;
    }
    let fresh = Ledger::parse(&fresh).unwrap();
    let ids = |l: &Ledger| l.clauses.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
    let (old, new) = (ids(&committed), ids(&fresh));
    let added: Vec<&String> = new.iter().filter(|id| !old.contains(id)).collect();
    let removed: Vec<&String> = old.iter().filter(|id| !new.contains(id)).collect();
    panic!(
        "the roster does not follow the pages: {} clause(s) new or reworded {added:?}, {} gone {removed:?} \
         (or moved, re-anchored). Run `ACP_BLESS=1 cargo test -p acp-cli --test cli roster::`, then judge the new \
         ones in {}",
        added.len(),
        removed.len(),
        path.display()
    );
}

#[test]
fn the_coverage_table_is_the_rosters() {
    let ledger = Ledger::parse(&std::fs::read_to_string(roster_path()).unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_acp")).args(["check", "--coverage"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with(&format!("acp check --coverage: {} clauses", ledger.clauses.len())), "{text}");
    for spec in ["v1.21.0", "v2.0.0-alpha.3"] {
        let section = text.split(&format!("\n{spec}\n")).nth(1).unwrap_or_else(|| panic!("no {spec}: {text}"));
        for level in LEVELS {
            let of = |status: &str| {
                ledger
                    .clauses
                    .iter()
                    .filter(|c| c.spec == spec && c.level == level && c.status.as_str() == status)
                    .count()
            };
            let row = format!(
                "{level:<12} {:>7} {:>8} {:>14} {:>8}",
                of("checked") + of("not-checkable") + of("not-yet"),
                of("checked"),
                of("not-checkable"),
                of("not-yet")
            );
            assert!(section.contains(&row), "{spec}: no row `{row}` in\n{text}");
        }
    }
    let out =
        Command::new(env!("CARGO_BIN_EXE_acp")).args(["check", "--coverage", "--format", "json"]).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["clauses"].as_array().unwrap().len(), ledger.clauses.len());
    let must = &json["totals"]["v1.21.0"]["MUST"];
    assert_eq!(
        must["clauses"].as_u64().unwrap(),
        must["checked"].as_u64().unwrap() + must["not_checkable"].as_u64().unwrap() + must["not_yet"].as_u64().unwrap()
    );
}
