//! The v2 side of the `connection` fuzz target (feature `unstable_protocol_v2`): templates of
//! v2 frames, v2 commands, v2 answers, and the turn checks. Used by [`crate::fuzzing`] when
//! bit 1 of the input's first byte is set (the machine then lists versions 1 and 2).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use acp_proto::v2::{self, AgentRequest, ClientRequest};
use acp_proto::{Instant, OutboundId, RpcError, Side, TurnStamp};

use crate::link::Link as Connection;

use crate::fuzzing::Reader;

/// The v2 turns a client machine reported: each ends at most once, stamps are contiguous
/// from 0, and no stamp names a turn that ended. Bounded by the target's operations.
#[derive(Default)]
pub(crate) struct TurnCheck {
    next: BTreeMap<OutboundId, u64>,
    ended: BTreeSet<OutboundId>,
}

impl TurnCheck {
    pub(crate) fn stamped(&mut self, stamp: TurnStamp) {
        assert!(!self.ended.contains(&stamp.turn), "an update stamped into turn {} after its end", stamp.turn);
        let next = self.next.entry(stamp.turn).or_default();
        assert_eq!(stamp.ordinal, *next, "turn {}: ordinals not contiguous", stamp.turn);
        *next += 1;
    }

    pub(crate) fn ended(&mut self, turn: OutboundId) {
        assert!(self.ended.insert(turn), "turn {turn} ended twice");
        self.next.remove(&turn);
    }
}

fn typed<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("the target's own v2 message decodes")
}

