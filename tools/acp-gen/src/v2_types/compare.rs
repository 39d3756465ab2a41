//! Which v2 definitions are v1's: those the same on the wire as the v1 definition of the same
//! name, transitively through every definition they reference. They are re-exported by
//! `acp-schema/src/v2/mod.rs`, not generated.
//!
//! Compared: the definitions with the keys that do not change the wire left out (descriptions,
//! titles, examples, v2's `x-scope`/`x-state` annotations, value bounds, which the v1 types do
//! not check either), and the unions normalized: a closed `oneOf` of string constants is the
//! same as an open `anyOf` of them with a `{"type": "string"}` fallback, and a tagged union the
//! same whatever its discriminator annotation and its (at most one) `not` fallback branch,
//! because the v1 types already keep unknown values and variants.

use super::json::Json;
use std::collections::BTreeSet;

/// The keys that do not change what is on the wire.
const IGNORED: &[&str] = &[
    "description",
    "title",
    "examples",
    "x-scope",
    "x-state",
    "x-docs-ignore",
    "minimum",
    "maximum",
    "minItems",
    "minLength",
    "maxLength",
];

/// The names of the v2 definitions (`v2`: the `$defs` object) that are the v1 ones (`v1`).
pub(crate) fn reused(v1: &Json, v2: &Json) -> BTreeSet<String> {
    let mut same: BTreeSet<String> = v2
        .entries()
        .iter()
        .filter(|(name, def)| v1.get(name).is_some_and(|old| normalize(old) == normalize(def)))
        .map(|(name, _)| name.clone())
        .collect();
    // A definition that references one that differs differs too: drop them until none is left.
    loop {
        let differ: Vec<String> = same
            .iter()
            .filter(|name| v2.get(name).is_some_and(|def| refs(def).iter().any(|r| !same.contains(r))))
            .cloned()
            .collect();
        if differ.is_empty() {
            return same;
        }
        for name in differ {
            same.remove(&name);
        }
    }
}

