//! The literal method table, as a callback macro: [`method_table!`](crate::method_table).
//!
//! This file is the one place where an ACP method is written down. `acp_proto` expands the
//! table into its enums, [`METHODS`](super::METHODS), [`TypedRequest`](super::TypedRequest) and
//! the gate; the adapters (`acp-tokio`, `acp-blocking`) expand the same table into their handler
//! traits, their dispatchers and their typed calls. Adding a method is one row here plus its
//! types (and, when the core owns a rule about it, that rule).

/// The method table: calls `$callback! { { $($args)* } <the table> }`.
///
/// The callback is a `macro_rules!` macro of the caller's crate, named by a bare identifier;
/// `$args` are passed through first, in braces, so one callback can serve several expansions
/// (for example a `Send` and a local handler trait). The table it receives has five groups, in
/// this order, each a list of rows in braces:
///
/// ```text
/// client_requests: [ { ROW } ... ]        // client → agent requests
/// agent_requests: [ { ROW } ... ]         // agent → client requests
/// client_notifications: [ { NROW } ... ]  // client → agent notifications
/// agent_notifications: [ { NROW } ... ]   // agent → client notifications
/// protocol: [ { PROW } ... ]              // either direction, owned by the connection
/// ```
///
/// A request `ROW` is
/// `$(#[doc = $doc:literal])* $Variant:ident = $wire:literal, $Params:ident => $Result:ident,
/// gate: [$($gate:literal),*], handler: $handler:ident($context:ident), default: $default:ident,
/// call: $call:ident $(, feature: $feature:literal)?`, where
///
/// * `gate` is the path into the receiver's own capabilities that must be advertised
///   (empty: always allowed), as in [`MethodRow::gate`](crate::methods::MethodRow::gate);
/// * `handler` names the receiver's handler method, and `$context` the context it gets:
///   `request` (every request's context) or `prompt` (a prompt turn's, which knows its session);
/// * `default` is what a handler trait answers when the method is not implemented:
///   `required` (no default: the method must be implemented), `method_not_found` (`-32601`) or
///   `cancelled` (a permission request answered with the `cancelled` outcome);
/// * `call` says how a sender calls it: `typed` (a plain typed call: params in, result out) or
///   `custom` (the adapter writes the call by hand, e.g. `initialize`, which checks the
///   negotiated version, and `session/prompt`, which returns a turn);
/// * `feature` (optional, last) names the cargo feature an unstable method needs
///   (`"unstable_session_status"`, …, as the official schema crate names them). Every expansion
///   puts `#[cfg(feature = $feature)]` on each item it generates for the row (enum variants,
///   match arms, table entries, handler methods, typed calls), so each crate that expands the
///   table declares the same features, forwarding to acp-proto's
///   (`unstable_session_status = ["acp-proto/unstable_session_status"]`).
///
/// A notification `NROW` is `$(#[doc = $doc:literal])* $Variant:ident = $wire:literal,
/// $Params:ident, gate: [$($gate:literal),*], layer: $layer:ident, handler: [$($handler:ident)?]
/// $(, feature: $feature:literal)?`:
/// `gate` as for requests (checked outbound only: an inbound notification cannot be refused),
/// `layer` as in
/// [`Layer`](crate::methods::Layer), and a handler only for the notifications the application
/// receives (`session/cancel` is the connection's). A protocol `PROW` is
/// `$(#[doc = $doc:literal])* $Variant:ident = $wire:literal, $Params:ident`.
///
/// ```
/// /// Lists the handler names of the agent side.
/// macro_rules! agent_handlers {
///     (
///         { $name:ident }
///         client_requests: [ $( {
///             $(#[doc = $doc:literal])* $v:ident = $w:literal, $p:ident => $r:ident,
///             gate: [$($g:literal),*], handler: $h:ident($cx:ident), default: $def:ident, call: $call:ident
///             $(, feature: $f:literal)?
///         } )* ]
///         $($rest:tt)*
///     ) => {
///         const $name: &[&str] = &[$( $(#[cfg(feature = $f)])? stringify!($h) ),*];
///     };
/// }
/// acp_proto::method_table!(agent_handlers { HANDLERS });
/// assert_eq!(HANDLERS[0], "initialize");
/// assert!(HANDLERS.contains(&"prompt"));
/// ```
#[macro_export]
macro_rules! method_table {
    ($callback:ident { $($args:tt)* }) => {
        $callback! {
            { $($args)* }
            client_requests: [
                {
                    /// `initialize`: negotiate the protocol version and capabilities. Requests
                    /// pipelined behind it are held by the core and dispatched once it has
                    /// answered successfully.
                    Initialize = "initialize", InitializeRequest => InitializeResponse, gate: [],
                    handler: initialize(request), default: required, call: custom
                }
                {
                    /// `authenticate` with one of the agent's auth methods.
                    Authenticate = "authenticate", AuthenticateRequest => AuthenticateResponse, gate: [],
                    handler: authenticate(request), default: method_not_found, call: typed
                }
                {
                    /// `session/new`: open a session. Once it has answered, the core accepts updates
                    /// for the new session.
                    NewSession = "session/new", NewSessionRequest => NewSessionResponse, gate: [],
                    handler: new_session(request), default: method_not_found, call: typed
                }
                {
                    /// `session/load`: reopen a session, replaying its history as `session/update`
                    /// notifications before the answer.
                    LoadSession = "session/load", LoadSessionRequest => LoadSessionResponse, gate: ["loadSession"],
                    handler: load_session(request), default: method_not_found, call: typed
                }
                {
                    /// `session/set_mode`: switch the session's mode.
                    SetSessionMode = "session/set_mode", SetSessionModeRequest => SetSessionModeResponse, gate: [],
                    handler: set_session_mode(request), default: method_not_found, call: typed
                }
                {
                    /// `session/set_config_option`: change one of the session's config options.
                    SetSessionConfigOption = "session/set_config_option",
                    SetSessionConfigOptionRequest => SetSessionConfigOptionResponse, gate: [],
                    handler: set_session_config_option(request), default: method_not_found, call: typed
                }
                {
                    /// `session/prompt`: run a prompt turn, streaming its updates, and answer with
                    /// the stop reason. When the client cancels the turn, the context's
                    /// cancellation fires and the core answers `cancelled` whatever the handler
                    /// returns.
                    Prompt = "session/prompt", PromptRequest => PromptResponse, gate: [],
                    handler: prompt(prompt), default: method_not_found, call: custom
                }
                {
                    /// `session/list`: the agent's sessions.
                    ListSessions = "session/list", ListSessionsRequest => ListSessionsResponse,
                    gate: ["sessionCapabilities", "list"],
                    handler: list_sessions(request), default: method_not_found, call: typed
                }
                {
                    /// `session/delete`: forget a session.
                    DeleteSession = "session/delete", DeleteSessionRequest => DeleteSessionResponse,
                    gate: ["sessionCapabilities", "delete"],
                    handler: delete_session(request), default: method_not_found, call: typed
                }
                {
                    /// `session/resume`: reopen a session without replaying its history.
                    ResumeSession = "session/resume", ResumeSessionRequest => ResumeSessionResponse,
                    gate: ["sessionCapabilities", "resume"],
                    handler: resume_session(request), default: method_not_found, call: typed
                }
                {
                    /// `session/close`: close a session, ending its running turn.
                    CloseSession = "session/close", CloseSessionRequest => CloseSessionResponse,
                    gate: ["sessionCapabilities", "close"],
                    handler: close_session(request), default: method_not_found, call: typed
                }
                {
                    /// `logout`: end the authenticated session.
                    Logout = "logout", LogoutRequest => LogoutResponse, gate: ["auth", "logout"],
                    handler: logout(request), default: method_not_found, call: typed
                }
                {
                    /// **Unstable** `auth/status`: the agent's authentication state and the
                    /// accounts it has configured, read without changing anything (never
                    /// answered `auth_required`).
                    AuthStatus = "auth/status", AuthStatusRequest => AuthStatusResponse, gate: ["auth", "status"],
                    handler: auth_status(request), default: method_not_found, call: typed,
                    feature: "unstable_auth_status"
                }
                {
                    /// **Unstable** `providers/list`: the agent's configurable LLM providers and
                    /// their current (non-secret) routing.
                    ListProviders = "providers/list", ListProvidersRequest => ListProvidersResponse,
                    gate: ["providers"],
                    handler: list_providers(request), default: method_not_found, call: typed,
                    feature: "unstable_llm_providers"
                }
                {
                    /// **Unstable** `providers/set`: replace one provider's whole configuration
                    /// (protocol, base URL, headers).
                    SetProvider = "providers/set", SetProviderRequest => SetProviderResponse,
                    gate: ["providers"],
                    handler: set_provider(request), default: method_not_found, call: typed,
                    feature: "unstable_llm_providers"
                }
                {
                    /// **Unstable** `providers/disable`: disable a provider that is not required.
                    DisableProvider = "providers/disable", DisableProviderRequest => DisableProviderResponse,
                    gate: ["providers"],
                    handler: disable_provider(request), default: method_not_found, call: typed,
                    feature: "unstable_llm_providers"
                }
                {
                    /// **Unstable** `session/options`: the modes and config options a session
                    /// would start with, without creating, resuming or changing one.
                    SessionOptions = "session/options", SessionOptionsRequest => SessionOptionsResponse,
                    gate: ["sessionCapabilities", "options"],
                    handler: session_options(request), default: method_not_found, call: typed,
                    feature: "unstable_session_options"
                }
                {
                    /// **Unstable** `session/set_title`: set a session's title; the answer holds
                    /// the title the agent stored.
                    SetSessionTitle = "session/set_title", SetSessionTitleRequest => SetSessionTitleResponse,
                    gate: ["sessionCapabilities", "title"],
                    handler: set_session_title(request), default: method_not_found, call: typed,
                    feature: "unstable_session_set_title"
                }
                {
                    /// **Unstable** `session/status`: whether the agent has a session in memory
                    /// (no side effects).
                    SessionStatus = "session/status", SessionStatusRequest => SessionStatusResponse,
                    gate: ["sessionCapabilities", "status"],
                    handler: session_status(request), default: method_not_found, call: typed,
                    feature: "unstable_session_status"
                }
                {
                    /// **Unstable** `session/archive`: hide a session from default
                    /// `session/list` results, closing it if it is active.
                    ArchiveSession = "session/archive", ArchiveSessionRequest => ArchiveSessionResponse,
                    gate: ["sessionCapabilities", "archive"],
                    handler: archive_session(request), default: method_not_found, call: typed,
                    feature: "unstable_session_archive"
                }
                {
                    /// **Unstable** `session/unarchive`: return an archived session to default
                    /// `session/list` results (it is not loaded).
                    UnarchiveSession = "session/unarchive", UnarchiveSessionRequest => UnarchiveSessionResponse,
                    gate: ["sessionCapabilities", "archive"],
                    handler: unarchive_session(request), default: method_not_found, call: typed,
                    feature: "unstable_session_archive"
                }
                {
                    /// **Unstable** `session/fork`: a new session from the context of an
                    /// existing one. Once it has answered, the core accepts updates for the new
                    /// session, as after `session/new`.
                    ForkSession = "session/fork", ForkSessionRequest => ForkSessionResponse,
                    gate: ["sessionCapabilities", "fork"],
                    handler: fork_session(request), default: method_not_found, call: typed,
                    feature: "unstable_session_fork"
                }
                {
                    /// **Unstable** `proxy/initialize`: the conductor's handshake with a
                    /// component that has a successor, in place of `initialize` (same params
                    /// and result). Ungated: the method itself says "you have a successor".
                    /// A custom call, as `initialize`'s: it checks the negotiated version.
                    InitializeProxy = "proxy/initialize", InitializeProxyRequest => InitializeProxyResponse,
                    gate: [], handler: initialize_proxy(request), default: method_not_found, call: custom,
                    feature: "unstable_proxy_chains"
                }
                {
                    /// **Unstable** `proxy/successor` (request, conductor to proxy): a request
                    /// from the proxy's successor, delivered by the conductor; the answer is the
                    /// wrapped request's result. Ungated (no capability in the schema).
                    ProxySuccessor = "proxy/successor", ProxySuccessorRequest => ProxySuccessorResponse,
                    gate: [], handler: proxy_successor(request), default: method_not_found, call: typed,
                    feature: "unstable_proxy_chains"
                }
            ]
            agent_requests: [
                {
                    /// `session/request_permission`: ask the user before a tool call. The answer
                    /// names one of the offered options (or is `cancelled`); when the turn is
                    /// cancelled meanwhile, the core answers `cancelled` itself.
                    RequestPermission = "session/request_permission",
                    RequestPermissionRequest => RequestPermissionResponse, gate: [],
                    handler: request_permission(request), default: cancelled, call: typed
                }
                {
                    /// `fs/write_text_file`: write a text file.
                    WriteTextFile = "fs/write_text_file", WriteTextFileRequest => WriteTextFileResponse,
                    gate: ["fs", "writeTextFile"],
                    handler: write_text_file(request), default: method_not_found, call: typed
                }
                {
                    /// `fs/read_text_file`: read a text file (from a 1-based line, up to a limit).
                    ReadTextFile = "fs/read_text_file", ReadTextFileRequest => ReadTextFileResponse,
                    gate: ["fs", "readTextFile"],
                    handler: read_text_file(request), default: method_not_found, call: typed
                }
                {
                    /// `terminal/create`: start a command in a new terminal.
                    CreateTerminal = "terminal/create", CreateTerminalRequest => CreateTerminalResponse,
                    gate: ["terminal"],
                    handler: create_terminal(request), default: method_not_found, call: typed
                }
                {
                    /// `terminal/output`: a terminal's output so far, and its exit status once it
                    /// has exited.
                    TerminalOutput = "terminal/output", TerminalOutputRequest => TerminalOutputResponse,
                    gate: ["terminal"],
                    handler: terminal_output(request), default: method_not_found, call: typed
                }
                {
                    /// `terminal/release`: kill a terminal's command if needed and free it.
                    ReleaseTerminal = "terminal/release", ReleaseTerminalRequest => ReleaseTerminalResponse,
                    gate: ["terminal"],
                    handler: release_terminal(request), default: method_not_found, call: typed
                }
                {
                    /// `terminal/wait_for_exit`: answer once a terminal's command has exited.
                    WaitForTerminalExit = "terminal/wait_for_exit",
                    WaitForTerminalExitRequest => WaitForTerminalExitResponse, gate: ["terminal"],
                    handler: wait_for_terminal_exit(request), default: method_not_found, call: typed
                }
                {
                    /// `terminal/kill`: kill a terminal's command, keeping the terminal.
                    KillTerminal = "terminal/kill", KillTerminalRequest => KillTerminalResponse,
                    gate: ["terminal"],
                    handler: kill_terminal(request), default: method_not_found, call: typed
                }
                {
                    /// `elicitation/create`: ask the user for input, with a form the client
                    /// renders or a URL the user visits. The core also checks the mode: a form
                    /// needs the client's `elicitation.form`, a URL `elicitation.url`.
                    CreateElicitation = "elicitation/create",
                    CreateElicitationRequest => CreateElicitationResponse, gate: ["elicitation"],
                    handler: create_elicitation(request), default: method_not_found, call: typed
                }
                {
                    /// **Unstable** `mcp/message` (request): one inner MCP request to an MCP
                    /// server the client declared with `type: "acp"`; the answer is its inner
                    /// outcome. Ungated: the client has no capability for it, it invites these
                    /// requests by declaring the server (the default handler answers `-32601`).
                    McpMessage = "mcp/message", MessageMcpRequest => MessageMcpResponse, gate: [],
                    handler: mcp_message(request), default: method_not_found, call: typed,
                    feature: "unstable_mcp_over_acp"
                }
                {
                    /// **Unstable** `proxy/successor` (request, proxy to conductor): a request
                    /// the proxy forwards to its successor; the answer is the successor's
                    /// result, unchanged. The same wire string as the conductor's row; its
                    /// types are same-wire wrappers of the schema's (`ProxyForwardRequest`).
                    ProxySuccessorForward = "proxy/successor", ProxyForwardRequest => ProxyForwardResponse,
                    gate: [], handler: proxy_successor(request), default: method_not_found, call: typed,
                    feature: "unstable_proxy_chains"
                }
            ]
            client_notifications: [
                {
                    /// `session/cancel`: cancel the session's running prompt turn.
                    Cancel = "session/cancel", CancelNotification, gate: [], layer: SessionControl, handler: []
                }
                {
                    /// **Unstable** `mcp/message` (notification): a message of an ACP-transport
                    /// MCP server about an active inner request (progress, subscription
                    /// updates); only to an agent that advertises `mcpCapabilities.acp`. The
                    /// same wire string as the request row, which the client receives.
                    McpMessageNotification = "mcp/message", MessageMcpNotification, gate: ["mcpCapabilities", "acp"],
                    layer: App, handler: [mcp_message_notification], feature: "unstable_mcp_over_acp"
                }
                {
                    /// **Unstable** `proxy/successor` (notification, conductor to proxy): a
                    /// notification from the proxy's successor. Ungated. The same wire string as
                    /// the request row in this direction: the kind tells them apart.
                    ProxySuccessorNotification = "proxy/successor", ProxySuccessorNotification, gate: [],
                    layer: App, handler: [proxy_successor_notification], feature: "unstable_proxy_chains"
                }
            ]
            agent_notifications: [
                {
                    /// `session/update`: streamed output of a session. Inside a prompt turn the
                    /// turn's updates go to the turn; this handler gets the others (for example
                    /// the history replayed by `session/load`). Handled one at a time, in order.
                    SessionUpdate = "session/update", SessionNotification, gate: [], layer: App, handler: [session_update]
                }
                {
                    /// **Unstable** `auth/status_update`: the agent's authentication state
                    /// changed (the fields of the `auth/status` result). Not gated by the
                    /// client's capabilities but by the sender's own: the agent's core sends it
                    /// only if the agent advertised `auth.status` (`acp_proto::gate::sender_capability`).
                    AuthStatusUpdate = "auth/status_update", AuthStatusUpdateNotification, gate: [], layer: App,
                    handler: [auth_status_update], feature: "unstable_auth_status"
                }
                {
                    /// `elicitation/complete`: a URL elicitation the agent started has completed
                    /// (the client may close its prompt). Sent only to a client that advertised
                    /// URL elicitation.
                    CompleteElicitation = "elicitation/complete", CompleteElicitationNotification,
                    gate: ["elicitation", "url"], layer: App, handler: [complete_elicitation]
                }
                {
                    /// **Unstable** `proxy/successor` (notification, proxy to conductor): a
                    /// notification the proxy forwards to its successor. Ungated.
                    ProxySuccessorForwardNotification = "proxy/successor", ProxyForwardNotification, gate: [],
                    layer: App, handler: [proxy_successor_notification], feature: "unstable_proxy_chains"
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

/// The doc line an adapter adds to a gated handler or call: `""` for an ungated method.
#[doc(hidden)]
#[macro_export]
macro_rules! __gate_note {
    ([]) => {
        ""
    };
    ([$first:literal $(, $rest:literal)*]) => {
        concat!(
            "Gated: the core refuses it with `-32601` unless the receiver advertised `",
            $first, $(".", $rest,)* "`."
        )
    };
}

/// The doc line an adapter adds to a handler method for its `default:` column.
#[doc(hidden)]
#[macro_export]
macro_rules! __default_note {
    (required) => {
        "Required: the handler trait has no default for it."
    };
    (method_not_found) => {
        "Default: answers `-32601` (method not found)."
    };
    (cancelled) => {
        "Default: answers with the `cancelled` outcome."
    };
}
