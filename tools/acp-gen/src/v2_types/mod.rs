//! acp-schema's v2 types (`acp-schema/src/v2/{auth,capabilities,content,…}.rs`) from
//! `spec/crate-1.20.0/v2/schema.json`: one Rust type per `$defs` entry that differs from v1 on
//! the wire, in the schema's order, each in the file its name belongs to.
//!
//! 1. [`compare`]: which v2 definitions are the v1 ones (re-exported by `v2/mod.rs`, not
//!    written here).
//! 2. [`mapping`]: the Rust type of a property, the Rust names of properties and values.
//! 3. [`writers`]: the struct, `string_enum!`, `tagged_union!` or newtype of a definition.
//!
//! The definitions in [`MANUAL`] are hand-written in `acp-schema/src/v2/manual.rs`; any other
//! definition the writers cannot map is an error that names it.
//!
//! The schema is read in its own key order ([`json`]), which is the order of the items and fields.

mod compare;
mod json;
mod mapping;
mod writers;

use json::Json;
use std::collections::BTreeMap;

/// The schema the types are generated from, and the v1 one it is compared with.
const V2_SCHEMA: &str = "spec/crate-1.20.0/v2/schema.json";
const V1_SCHEMA: &str = "spec/crate-1.20.0/v1/schema.json";

/// Where the files go, from the workspace root.
const DIR: &str = "acp-schema/src/v2";

/// The definitions whose shape the generator does not map (untagged unions chosen by shape,
/// objects carrying a union beside their own fields, the error object, the message unions):
/// written by hand in `manual.rs`.
pub(crate) const MANUAL: &[&str] = &[
    "RequestId",
    "Error",
    "ErrorCode",
    "ErrorData",
    "IdleStateUpdate",
    "ElicitationFormMode",
    "ElicitationUrlMode",
    "AgentRequest",
    "ClientRequest",
    "AgentResponse",
    "ClientResponse",
    "AgentNotification",
    "ClientNotification",
    "ProtocolLevelNotification",
    "EmbeddedResourceResource",
    "SessionConfigSelectOptions",
    "ElicitationContentValue",
    "MultiSelectItems",
    "SetSessionConfigOptionRequest",
];

/// The files: (name, the first line of its docs, the words that put a definition in it). A
/// definition goes in the first file one of whose words its name contains; else in `session`.
const MODULES: &[(&str, &str, &[&str])] = &[
    (
        "content",
        "v2 content blocks and resources.",
        &["Content", "Text", "Image", "Audio", "Resource", "Annotation", "Icon", "MediaType", "Blob", "Embedded"],
    ),
    ("diff", "v2 structured diffs.", &["Diff", "AbsolutePath"]),
    ("tool_call", "v2 tool calls and permission requests.", &["ToolCall", "ToolKind", "Permission"]),
    (
        "elicitation",
        "v2 elicitation requests and their form schemas.",
        &["Elicitation", "MultiSelect", "PropertySchema", "StringFormat", "EnumOption"],
    ),
    ("terminal", "v2 terminals (agent-owned, reported by updates).", &["Terminal"]),
    ("plan", "v2 plans.", &["Plan"]),
    ("capabilities", "v2 capability objects.", &["Capabilities"]),
    ("auth", "v2 authentication (`auth/login`, `auth/logout`).", &["Auth", "Login", "Logout"]),
    (
        "state",
        "v2 session state updates (the end of a turn is an `idle` state update).",
        &["State", "Background", "StopReason"],
    ),
    (
        "updates",
        "v2 session updates (upserts keyed by id).",
        &[
            "Update",
            "Message",
            "Agent",
            "Thought",
            "Replay",
            "Compaction",
            "Command",
            "Notice",
            "Usage",
            "Cost",
            "Chunk",
        ],
    ),
    (
        "session",
        "v2 session lifecycle, initialization and errors.",
        &[
            "Session",
            "Initialize",
            "Prompt",
            "Mcp",
            "Http",
            "Env",
            "SystemPrompt",
            "Implementation",
            "Idempotency",
            "Cancel",
            "Protocol",
            "Error",
            "Config",
        ],
    ),
];

/// The helpers a file may use, by where they live: a file imports those its code names.
const HELPERS: &[(&str, &[&str])] = &[
    (
        "crate::v1::serde_ext",
        &["lenient_nullable", "lenient_nullable_items", "lenient_object", "lenient_object_default", "null_as_default"],
    ),
    (
        "crate::v1::serde_util",
        &["lenient", "lenient_default", "lenient_items", "lenient_vec", "string_enum", "tagged_union"],
    ),
    ("super::manual", &["skip_invalid_items"]),
];

