//! The Rust of one v2 definition: an object is a struct (with a constructor of its required
//! fields), an open string enum a `string_enum!`, a tagged union a `tagged_union!`, an object
//! that carries a tagged union beside its fields a struct with a flattened `…Kind` union, and a
//! plain string a newtype. The serde attributes follow the `x-deserialize-*` markers as the v1
//! types do (`acp_schema::v1`'s module docs).
//!
//! The doc comments are the generator's own one-liners naming the wire item, never the
//! schema's prose: the schema is data, its descriptions are read in `spec/`.

use super::compare::is_string_const;
use super::json::Json;
use super::mapping::{camel_case, field_name, pascal_case, ref_name, rust_type};
use std::fmt::Write;

/// The patch fields where `null` means "clear": `Option<Option<T>>`, absent and `null` apart.
const KEEP_NULL: &[(&str, &str)] = &[
    ("SessionInfoUpdate", "title"),
    ("SessionInfoUpdate", "updatedAt"),
    ("CompactionUpdate", "summary"),
    ("CompactionUpdate", "error"),
    ("SubagentUpdate", "title"),
    ("SubagentUpdate", "description"),
    ("SubagentUpdate", "capabilities"),
    ("SubagentUpdate", "state"),
    ("SubagentUpdate", "cwd"),
    ("SubagentUpdate", "additionalDirectories"),
    ("SessionMessage", "senderSessionId"),
    ("SessionMessage", "recipientSessionId"),
    ("SessionMessage", "senderMessageId"),
    ("SessionMessage", "recipientMessageId"),
    ("SessionMessage", "content"),
];

fn keeps_null(def: &str, prop: &str) -> bool {
    KEEP_NULL.contains(&(def, prop))
}

/// The Rust of the definition `name` of `defs` (the `$defs` object), or why it has a shape
/// this generator does not map.
pub(crate) fn definition(defs: &Json, name: &str) -> Result<String, String> {
    let def = defs.get(name).ok_or_else(|| format!("no definition `{name}`"))?;
    let ty = def.get("type").and_then(Json::as_str);
    let union = def.truthy_get("anyOf").or_else(|| def.truthy_get("oneOf"));
    if ty == Some("object") && union.is_some() {
        let (key, _) = tagged(def).ok_or_else(|| format!("`{name}`: an object with a union that is not tagged"))?;
        let kind = format!(
            "    /// The variant, discriminated by `{key}`.\n    #[serde(flatten)]\n    pub kind: {name}Kind,\n"
        );
        let union = tagged_union(def, name, &format!("{name}Kind"))?.expect("checked tagged above");
        return Ok(format!("{}\n{union}", structure(defs, def, name, Some(&kind))?));
    }
    if ty == Some("object") {
        return structure(defs, def, name, None);
    }
    if ty == Some("string") && !def.has("enum") {
        return Ok(newtype(name));
    }
    if def.has("anyOf") || def.has("oneOf") {
        if let Some(e) = string_enum(def, name) {
            return Ok(e);
        }
        if let Some(u) = tagged_union(def, name, name)? {
            return Ok(u);
        }
    }
    Err(format!("`{name}`: {:.200}", def.to_string()))
}

/// A string newtype, built from `String` or `&str`.
fn newtype(name: &str) -> String {
    format!(
        "/// The v2 `{name}` string.\n\
         #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]\n\
         #[serde(transparent)]\n\
         pub struct {name}(pub String);\n\
         \n\
         impl From<String> for {name} {{\n    fn from(s: String) -> Self {{\n        {name}(s)\n    }}\n}}\n\
         \n\
         impl From<&str> for {name} {{\n    fn from(s: &str) -> Self {{\n        {name}(s.to_owned())\n    }}\n}}\n"
    )
}

/// One field of a struct: its lines, its Rust name and type.
struct Field {
    text: String,
    name: String,
    ty: String,
}

