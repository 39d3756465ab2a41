//! The literal v2 method table, as a callback macro: [`method_table_v2!`](crate::method_table_v2).

/// The ACP v2 method table (`spec/crate-1.20.0/v2/meta.json`): calls
/// `$callback! { { $($args)* } <the table> }`, with exactly the groups and row grammar of
/// [`method_table!`](crate::method_table) (see there), so that one callback can expand either
/// table. `acp_proto::v2` expands it into [`v2::METHODS`](crate::v2::METHODS), the
/// [`v2::Method`](crate::v2::Method) enum and the typed params and results of the v2 envelopes.
///
/// The gates name the receiver's own v2 capabilities (`session` is `agentCapabilities.session`:
/// without it an agent supports no `session/*` method). A connection that negotiated v2
/// enforces them both ways (see `connection::turns_v2`). `tool_call/cancel` and
/// `terminal/cancel` are allowed per tool call or terminal (its `capabilities.cancel`), not by an
/// initialize capability, so their gate is empty; `auth/login` and `auth/logout` are advertised
/// by a non-empty `authMethods` list.
///
/// ```
/// macro_rules! wires {
///     (
///         { $name:ident }
///         client_requests: [ $( { $(#[doc = $d:literal])* $v:ident = $w:literal, $($rest:tt)* } )* ]
///         $($more:tt)*
///     ) => {
///         const $name: &[&str] = &[$($w),*];
///     };
/// }
/// acp_proto::method_table_v2!(wires { CLIENT_REQUESTS });
/// assert!(CLIENT_REQUESTS.contains(&"auth/login") && !CLIENT_REQUESTS.contains(&"session/load"));
/// ```
#[macro_export]
macro_rules! method_table_v2 {
    ($callback:ident { $($args:tt)* }) => {
        $callback! {
            { $($args)* }
            client_requests: [
                {
                    /// `initialize`: negotiate the protocol version and capabilities.
                    Initialize = "initialize", InitializeRequest => InitializeResponse, gate: [],
                    handler: initialize(request), default: required, call: custom
                }
                {
                    /// `auth/login` with one of the agent's auth methods (v1's `authenticate`).
                    Login = "auth/login", LoginAuthRequest => LoginAuthResponse, gate: [],
                    handler: login(request), default: method_not_found, call: typed
                }
                {
                    /// `auth/logout`: end the authenticated session (v1's `logout`).
                    Logout = "auth/logout", LogoutAuthRequest => LogoutAuthResponse, gate: [],
                    handler: logout(request), default: method_not_found, call: typed
                }
                {
                    /// `session/new`: open a session.
                    NewSession = "session/new", NewSessionRequest => NewSessionResponse, gate: ["session"],
                    handler: new_session(request), default: method_not_found, call: typed
                }
                {
                    /// `session/set_config_option`: change one of the session's config options.
                    SetSessionConfigOption = "session/set_config_option",
                    SetSessionConfigOptionRequest => SetSessionConfigOptionResponse, gate: ["session"],
                    handler: set_session_config_option(request), default: method_not_found, call: typed
                }
                {
                    /// `session/prompt`: send a prompt. The answer only acknowledges it (with the
                    /// id of its user message); the turn ends with an `idle` `state_update`.
                    Prompt = "session/prompt", PromptRequest => PromptResponse, gate: ["session"],
                    handler: prompt(request), default: method_not_found, call: custom
                }
                {
                    /// `session/list`: the agent's sessions.
                    ListSessions = "session/list", ListSessionsRequest => ListSessionsResponse, gate: ["session"],
                    handler: list_sessions(request), default: method_not_found, call: typed
                }
                {
                    /// `session/delete`: forget a session.
                    DeleteSession = "session/delete", DeleteSessionRequest => DeleteSessionResponse,
                    gate: ["session", "delete"],
                    handler: delete_session(request), default: method_not_found, call: typed
                }
                {
                    /// `session/resume`: reopen a session, replaying its history from `replayFrom`
                    /// (v1's `session/load` and `session/resume` in one).
                    ResumeSession = "session/resume", ResumeSessionRequest => ResumeSessionResponse,
                    gate: ["session"],
                    handler: resume_session(request), default: method_not_found, call: typed
                }
                {
                    /// `session/close`: stop a session's work, background work included, and free it.
                    CloseSession = "session/close", CloseSessionRequest => CloseSessionResponse, gate: ["session"],
                    handler: close_session(request), default: method_not_found, call: typed
                }
                {
                    /// `tool_call/cancel`: cancel one tool call that advertises `capabilities.cancel`.
                    CancelToolCall = "tool_call/cancel", CancelToolCallRequest => CancelToolCallResponse, gate: [],
                    handler: cancel_tool_call(request), default: method_not_found, call: typed
                }
                {
                    /// `terminal/cancel`: cancel one agent terminal that advertises `capabilities.cancel`.
                    CancelTerminal = "terminal/cancel", CancelTerminalRequest => CancelTerminalResponse, gate: [],
                    handler: cancel_terminal(request), default: method_not_found, call: typed
                }
            ]
            agent_requests: [
                {
                    /// `session/request_permission`: ask the user about a tool call or a command.
                    RequestPermission = "session/request_permission",
                    RequestPermissionRequest => RequestPermissionResponse, gate: [],
                    handler: request_permission(request), default: cancelled, call: typed
                }
                {
                    /// `elicitation/create`: ask the user for input, with a form or a URL.
                    CreateElicitation = "elicitation/create",
                    CreateElicitationRequest => CreateElicitationResponse, gate: ["elicitation"],
                    handler: create_elicitation(request), default: method_not_found, call: typed
                }
            ]
            client_notifications: [
                {
                    /// `session/cancel`: cancel the session's foreground work.
                    Cancel = "session/cancel", CancelSessionNotification, gate: ["session"], layer: SessionControl,
                    handler: []
                }
            ]
            agent_notifications: [
                {
                    /// `session/update`: an upsert of the session's state (messages, tool calls,
                    /// terminals, plans, the session state itself).
                    SessionUpdate = "session/update", UpdateSessionNotification, gate: [], layer: App,
                    handler: [session_update]
                }
                {
                    /// `elicitation/complete`: a URL elicitation has completed.
                    CompleteElicitation = "elicitation/complete", CompleteElicitationNotification,
                    gate: ["elicitation", "url"], layer: App, handler: [complete_elicitation]
                }
            ]
            protocol: [
                {
                    /// `$/cancel_request`: cancel one in-flight request, either direction.
                    CancelRequest = "$/cancel_request", CancelRequestNotification
                }
            ]
        }
    };
}
