use serde_json::json;

use super::diff::{Change, spec_diff, type_of, variant_label};
use super::*;

fn change(added: &[&str], removed: &[&str]) -> Change {
    let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
    Change { added: own(added), removed: own(removed) }
}

#[test]
fn methods_per_side_added_and_removed() {
    let old = json!({"version": 1, "agentMethods": {"a": "a/x", "b": "a/y"}, "clientMethods": {"c": "c/x"}});
    let new = json!({"version": 1, "agentMethods": {"a": "a/x"}, "clientMethods": {"c": "c/x", "d": "c/new"}});
    let d = spec_diff(&old, &json!({}), &new, &json!({}));
    assert_eq!(d.methods["agentMethods"], change(&[], &["a/y"]));
    assert_eq!(d.methods["clientMethods"], change(&["c/new"], &[]));
    assert!(!d.methods.contains_key("version"));
}

#[test]
fn defs_properties_required_variants_and_annotations() {
    let old = json!({"$defs": {
        "Gone": {"type": "string"},
        "Req": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]},
        "Stop": {"oneOf": [{"type": "string", "const": "end"}, {"type": "string", "const": "max"}]},
        "Upd": {"oneOf": [{"type": "object", "properties": {"kind": {"const": "x"}}, "allOf": [{"$ref": "#/$defs/X"}]}]},
        "Same": {"type": "object", "properties": {"z": {"type": "boolean"}}}
    }});
    let new = json!({"$defs": {
        "New": {"type": "string"},
        "Req": {"type": "object", "properties": {
            "a": {"type": "string"},
            "b": {"type": ["string", "null"], "x-deserialize-default-on-null": true},
            "c": {"type": "array", "items": {"$ref": "#/$defs/X"}}
        }, "required": ["b"]},
        "Stop": {"oneOf": [{"type": "string", "const": "end"}, {"type": "string", "const": "refusal"}]},
        "Upd": {"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "x"}}, "allOf": [{"$ref": "#/$defs/X"}]},
            {"type": "object", "properties": {"kind": {"const": "y"}}}
        ]},
        "Same": {"type": "object", "properties": {"z": {"type": "boolean"}}}
    }});
    let d = spec_diff(&json!({}), &old, &json!({}), &new);
    assert_eq!(d.def_counts, (5, 5));
    assert_eq!(d.defs, change(&["New"], &["Gone"]));
    assert!(!d.changed.contains_key("Same"));
    let req = &d.changed["Req"];
    assert_eq!(req.properties, change(&["c"], &[]));
    assert_eq!(req.required, change(&["b"], &["a"]));
    assert_eq!(req.annotations, change(&["b: x-deserialize-default-on-null"], &[]));
    assert_eq!(req.retyped, vec![("b".to_owned(), "integer".to_owned(), "string|null".to_owned())]);
    assert_eq!(d.changed["Stop"].variants, change(&["refusal"], &["max"]));
    assert_eq!(d.changed["Upd"].variants, change(&["kind=y"], &[]));
}

#[test]
fn capability_flags_of_changed_new_and_removed_definitions() {
    let old = json!({"$defs": {
        "ClientCapabilities": {"type": "object", "properties": {"fs": {}, "_meta": {}}},
        "OldCapabilities": {"type": "object", "properties": {"x": {}}}
    }});
    let new = json!({"$defs": {
        "ClientCapabilities": {"type": "object", "properties": {"fs": {}, "plan": {}, "_meta": {}}},
        "PlanCapabilities": {"type": "object", "properties": {"ops": {}}}
    }});
    let d = spec_diff(&json!({}), &old, &json!({}), &new);
    assert_eq!(d.capabilities, change(&["ClientCapabilities.plan", "PlanCapabilities.ops"], &["OldCapabilities.x"]));
}

#[test]
fn labels_and_types_are_compact() {
    assert_eq!(variant_label(&json!({"title": "stdio", "allOf": [{"$ref": "#/$defs/McpServerStdio"}]})), "stdio");
    assert_eq!(variant_label(&json!({"allOf": [{"$ref": "#/$defs/McpServerStdio"}]})), "McpServerStdio");
    assert_eq!(variant_label(&json!({"type": "integer", "const": -32700})), "-32700");
    assert_eq!(type_of(&json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]})), "A|null");
    assert_eq!(type_of(&json!({})), "any");
}

#[test]
fn report_lists_every_change() {
    let old = json!({"$defs": {"A": {"type": "object", "properties": {"p": {"type": "string"}}}}});
    let new = json!({"$defs": {"A": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}});
    let meta = json!({"clientMethods": {"e": "elicitation/create"}});
    let text = report::render("old", "new", &spec_diff(&json!({}), &old, &meta, &new));
    for needle in [
        "+ clientMethods (1): elicitation/create",
        "## $defs: 1 -> 1",
        "  A\n",
        "+ properties (1): q",
        "- properties (1): p",
        "+ now required (1): q",
    ] {
        assert!(text.contains(needle), "no {needle:?} in\n{text}");
    }
}

/// The vendored folders, 1.19.0 → crate 1.20.0: a few facts of `spec/README`/`PROVENANCE`.
#[test]
fn vendored_folders_known_facts() {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec");
    let (old, new) = (spec.join("v1.19.0"), spec.join("crate-1.20.0/v1"));
    let d = spec_diff(
        &read(&old, "meta.json").unwrap(),
        &read(&old, "schema.json").unwrap(),
        &read(&new, "meta.json").unwrap(),
        &read(&new, "schema.json").unwrap(),
    );
    assert_eq!(d.def_counts, (142, 203));
    assert!(d.defs.removed.is_empty(), "{:?}", d.defs.removed);
    assert_eq!(d.defs.added.len(), 61);
    assert_eq!(d.methods["clientMethods"], change(&["elicitation/complete", "elicitation/create"], &[]));
    assert!(d.methods["agentMethods"].is_empty());
    let update = &d.changed["SessionUpdate"].variants;
    for v in ["sessionUpdate=plan_update", "sessionUpdate=notice", "sessionUpdate=subagent_update"] {
        assert!(update.added.contains(&v.to_owned()), "{v} not in {update:?}");
    }
    assert!(d.changed["ToolCall"].properties.added.contains(&"name".to_owned()));
    assert!(d.changed["ToolCallContent"].variants.added.contains(&"type=session".to_owned()));
    assert!(d.capabilities.added.contains(&"ClientCapabilities.elicitation".to_owned()));
    // 14 fields gain `x-deserialize-default-on-null`; 2 of them are in the new
    // `AuthMethodTerminal`, so 12 show as changes of definitions present on both sides.
    let annotated = d.changed.values().flat_map(|c| &c.annotations.added);
    assert_eq!(annotated.filter(|a| a.ends_with("x-deserialize-default-on-null")).count(), 12);
    assert!(d.defs.added.contains(&"AuthMethodTerminal".to_owned()));
    let text = run(&old, &new, false).unwrap();
    assert!(text.contains("## $defs: 142 -> 203"), "{text}");
}
