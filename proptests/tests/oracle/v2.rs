//! The schema oracle for ACP v2 (feature `unstable_protocol_v2`): every definition of
//! `spec/crate-1.20.0/v2/schema.json` (215 `$defs`) against `acp_proto::v2`, with the same
//! generator, checks and normalizations as the v1 oracle (module docs of `tests/oracle.rs`).
//!
//! Routes: the definitions of `proptests::oracle_v2::V2_DEFS` decode as their `acp_proto::v2`
//! type; `ExtRequest`, `ExtNotification` and `ExtResponse` are any JSON (`serde_json::Value`,
//! as v2 has no typed layer yet); the seven message envelopes (`ClientRequest`, …,
//! `ProtocolLevelNotification`) are generated consistently, as in v1, from a row of the v2
//! method table ([`acp_proto::v2::METHODS`]) or an extension method, and go through
//! `acp_proto::v2`'s envelope types. `proptests::oracle_v2::NOT_YET` lists what is not checked
//! yet, and is asserted exactly.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use proptests::oracle_v2::{NOT_YET, V2_DEFS, roundtrip};
use proptests::schema_gen::{Rng, Schema, seed_for};
use serde_json::Value;

use super::{Ctx, DEFAULT_INSTANCES, DEFAULT_SEED, SHOWN_FAILURES, Trip, compare, env_u64, pointer, wire};

#[path = "v2_envelope.rs"]
mod envelope;

/// The v2 schema and one validator per definition, built once.
fn ctx() -> &'static Ctx {
    static CTX: OnceLock<Ctx> = OnceLock::new();
    CTX.get_or_init(|| {
        let dir = proptests::spec::vendored().join("crate-1.20.0/v2");
        let root = proptests::spec::read_json(&dir, "schema.json");
        let validators = jsonschema::options().build_map(&root).unwrap_or_else(|e| panic!("compiling v2 schema: {e}"));
        let schema = Schema::new(root);
        for def in schema.defs().keys() {
            assert!(validators.contains_key(&pointer(def)), "no validator for {def}");
        }
        Ctx { schema, validators }
    })
}

const EXT: &[&str] = &["ExtRequest", "ExtNotification", "ExtResponse"];

/// Decodes and re-encodes one instance of `def`.
fn trip(ctx: &Ctx, def: &str, rng: &mut Rng) -> Result<Trip, String> {
    if let Some(trip) = envelope::trip(ctx, def, rng) {
        return trip;
    }
    let input = wire(&ctx.schema.generate(def, rng));
    let output = if EXT.contains(&def) {
        let v: Value = serde_json::from_str(&input.to_string()).map_err(|e| e.to_string())?;
        serde_json::to_value(v).map_err(|e| e.to_string())?
    } else {
        roundtrip(def, input.clone()).expect("routed")?
    };
    Ok(Trip { input, output, norm_schema: Schema::def_ref(def) })
}

fn routed(def: &str) -> bool {
    V2_DEFS.contains(&def) || EXT.contains(&def) || envelope::ENVELOPES.contains(&def)
}

#[test]
fn every_v2_schema_definition_round_trips() {
    let ctx = ctx();
    let base = env_u64("ACP_ORACLE_SEED", DEFAULT_SEED);
    let n = env_u64("ACP_ORACLE_INSTANCES", DEFAULT_INSTANCES);
    let all: BTreeSet<&str> = ctx.schema.defs().keys().map(String::as_str).collect();
    assert_eq!(all.len(), 215, "the v2 schema has 215 definitions");
    let pending: BTreeSet<&str> = NOT_YET.iter().copied().collect();
    assert!(pending.is_subset(&all), "NOT_YET names unknown definitions: {:?}", pending.difference(&all));
    let both: Vec<&&str> = pending.iter().filter(|d| routed(d)).collect();
    assert!(both.is_empty(), "NOT_YET lists covered definitions: {both:?}");
    let unrouted: Vec<&&str> = all.iter().filter(|d| !routed(d) && !pending.contains(*d)).collect();
    assert!(unrouted.is_empty(), "v2 definitions without a decoder: {unrouted:?}");
    let extra: Vec<&&str> = V2_DEFS.iter().filter(|d| !all.contains(**d)).collect();
    assert!(extra.is_empty(), "V2_DEFS names unknown to the schema: {extra:?}");

    let (mut instances, mut failures, mut failing) = (0u64, Vec::new(), Vec::new());
    let checked: Vec<&str> = all.difference(&pending).copied().collect();
    for def in &checked {
        let mut failed = 0;
        for i in 0..n {
            let seed = seed_for(base, def, i);
            instances += 1;
            let result = trip(ctx, def, &mut Rng::new(seed))
                .map_err(|e| format!("decode/encode failed: {e}"))
                .and_then(|t| compare(ctx, def, &t));
            if let Err(e) = result {
                failed += 1;
                if failed <= SHOWN_FAILURES {
                    failures.push(format!("{def} (instance {i}, seed {seed:#018x}): {e}"));
                }
            }
        }
        if failed > 0 {
            failing.push(format!("{def} ({failed}/{n})"));
        }
    }
    let summary = format!(
        "oracle (v2): {} types covered, {instances} instances checked, {} not yet covered",
        checked.len(),
        pending.len()
    );
    println!("{summary}");
    eprintln!("{summary}");
    assert!(
        failures.is_empty(),
        "{} definitions fail: {}\n\n{}",
        failing.len(),
        failing.join(", "),
        failures.join("\n\n")
    );
}