/// The field of property `prop` (schema `schema`) of definition `def`.
fn field(defs: &Json, def: &str, prop: &str, schema: &Json, required: bool) -> Result<Field, String> {
    let (rt, _nullable) =
        rust_type(schema).ok_or_else(|| format!("`{def}.{prop}`: a property of type {:.200}", schema.to_string()))?;
    let name = field_name(prop);
    let mut attrs: Vec<String> = Vec::new();
    if prop == "_meta" || camel_case(&name) != prop {
        attrs.push(format!("rename = \"{prop}\""));
    }
    let lenient = schema.flag("x-deserialize-default-on-error");
    let skip_items = schema.flag("x-deserialize-skip-invalid-items");
    let on_null = schema.flag("x-deserialize-default-on-null");
    // A capability object decodes leniently as a whole (`lenient_object…`).
    let referenced = ref_name(schema).or_else(|| schema.get("anyOf")?.items().first().and_then(ref_name));
    let capabilities = referenced.is_some_and(|r| {
        r.ends_with("Capabilities") && defs.get(r).and_then(|d| d.get("type")).and_then(Json::as_str) == Some("object")
    });
    let de = |f: &str| format!("deserialize_with = \"{f}\"");
    let skip_none = || ["default".to_owned(), "skip_serializing_if = \"Option::is_none\"".to_owned()];
    let ty = if keeps_null(def, prop) {
        attrs.extend(skip_none());
        attrs.push(de(if skip_items { "lenient_nullable_items" } else { "lenient_nullable" }));
        format!("Option<Option<{rt}>>")
    } else if required {
        if on_null {
            attrs.push(de("null_as_default"));
        }
        if skip_items && !lenient {
            attrs.push(de("skip_invalid_items"));
        }
        rt
    } else if schema.has("default") {
        attrs.push("default".into());
        if lenient {
            attrs.push(de(if capabilities {
                "lenient_object_default"
            } else if skip_items {
                "lenient_items"
            } else {
                "lenient_default"
            }));
        }
        rt
    } else {
        attrs.extend(skip_none());
        if skip_items {
            attrs.push(de("lenient_vec"));
        } else if lenient {
            attrs.push(de(if capabilities { "lenient_object" } else { "lenient" }));
        }
        format!("Option<{rt}>")
    };
    let doc = if prop == "_meta" {
        "Extension metadata.".to_owned()
    } else {
        format!("The `{prop}` field ({}).", if required { "required" } else { "optional" })
    };
    let mut text = format!("    /// {doc}\n");
    if !attrs.is_empty() {
        let _ = writeln!(text, "    #[serde({})]", attrs.join(", "));
    }
    let _ = writeln!(text, "    pub {name}: {ty},");
    Ok(Field { text, name, ty })
}

/// A struct of the object `def`'s properties (and `kind`, the flattened union field, when
/// given), with a constructor `new` of its required fields when it has any.
fn structure(defs: &Json, def: &Json, name: &str, kind: Option<&str>) -> Result<String, String> {
    let required: Vec<&str> =
        def.get("required").map_or(&[][..], Json::items).iter().filter_map(Json::as_str).collect();
    let properties = def.get("properties").map_or(&[][..], Json::entries);
    let mut body = String::new();
    let mut params: Vec<String> = Vec::new();
    let mut param_names: Vec<String> = Vec::new();
    let mut inits: Vec<String> = Vec::new();
    for (prop, schema) in properties {
        let is_required = required.contains(&prop.as_str());
        let f = field(defs, name, prop, schema, is_required)?;
        body.push_str(&f.text);
        if is_required && !keeps_null(name, prop) {
            // A field named `kind` takes its type as is, like the flattened union.
            params.push(if f.name == "kind" {
                format!("kind: {}", f.ty)
            } else {
                format!("{}: impl Into<{}>", f.name, f.ty)
            });
            param_names.push(format!("`{}`", f.name));
            inits.push(format!("{0}: {0}.into()", f.name));
        } else if f.ty.starts_with("Option<") {
            inits.push(format!("{}: None", f.name));
        } else {
            inits.push(format!("{}: Default::default()", f.name));
        }
    }
    if let Some(kind) = kind {
        body.push_str(kind);
        params.push(format!("kind: {name}Kind"));
        param_names.push("`kind`".into());
        inits.push("kind".into());
    }
    let all_optional = properties.iter().all(|(p, _)| !required.contains(&p.as_str()));
    let derive = if all_optional && kind.is_none() {
        "Debug, Clone, PartialEq, Default, Serialize, Deserialize"
    } else {
        "Debug, Clone, PartialEq, Serialize, Deserialize"
    };
    let mut out = format!(
        "/// The v2 `{name}` definition.\n#[derive({derive})]\n#[serde(rename_all = \"camelCase\")]\npub struct {name} {{\n{body}}}\n"
    );
    if !params.is_empty() {
        // What a program that builds the message writes, instead of JSON to decode.
        let _ = write!(
            out,
            "\nimpl {name} {{\n    /// A `{name}` of its required fields ({names}); the optional ones are absent.\n    \
             pub fn new({params}) -> Self {{\n        {name} {{ {inits} }}\n    }}\n}}\n",
            names = param_names.join(", "),
            params = params.join(", "),
            inits = inits.join(", "),
        );
    }
    Ok(out)
}

