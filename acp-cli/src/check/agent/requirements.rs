//! Every requirement `acp check agent` checks, with its level and where it comes from. The
//! citations name a page of the ACP v1 docs (`protocol/PAGE.mdx#section`) or the JSON-RPC 2.0
//! specification.

use super::super::report::{Level, Requirement, req};

req!(
    INIT,
    "agent.init.answer",
    Must,
    "initialize is answered with the chosen version and capabilities",
    "protocol/initialization.mdx#initialization"
);
req!(
    INIT_VERSION,
    "agent.init.version",
    Must,
    "asked for version 1, the agent answers 1 (or an older version it supports)",
    "protocol/initialization.mdx#version-negotiation"
);
req!(
    INIT_FUTURE,
    "agent.init.future-version",
    Must,
    "asked for an unknown future version, the agent answers its latest (lower) version",
    "protocol/initialization.mdx#version-negotiation"
);
req!(
    INIT_INFO,
    "agent.init.agent-info",
    Should,
    "initialize names the implementation (agentInfo)",
    "protocol/initialization.mdx#implementation-information"
);
req!(
    BEFORE_INIT,
    "agent.init.before-initialize",
    Must,
    "a request before initialize is answered (every request gets a response), and initialize still works after it",
    "JSON-RPC 2.0 #response_object; protocol/initialization.mdx#initialization"
);
req!(
    BEFORE_INIT_REFUSED,
    "agent.init.before-initialize-refused",
    Info,
    "a session/new before initialize is refused with an error",
    "protocol/session-setup.mdx#creating-a-session (clients MUST initialize first)"
);
req!(
    SESSION_NEW,
    "agent.session.new",
    Must,
    "session/new with an absolute cwd answers a sessionId",
    "protocol/session-setup.mdx#creating-a-session"
);
req!(
    SESSION_RELATIVE_CWD,
    "agent.session.relative-cwd",
    Must,
    "session/new with a relative cwd is refused with an error",
    "protocol/session-setup.mdx#working-directory (cwd MUST be an absolute path); protocol/overview.mdx#argument-requirements"
);
req!(
    SESSION_BAD_PARAMS,
    "agent.session.invalid-params",
    Must,
    "session/new with a cwd that is not a string is answered with an error",
    "JSON-RPC 2.0 #error_object (-32602 Invalid params)"
);
req!(
    TURN_STOP,
    "agent.turn.stop-reason",
    Must,
    "a prompt turn ends with a response carrying a valid stopReason",
    "protocol/prompt-turn.mdx#4-check-for-completion; protocol/prompt-turn.mdx#stop-reasons"
);
req!(
    TURN_UPDATES,
    "agent.turn.updates",
    Must,
    "every session/update of the turn decodes per the schema and names the prompted session",
    "protocol/prompt-turn.mdx#3-agent-reports-output"
);
req!(
    TURN_ASKS,
    "agent.turn.permission-asks",
    Must,
    "a permission ask decodes per the schema and offers at least one option",
    "protocol/tool-calls.mdx#requesting-permission"
);
req!(
    CAP_FS,
    "agent.capability.fs",
    Must,
    "no fs/* call when the client did not advertise it",
    "protocol/file-system.mdx#checking-support"
);
req!(
    CAP_TERMINAL,
    "agent.capability.terminal",
    Must,
    "no terminal/* call when the client did not advertise terminal",
    "protocol/terminals.mdx#checking-support"
);
req!(
    CANCEL_MID_TURN,
    "agent.cancel.mid-turn",
    Must,
    "session/cancel mid-turn ends the prompt with stopReason cancelled",
    "protocol/prompt-turn.mdx#cancellation"
);
req!(
    CANCEL_PERMISSION,
    "agent.cancel.during-permission",
    Must,
    "session/cancel during a permission ask (answered cancelled) ends the prompt with stopReason cancelled",
    "protocol/prompt-turn.mdx#cancellation"
);
req!(
    CANCEL_NO_LATE_UPDATES,
    "agent.cancel.no-late-updates",
    Must,
    "no session/update of a cancelled turn after its prompt response",
    "protocol/prompt-turn.mdx#cancellation"
);
req!(
    CANCEL_REQ,
    "agent.cancel.cancel-request",
    Must,
    "a request cancelled with $/cancel_request still gets exactly one response",
    "protocol/cancellation.mdx#cancel_request-notification"
);
req!(
    CANCEL_REQUEST_HONORED,
    "agent.cancel.cancel-request-honored",
    Info,
    "$/cancel_request ends the request early (cancelled or -32800)",
    "protocol/cancellation.mdx#cancel_request-notification"
);
req!(
    UNKNOWN_METHOD,
    "agent.rpc.unknown-method",
    Must,
    "an unknown method is answered with error -32601",
    "JSON-RPC 2.0 #error_object; protocol/extensibility.mdx#custom-requests"
);
req!(
    NO_NOTIFICATION_ANSWER,
    "agent.rpc.notification-unanswered",
    Must,
    "notifications (unknown ones included) get no response",
    "JSON-RPC 2.0 #notification; protocol/overview.mdx#error-handling"
);
req!(
    UNKNOWN_NOTIFICATION,
    "agent.rpc.unknown-notification",
    Should,
    "an unknown notification is ignored: the agent keeps answering",
    "protocol/extensibility.mdx#custom-notifications"
);
req!(
    MALFORMED_SURVIVES,
    "agent.rpc.malformed-survives",
    Must,
    "after a line of invalid JSON the agent is alive and answers the next request",
    "JSON-RPC 2.0 #error_object (-32700 Parse error is an answer, not an exit)"
);
req!(
    PARSE_ERROR,
    "agent.rpc.parse-error",
    Should,
    "invalid JSON is answered with -32700 and id null, or ignored",
    "JSON-RPC 2.0 #error_object; #response_object (id Null when it cannot be read)"
);
req!(
    CLEAN_STDOUT,
    "agent.stdio.clean-stdout",
    Must,
    "every line on the agent's stdout is a JSON-RPC message",
    "protocol/transports.mdx#stdio"
);
req!(
    CONCURRENT,
    "agent.concurrency.two-sessions",
    Must,
    "two sessions prompted at once: each prompt answered once, under its own id, updates tagged with their session",
    "JSON-RPC 2.0 #response_object (id); protocol/session-setup.mdx#session-id"
);
req!(
    EOF_EXIT,
    "agent.stdio.exit-on-eof",
    Should,
    "the agent exits when its stdin ends",
    "protocol/transports.mdx#stdio (the client closes stdin, then terminates the subprocess)"
);
req!(
    LIST,
    "agent.methods.session-list",
    Capability,
    "advertised sessionCapabilities.list: session/list answers a valid list",
    "protocol/session-list.mdx"
);
req!(
    LOAD,
    "agent.methods.session-load",
    Capability,
    "advertised loadSession: session/load of a session answers a valid response",
    "protocol/session-setup.mdx#loading-sessions"
);
req!(
    RESUME,
    "agent.methods.session-resume",
    Capability,
    "advertised sessionCapabilities.resume: session/resume answers without replaying history",
    "protocol/session-setup.mdx#resuming-sessions"
);
req!(
    CLOSE,
    "agent.methods.session-close",
    Capability,
    "advertised sessionCapabilities.close: session/close answers",
    "protocol/session-setup.mdx#closing-active-sessions"
);
req!(
    SET_CONFIG,
    "agent.methods.set-config-option",
    Capability,
    "a session with configOptions: session/set_config_option answers the options",
    "protocol/session-config-options.mdx"
);
req!(
    SET_MODE,
    "agent.methods.set-mode",
    Capability,
    "a session with modes: session/set_mode answers",
    "protocol/session-modes.mdx"
);
req!(
    AUTH_ADVERTISED,
    "agent.auth.advertised",
    Must,
    "an agent that answers session/new with auth_required (-32000) advertised authMethods in initialize",
    "protocol/authentication.mdx#advertising-authentication; schema AuthenticateRequest (the method id was advertised during initialization)"
);
req!(
    AUTH_AUTHENTICATE,
    "agent.auth.authenticate",
    Capability,
    "with --auth METHOD_ID: authenticate with an advertised method answers, and session/new then works",
    "protocol/authentication.mdx#advertising-authentication; schema AuthenticateRequest (after it, session/new without auth_required)"
);
req!(
    SESSION_ID_FIRST,
    "agent.session.id-before-updates",
    Must,
    "no session/update names a session before the session/new answer that gives its id",
    "protocol/session-setup.mdx#creating-a-session (the Agent MUST respond with the Session ID); #session-id"
);
req!(
    TURN_NO_LATE,
    "agent.turn.no-late-updates",
    Must,
    "no message, thought, plan or tool call update of a session after its turn's response (any turn)",
    "protocol/prompt-turn.mdx#4-check-for-completion (the response ends the turn); #cancellation"
);
req!(
    TOOL_ANNOUNCED,
    "agent.turn.tool-call-announced",
    Should,
    "a session/request_permission names a tool call that a tool_call update announced before it",
    "protocol/tool-calls.mdx#creating (the Agent SHOULD report it); #requesting-permission (toolCall is an update of it)"
);
req!(
    TOOL_REFUSED_SETTLES,
    "agent.turn.refused-tool-call-settles",
    Must,
    "a tool call whose permission was refused ends failed or completed by the turn's end, never left pending",
    "protocol/prompt-turn.mdx#4-check-for-completion (the turn ends when no tool call is pending); protocol/tool-calls.mdx#status"
);
req!(
    LOAD_REPLAY,
    "agent.load.replay-before-answer",
    Capability,
    "advertised loadSession: session/load replays the conversation (the prompt included) as session/update before it answers, and nothing after",
    "protocol/session-setup.mdx#loading-a-session (MUST replay the entire conversation; when all entries have been streamed, MUST respond)"
);
req!(
    LOAD_STATE,
    "agent.load.state-again",
    Should,
    "session/load answers the modes and configOptions again when session/new had them",
    "protocol/session-setup.mdx#loading-a-session; protocol/session-modes.mdx#initial-state; protocol/session-config-options.mdx#initial-state (the spec says MAY; a client has no other way to learn them after a load)"
);
req!(
    RESUME_STATE,
    "agent.resume.state-again",
    Should,
    "session/resume answers the modes and configOptions again when session/new had them",
    "protocol/session-setup.mdx#resuming-sessions (the response MAY include mode and configuration state; a client has no other way to learn them)"
);

