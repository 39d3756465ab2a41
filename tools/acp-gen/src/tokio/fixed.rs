//! The fixed text of acp-tokio's handler traits: what no row says (the traits' docs, and what a
//! version adds to them: the extension methods, the v2 agent's cancellation hooks).

use crate::table::{Side, Version};

/// The doc of a side's handler trait (`local`: the one whose futures need not be `Send`).
pub(crate) fn trait_doc(version: Version, side: Side, local: bool) -> &'static str {
    match (version, side, local) {
        (Version::V1, Side::Agent, false) => {
            "An ACP agent whose handler futures are `Send`: handlers run as spawned tasks, so they run
concurrently (and in parallel on a multi-thread runtime).

Implement the methods with `async fn`; every method except
[`initialize`](Agent::initialize) has a default answering `-32601`. Each handler gets its
request's context, whose cancellation token fires on `$/cancel_request`, on
`session/cancel` (prompts), at the end of the client's input (the answer still goes
out: acp-proto's `half_close`) and when the connection closes. A handler that panics answers
`-32603`; the connection and the other handlers carry on.

For handlers that hold `Rc`s or other `!Send` state, implement [`LocalAgent`](crate::LocalAgent) instead."
        }
        (Version::V1, Side::Agent, true) => {
            "An ACP agent whose handler futures need not be `Send`: the same methods as
[`Agent`](crate::Agent), run as local tasks on the current thread. Serve it with [`serve_local`](crate::serve_local) (or
[`serve_stdio_local`](crate::serve_stdio_local)) from inside a `tokio::task::LocalSet` on a
current-thread runtime."
        }
        (Version::V1, Side::Client, false) => {
            "What an ACP client answers to its agent, with `Send` handler futures (run as spawned
tasks). Every method has a default: `-32601`, except
[`request_permission`](Client::request_permission), which answers `cancelled`, and the
notifications, which are ignored. `()` implements it with all the defaults.

Only advertise (in your `initialize` request's capabilities) what you implement: the core
refuses the methods you did not advertise with `-32601` before they reach you."
        }
        (Version::V1, Side::Client, true) => {
            "[`Client`](crate::Client) for handlers whose futures need not be `Send`: run as local tasks, with
[`ClientConnection::connect_local`](crate::versioned::ClientConnection::connect_local) inside a `tokio::task::LocalSet`."
        }
        (Version::V2, Side::Agent, false) => {
            "An ACP v2 agent (handlers run as spawned tasks). Every method except
[`initialize`](Agent::initialize) answers `-32601` by default.

In v2 [`prompt`](Agent::prompt) only acknowledges the prompt: the turn's work goes
on after it returns (on a task holding the [`AgentContext`], which stays usable),
sends `session/update`s, and ends with an `idle` `state_update`
([`AgentContext::send_idle`]). A `session/cancel` reaches
[`session_cancelled`](Agent::session_cancelled); the core has then already
cancelled the session's permission asks, and sends the idle `cancelled` itself if
the agent does not within `Config::turn_cancel_grace`, then calls
[`cancel_grace_expired`](Agent::cancel_grace_expired).

For handlers that hold `Rc`s or other `!Send` state, implement [`LocalAgent`](crate::v2::LocalAgent)."
        }
        (Version::V2, Side::Agent, true) => {
            "[`Agent`](crate::v2::Agent) for handlers whose futures need not be `Send`: the same methods, run as
local tasks on the current thread. Serve it with [`serve_local`](crate::v2::serve_local) inside a
`tokio::task::LocalSet`."
        }
        (Version::V2, Side::Client, false) => {
            "What an ACP v2 client answers to its agent (handlers run as spawned tasks). Every
method has a default: `-32601`, except
[`request_permission`](Client::request_permission), which answers `cancelled`,
and the notifications, which are ignored. `()` implements it with the defaults.

A turn's `session/update`s go to its [`PromptTurn`](crate::v2::PromptTurn); the others (outside
a turn, or of a session this client reads no turn of) to
[`session_update`](Client::session_update). The agent's requests of a turn's
session reach their handlers only after the turn's reader took the updates sent
before them (see [`PromptTurn`](crate::v2::PromptTurn)).

For handlers that hold `Rc`s or other `!Send` state, implement [`LocalClient`](crate::v2::LocalClient)."
        }
        (Version::V2, Side::Client, true) => {
            "[`Client`](crate::v2::Client) for handlers whose futures need not be `Send`: the same methods, run
as local tasks, with
[`ClientConnection::connect_local`](crate::versioned::ClientConnection::connect_local) inside a `tokio::task::LocalSet`."
        }
    }
}

