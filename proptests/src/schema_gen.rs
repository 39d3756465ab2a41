//! Random instances of the ACP JSON schema, and a schema-guided normalizer to compare them.
//!
//! [`Schema`] wraps a parsed `schema.json`. It offers three things, all driven by the schema
//! text alone (no knowledge of the Rust types):
//!
//! * [`Schema::generate`]: a random instance of a definition, valid against it. Randomness
//!   comes from [`Rng`], a SplitMix64 generator, so that an instance is reproducible from its
//!   seed ([`seed_for`]).
//! * [`Schema::matches`]: a small validator for the subset of JSON Schema the ACP schema uses.
//!   The generator uses it to retry a candidate that does not fit (a `oneOf` matched by more
//!   than one branch); it is also stricter than a conforming validator on integer `format`s
//!   (`int32`, `uint64`, …), which JSON Schema treats as annotations only.
//! * [`Schema::normalize`]: rewrites a value into a canonical form guided by the schema, so
//!   that a decoded-and-re-encoded value can be compared with its input up to the wire
//!   normalizations `acp_proto::types` documents.
//!
//! # Schema constructs handled
//!
//! `$ref` (to `#/$defs/...`), `allOf` (object branches merged: union of `properties` and
//! `required`), `anyOf` and `oneOf` (one branch picked; for `oneOf` the instance is checked to
//! match exactly one branch and regenerated otherwise), `properties` and `oneOf`/`anyOf` at the
//! same level (the outer properties are combined with the chosen branch, e.g.
//! `SessionConfigOption`), `type` (a string or an array such as `["string", "null"]`, one
//! picked), `const`, `enum`, `minLength` (strings padded up to it), `items` (0 to 3 items, and
//! at least `minItems`, also in a nested array or past the depth limit), integer `format`s with
//! `minimum` and `maximum`, `number`/`double` (finite, sometimes integral), `boolean`, schemas
//! without constraints (arbitrary JSON of small depth) and `additionalProperties: true` maps (a
//! few arbitrary keys; in the ACP schema that is `_meta` only). Unknown keys are never added
//! elsewhere. Integers are always written in integer form (never `1.0`). Keywords that do not
//! constrain (`description`, `title`, `discriminator`, `x-*`) are ignored.

use serde_json::{Map, Number, Value};

mod leaves;

pub use leaves::{Rng, arbitrary_json, random_string, seed_for, to_text_shuffled};
use leaves::{gen_double, random_key};

/// Recursion depth beyond which optional properties are left out, arrays are empty and
/// nullable values prefer `null`.
const MAX_DEPTH: usize = 8;
/// Depth of arbitrary JSON generated for schemas without constraints.
const FREE_DEPTH: usize = 2;
/// How many candidates are tried before a generated value is returned unchecked.
const MAX_ATTEMPTS: usize = 64;

/// A parsed `schema.json`.
#[derive(Debug, Clone)]
pub struct Schema {
    root: Value,
}

/// A value rewritten by [`Schema::normalize`].
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// The canonical value.
    pub value: Value,
    /// JSON pointers of the object keys that were dropped because the schema does not declare
    /// them (and the object is not free-form).
    pub dropped_unknown: Vec<String>,
}

/// Options of [`Schema::normalize`].
#[derive(Debug, Clone, Default)]
pub struct NormalizeOptions {
    /// `(definition, property)` pairs whose `null` is meaningful and kept (instead of being
    /// treated as absent).
    pub keep_null: Vec<(String, String)>,
}

impl NormalizeOptions {
    /// Keeps `null` in `def.property`.
    pub fn keep_null(mut self, def: &str, property: &str) -> Self {
        self.keep_null.push((def.to_owned(), property.to_owned()));
        self
    }
}

/// A property as collected by [`Flat`]: every schema that applies to it (a conjunction) and
/// the definition that declared it first.
#[derive(Debug)]
struct Prop<'s> {
    name: &'s str,
    schemas: Vec<&'s Value>,
    owner: Option<&'s str>,
}

