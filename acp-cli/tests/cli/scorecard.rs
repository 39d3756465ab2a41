//! The README's scorecard (written by `tools/scorecard.sh`) parses, and its `acp agent` row is
//! what `acp check agent -- acp agent --quiet` gives now: a requirement added or changed
//! without the scorecard being regenerated fails here.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

/// The table rows between the scorecard markers, as cells.
fn rows() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("README.md")).unwrap();
    let start = readme.find("<!-- scorecard:begin").expect("the scorecard's begin marker");
    let end = readme.find("<!-- scorecard:end -->").expect("the scorecard's end marker");
    let table: Vec<&str> = readme[start..end].lines().filter(|l| l.starts_with('|')).collect();
    assert!(table.len() > 2, "no table between the markers");
    assert_eq!(
        table[0], "| peer | role | protocol | verdict (exit) | MUST | CAPABILITY | SHOULD | INFO |",
        "the header"
    );
    table[2..].iter().map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_owned()).collect()).collect()
}

#[test]
fn the_scorecard_parses_and_its_acp_agent_row_is_current() {
    let rows = rows();
    for row in &rows {
        if row[3] == "not run" {
            continue;
        }
        assert_eq!(row.len(), 8, "{row:?}");
        assert!(["agent", "client"].contains(&row[1].as_str()), "{row:?}");
        assert!(["v1", "v2"].contains(&row[2].as_str()), "{row:?}");
        for cell in &row[4..] {
            let counts: Vec<&str> = cell.split('/').collect();
            assert!(counts.len() == 4 && counts.iter().all(|n| n.parse::<u32>().is_ok()), "{cell:?} in {row:?}");
        }
    }
    let row = rows.iter().find(|r| r[0] == "`acp agent`" && r[2] == "v1").expect("the acp agent row");
    let acp = acp();
    let out = Command::new(&acp)
        .args(["check", "agent", "--format", "json", "--startup-timeout", "300", "--"])
        .args([acp.to_str().unwrap(), "agent", "--quiet"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let fresh: Vec<String> = ["MUST", "CAPABILITY", "SHOULD", "INFO"]
        .iter()
        .map(|level| {
            let c = &report["levels"][level];
            format!("{}/{}/{}/{}", c["pass"], c["fail"], c["skip"], c["blocked"])
        })
        .collect();
    let verdict = format!("{} ({})", report["verdict"].as_str().unwrap(), report["exit"]);
    assert_eq!((&row[3], &row[4..]), (&verdict, &fresh[..]), "the README's scorecard is stale: run tools/scorecard.sh");
}
