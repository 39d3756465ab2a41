//! The unstable run of the official oracle (feature `proptests/unstable`): which schema it
//! reads, which definitions are new or changed against the stable schema, and which of those
//! acp-proto does not cover yet.
//!
//! With the feature, both sides compile their unstable surface: ours every `unstable_*` type
//! (`proptests::oracle_unstable::UNSTABLE_DEFS`), theirs the crate's `unstable` feature, which
//! this dev-dependency always enables. The run compares every definition of
//! `schema.unstable.json` that both sides have, except those that are, or reference, a
//! definition of `proptests::oracle_unstable::NOT_YET` (an unstable group acp-proto has not
//! implemented: our type lacks its new parts, so every instance would be a known gap, not a
//! finding). The same list drives the schema oracle, so a group implemented later is compared
//! here as soon as it leaves `NOT_YET` and its types join `UNSTABLE_DEFS`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// The schema file of this build's run.
pub(crate) const SCHEMA_FILE: &str = if cfg!(feature = "unstable") { "schema.unstable.json" } else { "schema.json" };

/// The `#/$defs/<name>` references anywhere in `v`.
fn refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref")
                && let Some(name) = r.strip_prefix("#/$defs/")
            {
                out.insert(name.to_owned());
            }
            m.values().for_each(|w| refs(w, out));
        }
        Value::Array(a) => a.iter().for_each(|w| refs(w, out)),
        _ => {}
    }
}

/// The definitions of `defs` that are in `seeds` or reference one of them, transitively.
pub(crate) fn reaching(defs: &Map<String, Value>, seeds: &BTreeSet<String>) -> BTreeSet<String> {
    let direct: Vec<(&String, BTreeSet<String>)> = defs
        .iter()
        .map(|(k, v)| {
            let mut out = BTreeSet::new();
            refs(v, &mut out);
            (k, out)
        })
        .collect();
    let mut reached: BTreeSet<String> = seeds.iter().filter(|s| defs.contains_key(*s)).cloned().collect();
    loop {
        let before = reached.len();
        for (k, out) in &direct {
            if !reached.contains(*k) && out.iter().any(|r| reached.contains(r)) {
                reached.insert((*k).clone());
            }
        }
        if reached.len() == before {
            return reached;
        }
    }
}

/// The definitions of `unstable` that differ from (or are absent in) `stable`, or reference
/// such a definition, transitively: everything else is the same schema on both runs.
pub(crate) fn changed(stable: &Map<String, Value>, unstable: &Map<String, Value>) -> BTreeSet<String> {
    let direct = unstable.iter().filter(|(k, v)| stable.get(*k) != Some(*v)).map(|(k, _)| k.clone()).collect();
    reaching(unstable, &direct)
}

/// The definitions this build cannot compare yet: with `unstable`, those that are or reference
/// one of `NOT_YET`; none without it (the stable schema has no unstable part).
pub(crate) fn not_yet(defs: &Map<String, Value>) -> BTreeSet<String> {
    if !cfg!(feature = "unstable") {
        return BTreeSet::new();
    }
    let pending = proptests::oracle_unstable::NOT_YET.iter().map(|s| (*s).to_owned()).collect();
    reaching(defs, &pending)
}

#[test]
fn reaching_follows_references_transitively() {
    let defs = serde_json::json!({
        "A": {"$ref": "#/$defs/B"},
        "B": {"properties": {"x": {"items": {"$ref": "#/$defs/C"}}}},
        "C": {"type": "string"},
        "D": {"type": "string"},
    });
    let defs = defs.as_object().expect("an object");
    let got = reaching(defs, &BTreeSet::from(["C".to_owned()]));
    assert_eq!(got, BTreeSet::from(["A".to_owned(), "B".to_owned(), "C".to_owned()]));
    let mut other = defs.clone();
    other.insert("D".into(), serde_json::json!({"type": "integer"}));
    other.insert("E".into(), serde_json::json!({"$ref": "#/$defs/D"}));
    assert_eq!(changed(defs, &other), BTreeSet::from(["D".to_owned(), "E".to_owned()]));
}
