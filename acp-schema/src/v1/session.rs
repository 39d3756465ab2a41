//! Session lifecycle: `session/new`, `session/load`, `session/list`, `session/delete`,
//! `session/resume`, `session/close`, and session modes (`session/set_mode`).

use serde::{Deserialize, Serialize};

use super::config::SessionConfigOption;
use super::ids::{SessionId, SessionModeId};
use super::mcp::McpServer;
use super::serde_ext::meta_only;
use super::serde_util::{Meta, lenient, lenient_items, lenient_vec};
use super::session_options::InitialSessionConfigOption;
use super::system_prompt::SystemPrompt;

/// Parameters of `session/new` (client to agent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionRequest {
    /// Absolute working directory; the session's file operations are relative to it.
    pub cwd: String,
    /// Extra absolute workspace roots; needs `sessionCapabilities.additionalDirectories`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub additional_directories: Option<Vec<String>>,
    /// MCP servers the agent should connect to. Malformed entries are dropped.
    #[serde(default, deserialize_with = "lenient_items")]
    pub mcp_servers: Vec<McpServer>,
    /// System-level instructions from the client; send only to an agent that advertises
    /// `sessionCapabilities.systemPrompt` (and `override` mode only when it advertises that).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<SystemPrompt>,
    /// **Unstable** (`unstable_session_options`): initial values for the session's config
    /// options, applied in order as if set with `session/set_config_option`; send only to an
    /// agent that advertises `sessionCapabilities.options` (the core refuses it otherwise).
    /// Present without the feature too, so that struct literals compile either way, but then
    /// never on the wire (see [`session_options`](super::session_options)).
    #[cfg_attr(feature = "unstable_session_options", serde(default, skip_serializing_if = "Option::is_none"))]
    #[cfg_attr(not(feature = "unstable_session_options"), serde(skip))]
    pub config_options: Option<Vec<InitialSessionConfigOption>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl NewSessionRequest {
    /// A new session in `cwd` with the given MCP servers.
    pub fn new(cwd: impl Into<String>, mcp_servers: Vec<McpServer>) -> Self {
        NewSessionRequest {
            cwd: cwd.into(),
            additional_directories: None,
            mcp_servers,
            system_prompt: None,
            config_options: None,
            meta: None,
        }
    }
}

/// Result of `session/new`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionResponse {
    /// The new session's id.
    pub session_id: SessionId,
    /// The session's modes, if the agent has modes.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub modes: Option<SessionModeState>,
    /// The session's configuration options. Malformed entries are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl NewSessionResponse {
    /// A response naming the new session.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        NewSessionResponse { session_id: session_id.into(), modes: None, config_options: None, meta: None }
    }
}

/// Parameters of `session/load` (client to agent); needs the agent's `loadSession`
/// capability. The agent replays the conversation through `session/update` before answering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadSessionRequest {
    /// MCP servers the agent should connect to. Malformed entries are dropped.
    #[serde(default, deserialize_with = "lenient_items")]
    pub mcp_servers: Vec<McpServer>,
    /// Absolute working directory.
    pub cwd: String,
    /// Extra absolute workspace roots; needs `sessionCapabilities.additionalDirectories`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub additional_directories: Option<Vec<String>>,
    /// The session to load.
    pub session_id: SessionId,
    /// System-level instructions from the client; send only to an agent that advertises
    /// `sessionCapabilities.systemPrompt` (and `override` mode only when it advertises that).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<SystemPrompt>,
    /// **Unstable** (`unstable_session_options`): initial values for the session's config
    /// options, applied in order as if set with `session/set_config_option`; send only to an
    /// agent that advertises `sessionCapabilities.options` (the core refuses it otherwise).
    /// Present without the feature too, so that struct literals compile either way, but then
    /// never on the wire (see [`session_options`](super::session_options)).
    #[cfg_attr(feature = "unstable_session_options", serde(default, skip_serializing_if = "Option::is_none"))]
    #[cfg_attr(not(feature = "unstable_session_options"), serde(skip))]
    pub config_options: Option<Vec<InitialSessionConfigOption>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl LoadSessionRequest {
    /// Loads `session_id` in `cwd` with the given MCP servers.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<String>, mcp_servers: Vec<McpServer>) -> Self {
        LoadSessionRequest {
            mcp_servers,
            cwd: cwd.into(),
            additional_directories: None,
            session_id: session_id.into(),
            system_prompt: None,
            config_options: None,
            meta: None,
        }
    }
}

