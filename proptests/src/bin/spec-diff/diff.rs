//! The structural difference of two schema folders (`meta.json` + `schema.json`), as data.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// Methods of one side (`agentMethods`, `clientMethods`, `protocolMethods`) by wire name.
pub(crate) type Methods = BTreeMap<String, BTreeSet<String>>;

/// Added and removed members of a set.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Change {
    /// In the new folder only.
    pub(crate) added: Vec<String>,
    /// In the old folder only.
    pub(crate) removed: Vec<String>,
}

impl Change {
    fn of<'a>(old: impl IntoIterator<Item = &'a String>, new: impl IntoIterator<Item = &'a String>) -> Change {
        let (old, new): (BTreeSet<&String>, BTreeSet<&String>) = (old.into_iter().collect(), new.into_iter().collect());
        Change {
            added: new.difference(&old).map(|s| (*s).clone()).collect(),
            removed: old.difference(&new).map(|s| (*s).clone()).collect(),
        }
    }

    /// Nothing added or removed.
    pub(crate) fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }
}

/// How one definition present in both folders changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct DefChange {
    /// Properties added / removed.
    pub(crate) properties: Change,
    /// Properties that became required (`added`) or optional (`removed`).
    pub(crate) required: Change,
    /// `enum` values and `oneOf`/`anyOf` branches, by label (see [`variant_label`]).
    pub(crate) variants: Change,
    /// `property: annotation` pairs of `x-deserialize-*` annotations added / removed.
    pub(crate) annotations: Change,
    /// Properties whose type (see [`type_of`]) changed: `(property, old, new)`.
    pub(crate) retyped: Vec<(String, String, String)>,
}

impl DefChange {
    /// Nothing changed.
    pub(crate) fn is_empty(&self) -> bool {
        self.properties.is_empty()
            && self.required.is_empty()
            && self.variants.is_empty()
            && self.annotations.is_empty()
            && self.retyped.is_empty()
    }
}

/// The difference of two schema folders.
#[derive(Debug, Default)]
pub(crate) struct SpecDiff {
    /// Methods per side (`agentMethods`, …) added / removed.
    pub(crate) methods: BTreeMap<String, Change>,
    /// `$defs` added / removed.
    pub(crate) defs: Change,
    /// Number of `$defs` in the old and new folder.
    pub(crate) def_counts: (usize, usize),
    /// Definitions in both folders that changed.
    pub(crate) changed: BTreeMap<String, DefChange>,
    /// Capability flags (`<…Capabilities>.<property>`) added / removed, including those of
    /// added or removed capability definitions.
    pub(crate) capabilities: Change,
}

/// Methods per side of a `meta.json`: every object member whose values are strings.
pub(crate) fn methods(meta: &Value) -> Methods {
    let mut out = Methods::new();
    for (side, table) in meta.as_object().into_iter().flatten() {
        if let Some(table) = table.as_object() {
            out.insert(side.clone(), table.values().filter_map(Value::as_str).map(str::to_owned).collect());
        }
    }
    out
}

fn defs(schema: &Value) -> Map<String, Value> {
    schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default()
}

fn properties(def: &Value) -> Map<String, Value> {
    def.get("properties").and_then(Value::as_object).cloned().unwrap_or_default()
}

