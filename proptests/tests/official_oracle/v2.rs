//! The official oracle for ACP v2 (feature `unstable_protocol_v2`): the official crate's
//! `v2` module (`agent_client_protocol_schema::v2`, 1.20.0) against `acp_proto::v2`, on
//! random instances of `spec/crate-1.20.0/v2/schema.json`, judged as the v1 comparison is
//! (`Ctx::judge`: the same kinds, normalizations and known list, keyed by the schema label
//! `crate-1.20.0/v2`).
//!
//! Skipped by name: the seven message envelopes (the official types of those names are params
//! enums decoded by method, not the `{id, method, params}` objects the schema defines) and
//! `ErrorData` (no official type of that name: theirs keeps `Error.data` as any JSON).

use std::collections::BTreeMap;

use agent_client_protocol_schema as official;
use proptests::schema_gen::{Rng, Schema, seed_for};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::official_oracle::known::{Disagreement, Known};
use crate::{Answers, Ctx, DEFAULT_INSTANCES, DEFAULT_SEED, GENERATOR_INVALID, KNOWN, env_u64};

const SCHEMA_LABEL: &str = "crate-1.20.0/v2";

fn roundtrip_as<T: DeserializeOwned + Serialize>(text: &str) -> Result<Value, String> {
    let decoded: T = serde_json::from_str(text).map_err(|e| e.to_string())?;
    serde_json::to_value(&decoded).map_err(|e| e.to_string())
}

macro_rules! official_v2_defs {
    ($($name:ident),* $(,)?) => {
        /// Every v2 definition with an official `v2` type of the same name and shape.
        const THEIRS: &[&str] = &["ProtocolVersion", $(stringify!($name)),*];

        /// The official decode and re-encode of `def`.
        fn theirs(def: &str, text: &str) -> Option<Result<Value, String>> {
            match def {
                "ProtocolVersion" => Some(roundtrip_as::<official::ProtocolVersion>(text)),
                $(stringify!($name) => Some(roundtrip_as::<official::v2::$name>(text)),)*
                _ => None,
            }
        }
    };
}

proptests::with_v2_defs!(official_v2_defs; ExtRequest, ExtResponse, ExtNotification);

/// Our decode and re-encode of `def` (the extension messages are any JSON).
fn ours(def: &str, input: &Value, text: &str) -> Option<Result<Value, String>> {
    match def {
        "ExtRequest" | "ExtResponse" | "ExtNotification" => Some(roundtrip_as::<Value>(text)),
        _ => proptests::oracle_v2::roundtrip(def, input.clone()),
    }
}

fn ctx() -> Ctx {
    let dir = proptests::spec::vendored().join(SCHEMA_LABEL);
    let root = proptests::spec::read_json(&dir, "schema.json");
    let validators = jsonschema::options().build_map(&root).unwrap_or_else(|e| panic!("compiling v2 schema: {e}"));
    // v2 has no unstable run here: its known list is its own label, nothing is "changed".
    Ctx {
        schema: Schema::new(root),
        validators,
        label: SCHEMA_LABEL.to_owned(),
        stable_label: SCHEMA_LABEL.to_owned(),
        changed: std::collections::BTreeSet::new(),
    }
}

#[test]
fn official_v2_types_agree_with_ours() {
    let ctx = ctx();
    let base = env_u64("ACP_OFFICIAL_SEED", DEFAULT_SEED);
    let n = env_u64("ACP_OFFICIAL_INSTANCES", DEFAULT_INSTANCES);
    let default_run = base == DEFAULT_SEED && n == DEFAULT_INSTANCES;
    let (mut compared, mut skipped) = (Vec::new(), Vec::new());
    for def in ctx.schema.defs().keys() {
        let both = THEIRS.contains(&def.as_str()) && ours(def, &Value::Null, "null").is_some();
        if both { compared.push(def.clone()) } else { skipped.push(def.clone()) }
    }
    assert_eq!(compared.len() + skipped.len(), 215);
    let mut seen: BTreeMap<Disagreement, (u64, String)> = BTreeMap::new();
    let mut instances = 0u64;
    for def in &compared {
        for i in 0..n {
            let seed = seed_for(base, def, i);
            let generated = ctx.schema.generate(def, &mut Rng::new(seed));
            let text = generated.to_string();
            let input: Value = serde_json::from_str(&text).expect("serde_json reparses its output");
            let answers = Answers {
                ours: ours(def, &input, &text).expect("compared"),
                theirs: theirs(def, &text).expect("compared"),
                input,
            };
            instances += 1;
            for kind in ctx.judge(def, &answers) {
                let example = || {
                    let show =
                        |r: &Result<Value, String>| r.as_ref().map_or_else(|e| format!("error: {e}"), Value::to_string);
                    format!(
                        "seed {seed:#018x}\n    input:  {}\n    ours:   {}\n    theirs: {}",
                        answers.input,
                        show(&answers.ours),
                        show(&answers.theirs)
                    )
                };
                seen.entry(Disagreement { def: def.clone(), kind }).or_insert_with(|| (0, example())).0 += 1;
            }
        }
    }
    let summary = format!(
        "official oracle (v2): {} defs compared, {instances} instances, {} disagreements",
        compared.len(),
        seen.len()
    );
    println!("{summary}");
    eprintln!("{summary}; skipped by name: {skipped:?}");
    for (d, (count, _)) in &seen {
        eprintln!("official oracle (v2) disagreement: {} | {} ({count}/{n})", d.def, d.kind);
    }
    let known = Known::parse(KNOWN, SCHEMA_LABEL);
    let mut problems = Vec::new();
    for (d, (count, example)) in &seen {
        if d.kind == GENERATOR_INVALID {
            problems.push(format!("{} | {GENERATOR_INVALID} ({count}/{n}): fix the generator, e.g. {example}", d.def));
        } else if !known.contains(d) {
            problems.push(format!("NEW {} | {} ({count}/{n}), e.g. {example}", d.def, d.kind));
        }
    }
    if default_run {
        for d in known.entries().filter(|d| !seen.contains_key(d)) {
            problems
                .push(format!("GONE {} | {}: listed as known but no longer occurs; remove the line", d.def, d.kind));
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
