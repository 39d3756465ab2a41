//! The oracle itself: every definition to check, `ACP_ORACLE_INSTANCES` instances each.

use super::*;

#[test]
fn every_schema_definition_round_trips() {
    let ctx = ctx("every_schema_definition_round_trips");
    let started = Instant::now();
    let base = env_u64("ACP_ORACLE_SEED", DEFAULT_SEED);
    let n = env_u64("ACP_ORACLE_INSTANCES", DEFAULT_INSTANCES);

    let schema_defs = definitions_to_check(ctx);
    let unrouted: Vec<&&str> = schema_defs.iter().filter(|d| route(d).is_none()).collect();
    assert!(unrouted.is_empty(), "definitions without a decoder: {unrouted:?}");
    let known: BTreeSet<&str> = ctx.schema.defs().keys().map(String::as_str).collect();
    let extra: Vec<&&str> = DEFS.iter().chain(UNSTABLE_DEFS).filter(|d| !known.contains(**d)).collect();
    assert!(extra.is_empty(), "oracle::DEFS names unknown to the schema: {extra:?}");

    let mut tally = Tally::default();
    let mut covered = BTreeSet::new();
    let mut failures: Vec<String> = Vec::new();
    let mut failing_defs = BTreeSet::new();
    for def in &schema_defs {
        let route = route(def).expect("checked above");
        let mut failed = 0usize;
        for i in 0..n {
            let seed = seed_for(base, def, i);
            let mut rng = Rng::new(seed);
            tally.instances += 1;
            if let Err(e) = check_one(ctx, def, route, &mut rng, &mut tally) {
                failed += 1;
                if failed <= SHOWN_FAILURES {
                    failures.push(format!("{def} (instance {i}, seed {seed:#018x}): {e}"));
                }
            }
        }
        if failed > 0 {
            failing_defs.insert(format!("{def} ({failed}/{n})"));
        }
        covered.insert(*def);
    }
    assert_eq!(covered, schema_defs, "every definition is checked");
    if cfg!(feature = "unstable") {
        // The 69 new and 22 changed definitions and those that reference them, minus those not
        // covered yet and those that reference them.
        assert!(covered.len() >= 69 + 22 - NOT_YET.len(), "the unstable delta");
    } else {
        assert_eq!(covered.len(), 203, "the pinned schema has 203 definitions");
    }

    let summary = format!(
        "oracle: {} types covered, {} instances checked, {} validation checks",
        covered.len(),
        tally.instances,
        tally.validations
    );
    println!("{summary}");
    eprintln!("{summary}");
    eprintln!("oracle: base seed {base:#x} (ACP_ORACLE_SEED), {n} instances per type, {:.1?}", started.elapsed());
    assert!(
        failures.is_empty(),
        "{} definitions fail: {}\n\n{}",
        failing_defs.len(),
        failing_defs.into_iter().collect::<Vec<_>>().join(", "),
        failures.join("\n\n")
    );
}
