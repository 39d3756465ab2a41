//! A JSON value that keeps its objects' key order.
//!
//! The order of the schema's `$defs` is the order of the generated items, and the order of a
//! definition's `properties` the order of its fields. `serde_json::Value` keeps that order only
//! with serde_json's `preserve_order` feature, which cargo would unify into every crate of a
//! workspace build (changing how they all order JSON objects), so the generator reads the
//! schema into this value instead.
//!
//! Objects compare as JSON objects (the same keys with equal values, in any order) and numbers
//! by value (`1` equals `1.0`): what the comparison of v1 and v2 definitions needs.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;

/// A JSON value; an object is its entries in document order.
#[derive(Debug, Clone)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    /// The entries in document order, each key once: a repeated key keeps its first place and
    /// takes the last value.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Parses a JSON document.
    pub(crate) fn parse(text: &str) -> Result<Json, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The value of `key`, when this is an object that has it.
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        self.entries().iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether this is an object that has `key`.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// An object's entries in document order; none for any other value.
    pub(crate) fn entries(&self) -> &[(String, Json)] {
        match self {
            Json::Object(entries) => entries,
            _ => &[],
        }
    }

    /// An array's items; none for any other value.
    pub(crate) fn items(&self) -> &[Json] {
        match self {
            Json::Array(items) => items,
            _ => &[],
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }

    /// Whether `key` is present and its value is truthy (see [`Json::truthy`]).
    pub(crate) fn flag(&self, key: &str) -> bool {
        self.get(key).is_some_and(Json::truthy)
    }

    /// The value of `key` when it is truthy: `null`, `false`, `0`, `""`, `[]` and `{}` count as
    /// absent, as in the schema's `x-…` markers (`true` when set) and non-empty unions.
    pub(crate) fn truthy_get(&self, key: &str) -> Option<&Json> {
        self.get(key).filter(|v| v.truthy())
    }

    /// Whether the value says yes: not `null`, `false`, `0`, `""`, `[]` nor `{}`.
    pub(crate) fn truthy(&self) -> bool {
        match self {
            Json::Null => false,
            Json::Bool(b) => *b,
            Json::Number(n) => n.as_f64() != Some(0.0),
            Json::String(s) => !s.is_empty(),
            Json::Array(items) => !items.is_empty(),
            Json::Object(entries) => !entries.is_empty(),
        }
    }

    /// Sets `key` in an object: in place when it is there, else last. No-op on other values.
    pub(crate) fn insert(&mut self, key: &str, value: Json) {
        if let Json::Object(entries) = self {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) => *v = value,
                None => entries.push((key.to_owned(), value)),
            }
        }
    }

    /// Removes `key` from an object.
    pub(crate) fn remove(&mut self, key: &str) {
        if let Json::Object(entries) = self {
            entries.retain(|(k, _)| k != key);
        }
    }
}

/// Two numbers are equal when their values are: exactly for integers, as `f64` otherwise.
fn same_number(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    fn int(n: &serde_json::Number) -> Option<i128> {
        n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))
    }
    match (int(a), int(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a.as_f64() == b.as_f64(),
    }
}

impl PartialEq for Json {
    fn eq(&self, other: &Json) -> bool {
        match (self, other) {
            (Json::Null, Json::Null) => true,
            (Json::Bool(a), Json::Bool(b)) => a == b,
            (Json::Number(a), Json::Number(b)) => same_number(a, b),
            (Json::String(a), Json::String(b)) => a == b,
            (Json::Array(a), Json::Array(b)) => a == b,
            // Keys are unique, so the same length and each key's value equal is the same object.
            (Json::Object(a), Json::Object(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| other.get(k).is_some_and(|w| w == v))
            }
            _ => false,
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(n).map(Json::Number).ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    /// The entries as the document lists them.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut object = Json::Object(Vec::new());
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            object.insert(&key, value);
        }
        Ok(object)
    }
}

/// Written back in document order (for the error messages that quote a definition).
impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => items.serialize(serializer),
            Json::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&serde_json::to_string(self).map_err(|_| fmt::Error)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_document_order() {
        let j = Json::parse(r#"{"z": 1, "a": {"y": true, "b": null}, "m": [2, "x"], "z": 3}"#).unwrap();
        let keys: Vec<&str> = j.entries().iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a", "m"], "a repeated key keeps its first place");
        assert_eq!(j.get("z"), Some(&Json::parse("3").unwrap()), "and takes the last value");
        let inner: Vec<&str> = j.get("a").unwrap().entries().iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(inner, ["y", "b"]);
        assert_eq!(j.to_string(), r#"{"z":3,"a":{"y":true,"b":null},"m":[2,"x"]}"#);
    }

    #[test]
    fn objects_compare_in_any_order_and_numbers_by_value() {
        let p = |s: &str| Json::parse(s).unwrap();
        assert_eq!(p(r#"{"a": 1, "b": [1, 2]}"#), p(r#"{"b": [1, 2.0], "a": 1}"#));
        assert_ne!(p(r#"{"a": 1}"#), p(r#"{"a": 1, "b": 2}"#));
        assert_ne!(p("[1, 2]"), p("[2, 1]"), "arrays keep their order");
        assert_ne!(p("1"), p(r#""1""#));
    }

    #[test]
    fn truthiness() {
        for no in ["null", "false", "0", "\"\"", "[]", "{}"] {
            assert!(!Json::parse(no).unwrap().truthy(), "{no}");
        }
        for yes in ["true", "1", "\"x\"", "[0]", "{\"a\": 0}"] {
            assert!(Json::parse(yes).unwrap().truthy(), "{yes}");
        }
    }
}