/// Result of `session/load`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadSessionResponse {
    /// The session's modes, if the agent has modes.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub modes: Option<SessionModeState>,
    /// The session's configuration options. Malformed entries are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Parameters of `session/list` (client to agent); needs `sessionCapabilities.list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsRequest {
    /// Only list sessions whose working directory is this absolute path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The `nextCursor` of a previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// **Unstable** (`unstable_session_archive`): which sessions by archive state (absent: not archived only); send only to
    /// an agent that advertises `sessionCapabilities.archive`.
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(feature = "unstable_session_archive", serde(default, skip_serializing_if = "Option::is_none"))]
    #[cfg_attr(
        not(feature = "unstable_session_archive"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_session_archive"
        )
    )]
    pub archived: Option<super::SessionArchiveFilter>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Result of `session/list`: one page of sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsResponse {
    /// The sessions on this page. Malformed entries are dropped.
    #[serde(default, deserialize_with = "lenient_items")]
    pub sessions: Vec<SessionInfo>,
    /// Opaque token for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub next_cursor: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ListSessionsResponse {
    /// A last page holding `sessions`.
    pub fn new(sessions: Vec<SessionInfo>) -> Self {
        ListSessionsResponse { sessions, next_cursor: None, meta: None }
    }
}

/// A session as listed by `session/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session's id.
    pub session_id: SessionId,
    /// Its absolute working directory.
    pub cwd: String,
    /// Its extra workspace roots. Malformed entries are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub additional_directories: Option<Vec<String>>,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// When the session was last active (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub updated_at: Option<String>,
    /// **Unstable** (`unstable_session_archive`): whether the session is archived (reported by agents that advertise
    /// `sessionCapabilities.archive`).
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_session_archive",
        serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")
    )]
    #[cfg_attr(
        not(feature = "unstable_session_archive"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_session_archive"
        )
    )]
    pub archived: Option<bool>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionInfo {
    /// A session with just an id and a working directory.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<String>) -> Self {
        SessionInfo {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: None,
            title: None,
            updated_at: None,
            archived: None,
            meta: None,
        }
    }
}

/// Parameters of `session/delete` (client to agent); needs `sessionCapabilities.delete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteSessionRequest {
    /// The session to remove from the history.
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl DeleteSessionRequest {
    /// Deletes `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        DeleteSessionRequest { session_id: session_id.into(), meta: None }
    }
}

meta_only! {
    /// Result of `session/delete`.
    DeleteSessionResponse
}

/// Parameters of `session/resume` (client to agent); needs `sessionCapabilities.resume`.
/// Unlike `session/load`, the history is not replayed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeSessionRequest {
    /// The session to resume.
    pub session_id: SessionId,
    /// Absolute working directory.
    pub cwd: String,
    /// Extra absolute workspace roots; needs `sessionCapabilities.additionalDirectories`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub additional_directories: Option<Vec<String>>,
    /// MCP servers the agent should connect to. Malformed entries are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub mcp_servers: Option<Vec<McpServer>>,
    /// System-level instructions from the client; send only to an agent that advertises
    /// `sessionCapabilities.systemPrompt` (and `override` mode only when it advertises that).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<SystemPrompt>,
    /// **Unstable** (`unstable_session_options`): initial values for the session's config
    /// options, applied in order as if set with `session/set_config_option`; send only to an
    /// agent that advertises `sessionCapabilities.options` (the core refuses it otherwise).
    /// Present without the feature too, so that struct literals compile either way, but then
    /// never on the wire (see [`session_options`](super::session_options)).
    #[cfg_attr(feature = "unstable_session_options", serde(default, skip_serializing_if = "Option::is_none"))]
    #[cfg_attr(not(feature = "unstable_session_options"), serde(skip))]
    pub config_options: Option<Vec<InitialSessionConfigOption>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ResumeSessionRequest {
    /// Resumes `session_id` in `cwd`.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<String>) -> Self {
        ResumeSessionRequest {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: None,
            mcp_servers: None,
            system_prompt: None,
            config_options: None,
            meta: None,
        }
    }
}

/// Result of `session/resume`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeSessionResponse {
    /// The session's modes, if the agent has modes.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub modes: Option<SessionModeState>,
    /// The session's configuration options. Malformed entries are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Parameters of `session/close` (client to agent); needs `sessionCapabilities.close`.
