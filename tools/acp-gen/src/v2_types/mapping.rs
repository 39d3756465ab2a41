//! From the schema's words to Rust's: the Rust type of a property's schema, and the names of
//! fields and variants.

use super::json::Json;

/// The definition a schema names: its `$ref`, or the one `$ref` of a one-item `allOf`.
pub(crate) fn ref_name(schema: &Json) -> Option<&str> {
    let target = match schema.get("$ref") {
        Some(r) => r,
        None => match schema.get("allOf")?.items() {
            [only] => only.get("$ref")?,
            _ => return None,
        },
    };
    let r = target.as_str()?;
    Some(r.rsplit('/').next().unwrap_or(r))
}

/// The Rust type of a property's schema, and whether the schema allows `null`; `None` for a
/// schema this generator does not map (the definition is then written by hand).
pub(crate) fn rust_type(schema: &Json) -> Option<(String, bool)> {
    if let Some(name) = ref_name(schema) {
        return Some((name.to_owned(), false));
    }
    if let Some(branches) = schema.get("anyOf") {
        // `T` or `null`.
        let branches = branches.items();
        let not_null: Vec<&Json> =
            branches.iter().filter(|b| b.get("type").and_then(Json::as_str) != Some("null")).collect();
        return match not_null.as_slice() {
            [only] if branches.len() == 2 => Some((rust_type(only)?.0, true)),
            _ => None,
        };
    }
    let (ty, nullable) = match schema.get("type") {
        Some(Json::Array(types)) => {
            let others: Vec<&Json> = types.iter().filter(|t| t.as_str() != Some("null")).collect();
            let nullable = others.len() < types.len();
            (if let [only] = others.as_slice() { only.as_str() } else { None }, nullable)
        }
        Some(t) => (Some(t.as_str()?), false),
        None => (None, false),
    };
    let ty = match ty {
        // No type at all (nothing but annotations and a default): any JSON value.
        None => {
            let annotation = |k: &str| k.starts_with("x-") || matches!(k, "description" | "title" | "default");
            return schema
                .entries()
                .iter()
                .all(|(k, _)| annotation(k))
                .then(|| ("serde_json::Value".to_owned(), false));
        }
        Some("string") => "String".to_owned(),
        Some("boolean") => "bool".to_owned(),
        Some("number") => "f64".to_owned(),
        Some("integer") => {
            let format = schema.get("format").map_or(Some("int64"), Json::as_str);
            match format? {
                "uint16" => "u16",
                "uint32" => "u32",
                "uint64" => "u64",
                "int64" => "i64",
                "int32" => "i32",
                _ => return None,
            }
            .to_owned()
        }
        Some("array") => format!("Vec<{}>", rust_type(schema.get("items")?)?.0),
        Some("object") => match schema.get("additionalProperties") {
            // Any keys: the extension metadata type.
            Some(Json::Bool(true)) => "Meta".to_owned(),
            Some(values @ Json::Object(_)) => format!("BTreeMap<String, {}>", rust_type(values)?.0),
            _ => return None,
        },
        Some(_) => return None,
    };
    Some((ty, nullable))
}

/// The Rust field of a property: snake_case, `meta` for `_meta`, a keyword made a name.
pub(crate) fn field_name(prop: &str) -> String {
    if prop == "_meta" {
        return "meta".to_owned();
    }
    let snake = snake_case(prop);
    match snake.as_str() {
        "type" => "type_",
        "enum" => "enum_values",
        "ref" => "ref_",
        "mod" => "mod_",
        "move" => "move_",
        "loop" => "loop_",
        other => other,
    }
    .to_owned()
}

/// `sessionId` → `session_id` (leading underscores dropped; a capital after a lowercase letter or a
/// digit starts a word, so `URLs` stays one word: `urls`).
pub(crate) fn snake_case(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.trim_start_matches('_').chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if (c.is_ascii_lowercase() || c.is_ascii_digit()) && chars.peek().is_some_and(char::is_ascii_uppercase) {
            out.push('_');
        }
    }
    out.to_lowercase()
}

/// `session_id` → `sessionId`: what serde's `rename_all = "camelCase"` makes of a field (each
/// word after the first capitalized, its other letters lowercase).
pub(crate) fn camel_case(s: &str) -> String {
    let mut words = s.split('_');
    let mut out = words.next().unwrap_or_default().to_owned();
    for word in words {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(&chars.as_str().to_lowercase());
        }
    }
    out
}

/// A wire value as a variant name: `tool_call` / `read-only` / `a/b` → `ToolCall` / `ReadOnly` /
/// `AB` (the first letter of each word capitalized, the rest kept).
pub(crate) fn pascal_case(s: &str) -> String {
    let mut out = String::new();
    for word in s.split(['_', '/', '-']).filter(|w| !w.is_empty()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(s: &str) -> Option<(String, bool)> {
        rust_type(&Json::parse(s).unwrap())
    }

    #[test]
    fn types() {
        assert_eq!(ty(r##"{"$ref": "#/$defs/SessionId"}"##), Some(("SessionId".into(), false)));
        assert_eq!(ty(r##"{"allOf": [{"$ref": "#/$defs/Plan"}], "description": "x"}"##), Some(("Plan".into(), false)));
        assert_eq!(ty(r##"{"anyOf": [{"$ref": "#/$defs/Cost"}, {"type": "null"}]}"##), Some(("Cost".into(), true)));
        assert_eq!(ty(r#"{"type": ["string", "null"]}"#), Some(("String".into(), true)));
        assert_eq!(ty(r#"{"type": "integer", "format": "uint16"}"#), Some(("u16".into(), false)));
        assert_eq!(ty(r#"{"type": "integer"}"#), Some(("i64".into(), false)));
        assert_eq!(ty(r#"{"type": "array", "items": {"type": "string"}}"#), Some(("Vec<String>".into(), false)));
        assert_eq!(ty(r#"{"type": "object", "additionalProperties": true}"#), Some(("Meta".into(), false)));
        assert_eq!(
            ty(r#"{"type": "object", "additionalProperties": {"type": "number"}}"#),
            Some(("BTreeMap<String, f64>".into(), false))
        );
        assert_eq!(ty(r#"{"description": "anything", "x-side": "agent"}"#), Some(("serde_json::Value".into(), false)));
        assert_eq!(ty(r#"{"type": "integer", "format": "int8"}"#), None);
        assert_eq!(ty(r#"{"anyOf": [{"type": "string"}, {"type": "integer"}]}"#), None);
    }

    #[test]
    fn names() {
        assert_eq!(field_name("sessionId"), "session_id");
        assert_eq!(field_name("_meta"), "meta");
        assert_eq!(field_name("type"), "type_");
        assert_eq!(field_name("enum"), "enum_values");
        assert_eq!(snake_case("mcpURLs2Go"), "mcp_urls2_go");
        assert_eq!(camel_case("type_"), "type");
        assert_eq!(camel_case("enum_values"), "enumValues");
        assert_eq!(pascal_case("tool_call-x/y"), "ToolCallXY");
        assert_eq!(pascal_case("_ext"), "Ext");
    }
}
