//! Shared by the interop test binaries: the official SDK's peers (v1 agent; v2 agent and client),
//! the raw v2 frame pipe, and small helpers.
#![allow(dead_code, unreachable_pub)]

pub mod sdk_agent;
pub mod sdk_v2_agent;
pub mod sdk_v2_client;
pub mod wire;

use std::time::Duration;

use acp_proto::v2::{ContentBlock, SessionUpdate, StateUpdate, UpdateSessionNotification};

/// How long any one scenario may take before it counts as hung.
pub const LIMIT: Duration = Duration::from_secs(20);

/// Runs `future` to completion within [`LIMIT`].
pub async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, future).await.unwrap_or_else(|_| panic!("{what}: no answer within {LIMIT:?}"))
}

/// A short name of a v2 update: its kind, and the tool call's id and status or the state (what
/// the v2 client tests compare turns by).
pub fn update_name(update: &UpdateSessionNotification) -> String {
    match &update.update {
        SessionUpdate::StateUpdate(StateUpdate::Idle(i)) => format!("idle {:?}", i.stop_reason),
        SessionUpdate::StateUpdate(StateUpdate::Running(_)) => "running".into(),
        SessionUpdate::ToolCallUpdate(t) => format!("tool {} {:?}", t.tool_call_id.as_str(), t.status),
        SessionUpdate::AgentMessageChunk(c) => match &c.content {
            ContentBlock::Text(t) => format!("chunk {}", t.text),
            other => format!("chunk {other:?}"),
        },
        SessionUpdate::UserMessage(m) => format!("user {}", m.message_id.as_str()),
        SessionUpdate::PlanUpdate(_) => "plan".into(),
        SessionUpdate::AgentThoughtChunk(c) => format!("thought {}", c.message_id.as_str()),
        SessionUpdate::AgentMessage(m) => format!("message {}", m.message_id.as_str()),
        SessionUpdate::ToolCallContentChunk(c) => format!("tool content {}", c.tool_call_id.as_str()),
        SessionUpdate::UsageUpdate(u) => format!("usage {}/{}", u.used, u.size),
        SessionUpdate::SessionInfoUpdate(_) => "info".into(),
        SessionUpdate::Notice(n) => format!("notice {}", n.title),
        other => format!("{other:?}"),
    }
}
