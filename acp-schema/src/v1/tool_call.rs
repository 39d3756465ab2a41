//! Tool calls: what the agent reports about the tools it runs, and the content they produce.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::ContentBlock;
use super::ids::{TerminalId, ToolCallId};
use super::serde_util::{Meta, lenient, lenient_vec};
use super::subagent::SessionReference;

/// A tool call the agent has started, as reported in a `tool_call` session update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The call's id, unique within the session.
    pub tool_call_id: ToolCallId,
    /// A short description of what the tool is doing, for display.
    pub title: String,
    /// The tool's programmatic name (e.g. `read_file`), beside the display title.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub name: Option<String>,
    /// The category of tool, so the client can pick an icon.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub kind: Option<ToolKind>,
    /// The call's progress.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub status: Option<ToolCallStatus>,
    /// What the call produced so far. Malformed items are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub content: Option<Vec<ToolCallContent>>,
    /// Files the call touches, for "follow along" features. Malformed items are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub locations: Option<Vec<ToolCallLocation>>,
    /// The raw input sent to the tool (any JSON).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub raw_input: Option<Value>,
    /// The raw output of the tool (any JSON).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub raw_output: Option<Value>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ToolCall {
    /// A tool call with just an id and a title.
    pub fn new(tool_call_id: impl Into<ToolCallId>, title: impl Into<String>) -> Self {
        ToolCall {
            tool_call_id: tool_call_id.into(),
            title: title.into(),
            name: None,
            kind: None,
            status: None,
            content: None,
            locations: None,
            raw_input: None,
            raw_output: None,
            meta: None,
        }
    }
}

/// A change to a tool call. Only the fields present change; the id is always required.
///
/// Used in `tool_call_update` session updates and to describe the call in permission requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallUpdate {
    /// The call being updated.
    pub tool_call_id: ToolCallId,
    /// New tool category.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub kind: Option<ToolKind>,
    /// New status.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub status: Option<ToolCallStatus>,
    /// New title.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// New programmatic tool name.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub name: Option<String>,
    /// Replaces the call's content. Malformed items are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub content: Option<Vec<ToolCallContent>>,
    /// Replaces the call's locations. Malformed items are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub locations: Option<Vec<ToolCallLocation>>,
    /// New raw input (any JSON).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub raw_input: Option<Value>,
    /// New raw output (any JSON).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub raw_output: Option<Value>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ToolCallUpdate {
    /// An update of `tool_call_id` that changes nothing yet.
    pub fn new(tool_call_id: impl Into<ToolCallId>) -> Self {
        ToolCallUpdate {
            tool_call_id: tool_call_id.into(),
            kind: None,
            status: None,
            title: None,
            name: None,
            content: None,
            locations: None,
            raw_input: None,
            raw_output: None,
            meta: None,
        }
    }
}

crate::v1::serde_util::string_enum! {
    /// The category of a tool, used by clients for icons and grouping.
    pub enum ToolKind {
        /// Reads files or data.
        Read = "read",
        /// Modifies files or content.
        Edit = "edit",
        /// Deletes files or data.
        Delete = "delete",
        /// Moves or renames files.
        Move = "move",
        /// Searches for information.
        Search = "search",
        /// Runs commands or code.
        Execute = "execute",
        /// Internal reasoning or planning.
        Think = "think",
        /// Fetches external data.
        Fetch = "fetch",
        /// Switches the session mode.
        SwitchMode = "switch_mode",
        /// Anything else.
        Other = "other",
    }
}

crate::v1::serde_util::string_enum! {
    /// The progress of a tool call.
    pub enum ToolCallStatus {
        /// Not started yet (input still streaming, or awaiting approval).
        Pending = "pending",
        /// Running.
        InProgress = "in_progress",
        /// Finished successfully.
        Completed = "completed",
        /// Finished with an error.
        Failed = "failed",
    }
}

crate::v1::serde_util::tagged_union! {
    /// Something a tool call produced, discriminated by `type`.
    pub enum ToolCallContent, tag = "type", expecting = "a tool call content object" {
        /// Regular content (text, images, resources).
        Content(Content) = "content",
        /// A file modification shown as a diff.
        Diff(Diff) = "diff",
        /// A live terminal created with `terminal/create`.
        Terminal(Terminal) = "terminal",
        /// A display-only reference to another session (e.g. a subagent) the call works with.
        Session(SessionReference) = "session",
    }
}

impl From<ContentBlock> for ToolCallContent {
    fn from(content: ContentBlock) -> Self {
        ToolCallContent::Content(Content::new(content))
    }
}

/// A content block produced by a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Content {
    /// The content.
    pub content: ContentBlock,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Content {
    /// Wraps a content block.
    pub fn new(content: ContentBlock) -> Self {
        Content { content, meta: None }
    }
}