/// The agent cancels any ongoing work and frees the session's resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CloseSessionRequest {
    /// The session to close.
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CloseSessionRequest {
    /// Closes `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        CloseSessionRequest { session_id: session_id.into(), meta: None }
    }
}

meta_only! {
    /// Result of `session/close`.
    CloseSessionResponse
}

/// The modes a session offers and the one it is in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionModeState {
    /// The active mode.
    pub current_mode_id: SessionModeId,
    /// Every mode the session can switch to. Malformed entries are dropped.
    #[serde(default, deserialize_with = "lenient_items")]
    pub available_modes: Vec<SessionMode>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionModeState {
    /// `available_modes`, with `current_mode_id` active.
    pub fn new(current_mode_id: impl Into<SessionModeId>, available_modes: Vec<SessionMode>) -> Self {
        SessionModeState { current_mode_id: current_mode_id.into(), available_modes, meta: None }
    }
}

/// A mode the agent can work in (e.g. asking before changes, or planning only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMode {
    /// The mode's id.
    pub id: SessionModeId,
    /// The label shown to the user.
    pub name: String,
    /// A longer explanation for the user.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionMode {
    /// A mode with an id and a label.
    pub fn new(id: impl Into<SessionModeId>, name: impl Into<String>) -> Self {
        SessionMode { id: id.into(), name: name.into(), description: None, meta: None }
    }
}

/// Parameters of `session/set_mode` (client to agent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetSessionModeRequest {
    /// The session to switch.
    pub session_id: SessionId,
    /// The mode to switch to; one of `availableModes`.
    pub mode_id: SessionModeId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SetSessionModeRequest {
    /// Switches `session_id` to `mode_id`.
    pub fn new(session_id: impl Into<SessionId>, mode_id: impl Into<SessionModeId>) -> Self {
        SetSessionModeRequest { session_id: session_id.into(), mode_id: mode_id.into(), meta: None }
    }
}

