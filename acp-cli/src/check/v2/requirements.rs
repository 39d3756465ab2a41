//! What `acp check agent --protocol 2` and `acp check client --protocol 2` judge (ACP v2,
//! Preview): each requirement with its level and where the v2 pages
//! (`spec/v2.0.0-alpha.3/docs`) or the newest v2 schema (`spec/crate-1.20.0/v2`) say it.
//! Defined in every build (the coverage roster names them); checked only in builds with the
//! feature `unstable_protocol_v2`.

use crate::check::report::{Level, Requirement, req};

req!(
    A_VERSION,
    "agent.v2.init.version",
    Must,
    "offered version 2, the agent answers 2, or its latest version below it (then the run is gated)",
    "v2 initialization.mdx#version-negotiation"
);
req!(
    A_V1_CLIENT,
    "agent.v2.init.v1-client",
    Must,
    "offered only version 1, the agent answers version 1 if it speaks it, else the error -32022 (unsupported protocol version)",
    "v2 initialization.mdx#version-negotiation; crate-1.20.0 v2 schema InitializeResponse.protocolVersion, ErrorCode -32022"
);
req!(
    A_INFO,
    "agent.v2.init.info",
    Must,
    "initialize answers the implementation's info (name and version)",
    "v2 initialization.mdx#implementation-information (Both Clients and Agents MUST provide info)"
);
req!(
    A_ACCEPTED,
    "agent.v2.prompt.accepted",
    Must,
    "session/prompt is answered with a result once the prompt is accepted, before the turn's idle",
    "v2 prompt-lifecycle.mdx#2-prompt-accepted; migration.mdx (respond as soon as it has accepted the prompt)"
);
req!(
    A_USER_MESSAGE,
    "agent.v2.turn.user-message",
    Must,
    "after accepting a prompt the agent reports the user message (user_message or user_message_chunk)",
    "v2 prompt-lifecycle.mdx#2-prompt-accepted (MUST report where the user message was inserted)"
);
req!(
    A_RUNNING,
    "agent.v2.turn.running",
    Must,
    "a state_update running comes before the turn's output",
    "v2 prompt-lifecycle.mdx#3-agent-reports-output (When foreground work starts, MUST send running)"
);
req!(
    A_IDLE_ONCE,
    "agent.v2.turn.idle-once",
    Must,
    "the turn ends exactly once, at an idle state_update with a stop reason; no output of the turn after it",
    "v2 prompt-lifecycle.mdx#4-report-completion (MUST report idle, MUST include the StopReason)"
);
req!(
    A_MESSAGE_IDS,
    "agent.v2.turn.message-ids",
    Must,
    "every message update and message chunk carries a messageId",
    "v2 prompt-lifecycle.mdx#message-ids (MUST include an opaque messageId)"
);
req!(
    A_CANCEL_IDLE,
    "agent.v2.cancel.idle-cancelled",
    Must,
    "session/cancel mid-turn ends the turn with an idle state_update whose stopReason is cancelled",
    "v2 prompt-lifecycle.mdx#cancellation (MUST send an idle state_update with the cancelled stop reason)"
);
req!(
    A_CANCEL_REQUEST,
    "agent.v2.cancel.cancel-request",
    Must,
    "a request followed at once by $/cancel_request gets exactly one response",
    "v2 cancellation.mdx (MUST send one of these responses for the original request)"
);
req!(
    A_TOOL_CANCEL_UNKNOWN,
    "agent.v2.tool-call-cancel.unknown",
    Must,
    "tool_call/cancel of a tool call that does not exist (or does not advertise cancel) is answered -32602",
    "crate-1.20.0 v2 schema CancelToolCallRequest (-32602 if the tool call is unknown, already final, or not cancellable)"
);
req!(
    A_TOOL_CANCEL,
    "agent.v2.tool-call-cancel.advertised",
    Capability,
    "a tool call advertising capabilities.cancel: tool_call/cancel answers, then the call reaches a final status",
    "crate-1.20.0 v2 schema CancelToolCallRequest (the Agent confirms it with a tool_call_update to a final status)"
);
req!(
    A_BATCH_NOTIFICATION,
    "agent.v2.batch.no-notification-reply",
    Must,
    "a batch of a request and a notification: no reply to the notification",
    "v2 transports.mdx#json-rpc-batch-messages (MUST NOT reply to a Notification, including one within a batch)"
);
req!(
    A_BATCH_ARRAY,
    "agent.v2.batch.answered",
    Should,
    "a batch is answered with an array holding one response per request",
    "v2 transports.mdx#json-rpc-batch-messages (SHOULD respond with an array of the corresponding Response objects)"
);
req!(
    A_BATCH_EMPTY,
    "agent.v2.batch.empty",
    Must,
    "an empty batch gets a single Invalid Request (-32600) response with id null, not an array",
    "v2 transports.mdx#json-rpc-batch-messages (The batch MUST be an array with at least one value)"
);
req!(
    C_VERSION,
    "client.v2.init.version",
    Must,
    "initialize offers protocol version 2 with info and capabilities",
    "v2 initialization.mdx#version-negotiation (MUST include the latest version it supports); #implementation-information"
);
req!(
    C_V1_AGENT,
    "client.v2.version.v1-agent",
    Must,
    "answered version 1 by a v1-only agent, the client either speaks v1 from then on or closes the connection",
    "v2 initialization.mdx#version-negotiation (MUST agree on a version; SHOULD close the connection if unsupported)"
);
req!(
    C_UNTIL_IDLE,
    "client.v2.turn.until-idle",
    Must,
    "the turn is not over at the prompt's answer: the client still serves the agent until the idle state_update",
    "v2 prompt-lifecycle.mdx (session/prompt only lasts until the Agent accepts the prompt; completion is the idle)"
);
req!(
    C_PERMISSION,
    "client.v2.permission.offered-option",
    Must,
    "session/request_permission is answered with an offered optionId (or cancelled after a cancel)",
    "v2 tool-calls.mdx#requesting-permission"
);
req!(
    C_CANCEL,
    "client.v2.cancel.pending-permission",
    Must,
    "on cancel: session/cancel (a notification) for the session, and the pending permission ask answered cancelled",
    "v2 prompt-lifecycle.mdx#cancellation (MUST respond to all pending requests with cancelled); v2 tool-calls.mdx"
);
req!(
    C_TOOL_CANCEL,
    "client.v2.tool-call-cancel.advertised-only",
    Must,
    "tool_call/cancel only for a tool call that advertised capabilities.cancel (it may have settled since)",
    "crate-1.20.0 v2 schema CancelToolCallRequest (Clients MUST NOT send it unless the tool call advertises capabilities.cancel)"
);
req!(
    C_UNKNOWN_METHOD,
    "client.v2.unknown-method",
    Must,
    "an unknown request of the agent is answered -32601",
    "v2 extensibility.mdx; JSON-RPC 2.0 §5.1"
);
req!(
    C_BATCH_NOTIFICATION,
    "client.v2.batch.no-notification-reply",
    Must,
    "a batch of a notification and a request from the agent: no reply to the notification",
    "v2 transports.mdx#json-rpc-batch-messages (MUST NOT reply to a Notification, including one within a batch)"
);
req!(
    C_BATCH_ARRAY,
    "client.v2.batch.answered",
    Should,
    "a batch from the agent is answered with an array holding the request's response",
    "v2 transports.mdx#json-rpc-batch-messages (SHOULD respond with an array of the corresponding Response objects)"
);