/// The branches of `def`'s union (`anyOf`, else `oneOf`), when it has a non-empty one.
fn branches(def: &Json) -> Option<&[Json]> {
    Some(def.truthy_get("anyOf").or_else(|| def.truthy_get("oneOf"))?.items())
}

/// A `string_enum!` of `def`'s string constants, when all its branches but at most one (the
/// open fallback) are constants.
fn string_enum(def: &Json, name: &str) -> Option<String> {
    let branches = branches(def)?;
    let consts: Vec<&str> =
        branches.iter().filter(|b| is_string_const(b)).filter_map(|b| b.get("const")?.as_str()).collect();
    if consts.is_empty() || consts.len() + 1 < branches.len() {
        return None;
    }
    let mut variants = String::new();
    for c in consts {
        let _ = write!(variants, "        /// `{c}`.\n        {} = \"{c}\",\n", pascal_case(c));
    }
    Some(format!("string_enum! {{\n    /// The v2 `{name}` values.\n    pub enum {name} {{\n{variants}    }}\n}}\n"))
}

/// `def`'s union as (tag key, [(tag value, branch)]) when every branch but at most one `not`
/// fallback names its variant by a constant property (its last one), all by the same key.
fn tagged(def: &Json) -> Option<(&str, Vec<(&Json, &Json)>)> {
    let branches = branches(def)?;
    let (known, fallback): (Vec<&Json>, Vec<&Json>) = branches.iter().partition(|b| !b.has("not"));
    let mut key = None;
    let mut variants = Vec::new();
    for b in known {
        let properties = b.get("properties").map_or(&[][..], Json::entries);
        let (k, tag) = properties.iter().rev().find_map(|(k, v)| Some((k.as_str(), v.get("const")?)))?;
        if key.is_some_and(|key| key != k) {
            return None;
        }
        key = Some(k);
        variants.push((tag, b));
    }
    (fallback.len() <= 1).then_some((key?, variants))
}

/// A `tagged_union!` named `rust_name` of `def`'s union, when it is tagged; an error when a
/// branch has properties besides the tag (those are written by hand).
fn tagged_union(def: &Json, name: &str, rust_name: &str) -> Result<Option<String>, String> {
    let Some((key, variants)) = tagged(def) else { return Ok(None) };
    let mut body = String::new();
    for (tag, b) in variants {
        let tag = tag.as_str().ok_or_else(|| format!("`{name}`: the tag {tag} is not a string"))?;
        if b.get("properties").is_some_and(|p| p.entries().iter().any(|(k, _)| k != key)) {
            return Err(format!("`{name}`: the `{tag}` branch has properties besides `{key}`"));
        }
        let target = ref_name(b).or_else(|| b.truthy_get("allOf")?.items().first().and_then(ref_name));
        // `unknown` would clash with the macro's own variant for unknown tags.
        let variant = format!("{}{}", pascal_case(tag), if tag == "unknown" { "State" } else { "" });
        let _ = writeln!(body, "        /// `{tag}`.");
        let _ = match target {
            Some(t) => writeln!(body, "        {variant}({t}) = \"{tag}\","),
            None => writeln!(body, "        {variant} = \"{tag}\","),
        };
    }
    Ok(Some(format!(
        "tagged_union! {{\n    /// The v2 `{name}` union.\n    pub enum {rust_name}, tag = \"{key}\", expecting = \"a {name} object\" {{\n{body}    }}\n}}\n"
    )))
}