/// The names of the definitions `x` references (`$ref`s, by their last path segment).
pub(crate) fn refs(x: &Json) -> BTreeSet<String> {
    fn walk(x: &Json, out: &mut BTreeSet<String>) {
        match x {
            Json::Object(entries) => {
                for (k, v) in entries {
                    match (k.as_str(), v.as_str()) {
                        ("$ref", Some(r)) => {
                            out.insert(r.rsplit('/').next().unwrap_or(r).to_owned());
                        }
                        _ => walk(v, out),
                    }
                }
            }
            Json::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    walk(x, &mut out);
    out
}

/// A `{"type": "string", "const": …}` branch (its description and title aside).
pub(crate) fn is_string_const(b: &Json) -> bool {
    let keys: BTreeSet<&str> =
        b.entries().iter().map(|(k, _)| k.as_str()).filter(|k| !matches!(*k, "description" | "title")).collect();
    b.is_object() && keys == BTreeSet::from(["type", "const"]) && b.get("type").and_then(Json::as_str) == Some("string")
}

/// `x` as compared: the ignored keys left out, at every depth, and each union normalized into
/// an `openenum` key (the sorted constants) or a `tagged` key (`[tag key, {tag value: branch}]`).
pub(crate) fn normalize(x: &Json) -> Json {
    match x {
        Json::Object(entries) => {
            let mut d = Json::Object(
                entries
                    .iter()
                    .filter(|(k, _)| !IGNORED.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), normalize(v)))
                    .collect(),
            );
            for key in ["oneOf", "anyOf"] {
                open_enum(&mut d, key);
            }
            for key in ["oneOf", "anyOf"] {
                tagged_union(&mut d, key);
            }
            d
        }
        Json::Array(items) => Json::Array(items.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

/// `d[key]` as an `openenum` when its branches are string constants, with at most a plain
/// `{"type": "string"}` fallback.
fn open_enum(d: &mut Json, key: &str) {
    let branches = match d.get(key) {
        Some(Json::Array(branches)) if !branches.is_empty() => branches,
        _ => return,
    };
    let (consts, rest): (Vec<&Json>, Vec<&Json>) = branches.iter().partition(|b| is_string_const(b));
    let string = Json::Object(vec![("type".into(), Json::String("string".into()))]);
    if consts.is_empty() || !(rest.is_empty() || rest == [&string]) {
        return;
    }
    let mut values: Vec<Json> = consts.iter().filter_map(|b| b.get("const")).cloned().collect();
    values.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    d.remove(key);
    d.insert("openenum", Json::Array(values));
}

/// `d[key]` as `tagged` when every branch but at most one `not` fallback names its variant by
/// a constant property: each branch keyed by that constant, without its `properties`,
/// `required` and `type`; the `discriminator` annotation dropped.
fn tagged_union(d: &mut Json, key: &str) {
    let branches = match d.get(key) {
        Some(Json::Array(branches)) if !branches.is_empty() => branches,
        _ => return,
    };
    let (known, fallback): (Vec<&Json>, Vec<&Json>) = branches.iter().partition(|b| !b.has("not"));
    // The tag of a branch: its first property whose schema is a constant.
    let tag_of =
        |b: &Json| b.get("properties")?.entries().iter().find_map(|(k, v)| Some((k.clone(), v.get("const")?.clone())));
    let tags: Option<Vec<(String, Json)>> = known.iter().map(|b| tag_of(b)).collect();
    let tags = match tags {
        Some(tags) if !known.is_empty() && fallback.len() <= 1 => tags,
        _ => return,
    };
    let mut variants = Json::Object(Vec::new());
    for (b, (_, value)) in known.iter().zip(&tags) {
        let rest = b.entries().iter().filter(|(k, _)| !matches!(k.as_str(), "properties" | "required" | "type"));
        // Tag values are strings in any sane schema; another value is keyed by its JSON text.
        let name = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
        variants.insert(&name, Json::Object(rest.cloned().collect()));
    }
    let tag_key = Json::String(tags[0].0.clone());
    d.remove(key);
    d.remove("discriminator");
    d.insert("tagged", Json::Array(vec![tag_key, variants]));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Json {
        Json::parse(s).unwrap()
    }

    #[test]
    fn closed_and_open_enums_are_the_same() {
        let v1 = p(r#"{"oneOf": [{"type": "string", "const": "a", "description": "A."},
                                 {"type": "string", "const": "b"}], "description": "v1"}"#);
        let v2 = p(r#"{"anyOf": [{"type": "string", "const": "b"}, {"type": "string", "const": "a"},
                                 {"type": "string", "description": "Other"}], "x-scope": {}}"#);
        assert_eq!(normalize(&v1), normalize(&v2));
        assert_eq!(normalize(&v1).get("openenum").unwrap(), &p(r#"["a", "b"]"#));
        let v3 = p(r#"{"anyOf": [{"type": "string", "const": "a"}, {"type": "string", "const": "c"}]}"#);
        assert_ne!(normalize(&v1), normalize(&v3));
    }

    #[test]
    fn tagged_unions_ignore_the_discriminator_and_the_fallback() {
        let v1 = p(r##"{"discriminator": {"propertyName": "type"}, "oneOf": [
            {"properties": {"type": {"const": "x"}}, "required": ["type"], "$ref": "#/$defs/X"}]}"##);
        let v2 = p(r##"{"anyOf": [{"type": "object", "properties": {"type": {"const": "x", "type": "string"}},
            "$ref": "#/$defs/X"}, {"not": {}}]}"##);
        assert_eq!(normalize(&v1), normalize(&v2));
    }

    /// `A` is the same in both versions but references `B`, which is not: neither is reused.
    #[test]
    fn sameness_is_transitive() {
        let v1 = p(r##"{
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "string"},
            "C": {"type": "integer", "minimum": 0, "description": "v1 words"},
            "D": {"type": "object", "properties": {"c": {"allOf": [{"$ref": "#/$defs/C"}]}}}
        }"##);
        let v2 = p(r##"{
            "D": {"properties": {"c": {"allOf": [{"$ref": "#/$defs/C"}]}}, "type": "object"},
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "integer"},
            "C": {"type": "integer", "minimum": 1, "description": "v2 words"},
            "E": {"type": "string"}
        }"##);
        assert_eq!(reused(&v1, &v2), BTreeSet::from(["C".to_owned(), "D".to_owned()]));
        assert_eq!(refs(v2.get("D").unwrap()), BTreeSet::from(["C".to_owned()]));
    }
}