/// Every generated instance of every v2 definition validates, so the oracle's inputs are
/// v2 messages.
#[test]
fn v2_generator_self_check() {
    let ctx = ctx();
    let base = env_u64("ACP_ORACLE_SEED", DEFAULT_SEED) ^ 0x5E1F;
    let mut bad = Vec::new();
    for def in ctx.schema.defs().keys() {
        for i in 0..25 {
            let seed = seed_for(base, def, i);
            let v = ctx.schema.generate(def, &mut Rng::new(seed));
            if let Err(e) = ctx.validate(def, &v) {
                bad.push(format!("{def} (seed {seed:#018x}): {e}\n  {v}"));
            }
        }
    }
    assert!(bad.is_empty(), "{} invalid instances:\n{}", bad.len(), bad.join("\n"));
}

/// The v2 comparison is not vacuous: a changed leaf, or an undeclared key, in a correct
/// re-encoding is reported, for every definition (free-form values excepted).
#[test]
fn v2_oracle_detects_corrupted_outputs() {
    let ctx = ctx();
    let (mut undetected, mut mutations) = (Vec::new(), 0u64);
    for def in ctx.schema.defs().keys() {
        for i in 0..10 {
            let seed = seed_for(DEFAULT_SEED ^ 0xBAD, def, i);
            let mut rng = Rng::new(seed);
            let trip = trip(ctx, def, &mut rng).unwrap_or_else(|e| panic!("{def} ({seed:#x}): {e}"));
            let mut paths = Vec::new();
            super::leaves(&trip.output, "", &mut paths);
            let mut corrupt = |output: Value, what: &str| {
                mutations += 1;
                let bad = Trip { input: trip.input.clone(), output, norm_schema: trip.norm_schema.clone() };
                if compare(ctx, def, &bad).is_ok() {
                    undetected.push(format!("{def} ({seed:#x}): {what} in {}", trip.output));
                }
            };
            if !paths.is_empty() {
                let path = rng.pick(&paths).clone();
                let mut output = trip.output.clone();
                let leaf = output.pointer_mut(&path).expect("a leaf path");
                *leaf = match leaf.take() {
                    Value::String(s) => Value::String(format!("{s}~")),
                    Value::Bool(b) => Value::Bool(!b),
                    Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                        (Some(u), _, _) => Value::from(u ^ 1),
                        (_, Some(i), _) => Value::from(i ^ 1),
                        (_, _, Some(f)) => Value::from(f + 1.0),
                        _ => unreachable!("a JSON number"),
                    },
                    other => other,
                };
                corrupt(output, &format!("changed {path}"));
            }
            if let Value::Object(m) = &trip.output
                && !EXT.contains(&def.as_str())
            {
                let mut m = m.clone();
                m.insert("undeclaredKey".into(), Value::from(1));
                corrupt(Value::Object(m), "added undeclaredKey");
            }
        }
    }
    assert!(mutations > 2000, "{mutations} mutations");
    assert!(undetected.is_empty(), "{} undetected:\n{}", undetected.len(), undetected.join("\n"));
}