/// A change to a file, as old and new text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Diff {
    /// Absolute path of the file.
    pub path: String,
    /// The previous text; `None` for a new file.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub old_text: Option<String>,
    /// The new text.
    pub new_text: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Diff {
    /// A diff creating or rewriting `path` with `new_text`.
    pub fn new(path: impl Into<String>, new_text: impl Into<String>) -> Self {
        Diff { path: path.into(), old_text: None, new_text: new_text.into(), meta: None }
    }
}

/// A terminal embedded in a tool call; the client shows its live output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Terminal {
    /// The terminal, as returned by `terminal/create`.
    pub terminal_id: TerminalId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Terminal {
    /// Embeds the terminal `terminal_id`.
    pub fn new(terminal_id: impl Into<TerminalId>) -> Self {
        Terminal { terminal_id: terminal_id.into(), meta: None }
    }
}

/// A file (and optionally a line) a tool call is working on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallLocation {
    /// Absolute path of the file.
    pub path: String,
    /// Line number within the file.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub line: Option<u32>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ToolCallLocation {
    /// A location without a line.
    pub fn new(path: impl Into<String>) -> Self {
        ToolCallLocation { path: path.into(), line: None, meta: None }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn round_trip(input: Value) -> ToolCallContent {
        let c: ToolCallContent = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&c).unwrap(), input);
        c
    }

    #[test]
    fn tool_call_content_variants_round_trip() {
        // Examples from docs/tool-calls.mdx.
        let c = round_trip(json!({
            "type": "content",
            "content": {"type": "text", "text": "Analysis complete. Found 3 issues."}
        }));
        assert_eq!(c, ToolCallContent::from(ContentBlock::text("Analysis complete. Found 3 issues.")));
        let c = round_trip(json!({
            "type": "diff",
            "path": "/home/user/project/src/config.json",
            "oldText": "{\n  \"debug\": false\n}",
            "newText": "{\n  \"debug\": true\n}"
        }));
        assert!(matches!(c, ToolCallContent::Diff(ref d) if d.old_text.is_some()));
        let c = round_trip(json!({"type": "terminal", "terminalId": "term_xyz789"}));
        assert_eq!(c, ToolCallContent::Terminal(Terminal::new("term_xyz789")));
    }

    #[test]
    fn unknown_tool_call_content_is_kept() {
        let input = json!({"type": "chart", "series": [1, 2, 3]});
        let c: ToolCallContent = serde_json::from_value(input.clone()).unwrap();
        assert!(matches!(&c, ToolCallContent::Unknown(u) if u.tag("type") == Some("chart")));
        assert_eq!(serde_json::to_value(&c).unwrap(), input);
    }

    #[test]
    fn tag_not_first_decodes() {
        let c: ToolCallContent = serde_json::from_str(r#"{"terminalId":"t","type":"terminal"}"#).unwrap();
        assert_eq!(c, ToolCallContent::Terminal(Terminal::new("t")));
    }

    #[test]
    fn tool_call_update_is_lenient() {
        let u: ToolCallUpdate = serde_json::from_value(json!({
            "toolCallId": "call_1",
            "kind": 42,
            "status": "in_progress",
            "title": ["not", "a", "string"],
            "locations": [{"path": "/a", "line": 3}, {"line": 4}, "junk", {"path": "/b", "line": -1}],
            "content": {"not": "an array"},
            "_meta": "bad"
        }))
        .unwrap();
        assert_eq!(u.kind, None);
        assert_eq!(u.status, Some(ToolCallStatus::InProgress));
        assert_eq!(u.title, None);
        assert_eq!(u.content, None);
        assert_eq!(u.meta, None);
        let locations = u.locations.unwrap();
        assert_eq!(locations.len(), 2);
        assert_eq!(locations[0].line, Some(3));
        // A bad `line` inside an item is itself lenient: the item survives without it.
        assert_eq!(locations[1].path, "/b");
        assert_eq!(locations[1].line, None);
    }

    #[test]
    fn tool_call_keeps_raw_json_and_unknown_kinds() {
        let input = json!({
            "toolCallId": "c",
            "title": "Run",
            "kind": "teleport",
            "status": "pending",
            "content": [],
            "locations": [],
            "rawInput": {"cmd": ["ls", "-l"], "n": null},
            "rawOutput": "ok"
        });
        let t: ToolCall = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(t.kind, Some(ToolKind::Unknown("teleport".into())));
        assert_eq!(serde_json::to_value(&t).unwrap(), input);
    }

    #[test]
    fn tool_call_update_minimal() {
        let u: ToolCallUpdate = serde_json::from_str(r#"{"toolCallId":"call_001"}"#).unwrap();
        assert_eq!(u, ToolCallUpdate::new("call_001"));
        assert_eq!(serde_json::to_string(&u).unwrap(), r#"{"toolCallId":"call_001"}"#);
    }
}