/// The constraints that apply to one instance, collected from a schema by following `$ref`,
/// `allOf` and the chosen `anyOf`/`oneOf` branches.
#[derive(Debug, Default)]
struct Flat<'s> {
    /// Allowed types (intersection of every `type` seen); `None` when unconstrained.
    types: Option<Vec<&'s str>>,
    consts: Vec<&'s Value>,
    enums: Vec<&'s [Value]>,
    props: Vec<Prop<'s>>,
    required: Vec<&'s str>,
    additional: Vec<&'s Value>,
    items: Vec<&'s Value>,
    format: Option<&'s str>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    /// The longest `minLength` seen (strings are padded up to it).
    min_length: Option<usize>,
    /// The largest `minItems` seen (arrays get at least that many items).
    min_items: usize,
    /// Whether any keyword constrained the instance (otherwise it is free-form JSON).
    constrained: bool,
}

impl<'s> Flat<'s> {
    fn prop(&self, name: &str) -> Option<&Prop<'s>> {
        self.props.iter().find(|p| p.name == name)
    }

    fn allows(&self, ty: &str) -> bool {
        self.types.as_ref().is_none_or(|t| t.contains(&ty))
    }

    fn add_types(&mut self, new: Vec<&'s str>) {
        self.types = Some(match self.types.take() {
            None => new,
            Some(old) => {
                let mut out: Vec<&'s str> = old
                    .iter()
                    .copied()
                    .filter(|t| new.contains(t) || (*t == "integer" && new.contains(&"number")))
                    .collect();
                if old.contains(&"number") && new.contains(&"integer") && !out.contains(&"integer") {
                    out.push("integer");
                }
                out
            }
        });
    }

    /// The types an instance may take, inferring `object`/`array` from the keywords when no
    /// `type` was given; `None` for free-form JSON.
    fn effective_types(&self) -> Option<Vec<&'s str>> {
        if let Some(t) = &self.types {
            return Some(t.clone());
        }
        if !self.props.is_empty() || !self.required.is_empty() || !self.additional.is_empty() {
            return Some(vec!["object"]);
        }
        if !self.items.is_empty() {
            return Some(vec!["array"]);
        }
        if self.format.is_some() || self.minimum.is_some() || self.maximum.is_some() {
            return Some(vec!["number"]);
        }
        None
    }

    /// Whether keys beyond `properties` are allowed by every `additionalProperties` seen.
    /// (Without the keyword they are allowed by JSON Schema, but the generator adds them only
    /// where the schema asks for a map.)
    fn open_map(&self) -> bool {
        !self.additional.is_empty() && self.additional.iter().all(|a| !matches!(a, Value::Bool(false)))
    }
}