meta_only! {
    /// Result of `session/set_mode`.
    SetSessionModeResponse
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::v1::McpServerStdio;

    fn round_trip<T>(input: Value) -> T
    where
        T: Serialize + serde::de::DeserializeOwned,
    {
        let t: T = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&t).unwrap(), input);
        t
    }

    #[test]
    fn docs_new_session_round_trips() {
        // From docs/session-setup.mdx.
        let r: NewSessionRequest = round_trip(json!({
            "cwd": "/home/user/project",
            "mcpServers": [{
                "name": "filesystem",
                "command": "/path/to/mcp-server",
                "args": ["--stdio"],
                "env": []
            }]
        }));
        let mut stdio = McpServerStdio::new("filesystem", "/path/to/mcp-server");
        stdio.args.push("--stdio".into());
        assert_eq!(r, NewSessionRequest::new("/home/user/project", vec![stdio.into()]));
        let _: NewSessionResponse = round_trip(json!({"sessionId": "sess_abc123def456"}));
    }

    #[test]
    fn mcp_servers_are_required_on_encode_and_lenient_on_decode() {
        let r = NewSessionRequest::new("/p", Vec::new());
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"cwd": "/p", "mcpServers": []}));
        let r: NewSessionRequest = serde_json::from_value(json!({
            "cwd": "/p",
            "mcpServers": [{"name": "broken"}, {"name": "ok", "command": "c", "args": [], "env": []}],
            "additionalDirectories": ["/a", 1]
        }))
        .unwrap();
        assert_eq!(r.mcp_servers.len(), 1);
        assert_eq!(r.additional_directories, Some(vec!["/a".to_owned()]));
        let r: NewSessionRequest = serde_json::from_value(json!({"cwd": "/p", "mcpServers": "nope"})).unwrap();
        assert!(r.mcp_servers.is_empty());
    }

    #[test]
    fn docs_load_and_resume_round_trip() {
        let r: LoadSessionRequest = round_trip(json!({
            "sessionId": "sess_789xyz",
            "cwd": "/home/user/project",
            "mcpServers": [{
                "name": "filesystem",
                "command": "/path/to/mcp-server",
                "args": ["--mode", "filesystem"],
                "env": []
            }]
        }));
        assert_eq!(r.session_id, "sess_789xyz");
        let _: ResumeSessionRequest = round_trip(json!({
            "sessionId": "sess_789xyz",
            "cwd": "/home/user/project",
            "mcpServers": []
        }));
        let _: ResumeSessionResponse = round_trip(json!({}));
        let _: CloseSessionRequest = round_trip(json!({"sessionId": "sess_789xyz"}));
    }

    #[test]
    fn docs_list_sessions_round_trips() {
        // From docs/session-list.mdx.
        let _: ListSessionsRequest = round_trip(json!({"cwd": "/home/user/project", "cursor": "eyJwYWdlIjogMn0="}));
        let r: ListSessionsResponse = round_trip(json!({
            "sessions": [
                {
                    "sessionId": "sess_abc123def456",
                    "cwd": "/home/user/project",
                    "title": "Implement session list API",
                    "updatedAt": "2025-10-29T14:22:15Z",
                    "_meta": {"messageCount": 12, "hasErrors": false}
                },
                {
                    "sessionId": "sess_uvw345rst678",
                    "cwd": "/home/user/project",
                    "updatedAt": "2025-10-27T15:30:00Z"
                }
            ],
            "nextCursor": "eyJwYWdlIjogM30="
        }));
        assert_eq!(r.sessions.len(), 2);
        assert!(r.sessions[0].meta.is_some());
    }

    #[test]
    fn docs_modes_round_trip() {
        // From docs/session-modes.mdx.
        let r: NewSessionResponse = round_trip(json!({
            "sessionId": "sess_abc123def456",
            "modes": {
                "currentModeId": "ask",
                "availableModes": [
                    {"id": "ask", "name": "Ask", "description": "Request permission before making any changes"},
                    {"id": "code", "name": "Code", "description": "Write and modify code with full tool access"}
                ]
            }
        }));
        assert_eq!(r.modes.unwrap().available_modes[1].id, "code");
        let _: SetSessionModeRequest = round_trip(json!({"sessionId": "sess_abc123def456", "modeId": "code"}));
    }

    #[test]
    fn list_request_is_strict_about_types() {
        // `cwd` and `cursor` have no default-on-error marker.
        assert!(serde_json::from_value::<ListSessionsRequest>(json!({"cwd": 1})).is_err());
        let r: ListSessionsRequest = serde_json::from_value(json!({"cwd": null})).unwrap();
        assert_eq!(r, ListSessionsRequest::default());
    }

    /// Every field the schema marks `x-deserialize-default-on-null` decodes `null` as its default.
    #[test]
    fn default_on_null_fields_decode_null_as_the_default() {
        use crate::v1::{AuthMethodTerminal, CreateTerminalRequest, McpServerHttp, McpServerSse};
        let http: McpServerHttp = serde_json::from_value(json!({"name": "n", "url": "u", "headers": null})).unwrap();
        assert!(http.headers.is_empty());
        let sse: McpServerSse = serde_json::from_value(json!({"name": "n", "url": "u", "headers": null})).unwrap();
        assert!(sse.headers.is_empty());
        let stdio: McpServerStdio =
            serde_json::from_value(json!({"name": "n", "command": "c", "args": null, "env": null})).unwrap();
        assert!(stdio.args.is_empty() && stdio.env.is_empty());
        let term: CreateTerminalRequest =
            serde_json::from_value(json!({"sessionId": "s", "command": "c", "args": null, "env": null})).unwrap();
        assert!(term.args.is_none() && term.env.is_none());
        let auth: AuthMethodTerminal =
            serde_json::from_value(json!({"id": "t", "name": "T", "args": null, "env": null})).unwrap();
        assert!(auth.args.is_none() && auth.env.is_none());
        let fields = json!({"mcpServers": null, "additionalDirectories": null});
        for (session, extra) in [(json!({"cwd": "/"}), 0), (json!({"cwd": "/", "sessionId": "s"}), 1)] {
            let mut v = session.clone();
            v.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
            if extra == 0 {
                let r: NewSessionRequest = serde_json::from_value(v).unwrap();
                assert!(r.mcp_servers.is_empty() && r.additional_directories.is_none());
            } else {
                let r: LoadSessionRequest = serde_json::from_value(v.clone()).unwrap();
                assert!(r.mcp_servers.is_empty() && r.additional_directories.is_none());
                let r: ResumeSessionRequest = serde_json::from_value(v).unwrap();
                assert!(r.mcp_servers.is_none() && r.additional_directories.is_none());
            }
        }
    }
}