/// Every requirement above, in order.
pub(crate) static ALL: &[&Requirement] = &[
    &INIT,
    &INIT_VERSION,
    &INIT_FUTURE,
    &INIT_INFO,
    &BEFORE_INIT,
    &BEFORE_INIT_REFUSED,
    &SESSION_NEW,
    &SESSION_RELATIVE_CWD,
    &SESSION_BAD_PARAMS,
    &TURN_STOP,
    &TURN_UPDATES,
    &TURN_ASKS,
    &CAP_FS,
    &CAP_TERMINAL,
    &CANCEL_MID_TURN,
    &CANCEL_PERMISSION,
    &CANCEL_NO_LATE_UPDATES,
    &CANCEL_REQ,
    &CANCEL_REQUEST_HONORED,
    &UNKNOWN_METHOD,
    &NO_NOTIFICATION_ANSWER,
    &UNKNOWN_NOTIFICATION,
    &MALFORMED_SURVIVES,
    &PARSE_ERROR,
    &CLEAN_STDOUT,
    &CONCURRENT,
    &EOF_EXIT,
    &LIST,
    &LOAD,
    &RESUME,
    &CLOSE,
    &SET_CONFIG,
    &SET_MODE,
    &AUTH_ADVERTISED,
    &AUTH_AUTHENTICATE,
    &SESSION_ID_FIRST,
    &TURN_NO_LATE,
    &TOOL_ANNOUNCED,
    &TOOL_REFUSED_SETTLES,
    &LOAD_REPLAY,
    &LOAD_STATE,
    &RESUME_STATE,
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
