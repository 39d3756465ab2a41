//! What the v2 tests of both adapters say to the scripted agents (`v2_agent.rs`): the
//! requests, and the short names of the updates they expect (acp-blocking's
//! `tests/blocking/v2.rs`).

use acp_proto::TurnEndReason;
use acp_proto::v2::{
    self, ClientCapabilities, ContentBlock, Implementation, InitializeRequest, NewSessionRequest, PromptRequest,
    SessionId, SessionUpdate, StateUpdate, TextContent, UpdateSessionNotification,
};

/// The turn of a `hello` prompt whose permission ask is allowed.
pub const ALLOWED: [&str; 5] =
    ["running", "chunk echo: hello", "tool call-1 Some(Pending)", "tool call-1 Some(Completed)", "idle Some(EndTurn)"];

/// A v2 `initialize` offering 2.
pub fn init(client: &str) -> InitializeRequest {
    InitializeRequest {
        protocol_version: v2::ProtocolVersion(2),
        info: Implementation::new(client, "0.1.0"),
        capabilities: ClientCapabilities::default(),
        meta: None,
    }
}

/// A `session/new` in `/tmp`.
pub fn new_session() -> NewSessionRequest {
    NewSessionRequest {
        cwd: v2::AbsolutePath("/tmp".into()),
        additional_directories: None,
        mcp_servers: None,
        system_prompt: None,
        meta: None,
    }
}

/// A `session/prompt` of one text block.
pub fn prompt_request(session: &SessionId, text: &str) -> PromptRequest {
    let prompt = vec![ContentBlock::Text(TextContent::new(text))];
    PromptRequest { session_id: session.clone(), prompt, idempotency_key: None, meta: None }
}

/// An update's short name, as the tests expect them.
pub fn name(update: &UpdateSessionNotification) -> String {
    match &update.update {
        SessionUpdate::StateUpdate(StateUpdate::Idle(i)) => format!("idle {:?}", i.stop_reason),
        SessionUpdate::StateUpdate(StateUpdate::Running(_)) => "running".into(),
        SessionUpdate::ToolCallUpdate(t) => format!("tool {} {:?}", t.tool_call_id.as_str(), t.status),
        SessionUpdate::AgentMessageChunk(c) => match &c.content {
            ContentBlock::Text(t) => format!("chunk {}", t.text),
            other => format!("chunk {other:?}"),
        },
        other => format!("{other:?}"),
    }
}

/// How a turn ends with an idle of `reason`.
pub fn idle(reason: v2::IdleStopReason) -> TurnEndReason {
    TurnEndReason::Idle { stop_reason: Some(reason) }
}