/// Every requirement above, in order.
pub(crate) static ALL: &[&Requirement] = &[
    &A_VERSION,
    &A_V1_CLIENT,
    &A_INFO,
    &A_ACCEPTED,
    &A_USER_MESSAGE,
    &A_RUNNING,
    &A_IDLE_ONCE,
    &A_MESSAGE_IDS,
    &A_CANCEL_IDLE,
    &A_CANCEL_REQUEST,
    &A_TOOL_CANCEL_UNKNOWN,
    &A_TOOL_CANCEL,
    &A_BATCH_NOTIFICATION,
    &A_BATCH_ARRAY,
    &A_BATCH_EMPTY,
    &C_VERSION,
    &C_V1_AGENT,
    &C_UNTIL_IDLE,
    &C_PERMISSION,
    &C_CANCEL,
    &C_TOOL_CANCEL,
    &C_UNKNOWN_METHOD,
    &C_BATCH_NOTIFICATION,
    &C_BATCH_ARRAY,
];

#[cfg(test)]
mod tests {
    #[test]
    fn all_lists_every_requirement_once() {
        let defined = include_str!("requirements.rs").matches(concat!("req", "!(")).count();
        assert_eq!(super::ALL.len(), defined);
        let mut ids: Vec<&str> = super::ALL.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), defined, "an id is used twice");
    }
}