/// How `anyOf`/`oneOf` branches are chosen while flattening.
enum Mode<'a, 'v> {
    /// Pick one branch at random.
    Generate { rng: &'a mut Rng, depth: usize },
    /// Keep every branch the value matches (all of them if none does).
    Match(&'v Value),
}

/// The integer range of a `format` (JSON Schema leaves them to the application).
fn format_range(format: Option<&str>) -> Option<(i128, i128)> {
    Some(match format? {
        "int8" => (i128::from(i8::MIN), i128::from(i8::MAX)),
        "int16" => (i128::from(i16::MIN), i128::from(i16::MAX)),
        "int32" => (i128::from(i32::MIN), i128::from(i32::MAX)),
        "int64" => (i128::from(i64::MIN), i128::from(i64::MAX)),
        "uint8" => (0, i128::from(u8::MAX)),
        "uint16" => (0, i128::from(u16::MAX)),
        "uint32" => (0, i128::from(u32::MAX)),
        "uint64" => (0, i128::from(u64::MAX)),
        _ => return None,
    })
}

fn integer_value(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    // JSON Schema counts 1.0 as an integer.
    (f.fract() == 0.0 && f.abs() < 1e38).then_some(f as i128)
}

fn number_from_i128(v: i128) -> Value {
    if v >= 0 {
        Value::from(u64::try_from(v).expect("in the u64 range"))
    } else {
        Value::from(i64::try_from(v).expect("in the i64 range"))
    }
}

/// Equality of JSON values with numbers compared by value (`1 == 1.0`).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.is_f64() || y.is_f64(), integer_value(x), integer_value(y)) {
            (false, Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn type_matches(ty: &str, v: &Value) -> bool {
    match ty {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_number().and_then(integer_value).is_some(),
        _ => false,
    }
}

fn type_list(t: &Value) -> Vec<&str> {
    match t {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

impl Schema {
    /// Wraps a parsed `schema.json`.
    ///
    /// # Panics
    /// When it has no `$defs` object.
    pub fn new(root: Value) -> Schema {
        assert!(root.get("$defs").is_some_and(Value::is_object), "schema without $defs");
        Schema { root }
    }

    /// The whole schema document.
    pub fn root(&self) -> &Value {
        &self.root
    }

    /// The `$defs` object.
    pub fn defs(&self) -> &Map<String, Value> {
        self.root["$defs"].as_object().expect("checked in new")
    }

    /// The schema of definition `name`.
    pub fn def(&self, name: &str) -> Option<&Value> {
        self.defs().get(name)
    }

    /// `{"$ref": "#/$defs/<name>"}`.
    pub fn def_ref(name: &str) -> Value {
        let mut m = Map::new();
        m.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
        Value::Object(m)
    }

    /// Resolves a `$ref` to its definition name and schema.
    fn resolve<'s>(&'s self, reference: &str) -> (&'s str, &'s Value) {
        let name = reference.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("unsupported $ref {reference}"));
        let (k, v) = self.defs().get_key_value(name).unwrap_or_else(|| panic!("dangling $ref {reference}"));
        (k.as_str(), v)
    }

    // ---- validation ---------------------------------------------------------------------

    /// Whether `value` matches `schema` (a schema of this document, or one whose `$ref`s point
    /// into it). Supports the keywords the ACP schema uses, and checks integer `format` ranges.
    pub fn matches(&self, schema: &Value, value: &Value) -> bool {
        let obj = match schema {
            Value::Bool(b) => return *b,
            Value::Object(o) => o,
            _ => return true,
        };
        for (k, s) in obj {
            let ok = match k.as_str() {
                "$ref" => s.as_str().is_some_and(|r| self.matches(self.resolve(r).1, value)),
                "allOf" => s.as_array().is_some_and(|b| b.iter().all(|b| self.matches(b, value))),
                "anyOf" => s.as_array().is_some_and(|b| b.iter().any(|b| self.matches(b, value))),
                "oneOf" => s.as_array().is_some_and(|b| b.iter().filter(|b| self.matches(b, value)).count() == 1),
                "type" => type_list(s).iter().any(|t| type_matches(t, value)),
                "const" => json_eq(s, value),
                "enum" => s.as_array().is_some_and(|e| e.iter().any(|c| json_eq(c, value))),
                "properties" => match (s.as_object(), value.as_object()) {
                    (Some(props), Some(v)) => {
                        props.iter().all(|(name, ps)| v.get(name).is_none_or(|pv| self.matches(ps, pv)))
                    }
                    _ => true,
                },
                "required" => match (s.as_array(), value.as_object()) {
                    (Some(req), Some(v)) => req.iter().filter_map(Value::as_str).all(|r| v.contains_key(r)),
                    _ => true,
                },
                "additionalProperties" => match value.as_object() {
                    Some(v) => {
                        let declared = obj.get("properties").and_then(Value::as_object);
                        v.iter()
                            .filter(|(name, _)| declared.is_none_or(|d| !d.contains_key(*name)))
                            .all(|(_, pv)| self.matches(s, pv))
                    }
                    None => true,
                },
                "items" => match value.as_array() {
                    Some(items) => items.iter().all(|i| self.matches(s, i)),
                    None => true,
                },
                "minimum" => match (s.as_f64(), value.as_f64()) {
                    (Some(min), Some(v)) => v >= min,
                    _ => true,
                },
                "maximum" => match (s.as_f64(), value.as_f64()) {
                    (Some(max), Some(v)) => v <= max,
                    _ => true,
                },
                "format" => match (format_range(s.as_str()), value.as_number()) {
                    (Some((lo, hi)), Some(n)) => integer_value(n).is_some_and(|i| lo <= i && i <= hi),
                    _ => true,
                },
                "not" => !self.matches(s, value),
                "minItems" => value.as_array().is_none_or(|a| s.as_u64().is_some_and(|m| a.len() as u64 >= m)),
                "maxItems" => value.as_array().is_none_or(|a| s.as_u64().is_some_and(|m| a.len() as u64 <= m)),
                "minLength" => value.as_str().is_none_or(|t| s.as_u64().is_some_and(|m| t.chars().count() as u64 >= m)),
                "maxLength" => value.as_str().is_none_or(|t| s.as_u64().is_some_and(|m| t.chars().count() as u64 <= m)),
                "propertyNames" => {
                    value.as_object().is_none_or(|o| o.keys().all(|k| self.matches(s, &Value::String(k.clone()))))
                }
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        true
    }

    // ---- flattening -----------------------------------------------------------------------

    fn flatten<'s>(&'s self, schema: &'s Value, owner: Option<&'s str>, flat: &mut Flat<'s>, mode: &mut Mode<'_, '_>) {
        let Some(obj) = schema.as_object() else {
            if schema == &Value::Bool(false) {
                flat.constrained = true;
                flat.types = Some(Vec::new());
            }
            return;
        };
        for (k, s) in obj {
            match k.as_str() {
                "$ref" => {
                    let (name, target) = self.resolve(s.as_str().expect("$ref is a string"));
                    self.flatten(target, Some(name), flat, mode);
                }
                "allOf" => {
                    for b in s.as_array().expect("allOf is an array") {
                        self.flatten(b, owner, flat, mode);
                    }
                }
                "anyOf" | "oneOf" => {
                    let branches = s.as_array().expect("anyOf/oneOf is an array");
                    for i in self.choose(branches, mode) {
                        self.flatten(&branches[i], owner, flat, mode);
                    }
                }
                "type" => {
                    flat.constrained = true;
                    flat.add_types(type_list(s));
                }
                "const" => {
                    flat.constrained = true;
                    flat.consts.push(s);
                }
                "enum" => {
                    flat.constrained = true;
                    flat.enums.push(s.as_array().expect("enum is an array"));
                }
                "properties" => {
                    flat.constrained = true;
                    for (name, ps) in s.as_object().expect("properties is an object") {
                        match flat.props.iter_mut().find(|p| p.name == name) {
                            Some(p) => p.schemas.push(ps),
                            None => flat.props.push(Prop { name, schemas: vec![ps], owner }),
                        }
                    }
                }
                "required" => {
                    flat.constrained = true;
                    for r in s.as_array().expect("required is an array").iter().filter_map(Value::as_str) {
                        if !flat.required.contains(&r) {
                            flat.required.push(r);
                        }
                    }
                }
                "additionalProperties" => {
                    flat.constrained = true;
                    flat.additional.push(s);
                }
                "items" => {
                    flat.constrained = true;
                    flat.items.push(s);
                }
                "format" => {
                    if format_range(s.as_str()).is_some() || s == "double" || s == "float" {
                        flat.constrained = true;
                    }
                    flat.format = flat.format.or(s.as_str());
                }
                "minimum" => {
                    flat.constrained = true;
                    let m = s.as_f64().expect("numeric minimum");
                    flat.minimum = Some(flat.minimum.map_or(m, |old| old.max(m)));
                }
                "maximum" => {
                    flat.constrained = true;
                    let m = s.as_f64().expect("numeric maximum");
                    flat.maximum = Some(flat.maximum.map_or(m, |old| old.min(m)));
                }
                "minItems" => {
                    flat.constrained = true;
                    let m = usize::try_from(s.as_u64().expect("non-negative minItems")).unwrap_or(usize::MAX);
                    flat.min_items = flat.min_items.max(m);
                }
                "minLength" => {
                    flat.constrained = true;
                    let m = usize::try_from(s.as_u64().expect("non-negative minLength")).unwrap_or(usize::MAX);
                    flat.min_length = Some(flat.min_length.map_or(m, |old| old.max(m)));
                }
                _ => {}
            }
        }
    }

    fn choose(&self, branches: &[Value], mode: &mut Mode<'_, '_>) -> Vec<usize> {
        match mode {
            Mode::Generate { rng, depth } => {
                if branches.is_empty() {
                    return Vec::new();
                }
                if *depth >= MAX_DEPTH
                    && let Some(i) = branches.iter().position(|b| b.get("type") == Some(&Value::from("null")))
                {
                    return vec![i];
                }
                vec![rng.index(branches.len())]
            }
            Mode::Match(value) => {
                let hits: Vec<usize> = (0..branches.len()).filter(|&i| self.matches(&branches[i], value)).collect();
                if hits.is_empty() { (0..branches.len()).collect() } else { hits }
            }
        }
    }

    // ---- generation -----------------------------------------------------------------------

    /// A random instance of definition `def`.
    ///
    /// # Panics
    /// When `def` is not a definition of the schema.
    pub fn generate(&self, def: &str, rng: &mut Rng) -> Value {
        let schema = self.def(def).unwrap_or_else(|| panic!("no definition {def}"));
        self.generate_schema(schema, rng)
    }

    /// A random instance of `schema` (which may `$ref` into this document).
    pub fn generate_schema(&self, schema: &Value, rng: &mut Rng) -> Value {
        self.gen_all(&[schema], rng, 0)
    }

    /// A value matching every schema of `schemas`; retried until it does (or the attempts run
    /// out, in which case the last candidate is returned and the caller's validation fails).
    fn gen_all(&self, schemas: &[&Value], rng: &mut Rng, depth: usize) -> Value {
        let mut candidate = Value::Null;
        for _ in 0..MAX_ATTEMPTS {
            let mut flat = Flat::default();
            {
                let mut mode = Mode::Generate { rng, depth };
                for s in schemas {
                    self.flatten(s, None, &mut flat, &mut mode);
                }
            }
            candidate = self.gen_flat(&flat, rng, depth);
            if schemas.iter().all(|s| self.matches(s, &candidate)) {
                return candidate;
            }
        }
        candidate
    }

    fn gen_flat(&self, flat: &Flat<'_>, rng: &mut Rng, depth: usize) -> Value {
        if let Some(c) = flat.consts.first() {
            return (*c).clone();
        }
        if let Some(e) = flat.enums.first() {
            return rng.pick(e).clone();
        }
        let Some(types) = flat.effective_types() else {
            return arbitrary_json(rng, FREE_DEPTH);
        };
        if types.is_empty() {
            return Value::Null;
        }
        let ty = if depth >= MAX_DEPTH && types.contains(&"null") { "null" } else { *rng.pick(&types) };
        match ty {
            "null" => Value::Null,
            "boolean" => Value::Bool(rng.chance(1, 2)),
            "string" => {
                let mut text = random_string(rng);
                let short = flat.min_length.unwrap_or(0).saturating_sub(text.chars().count());
                text.extend(std::iter::repeat_n('a', short));
                Value::String(text)
            }
            "integer" => self.gen_integer(flat, rng),
            "number" => {
                if flat.format.is_some_and(|f| format_range(Some(f)).is_some()) {
                    self.gen_integer(flat, rng)
                } else {
                    gen_double(flat, rng)
                }
            }
            "array" => {
                let n = if depth >= MAX_DEPTH { 0 } else { rng.below(4) as usize }.max(flat.min_items);
                let items: Vec<&Value> = flat.items.clone();
                Value::Array(
                    (0..n)
                        .map(|_| {
                            if items.is_empty() {
                                arbitrary_json(rng, FREE_DEPTH)
                            } else {
                                self.gen_all(&items, rng, depth + 1)
                            }
                        })
                        .collect(),
                )
            }
            "object" => self.gen_object(flat, rng, depth),
            other => panic!("unsupported type {other}"),
        }
    }

    fn gen_object(&self, flat: &Flat<'_>, rng: &mut Rng, depth: usize) -> Value {
        let mut out = Map::new();
        for p in &flat.props {
            let required = flat.required.contains(&p.name);
            if !required && (depth >= MAX_DEPTH || rng.chance(1, 2)) {
                continue;
            }
            out.insert(p.name.to_owned(), self.gen_all(&p.schemas, rng, depth + 1));
        }
        for r in &flat.required {
            if !out.contains_key(*r) {
                out.insert((*r).to_owned(), arbitrary_json(rng, FREE_DEPTH));
            }
        }
        if flat.open_map() && rng.chance(1, 2) {
            let extra: Vec<&Value> =
                flat.additional.iter().copied().filter(|a| !matches!(a, Value::Bool(true))).collect();
            for _ in 0..=rng.below(3) {
                let key = random_key(rng);
                if flat.prop(&key).is_some() {
                    continue;
                }
                let v = if extra.is_empty() {
                    arbitrary_json(rng, FREE_DEPTH)
                } else {
                    self.gen_all(&extra, rng, depth + 1)
                };
                out.insert(key, v);
            }
        }
        Value::Object(out)
    }

    fn gen_integer(&self, flat: &Flat<'_>, rng: &mut Rng) -> Value {
        let (mut lo, mut hi) = format_range(flat.format).unwrap_or((i128::from(i64::MIN), i128::from(i64::MAX)));
        if let Some(min) = flat.minimum {
            lo = lo.max(min.ceil() as i128);
        }
        if let Some(max) = flat.maximum {
            hi = hi.min(max.floor() as i128);
        }
        assert!(lo <= hi, "empty integer range");
        let v = match rng.below(6) {
            0 => lo,
            1 => hi,
            2 => 0.clamp(lo, hi),
            3 => rng.range_i128(-10, 10).clamp(lo, hi),
            4 => rng.range_i128(0, 100_000).clamp(lo, hi),
            _ => rng.range_i128(lo, hi),
        };
        number_from_i128(v)
    }

    // ---- normalization --------------------------------------------------------------------

    /// Rewrites `value`, an instance of definition `def`, into the canonical form used to
    /// compare an input with its re-encoding:
    ///
    /// * a `null` of an optional property is dropped (unless listed in
    ///   [`NormalizeOptions::keep_null`]);
    /// * a property equal to its schema `default` (both normalized) is dropped;
    /// * a number where the schema expects `number` (not `integer`) becomes a float, so
    ///   numbers compare by value;
    /// * an object key the schema does not declare is dropped and reported in
    ///   [`Normalized::dropped_unknown`], except in maps (`additionalProperties`, e.g.
    ///   `_meta`) and in free-form values (a schema without constraints), which are kept as
    ///   they are.
    ///
    /// Which `anyOf`/`oneOf` branch applies is decided by [`Schema::matches`] on the value
    /// being normalized (every matching branch contributes its properties).
    pub fn normalize(&self, def: &str, value: &Value, opts: &NormalizeOptions) -> Normalized {
        let schema = Self::def_ref(def);
        self.normalize_schema(&schema, value, opts)
    }

    /// [`Schema::normalize`] for any schema (which may `$ref` into this document).
    pub fn normalize_schema(&self, schema: &Value, value: &Value, opts: &NormalizeOptions) -> Normalized {
        let mut dropped = Vec::new();
        let mut path = String::new();
        let value = self.norm(&[schema], value, opts, &mut path, &mut dropped);
        Normalized { value, dropped_unknown: dropped }
    }

    fn norm(
        &self,
        schemas: &[&Value],
        value: &Value,
        opts: &NormalizeOptions,
        path: &mut String,
        dropped: &mut Vec<String>,
    ) -> Value {
        let mut flat = Flat::default();
        {
            let mut mode = Mode::Match(value);
            for s in schemas {
                self.flatten(s, None, &mut flat, &mut mode);
            }
        }
        if !flat.constrained {
            return value.clone();
        }
        match value {
            Value::Number(n) if flat.allows("number") && !flat.allows("integer") => {
                n.as_f64().and_then(Number::from_f64).map_or_else(|| value.clone(), Value::Number)
            }
            Value::Object(m) => {
                let declares = !flat.props.is_empty() || flat.allows("object") && flat.types.is_some();
                if !declares {
                    return value.clone();
                }
                let mut out = Map::new();
                for (k, v) in m {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    if let Some(p) = flat.prop(k) {
                        let keep_null = p.owner.is_some_and(|o| opts.keep_null.iter().any(|(d, n)| d == o && n == k));
                        let required = flat.required.contains(&k.as_str());
                        if !(v.is_null() && !required && !keep_null) {
                            let nv = self.norm(&p.schemas, v, opts, path, dropped);
                            let default = p.schemas.iter().find_map(|s| s.get("default"));
                            let is_default = default.is_some_and(|d| {
                                let mut ignored = Vec::new();
                                let nd = self.norm(&p.schemas, d, opts, &mut String::new(), &mut ignored);
                                json_eq(&nd, &nv)
                            });
                            if !is_default {
                                out.insert(k.clone(), nv);
                            }
                        }
                    } else if flat.open_map() {
                        let schemas: Vec<&Value> = flat.additional.clone();
                        out.insert(k.clone(), self.norm(&schemas, v, opts, path, dropped));
                    } else {
                        dropped.push(path.clone());
                    }
                    path.truncate(len);
                }
                Value::Object(out)
            }
            Value::Array(items) if !flat.items.is_empty() => {
                let schemas: Vec<&Value> = flat.items.clone();
                Value::Array(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| {
                            let len = path.len();
                            path.push_str(&format!("/{i}"));
                            let v = self.norm(&schemas, item, opts, path, dropped);
                            path.truncate(len);
                            v
                        })
                        .collect(),
                )
            }
            _ => value.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A `minItems` on an array nested in a referenced definition (as `PromptSuggestion.prompt`
    /// in `schema.unstable.json`) is honoured by the generator, at every depth, and checked by
    /// `matches`.
    #[test]
    fn nested_min_items_is_honoured() {
        let schema = Schema::new(json!({"$defs": {
            "Outer": {"type": "object", "properties": {"list": {"type": "array", "items": {"$ref": "#/$defs/Inner"}}},
                      "required": ["list"]},
            "Inner": {"type": "object", "properties": {"prompt": {"type": "array", "items": {"type": "string"},
                      "minItems": 2}}, "required": ["prompt"]},
        }}));
        let inner = json!({"$ref": "#/$defs/Inner"});
        assert!(!schema.matches(&inner, &json!({"prompt": ["one"]})), "one item is too few");
        assert!(schema.matches(&inner, &json!({"prompt": ["one", "two"]})));
        let mut nested = 0;
        for seed in 0..200 {
            let v = schema.generate("Outer", &mut Rng::new(seed));
            for item in v["list"].as_array().unwrap() {
                assert!(item["prompt"].as_array().unwrap().len() >= 2, "seed {seed}: {v}");
                nested += 1;
            }
        }
        assert!(nested > 0, "some instances have nested items");
    }
}