/// v2 frames the target can inject (as `template` does for v1).
pub(crate) fn template_v2(r: &mut Reader<'_>, side: Side, outbound: &[OutboundId]) -> Vec<u8> {
    let id = u64::from(r.byte() % 8);
    let out_id = outbound.get(usize::from(r.byte()) % outbound.len().max(1)).map_or(1, |o| o.wire());
    let s = format!("s{}", r.byte() % 3);
    let request = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let result = |result: Value| json!({"jsonrpc": "2.0", "id": out_id, "result": result});
    let update =
        |u: Value| json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": s, "update": u}});
    let frame = match (side, r.byte() % 18) {
        (Side::Agent, 0) => request(
            "initialize",
            json!({"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}),
        ),
        (Side::Agent, 1) => request("session/new", json!({"cwd": "/"})),
        (Side::Agent, 2 | 3) => request("session/prompt", json!({"sessionId": s, "prompt": []})),
        (Side::Agent, 4) => json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": s}}),
        (Side::Agent, 7) => request("tool_call/cancel", json!({"sessionId": s, "toolCallId": "t"})),
        (Side::Agent, 9) => request("auth/login", json!({"methodId": "m"})),
        (Side::Agent, 10) => request("session/resume", json!({"sessionId": s, "cwd": "/"})),
        (Side::Agent, 11 | 12) => request("session/close", json!({"sessionId": s})),
        (Side::Agent, 13) => request("session/delete", json!({"sessionId": s})),
        (Side::Agent, 14) => request("terminal/cancel", json!({"sessionId": s, "terminalId": "x"})),
        (Side::Agent, 15) => request("auth/logout", json!({})),
        (Side::Client, 0) => result(
            json!({"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "capabilities": {"session": {}}}),
        ),
        (Side::Client, 1) => result(json!({"sessionId": s})),
        (Side::Client, 2) => update(
            json!({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "text", "text": "x"}}),
        ),
        (Side::Client, 3) => request(
            "session/request_permission",
            json!({"sessionId": s, "title": "t", "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}]}),
        ),
        (Side::Client, 4) => {
            update(json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))
        }
        (Side::Client, 7) => result(json!({"messageId": "u"})),
        (Side::Client, 9) => {
            update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "capabilities": {"cancel": {}}}))
        }
        (Side::Client, 10) => update(json!({"sessionUpdate": "state_update", "state": "running"})),
        (Side::Client, 11 | 12) => result(json!({})),
        (Side::Client, 13) => {
            update(json!({"sessionUpdate": "terminal_update", "terminalId": "x", "capabilities": {"cancel": {}}}))
        }
        (Side::Client, 14) => request(
            "elicitation/create",
            json!({"mode": "form", "message": "m", "sessionId": s, "requestedSchema": {"type": "object", "properties": {}}}),
        ),
        (Side::Client, 15) => request(
            "elicitation/create",
            json!({"mode": "url", "message": "m", "requestId": 1, "elicitationId": "e", "url": "https://x.y/"}),
        ),
        (Side::Client, 16) => {
            json!({"jsonrpc": "2.0", "method": "elicitation/complete", "params": {"elicitationId": "e"}})
        }
        (_, 5) => json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": id}}),
        (_, 6) => json!({"jsonrpc": "2.0", "id": out_id, "error": {"code": -32800, "message": "x"}}),
        (_, 8) => json!({"jsonrpc": "2.0", "id": format!("{id}"), "method": "_x/y", "params": [1]}),
        // A v1-only method on a v2 connection (and v1's `initialize` before the handshake).
        (Side::Agent, _) => request("session/load", json!({"sessionId": s, "cwd": "/", "mcpServers": []})),
        (Side::Client, _) => request("fs/read_text_file", json!({"sessionId": s, "path": "/x"})),
    };
    let mut line = frame.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// A v2 command of the application: a request; the machine may refuse it. Client: 0
/// `initialize` (with both elicitation modes), 1 `session/new`, 2 and 3 `session/prompt`, 4
/// `tool_call/cancel`, 5 `session/close`, 6 `terminal/cancel`, 7 `session/resume`, 8
/// `auth/login`, 9 `session/delete` (all of `s0`); agent: 5 and 6 a form elicitation in `s0`,
/// otherwise a permission ask in `s0`.
pub(crate) fn send_v2(
    conn: &mut Connection,
    now: Instant,
    side: Side,
    choice: u8,
    deadline: Option<Instant>,
) -> Option<OutboundId> {
    let s0 = json!({"sessionId": "s0"});
    let request: v2::Request = match (side, choice % 10) {
        (Side::Client, 0) => typed::<v2::InitializeRequest>(json!({
            "protocolVersion": 2, "info": {"name": "c", "version": "1"},
            "capabilities": {"elicitation": {"form": {}, "url": {}}},
        }))
        .into(),
        (Side::Client, 1) => typed::<v2::NewSessionRequest>(json!({"cwd": "/"})).into(),
        (Side::Client, 2 | 3) => typed::<v2::PromptRequest>(json!({"sessionId": "s0", "prompt": []})).into(),
        (Side::Client, 4) => typed::<v2::CancelToolCallRequest>(json!({"sessionId": "s0", "toolCallId": "t"})).into(),
        (Side::Client, 5) => typed::<v2::CloseSessionRequest>(s0).into(),
        (Side::Client, 6) => typed::<v2::CancelTerminalRequest>(json!({"sessionId": "s0", "terminalId": "x"})).into(),
        (Side::Client, 7) => typed::<v2::ResumeSessionRequest>(json!({"sessionId": "s0", "cwd": "/"})).into(),
        (Side::Client, 8) => typed::<v2::LoginAuthRequest>(json!({"methodId": "m"})).into(),
        (Side::Client, _) => typed::<v2::DeleteSessionRequest>(s0).into(),
        (Side::Agent, 5 | 6) => {
            let schema = json!({"type": "object", "properties": {}});
            let e = json!({"mode": "form", "message": "m", "sessionId": "s0", "requestedSchema": schema});
            typed::<v2::CreateElicitationRequest>(e).into()
        }
        (Side::Agent, _) => {
            let ask = json!({"sessionId": "s0", "title": "t", "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}]});
            typed::<v2::RequestPermissionRequest>(ask).into()
        }
    };
    conn.send_request::<acp_proto::V2>(now, request, deadline).ok()
}

/// A v2 notification of the application (agent: updates of `s0`: 0 running, 1 idle, 2 a
/// cancellable tool call, 3 a chunk, 4 a cancellable terminal, 5 its exit; client: none but
/// `session/cancel`, which is `cancel_turn`).
pub(crate) fn notify_v2(conn: &mut Connection, now: Instant, choice: u8) {
    let update = match choice % 6 {
        0 => json!({"sessionUpdate": "state_update", "state": "running"}),
        1 => json!({"sessionUpdate": "state_update", "state": "idle"}),
        2 => json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "capabilities": {"cancel": {}}}),
        4 => json!({"sessionUpdate": "terminal_update", "terminalId": "x", "capabilities": {"cancel": {}}}),
        5 => json!({"sessionUpdate": "terminal_update", "terminalId": "x", "exitStatus": {"exitCode": 1}}),
        _ => {
            json!({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "text", "text": "x"}})
        }
    };
    let n: v2::UpdateSessionNotification = typed(json!({"sessionId": "s0", "update": update}));
    let _ = conn.send_notification::<acp_proto::V2>(now, n);
}

/// A minimal valid v2 result for a request, as an application would answer.
pub(crate) fn answer_v2(request: &v2::Request) -> Result<v2::Response, RpcError> {
    Ok(match request {
        v2::Request::Client(ClientRequest::Initialize(_)) => typed::<v2::InitializeResponse>(json!({
            "protocolVersion": 2, "info": {"name": "a", "version": "1"},
            "capabilities": {"session": {"delete": {}}}, "authMethods": [{"type": "agent", "methodId": "m", "name": "M"}],
        }))
        .into(),
        v2::Request::Client(ClientRequest::NewSession(_)) => {
            typed::<v2::NewSessionResponse>(json!({"sessionId": "s0"})).into()
        }
        v2::Request::Client(ClientRequest::Prompt(_)) => {
            typed::<v2::PromptResponse>(json!({"messageId": "u"})).into()
        }
        v2::Request::Client(ClientRequest::CancelToolCall(_)) => {
            typed::<v2::CancelToolCallResponse>(json!({})).into()
        }
        v2::Request::Client(ClientRequest::ResumeSession(_)) => {
            typed::<v2::ResumeSessionResponse>(json!({})).into()
        }
        v2::Request::Client(ClientRequest::CloseSession(_)) => typed::<v2::CloseSessionResponse>(json!({})).into(),
        v2::Request::Client(ClientRequest::DeleteSession(_)) => {
            typed::<v2::DeleteSessionResponse>(json!({})).into()
        }
        v2::Request::Client(ClientRequest::CancelTerminal(_)) => {
            typed::<v2::CancelTerminalResponse>(json!({})).into()
        }
        v2::Request::Client(ClientRequest::Login(_)) => typed::<v2::LoginAuthResponse>(json!({})).into(),
        v2::Request::Client(ClientRequest::Logout(_)) => typed::<v2::LogoutAuthResponse>(json!({})).into(),
        v2::Request::Agent(AgentRequest::CreateElicitation(_)) => {
            typed::<v2::CreateElicitationResponse>(json!({"action": "decline"})).into()
        }
        v2::Request::Agent(AgentRequest::RequestPermission(_)) => {
            typed::<v2::RequestPermissionResponse>(json!({"outcome": {"outcome": "cancelled"}})).into()
        }
        _ => return Err(RpcError::internal_error("fuzz")),
    })
}

/// The entries of a JSON-RPC batch array line (a v2 connection takes it apart), or `None` for
/// anything else: a single message, an empty array, broken JSON.
pub(crate) fn batch_entries(frame: &[u8]) -> Option<Vec<&[u8]>> {
    let text = std::str::from_utf8(frame).ok()?;
    let entries: Vec<&serde_json::value::RawValue> = serde_json::from_str(text).ok()?;
    (!entries.is_empty()).then(|| entries.into_iter().map(|e| e.get().as_bytes()).collect())
}