/// The methods a version adds to a side's handler traits, after the rows' (`cx`: the side's
/// request context, `send`: the futures' bound).
pub(crate) fn extra_methods(version: Version, side: Side, cx: &str, send: &str) -> String {
    match (version, side) {
        (Version::V1, _) => ext_methods(version, cx, send),
        (Version::V2, Side::Agent) => {
            ext_methods(version, cx, send)
                + &format!(
                    "/// `session/cancel` of a session: stop its work. Default: ignored.
fn session_cancelled(&self, notification: v2::CancelSessionNotification) -> impl Future<Output = ()>{send} {{
    let _ = notification;
    std::future::ready(())
}}

/// The session's work, cancelled by the client, did not report `idle` within
/// `Config::turn_cancel_grace`, so the connection sent the idle (`cancelled`)
/// itself: the client's turn is over. Stop what still runs for the session; its
/// own idle is now refused ([`SendError::WorkAlreadyEnded`]) until the session
/// works again. Comes after the session's `session/cancel`, in order with the
/// notifications. Default: ignored.
///
/// [`SendError::WorkAlreadyEnded`]: acp_proto::SendError::WorkAlreadyEnded
fn cancel_grace_expired(&self, session_id: v2::SessionId) -> impl Future<Output = ()>{send} {{
    let _ = session_id;
    std::future::ready(())
}}
"
                )
        }
        (Version::V2, Side::Client) => ext_methods(version, cx, send),
    }
}

/// The extension methods of a version's handler traits: `_`-prefixed requests and
/// notifications, whose params and result are the application's: a `Value` in both versions
/// (`null`: no params), as the `Ext` variants carry them.
fn ext_methods(version: Version, cx: &str, send: &str) -> String {
    let (params, value) = match version {
        Version::V1 => ("Value", "Value"),
        Version::V2 => ("serde_json::Value", "serde_json::Value"),
    };
    let head = "/// An extension request (`_`-prefixed method). Default: `-32601`.";
    format!(
        "{head}
fn ext_method(&self, method: &str, params: {params}, cx: {cx}) -> impl Future<Output = Result<{value}, RpcError>>{send} {{
    let _ = (params, cx);
    std::future::ready(Err(RpcError::method_not_found(method)))
}}

/// An extension notification. Notifications are handled one at a time, in order.
/// Default: ignored.
fn ext_notification(&self, method: &str, params: {params}) -> impl Future<Output = ()>{send} {{
    let _ = (method, params);
    std::future::ready(())
}}

"
    )
}

/// The dispatch arms a version adds before the last (`-32601`): the extension requests.
pub(crate) fn extra_dispatch_arms(version: Version, side: Side) -> String {
    let sender = match side {
        Side::Agent => "Client",
        Side::Client => "Agent",
    };
    match version {
        Version::V1 => format!(
            "methods::{sender}Call::Ext(e, responder) => {{
    let value = handler.ext_method(&e.method, e.params, cx).await;
    responder.answer(value.map(acp_proto::ext::ExtResponse))
}}
"
        ),
        Version::V2 => format!(
            "v2::{sender}Call::Ext(e, responder) => {{
    let value = handler.ext_method(&e.method, e.params, cx).await;
    responder.answer(value.map(acp_proto::ext::ExtResponse))
}}
"
        ),
    }
}

/// How `notify` gets the notification out of the driver's item: the v2 agent calls its
/// cancellation hooks here, in order with the notifications.
pub(crate) fn inbound(version: Version, side: Side) -> &'static str {
    match (version, side) {
        (Version::V2, Side::Agent) => {
            "let notification = match item {
    Inbound::Notification(v2::Notification::Client(v2::ClientNotification::Cancel(n))) => {
        let _ = catch_unwind(handler.session_cancelled(n)).await;
        return;
    }
    Inbound::Notification(notification) => notification,
    Inbound::CancelGraceExpired(session) => {
        let _ = catch_unwind(handler.cancel_grace_expired(session)).await;
        return;
    }
};
"
        }
        _ => "let Some(notification) = item.notification() else { return };\n",
    }
}

/// The notification arms a version adds before the last (ignored): the extension
/// notifications.
pub(crate) fn extra_notify_arms(version: Version, side: Side) -> String {
    let sender = match side {
        Side::Agent => "Client",
        Side::Client => "Agent",
    };
    match version {
        Version::V1 => format!(
            "methods::Notification::{sender}(methods::{sender}Notification::Ext(e)) => {{
    let _ = catch_unwind(handler.ext_notification(&e.method, e.params)).await;
}}
"
        ),
        Version::V2 => format!(
            "v2::Notification::{sender}(v2::{sender}Notification::Ext(e)) => {{
    let _ = catch_unwind(handler.ext_notification(&e.method, e.params)).await;
}}
"
        ),
    }
}
