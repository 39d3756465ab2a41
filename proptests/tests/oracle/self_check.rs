//! The tests that keep the oracle honest: the generator's instances validate and cover every
//! branch and optional property, the normalizer applies the documented rules only, and a
//! corrupted re-encoding is reported.

use super::*;

/// Every generated instance of every definition validates (jsonschema crate), and respects
/// the integer `format` ranges that JSON Schema does not check.
#[test]
pub(super) fn generator_self_check() {
    let ctx = ctx("generator_self_check");
    let base = env_u64("ACP_ORACLE_SEED", DEFAULT_SEED) ^ 0x5E1F;
    let n = env_u64("ACP_ORACLE_INSTANCES", DEFAULT_INSTANCES).div_ceil(4);
    let mut bad = Vec::new();
    let mut checked = 0u64;
    for def in definitions_to_check(ctx) {
        for i in 0..n {
            let seed = seed_for(base, def, i);
            let v = ctx.schema.generate(def, &mut Rng::new(seed));
            checked += 1;
            if let Err(e) = ctx.validate(def, &v) {
                bad.push(format!("{def} (seed {seed:#018x}): {e}\n  {v}"));
            } else if !ctx.schema.matches(&Schema::def_ref(def), &v) {
                bad.push(format!("{def} (seed {seed:#018x}): out of a format range\n  {v}"));
            }
        }
    }
    eprintln!("generator: {checked} instances of {} definitions valid", ctx.schema.defs().len());
    assert!(bad.is_empty(), "{} invalid instances:\n{}", bad.len(), bad.join("\n"));
}

