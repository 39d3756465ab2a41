//! The bytes the workloads put on the wire.

use std::sync::atomic::{AtomicU64, Ordering};

use acp_proto::types::{ContentBlock, ContentChunk, SessionNotification, SessionUpdate, StopReason};

/// The 64 ASCII bytes of every update's text.
pub const CHUNK: &str = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ._";

/// The exact W1 update line for `sess-0`, without its `\n` (224 bytes).
pub const UPDATE_LINE: &str = concat!(
    r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-0","update":"#,
    r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""#,
    "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ._",
    r#""}}}}"#
);

/// The workloads' agent: `sess-<n>` sessions in arrival order, N chunk updates then `end_turn`
/// per prompt. Implements the agent trait of both adapters (`blocking_impl`, `tokio_impl`).
#[derive(Debug)]
pub struct BenchAgent {
    updates: u64,
    sessions: AtomicU64,
}

impl BenchAgent {
    /// An agent streaming `updates` updates per prompt.
    pub fn new(updates: u64) -> BenchAgent {
        BenchAgent { updates, sessions: AtomicU64::new(0) }
    }

    /// The updates per prompt.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// The id of the next `session/new`.
    pub fn next_session(&self) -> String {
        session_name(self.sessions.fetch_add(1, Ordering::Relaxed))
    }
}

/// The id the agent gives the `n`-th `session/new` of a connection.
pub fn session_name(n: u64) -> String {
    format!("sess-{n}")
}

/// The update every workload streams.
pub fn chunk_update() -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(CHUNK)))
}

/// Whether `update` is an `agent_message_chunk` (what the client counts).
pub fn is_chunk(update: &SessionUpdate) -> bool {
    matches!(update, SessionUpdate::AgentMessageChunk(_))
}

/// Whether `notification` is an `agent_message_chunk` update.
pub fn is_chunk_notification(notification: &SessionNotification) -> bool {
    is_chunk(&notification.update)
}

/// The stop reason every prompt must end with.
pub fn expected_stop() -> StopReason {
    StopReason::EndTurn
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_proto::jsonrpc::encode_notification;
    use acp_proto::methods::{AgentNotification, Notification};

    #[test]
    fn the_update_line_is_exactly_224_bytes_and_is_what_the_core_writes() {
        assert_eq!(UPDATE_LINE.len(), 224);
        assert_eq!(CHUNK.len(), 64);
        let n = Notification::Agent(AgentNotification::SessionUpdate(SessionNotification::new(
            session_name(0),
            chunk_update(),
        )));
        let mut out = Vec::new();
        encode_notification(&mut out, n.wire(), Some(&n)).unwrap();
        assert_eq!(out, format!("{UPDATE_LINE}\n").as_bytes());
    }
}