fn required(def: &Value) -> BTreeSet<String> {
    def.get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn ref_name(v: &Value) -> Option<&str> {
    v.get("$ref").and_then(Value::as_str).map(|r| r.rsplit('/').next().unwrap_or(r))
}

/// A short label of a `oneOf`/`anyOf` branch: `prop=value` for a tagged branch, the `const`
/// value, the `title`, the referenced definition, or the `type`, whichever comes first.
pub(crate) fn variant_label(branch: &Value) -> String {
    let tag = properties(branch).into_iter().find_map(|(k, v)| v.get("const").map(|c| format!("{k}={}", plain(c))));
    tag.or_else(|| branch.get("const").map(plain))
        .or_else(|| branch.get("title").and_then(Value::as_str).map(str::to_owned))
        .or_else(|| ref_name(branch).map(str::to_owned))
        .or_else(|| {
            let all = branch.get("allOf").and_then(Value::as_array)?;
            all.iter().find_map(ref_name).map(str::to_owned)
        })
        .unwrap_or_else(|| type_of(branch))
}

fn plain(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

fn variants(def: &Value) -> BTreeSet<String> {
    let mut out: BTreeSet<String> =
        def.get("enum").and_then(Value::as_array).into_iter().flatten().map(plain).collect();
    for key in ["oneOf", "anyOf"] {
        for branch in def.get(key).and_then(Value::as_array).into_iter().flatten() {
            out.insert(variant_label(branch));
        }
    }
    out
}

/// A compact type of a property schema: `$ref` names, `type`s and `const`s, `[]` for arrays.
pub(crate) fn type_of(schema: &Value) -> String {
    if let Some(name) = ref_name(schema) {
        return name.to_owned();
    }
    let mut parts = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) if t == "array" => {
            parts.push(format!("{}[]", schema.get("items").map_or_else(|| "any".to_owned(), type_of)));
        }
        Some(Value::String(t)) => parts.push(t.clone()),
        Some(Value::Array(ts)) => parts.extend(ts.iter().map(plain)),
        _ => {}
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for branch in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            parts.push(type_of(branch));
        }
    }
    if let Some(c) = schema.get("const") {
        parts.push(format!("={}", plain(c)));
    }
    if parts.is_empty() { "any".to_owned() } else { parts.join("|") }
}

fn annotations(def: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (name, schema) in properties(def) {
        for key in schema.as_object().into_iter().flat_map(Map::keys) {
            if key.starts_with("x-deserialize-") {
                out.insert(format!("{name}: {key}"));
            }
        }
    }
    out
}

/// How definition `old` became `new`.
pub(crate) fn def_change(old: &Value, new: &Value) -> DefChange {
    let (po, pn) = (properties(old), properties(new));
    let retyped = po
        .iter()
        .filter_map(|(k, o)| {
            let n = pn.get(k)?;
            let (to, tn) = (type_of(o), type_of(n));
            (to != tn).then(|| (k.clone(), to, tn))
        })
        .collect();
    DefChange {
        properties: Change::of(po.keys(), pn.keys()),
        required: Change::of(&required(old), &required(new)),
        variants: Change::of(&variants(old), &variants(new)),
        annotations: Change::of(&annotations(old), &annotations(new)),
        retyped,
    }
}

fn capability_flags(defs: &Map<String, Value>) -> BTreeSet<String> {
    defs.iter()
        .filter(|(name, _)| name.ends_with("Capabilities"))
        .flat_map(|(name, def)| properties(def).into_iter().map(move |(p, _)| format!("{name}.{p}")))
        .filter(|flag| !flag.ends_with("._meta"))
        .collect()
}

/// The difference of two folders, from their parsed `meta.json` and `schema.json`.
pub(crate) fn spec_diff(old_meta: &Value, old_schema: &Value, new_meta: &Value, new_schema: &Value) -> SpecDiff {
    let (mo, mn) = (methods(old_meta), methods(new_meta));
    let sides: BTreeSet<&String> = mo.keys().chain(mn.keys()).collect();
    let empty = BTreeSet::new();
    let methods = sides
        .into_iter()
        .map(|s| (s.clone(), Change::of(mo.get(s).unwrap_or(&empty), mn.get(s).unwrap_or(&empty))))
        .collect();
    let (dold, dnew) = (defs(old_schema), defs(new_schema));
    let changed = dold
        .iter()
        .filter_map(|(name, o)| {
            let c = def_change(o, dnew.get(name)?);
            (!c.is_empty()).then(|| (name.clone(), c))
        })
        .collect();
    SpecDiff {
        methods,
        defs: Change::of(dold.keys(), dnew.keys()),
        def_counts: (dold.len(), dnew.len()),
        changed,
        capabilities: Change::of(&capability_flags(&dold), &capability_flags(&dnew)),
    }
}