/// The files written from the schemas: (path from the workspace root, unformatted source).
pub(crate) fn files() -> Result<Vec<(String, String)>, String> {
    let v1 = read_defs(V1_SCHEMA)?;
    let v2 = read_defs(V2_SCHEMA)?;
    let reused = compare::reused(&v1, &v2);
    let mut by_module: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut unmapped = Vec::new();
    for (name, _) in v2.entries() {
        if reused.contains(name) || MANUAL.contains(&name.as_str()) {
            continue;
        }
        match writers::definition(&v2, name) {
            Ok(code) => by_module.entry(module_of(name)).or_default().push(code),
            Err(why) => unmapped.push(why),
        }
    }
    if !unmapped.is_empty() {
        return Err(format!(
            "{V2_SCHEMA}: definitions of a shape the generator does not map (write them in {DIR}/manual.rs \
             and list them in v2_types::MANUAL, or teach the writers):\n  {}",
            unmapped.join("\n  ")
        ));
    }
    let files = by_module.into_iter().map(|(m, items)| {
        let (file, title, _) = MODULES[m];
        let body = items.join("\n");
        (format!("{DIR}/{file}.rs"), format!("{}{}\n{body}", header(title), uses(&body)))
    });
    Ok(files.collect())
}

/// The `$defs` object of the schema at `path` (from the workspace root).
fn read_defs(path: &str) -> Result<Json, String> {
    let full = concat!(env!("CARGO_MANIFEST_DIR"), "/../../").to_owned() + path;
    let text = std::fs::read_to_string(&full).map_err(|e| format!("{full}: {e}"))?;
    let schema = Json::parse(&text).map_err(|e| format!("{path}: {e}"))?;
    match schema.get("$defs") {
        Some(defs @ Json::Object(_)) => Ok(defs.clone()),
        _ => Err(format!("{path}: no `$defs` object")),
    }
}

/// The index in [`MODULES`] of the file definition `name` goes in.
fn module_of(name: &str) -> usize {
    let session = MODULES.iter().position(|(file, _, _)| *file == "session").expect("a session module");
    MODULES.iter().position(|(_, _, words)| words.iter().any(|w| name.contains(w))).unwrap_or(session)
}

/// The comment and module docs every file starts with (`title`: the docs' first line).
fn header(title: &str) -> String {
    format!(
        "// @generated by tools/acp-gen from {V2_SCHEMA}: acp-schema's v2 types that differ from v1.\n\
         // Do not edit: change the generator (tools/acp-gen/src/v2_types) and run `cargo run -p acp-gen`;\n\
         // CI runs `cargo run -p acp-gen -- --check` and fails when this file differs.\n\
         \n\
         //! {title}\n\
         //!\n\
         //! Generated from `{V2_SCHEMA}` by `tools/acp-gen` (one type per\n\
         //! `$defs` entry that differs from v1 on the wire); the doc comments name the\n\
         //! wire items; the schema's descriptions (in `spec/`) say what they mean.\n\
         //! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.\n\
         \n\
         #![allow(clippy::large_enum_variant)]\n\n"
    )
}

/// The `use` lines of a file whose code is `body`: what it names, nothing more.
fn uses(body: &str) -> String {
    let named = |n: &&str| body.contains(&format!("\"{n}\"")) || at_word_start(body, &format!("{n}! {{"));
    let mut lines = vec!["use serde::{Deserialize, Serialize};".to_owned(), String::new()];
    if at_word_start(body, "BTreeMap<") {
        lines.extend(["use std::collections::BTreeMap;".to_owned(), String::new()]);
    }
    lines.push("use super::*;".to_owned());
    for (path, names) in HELPERS {
        let got: Vec<&str> = names.iter().copied().filter(named).collect();
        match got.as_slice() {
            [] => {}
            [one] => lines.push(format!("use {path}::{one};")),
            _ => lines.push(format!("use {path}::{{{}}};", got.join(", "))),
        }
    }
    lines.join("\n") + "\n"
}

/// Whether `pat` occurs in `text` where no word character (letter, digit, `_`) comes before it.
fn at_word_start(text: &str, pat: &str) -> bool {
    text.match_indices(pat)
        .any(|(i, _)| !text[..i].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_by_name() {
        let file = |name| MODULES[module_of(name)].0;
        assert_eq!(file("ToolCallContent"), "content", "the first matching file wins");
        assert_eq!(file("AuthCapabilities"), "capabilities");
        assert_eq!(file("NewSessionRequest"), "session");
        assert_eq!(file("Nothing"), "session");
    }

    #[test]
    fn imports_what_the_code_names() {
        let body =
            "#[serde(deserialize_with = \"lenient_vec\")]\nstring_enum! {\nx: BTreeMap<String, u8>\nmy_tagged_union! {";
        assert_eq!(
            uses(body),
            "use serde::{Deserialize, Serialize};\n\nuse std::collections::BTreeMap;\n\nuse super::*;\n\
             use crate::v1::serde_util::{lenient_vec, string_enum};\n"
        );
    }
}
