//! What `acp check client` judges: each requirement with its level and where the spec says
//! it (pages of the v1.21.0 docs, `/work/shared/acp-spec/v1.21.0/docs/`).

use crate::check::report::{Level, Requirement, req};

req!(
    LAUNCH,
    "client.launch",
    Must,
    "starts the agent command it was given and speaks ACP to it on stdio",
    "transports.mdx, stdio: the client launches the agent as a subprocess"
);
req!(
    FRAMING,
    "client.jsonrpc.well-formed",
    Must,
    "every line it writes is one JSON-RPC 2.0 message",
    "transports.mdx, stdio (newline-delimited JSON-RPC); JSON-RPC 2.0 §4-5"
);
req!(
    INIT_FIRST,
    "client.init.first",
    Must,
    "sends `initialize` before anything else",
    "initialization.mdx: Clients MUST initialize the connection by calling `initialize`"
);
req!(
    INIT_VERSION,
    "client.init.protocol-version",
    Must,
    "`initialize` carries an integer protocolVersion (the latest it supports)",
    "initialization.mdx, Version Negotiation: MUST include the latest protocol version"
);
req!(
    INIT_CAPS,
    "client.init.client-capabilities",
    Must,
    "`clientCapabilities` is well-formed (fs.readTextFile/writeTextFile and terminal booleans)",
    "initialization.mdx, Client Capabilities; schema.json ClientCapabilities"
);
req!(
    NEW_CWD,
    "client.session-new.absolute-cwd",
    Must,
    "`session/new` has an absolute cwd and an mcpServers array",
    "session-setup.mdx, Working Directory: MUST be an absolute path; schema NewSessionRequest"
);
req!(
    PROMPT_SESSION,
    "client.prompt.session-id",
    Must,
    "`session/prompt` names the session the agent created and carries a prompt array",
    "prompt-turn.mdx, 1. User Message; schema PromptRequest"
);
req!(
    ADVERTISED,
    "client.methods.advertised-only",
    Must,
    "never calls a method the agent did not advertise (authenticate, session/load, set_mode, ...)",
    "session-setup.mdx, Checking Support: MUST NOT attempt to call `session/load`; authentication.mdx; session-modes.mdx"
);
req!(
    PERMISSION,
    "client.permission.offered-option",
    Must,
    "answers `session/request_permission` with an offered optionId (or `cancelled` after it cancelled)",
    "tool-calls.mdx, Requesting Permission and Permission Options"
);
req!(
    UPDATES,
    "client.updates.every-kind",
    Must,
    "keeps working after a turn streams session/update of every kind",
    "prompt-turn.mdx, 3. Agent Reports Output; schema SessionUpdate"
);
req!(
    UNKNOWN_METHOD,
    "client.unknown-method",
    Must,
    "answers unknown agent requests (plain and `_`-prefixed) with -32601",
    "extensibility.mdx, Custom Requests; JSON-RPC 2.0 §5.1 (-32601 Method not found)"
);
req!(
    UNKNOWN_NOTIFICATION,
    "client.unknown-notification",
    Should,
    "ignores unknown notifications (no answer, keeps working)",
    "extensibility.mdx, Custom Notifications: SHOULD ignore unrecognized notifications"
);
req!(
    FS_READ_SERVED,
    "client.fs.read-text-file.served",
    Capability,
    "advertised `fs/read_text_file` is served: the answer decodes with the file's content",
    "file-system.mdx, Reading Files"
);
req!(
    FS_READ_REFUSED,
    "client.fs.read-text-file.refused",
    Must,
    "unadvertised `fs/read_text_file` is answered with an error, not served",
    "file-system.mdx, Checking Support; initialization.mdx, Client Capabilities (omitted = UNSUPPORTED)"
);
req!(
    FS_WRITE_SERVED,
    "client.fs.write-text-file.served",
    Capability,
    "advertised `fs/write_text_file` is served: the file is written and the answer decodes",
    "file-system.mdx, Writing Files"
);
req!(
    FS_WRITE_REFUSED,
    "client.fs.write-text-file.refused",
    Must,
    "unadvertised `fs/write_text_file` is answered with an error, not served",
    "file-system.mdx, Checking Support; initialization.mdx, Client Capabilities (omitted = UNSUPPORTED)"
);
req!(
    TERMINAL_SERVED,
    "client.terminal.served",
    Capability,
    "advertised `terminal/*` is served: create, output, wait_for_exit, release decode",
    "terminals.mdx, Executing Commands, Getting Output, Waiting for Exit, Releasing Terminals"
);
req!(
    TERMINAL_REFUSED,
    "client.terminal.refused",
    Must,
    "unadvertised `terminal/create` is answered with an error, not served",
    "terminals.mdx, Checking Support; initialization.mdx, Client Capabilities (omitted = UNSUPPORTED)"
);
req!(
    CANCEL_NOTIFICATION,
    "client.cancel.notification",
    Must,
    "`session/cancel` is a notification (no id) naming the session of the running turn",
    "prompt-turn.mdx, Cancellation; schema CancelNotification"
);
req!(
    CANCEL_PERMISSION,
    "client.cancel.pending-permission",
    Must,
    "after `session/cancel`, a pending permission ask is answered `cancelled`",
    "prompt-turn.mdx, Cancellation: MUST respond to all pending requests with `cancelled`; tool-calls.mdx"
);
req!(
    STOP_END_TURN,
    "client.stop-reason.end_turn",
    Should,
    "handles a turn that ends `end_turn`",
    "prompt-turn.mdx, Stop Reasons"
);
req!(
    STOP_MAX_TOKENS,
    "client.stop-reason.max_tokens",
    Should,
    "handles a turn that ends `max_tokens`",
    "prompt-turn.mdx, Stop Reasons"
);
req!(
    STOP_MAX_TURN_REQUESTS,
    "client.stop-reason.max_turn_requests",
    Should,
    "handles a turn that ends `max_turn_requests`",
    "prompt-turn.mdx, Stop Reasons"
);
req!(
    STOP_REFUSAL,
    "client.stop-reason.refusal",
    Should,
    "handles a turn that ends `refusal`",
    "prompt-turn.mdx, Stop Reasons"
);
req!(
    STOP_CANCELLED,
    "client.stop-reason.cancelled",
    Should,
    "handles a turn that ends `cancelled`",
    "prompt-turn.mdx, Stop Reasons"
);
req!(
    AGENT_DIES,
    "client.agent-dies",
    Info,
    "what the client does when the agent dies mid-turn",
    "transports.mdx, stdio (the agent's output ends)"
);

/// Every requirement above, in order.
pub(crate) static ALL: &[&Requirement] = &[
    &LAUNCH,
    &FRAMING,
    &INIT_FIRST,
    &INIT_VERSION,
    &INIT_CAPS,
    &NEW_CWD,
    &PROMPT_SESSION,
    &ADVERTISED,
    &PERMISSION,
    &UPDATES,
    &UNKNOWN_METHOD,
    &UNKNOWN_NOTIFICATION,
    &FS_READ_SERVED,
    &FS_READ_REFUSED,
    &FS_WRITE_SERVED,
    &FS_WRITE_REFUSED,
    &TERMINAL_SERVED,
    &TERMINAL_REFUSED,
    &CANCEL_NOTIFICATION,
    &CANCEL_PERMISSION,
    &STOP_END_TURN,
    &STOP_MAX_TOKENS,
    &STOP_MAX_TURN_REQUESTS,
    &STOP_REFUSAL,
    &STOP_CANCELLED,
    &AGENT_DIES,
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