/// The generator reaches every branch of every `anyOf`/`oneOf` definition and both states
/// of every optional property, so the oracle is not vacuous.
#[test]
pub(super) fn generator_covers_branches_and_optional_properties() {
    let ctx = ctx("generator_covers_branches_and_optional_properties");
    let mut missing = Vec::new();
    for (def, schema) in ctx.schema.defs() {
        let instances: Vec<Value> =
            (0..200).map(|i| ctx.schema.generate(def, &mut Rng::new(seed_for(DEFAULT_SEED, def, i)))).collect();
        for key in ["anyOf", "oneOf"] {
            for (b, branch) in schema.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
                // An empty array matches every array branch; it does not count.
                let hit = |v: &Value| ctx.schema.matches(branch, v) && v.as_array().is_none_or(|a| !a.is_empty());
                if !instances.iter().any(hit) {
                    missing.push(format!("{def}: {key} branch {b} never generated"));
                }
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for name in props.into_iter().flat_map(|p| p.keys()) {
            if required.contains(&name.as_str()) {
                continue;
            }
            let present = instances.iter().filter(|v| v.get(name).is_some()).count();
            if present == 0 || present == instances.len() {
                missing.push(format!("{def}.{name}: present in {present}/200 instances"));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The normalizer applies the documented rules and nothing else.
#[test]
pub(super) fn normalizer_applies_the_documented_rules() {
    let ctx = ctx("normalizer_applies_the_documented_rules");
    let s = &ctx.schema;
    let opts = norm_options();
    let norm = |def: &str, v: Value| s.normalize(def, &v, &opts);

    // (a) null optionals dropped; required and free-form values untouched.
    let n = norm("Annotations", json!({"audience": null, "lastModified": "t", "priority": 1}));
    assert_eq!(n.value, json!({"lastModified": "t", "priority": 1.0}));
    assert!(n.dropped_unknown.is_empty());
    let n = norm("CancelRequestNotification", json!({"requestId": null}));
    assert_eq!(n.value, json!({"requestId": null}));
    let n = norm("SessionInfoUpdate", json!({"title": null, "updatedAt": null, "_meta": null}));
    assert_eq!(n.value, json!({"title": null, "updatedAt": null}));
    // (b) defaults, nested: a capability object equal to its default disappears.
    let n = norm(
        "InitializeResponse",
        json!({"protocolVersion": 1, "authMethods": [], "agentCapabilities": {"loadSession": false, "promptCapabilities": {"image": false}, "sessionCapabilities": {}}}),
    );
    assert_eq!(n.value, json!({"protocolVersion": 1}));
    let n = norm("AgentCapabilities", json!({"loadSession": true, "promptCapabilities": {"image": true}}));
    assert_eq!(n.value, json!({"loadSession": true, "promptCapabilities": {"image": true}}));
    // (c) doubles compare by value, integers stay integers.
    assert_eq!(
        norm("Cost", json!({"amount": 3, "currency": "EUR"})).value,
        norm("Cost", json!({"amount": 3.0, "currency": "EUR"})).value
    );
    assert_eq!(norm("UsageUpdate", json!({"used": 3, "size": 4})).value, json!({"used": 3, "size": 4}));
    // (d) unknown keys dropped and reported, except in _meta and free-form values.
    let n = norm(
        "ToolCall",
        json!({"toolCallId": "t", "title": "x", "bogus": 1, "_meta": {"k": null}, "rawInput": {"any": [null]}}),
    );
    assert_eq!(n.value, json!({"toolCallId": "t", "title": "x", "_meta": {"k": null}, "rawInput": {"any": [null]}}));
    assert_eq!(n.dropped_unknown, vec!["/bogus".to_owned()]);
    // Branches are chosen by the value: a tagged union keeps its discriminator.
    let n = norm("ContentBlock", json!({"type": "text", "text": "hi", "annotations": null, "x": 1}));
    assert_eq!(n.value, json!({"type": "text", "text": "hi"}));
    assert_eq!(n.dropped_unknown, vec!["/x".to_owned()]);
    let n = norm(
        "SessionConfigOption",
        json!({"type": "boolean", "id": "i", "name": "n", "currentValue": true, "category": null}),
    );
    assert_eq!(n.value, json!({"type": "boolean", "id": "i", "name": "n", "currentValue": true}));
}

/// JSON pointers of the string, boolean and integer leaves of `v`.
pub(super) fn leaves(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                leaves(x, &format!("{path}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                leaves(x, &format!("{path}/{i}"), out);
            }
        }
        Value::String(_) | Value::Bool(_) => out.push(path.to_owned()),
        Value::Number(n) if !n.is_f64() => out.push(path.to_owned()),
        _ => {}
    }
}

/// The oracle is not vacuous: a re-encoding with one leaf changed, or with an undeclared key
/// added, is reported for every definition.
#[test]
pub(super) fn oracle_detects_corrupted_outputs() {
    let ctx = ctx("oracle_detects_corrupted_outputs");
    let mut undetected = Vec::new();
    let mut mutations = 0u64;
    for def in definitions_to_check(ctx) {
        let route = route(def).expect("every definition has a route");
        for i in 0..20 {
            let seed = seed_for(DEFAULT_SEED ^ 0xBAD, def, i);
            let mut rng = Rng::new(seed);
            let trip = trip_for(ctx, def, route, &mut rng).unwrap_or_else(|e| panic!("{def} ({seed:#x}): {e}"));
            let mut paths = Vec::new();
            leaves(&trip.output, "", &mut paths);
            if !paths.is_empty() {
                let path = rng.pick(&paths).clone();
                let mut output = trip.output.clone();
                let leaf = output.pointer_mut(&path).expect("a leaf path");
                *leaf = match leaf.take() {
                    Value::String(s) => Value::String(format!("{s}~")),
                    Value::Bool(b) => Value::Bool(!b),
                    Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                        (Some(u), _) => Value::from(u ^ 1),
                        (_, Some(i)) => Value::from(i ^ 1),
                        _ => unreachable!("integer leaf"),
                    },
                    other => other,
                };
                mutations += 1;
                let corrupted = Trip { input: trip.input.clone(), output, norm_schema: trip.norm_schema.clone() };
                if compare(ctx, def, &corrupted).is_ok() {
                    undetected.push(format!("{def} ({seed:#x}): changed {path} in {}", trip.output));
                }
            }
            let free_form = matches!(route, Route::ExtRequest | Route::ExtNotification | Route::ExtResponse);
            if let Value::Object(m) = &trip.output
                && !free_form
            {
                let mut m = m.clone();
                m.insert("undeclaredKey".into(), json!(1));
                mutations += 1;
                let corrupted =
                    Trip { input: trip.input.clone(), output: Value::Object(m), norm_schema: trip.norm_schema.clone() };
                if compare(ctx, def, &corrupted).is_ok() {
                    undetected.push(format!("{def} ({seed:#x}): added undeclaredKey to {}", trip.output));
                }
            }
        }
    }
    eprintln!("oracle: {mutations} corrupted outputs, {} undetected", undetected.len());
    assert!(undetected.is_empty(), "{}", undetected.join("\n"));
}
