//! `fs/read_text_file` and `fs/write_text_file`: file access through the client, which sees
//! unsaved editor buffers and tracks the agent's edits.

use serde::{Deserialize, Serialize};

use super::ids::SessionId;
use super::serde_util::{Meta, lenient};

/// Parameters of `fs/write_text_file` (agent to client). Needs the client's `fs.writeTextFile`
/// capability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteTextFileRequest {
    /// The session asking.
    pub session_id: SessionId,
    /// Absolute path of the file to write.
    pub path: String,
    /// The full new contents.
    pub content: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl WriteTextFileRequest {
    /// Writes `content` to `path`.
    pub fn new(session_id: impl Into<SessionId>, path: impl Into<String>, content: impl Into<String>) -> Self {
        WriteTextFileRequest { session_id: session_id.into(), path: path.into(), content: content.into(), meta: None }
    }
}

/// Result of `fs/write_text_file`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WriteTextFileResponse {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Parameters of `fs/read_text_file` (agent to client). Needs the client's `fs.readTextFile`
/// capability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadTextFileRequest {
    /// The session asking.
    pub session_id: SessionId,
    /// Absolute path of the file to read.
    pub path: String,
    /// First line to read, 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub line: Option<u32>,
    /// Maximum number of lines to read.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub limit: Option<u32>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ReadTextFileRequest {
    /// Reads the whole file at `path`.
    pub fn new(session_id: impl Into<SessionId>, path: impl Into<String>) -> Self {
        ReadTextFileRequest { session_id: session_id.into(), path: path.into(), line: None, limit: None, meta: None }
    }
}

/// Result of `fs/read_text_file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadTextFileResponse {
    /// The text read.
    pub content: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ReadTextFileResponse {
    /// A response carrying `content`.
    pub fn new(content: impl Into<String>) -> Self {
        ReadTextFileResponse { content: content.into(), meta: None }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn docs_read_request_decodes() {
        // From docs/file-system.mdx.
        let params = json!({
            "sessionId": "sess_abc123def456",
            "path": "/home/user/project/src/main.py",
            "line": 10,
            "limit": 50
        });
        let r: ReadTextFileRequest = serde_json::from_value(params.clone()).unwrap();
        assert_eq!((r.line, r.limit), (Some(10), Some(50)));
        assert_eq!(serde_json::to_value(&r).unwrap(), params);
    }

    #[test]
    fn bad_line_numbers_are_dropped() {
        let r: ReadTextFileRequest = serde_json::from_value(json!({
            "sessionId": "s", "path": "/p", "line": -3, "limit": "many", "_meta": []
        }))
        .unwrap();
        assert_eq!(r, ReadTextFileRequest::new("s", "/p"));
    }

    #[test]
    fn write_round_trips() {
        let params = json!({
            "sessionId": "s",
            "path": "/tmp/x",
            "content": "hi\n",
            "_meta": {"trace": "abc"}
        });
        let w: WriteTextFileRequest = serde_json::from_value(params.clone()).unwrap();
        assert_eq!(serde_json::to_value(&w).unwrap(), params);
        let resp: WriteTextFileResponse = serde_json::from_str("{}").unwrap();
        assert_eq!(serde_json::to_string(&resp).unwrap(), "{}");
    }
}
