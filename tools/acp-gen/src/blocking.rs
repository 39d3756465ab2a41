//! What acp-blocking expands the tables into (the handler traits, their dispatch and the typed calls).
//!
//! One file per version and side (`acp-blocking/src/generated/{v1,v2}_{agent,client}.rs`), each
//! holding what that side's code is built from: the handler trait (one method per request the
//! side handles and per notification with a handler), its `Arc` forwarding, the dispatch of a
//! request and of a notification to the trait's methods, and the typed calls of the requests
//! the side sends. What differs between the four files and is not in the tables (the names, the
//! trait's doc, the extension methods of each version, v2's `session_cancelled`) is the fixed text of
//! [`Spec`]s below.

use crate::out;
use crate::table::{Call, Context, Fallback, NotificationRow, RequestRow, Side, Table, Version};

/// The files written for `version`'s table: (path from the workspace root, unformatted source).
pub(crate) fn files(version: Version, table: &Table) -> Vec<(String, String)> {
    [Side::Agent, Side::Client]
        .into_iter()
        .map(|side| {
            let spec = Spec::of(version, side);
            (format!("acp-blocking/src/generated/{}.rs", spec.file), file(&spec, table))
        })
        .collect()
}

/// How one side of one version is written: what the tables do not say.
struct Spec {
    version: Version,
    side: Side,
    /// The file stem under `acp-blocking/src/generated/`.
    file: &'static str,
    /// The header's description of the file.
    what: &'static str,
    /// The file's module doc and `use` lines.
    preamble: &'static str,
    /// The trait's doc (without `///`).
    trait_doc: &'static str,
    /// `Agent` or `Client`.
    trait_name: &'static str,
    /// The module the params and results are named from (`v1`, `v2`).
    types: &'static str,
    /// The method enum whose wire names the `-32601` defaults give.
    method_enum: &'static str,
    /// The context type of a request handler, by the row's `context` column (`None`: that
    /// context does not exist on this side).
    context: fn(Context) -> Option<&'static str>,
    /// The notification handler's name in `dispatch_notification` (`agent`, `client`).
    notify_param: &'static str,
    /// The notification type and its variant holding this side's inbound notifications:
    /// (`Notification::Client`, `ClientNotification`).
    notification: (&'static str, &'static str),
    /// Methods the trait has beyond the table's, their `Arc` forwarding, and the
    /// `dispatch_notification` arms (before the table's) that call them.
    extra: Extra,
    /// How requests reach the trait.
    dispatch: Dispatch,
    /// The type whose methods are the typed calls of the requests this side sends, and (v2)
    /// the response wrapper their results come back in: (`Client`, `ClientResponse`); `None`
    /// where they are written by hand (v1's agent calls the client through its contexts).
    calls: Option<(&'static str, Option<(&'static str, &'static str)>)>,
}

/// What a handler trait has beyond its table's rows.
struct Extra {
    methods: String,
    forward: String,
    arms: String,
}

/// How a side's requests reach its handler trait.
enum Dispatch {
    /// v1: `dispatch(handler, request: Request, cx)`, which takes the context by value and
    /// answers `Ext` requests with `ext_method`.
    V1 {
        /// The sender's `Request` variant and its request enum (`Client`, `ClientRequest`).
        sender: (&'static str, &'static str),
        /// This side's response enum (`AgentResponse`).
        response: &'static str,
        /// The context type `dispatch` gets.
        context: &'static str,
    },
    /// v2: `$name(handler, request: v2::Request, cx: &Context)`.
    V2 {
        name: &'static str,
        /// The sender's `Request` variant and its request enum (`Client`, `ClientRequest`).
        sender: (&'static str, &'static str),
        /// This side's `Response` variant (`Agent`).
        receiver: &'static str,
        context: &'static str,
    },
}

const V1_AGENT_DOC: &str = "\
An ACP agent: one method per request the client may send.

Handlers run on a bounded pool of worker threads, several at once, so `&self` is shared:
keep mutable state behind a `Mutex`. A handler may block (on the client, on a model, on a
lock) without blocking the connection. Every method except [`initialize`](Self::initialize)
has a default that answers `-32601` (method not found). A handler that panics answers its
request with `-32603`; the connection lives on.

The core answers what is not the agent's to decide: requests before `initialize`, methods
gated by capabilities the agent did not advertise, a second prompt while one runs,
`session/cancel` (the prompt's [`RequestContext::is_cancelled`] turns true and the turn ends
`cancelled` whatever the handler returns).";

const V1_CLIENT_DOC: &str = "\
An ACP client: answers the requests the agent sends.

Handlers run on a bounded pool of worker threads, several at once; a handler may block (a
permission dialog, a terminal) without blocking the connection. Defaults answer `-32601`,
except [`request_permission`](Self::request_permission), which answers `cancelled`, and the
notifications, which are ignored. A handler that panics answers `-32603`.

Advertise what you implement in the `clientCapabilities` of `initialize`: the core refuses
`fs/*` and `terminal/*` requests the client did not advertise before they reach you.";

const V2_AGENT_DOC: &str = "\
An ACP v2 agent. Handlers run on a bounded pool of worker threads
(`AgentOptions::max_handlers`), notifications in order on one thread, as for the v1
[`Agent`](crate::Agent). Every method except [`initialize`](Agent::initialize)
answers `-32601` by default. A handler that panics answers `-32603`.

In v2 [`prompt`](Agent::prompt) only acknowledges the prompt: the turn's work goes
on after it returns (on a thread holding a clone of the [`AgentContext`], which
stays usable), sends `session/update`s, and ends with an `idle` `state_update`
([`AgentContext::send_idle`]). A `session/cancel` reaches
[`session_cancelled`](Agent::session_cancelled); the core has then already
cancelled the session's permission asks, and sends the idle `cancelled` itself if
the agent does not within `Config::turn_cancel_grace`.";

// The last line is a link definition (it renders as nothing): `PromptTurn` is not imported
// where the trait is written.
const V2_CLIENT_DOC: &str = "\
What an ACP v2 client answers to its agent. Handlers run on a bounded pool of worker
threads (`ClientOptions::max_handlers`), notifications in order on one thread, as
for the v1 [`Client`](crate::Client). Every method has a default: `-32601`, except
[`request_permission`](Client::request_permission), which answers `cancelled`,
and the notifications, which are ignored. `()` implements it with the defaults. A
handler that panics answers `-32603`.

A turn's `session/update`s go to its [`PromptTurn`]; the others (outside a turn)
to [`session_update`](Client::session_update).

[`PromptTurn`]: crate::v2::PromptTurn";

const V1_AGENT_PREAMBLE: &str = "\
//! The v1 [`Agent`] handler trait and its dispatch, written from the table's `client_requests` and
//! `client_notifications` (re-exported by `crate::agent`).

use acp_proto::ext::ExtResponse;
use acp_proto::types as v1;
use acp_proto::{Answer, Call, ClientCall, ClientNotification, Notification, RpcError, V1, role};
use serde_json::Value;

use crate::agent::RequestContext;
";

const V1_CLIENT_PREAMBLE: &str = "\
//! The v1 [`Client`] handler trait and its dispatch, written from the table's `agent_requests`
//! and `agent_notifications`, and the typed calls of [`Requester`], from its `client_requests`
//! (re-exported by `crate::client`).

use acp_proto::ext::ExtResponse;
use acp_proto::types as v1;
use acp_proto::{AgentCall, AgentNotification, Answer, Call, Notification, RpcError, V1, role};
use serde_json::Value;

use crate::client::{ClientContext, Requester};
use crate::error::Error;
";

const V2_AGENT_PREAMBLE: &str = "\
//! The v2 [`Agent`] handler trait and its dispatch, written from the table's `client_requests`
//! and `client_notifications`, and the typed calls of [`AgentContext`], from its
//! `agent_requests` (re-exported by `crate::v2`).

use acp_proto::v2::{self, CancelSessionNotification, ClientNotification, Notification};
use acp_proto::{Answer, RpcError, V2, role};

use crate::error::Error;
use crate::v2::AgentContext;
";

const V2_CLIENT_PREAMBLE: &str = "\
//! The v2 [`Client`] handler trait and its dispatch, written from the table's `agent_requests`
//! and `agent_notifications`, and the typed calls of [`ClientConnection`], from its
//! `client_requests` (re-exported by `crate::v2`).

use acp_proto::v2::{self, AgentNotification, Notification};
use acp_proto::{Answer, RpcError, V2, role};

use crate::client::ClientContext;
use crate::error::Error;
use crate::v2::ClientConnection;
";

impl Spec {
    fn of(version: Version, side: Side) -> Spec {
        match (version, side) {
            (Version::V1, Side::Agent) => Spec {
                version,
                side,
                file: "v1_agent",
                what: "acp-blocking's v1 `Agent` trait and its dispatch",
                preamble: V1_AGENT_PREAMBLE,
                trait_doc: V1_AGENT_DOC,
                trait_name: "Agent",
                types: "v1",
                method_enum: "acp_proto::Method",
                context: |cx| {
                    Some(match cx {
                        Context::Request => "RequestContext",
                        Context::Prompt => "crate::agent::PromptContext",
                    })
                },
                notify_param: "agent",
                notification: ("Notification::Client", "ClientNotification"),
                extra: ext(version, "RequestContext", "agent", ("Notification::Client", "ClientNotification")),
                dispatch: Dispatch::V1 {
                    sender: ("Client", "ClientRequest"),
                    response: "AgentResponse",
                    context: "RequestContext",
                },
                calls: None,
            },
            (Version::V1, Side::Client) => Spec {
                version,
                side,
                file: "v1_client",
                what: "acp-blocking's v1 `Client` trait, its dispatch, and the typed calls of `Requester`",
                preamble: V1_CLIENT_PREAMBLE,
                trait_doc: V1_CLIENT_DOC,
                trait_name: "Client",
                types: "v1",
                method_enum: "acp_proto::Method",
                context: |cx| (cx == Context::Request).then_some("ClientContext"),
                notify_param: "client",
                notification: ("Notification::Agent", "AgentNotification"),
                extra: ext(version, "ClientContext", "client", ("Notification::Agent", "AgentNotification")),
                dispatch: Dispatch::V1 {
                    sender: ("Agent", "AgentRequest"),
                    response: "ClientResponse",
                    context: "ClientContext",
                },
                calls: Some(("Requester", None)),
            },
            (Version::V2, Side::Agent) => Spec {
                version,
                side,
                file: "v2_agent",
                what: "acp-blocking's v2 `Agent` trait, its dispatch, and the typed calls of `AgentContext`",
                preamble: V2_AGENT_PREAMBLE,
                trait_doc: V2_AGENT_DOC,
                trait_name: "Agent",
                types: "v2",
                method_enum: "v2::Method",
                context: |cx| (cx == Context::Request).then_some("AgentContext"),
                notify_param: "agent",
                notification: ("Notification::Client", "ClientNotification"),
                extra: ext(version, "AgentContext", "agent", ("Notification::Client", "ClientNotification")).and(
                    Extra {
                        methods: "/// `session/cancel` of a session: stop its work. Runs on the ordered notification\n\
                              /// thread. Default: ignored.\n\
                              fn session_cancelled(&self, notification: CancelSessionNotification) {}\n"
                            .to_owned(),
                        forward: "fn session_cancelled(&self, notification: CancelSessionNotification) {\n\
                              (**self).session_cancelled(notification)\n}\n"
                            .to_owned(),
                        arms: "Notification::Client(ClientNotification::Cancel(n)) => agent.session_cancelled(n),\n"
                            .to_owned(),
                    },
                ),
                dispatch: Dispatch::V2 {
                    name: "dispatch_agent",
                    sender: ("Client", "ClientRequest"),
                    receiver: "Agent",
                    context: "AgentContext",
                },
                calls: Some(("AgentContext", Some(("Client", "ClientResponse")))),
            },
            (Version::V2, Side::Client) => Spec {
                version,
                side,
                file: "v2_client",
                what: "acp-blocking's v2 `Client` trait, its dispatch, and the typed calls of `ClientConnection`",
                preamble: V2_CLIENT_PREAMBLE,
                trait_doc: V2_CLIENT_DOC,
                trait_name: "Client",
                types: "v2",
                method_enum: "v2::Method",
                context: |cx| (cx == Context::Request).then_some("ClientContext"),
                notify_param: "client",
                notification: ("Notification::Agent", "AgentNotification"),
                extra: ext(version, "ClientContext", "client", ("Notification::Agent", "AgentNotification")),
                dispatch: Dispatch::V2 {
                    name: "dispatch_client",
                    sender: ("Agent", "AgentRequest"),
                    receiver: "Client",
                    context: "ClientContext",
                },
                calls: Some(("ClientConnection", Some(("Agent", "AgentResponse")))),
            },
        }
    }

    /// The context type `row`'s handler gets.
    fn context_of(&self, row: &RequestRow) -> &'static str {
        (self.context)(row.context).unwrap_or_else(|| {
            panic!("`{}`: acp-blocking's {} has no `{:?}` context", row.wire, self.file, row.context)
        })
    }
}

/// The extension methods (`_`-prefixed requests and notifications, whose params and result are
/// the application's) of a handler trait whose requests get `cx`: in both versions a `Value`
/// (`null`: no params) that reaches it as an `Ext`.
fn ext(version: Version, cx: &str, param: &str, (notification, inner): (&str, &str)) -> Extra {
    let (params, value, head, arm) = match version {
        Version::V1 => (
            "Value",
            "Value",
            "/// An extension request (`_`-prefixed method). Default: `-32601`.",
            format!("{notification}({inner}::Ext(e)) => {param}.ext_notification(&e.method, e.params),\n"),
        ),
        Version::V2 => (
            "serde_json::Value",
            "serde_json::Value",
            "/// An extension request (`_`-prefixed method). Default: `-32601`.",
            format!("{notification}({inner}::Ext(e)) => {param}.ext_notification(&e.method, e.params),\n"),
        ),
    };
    Extra {
        methods: format!(
            "{head}
            fn ext_method(&self, method: &str, params: {params}, cx: &{cx}) -> Result<{value}, RpcError> {{
                Err(RpcError::method_not_found(method))
            }}

            /// An extension notification. Runs on the connection's ordered notification thread.
            fn ext_notification(&self, method: &str, params: {params}) {{}}
            "
        ),
        forward: format!(
            "fn ext_method(&self, method: &str, params: {params}, cx: &{cx}) -> Result<{value}, RpcError> {{
                (**self).ext_method(method, params, cx)
            }}

            fn ext_notification(&self, method: &str, params: {params}) {{
                (**self).ext_notification(method, params)
            }}
            "
        ),
        arms: arm,
    }
}

impl Extra {
    /// `self`'s methods, forwards and arms, then `more`'s.
    fn and(self, more: Extra) -> Extra {
        Extra {
            methods: self.methods + "\n" + &more.methods,
            forward: self.forward + "\n" + &more.forward,
            arms: self.arms + &more.arms,
        }
    }
}

/// One generated file.
fn file(spec: &Spec, table: &Table) -> String {
    let requests = table.requests_to(spec.side);
    let notifications: Vec<&NotificationRow> =
        table.notifications_to(spec.side).iter().filter(|n| n.handler.is_some()).collect();
    let mut s = out::header(spec.what, spec.version);
    s.push_str(spec.preamble);
    s.push('\n');
    handler_trait(&mut s, spec, requests, &notifications);
    forwarding(&mut s, spec, requests, &notifications);
    dispatch_notification(&mut s, spec, &notifications);
    dispatch(&mut s, spec, requests);
    typed_calls(&mut s, spec, table.requests_from(spec.side));
    s
}

/// The doc lines of a notification handler: the row's, then when it runs.
fn notification_doc(row: &NotificationRow) -> String {
    format!("{}///\n/// Runs on the connection's ordered notification thread. Default: ignored.\n", out::doc(&row.doc))
}

/// `fn name(&self, request: P, cx: &Cx) -> Result<R, RpcError>`.
fn request_signature(spec: &Spec, row: &RequestRow) -> String {
    let t = spec.types;
    format!(
        "fn {h}(&self, request: {t}::{p}, cx: &{cx}) -> Result<{t}::{r}, RpcError>",
        h = row.handler,
        p = row.params,
        r = row.result,
        cx = spec.context_of(row)
    )
}

fn notification_signature(spec: &Spec, row: &NotificationRow) -> String {
    format!("fn {}(&self, notification: {}::{})", handler(row), spec.types, row.params)
}

fn handler(row: &NotificationRow) -> &str {
    row.handler.as_deref().expect("only the rows with a handler are written")
}

fn handler_trait(s: &mut String, spec: &Spec, requests: &[RequestRow], notifications: &[&NotificationRow]) {
    s.push_str(&out::doc(spec.trait_doc));
    s.push_str(&format!("#[allow(unused_variables)]\npub trait {}: Send + Sync + 'static {{\n", spec.trait_name));
    for row in requests {
        s.push_str(&out::doc(&row.doc));
        s.push_str("///\n");
        if let Some(note) = out::gate_note(&row.gate) {
            s.push_str(&format!("/// {note}\n///\n"));
        }
        s.push_str(&format!("/// {}\n", out::default_note(row.default)));
        s.push_str(&out::cfg(&row.feature));
        s.push_str(&request_signature(spec, row));
        let t = spec.types;
        match row.default {
            Fallback::Required => s.push_str(";\n\n"),
            Fallback::MethodNotFound => s.push_str(&format!(
                " {{\n Err(RpcError::method_not_found({}::{}.wire()))\n}}\n\n",
                spec.method_enum, row.variant
            )),
            Fallback::Cancelled => s.push_str(&format!(" {{\n Ok({t}::{}::cancelled())\n}}\n\n", row.result)),
        }
    }
    for row in notifications {
        s.push_str(&notification_doc(row));
        s.push_str(&out::cfg(&row.feature));
        s.push_str(&notification_signature(spec, row));
        s.push_str(" {}\n\n");
    }
    s.push_str(&spec.extra.methods);
    s.push_str("}\n\n");
}

fn forwarding(s: &mut String, spec: &Spec, requests: &[RequestRow], notifications: &[&NotificationRow]) {
    s.push_str(
        "/// A handler shared with the rest of the program: keep a clone of the `Arc` to reach its\n\
         /// state while the connection runs.\n",
    );
    s.push_str(&format!("impl<T: {0} + ?Sized> {0} for std::sync::Arc<T> {{\n", spec.trait_name));
    for row in requests {
        s.push_str(&out::cfg(&row.feature));
        s.push_str(&request_signature(spec, row));
        s.push_str(&format!(" {{\n(**self).{}(request, cx)\n}}\n\n", row.handler));
    }
    for row in notifications {
        s.push_str(&out::cfg(&row.feature));
        s.push_str(&notification_signature(spec, row));
        s.push_str(&format!(" {{\n(**self).{}(notification)\n}}\n\n", handler(row)));
    }
    s.push_str(&spec.extra.forward);
    s.push_str("}\n\n");
}

fn dispatch_notification(s: &mut String, spec: &Spec, notifications: &[&NotificationRow]) {
    let (outer, inner) = spec.notification;
    let param = spec.notify_param;
    s.push_str(&format!(
        "/// Calls the handler of `notification` (in order, on the notification thread); the\n\
         /// notifications without a handler (the connection's own) are dropped.\n\
         pub(crate) fn dispatch_notification<H: {}>({param}: &H, notification: Notification) {{\n\
         // Some tables give one arm, some arms are unreachable under some features.\n\
         #[allow(unreachable_patterns, clippy::single_match)]\n\
         match notification {{\n",
        spec.trait_name
    ));
    s.push_str(&spec.extra.arms);
    for row in notifications {
        s.push_str(&out::cfg(&row.feature));
        s.push_str(&format!("{outer}({inner}::{}(n)) => {param}.{}(n),\n", row.variant, handler(row)));
    }
    s.push_str("_ => {}\n}\n}\n\n");
}

/// The dispatch of a side's requests: the call (a request with its typed responder) to the
/// handler method, whose result its responder turns into the answer.
fn dispatch(s: &mut String, spec: &Spec, requests: &[RequestRow]) {
    let trait_name = spec.trait_name;
    let unknown = "other => Answer::error(other.id(), RpcError::method_not_found(other.wire())),\n";
    match spec.dispatch {
        Dispatch::V1 { sender: (side, _), response, context } => {
            let receiver = response.trim_end_matches("Response");
            s.push_str(&format!(
                "/// Calls the handler method for `call`; its responder makes the answer.\n\
                 pub(crate) fn dispatch<H: {trait_name}>(handler: &H, call: Call, cx: {context}) \
                 -> Answer<role::{receiver}, V1> {{\n\
                 let call = match call {{\n\
                 Call::{side}(call) => call,\n\
                 other => return Answer::error(other.id(), RpcError::method_not_found(other.wire())),\n\
                 }};\n\
                 match call {{\n"
            ));
            for row in requests {
                s.push_str(&out::cfg(&row.feature));
                let call = format!("responder.answer(handler.{}({}, &cx))", row.handler, row.unwrap("r"));
                match row.context {
                    Context::Request => s.push_str(&format!("{side}Call::{}(r, responder) => {call},\n", row.variant)),
                    Context::Prompt => {
                        let cx = spec.context_of(row);
                        s.push_str(&format!(
                            "{side}Call::{}(r, responder) => {{\nlet cx = {cx}::new(cx, r.session_id.clone());\n{call}\n}}\n",
                            row.variant
                        ));
                    }
                }
            }
            s.push_str(&format!(
                "{side}Call::Ext(e, responder) => responder.answer(handler.ext_method(&e.method, e.params, &cx).map(ExtResponse)),\n\
                 {unknown}}}\n}}\n\n"
            ));
        }
        Dispatch::V2 { name, sender: (side, _), receiver, context } => {
            s.push_str(&format!(
                "/// Calls the handler method for `call`; its responder makes the answer.\n\
                 pub(crate) fn {name}<H: {trait_name}>(handler: &H, call: v2::Call, cx: &{context}) \
                 -> Answer<role::{receiver}, V2> {{\n\
                 match call {{\n"
            ));
            for row in requests {
                s.push_str(&out::cfg(&row.feature));
                assert_eq!(row.context, Context::Request, "`{}`: v2 has the one context", row.wire);
                s.push_str(&format!(
                    "v2::Call::{side}(v2::{side}Call::{}(r, responder)) => responder.answer(handler.{}({}, cx)),\n",
                    row.variant,
                    row.handler,
                    row.unwrap("r")
                ));
            }
            s.push_str(&format!(
                "v2::Call::{side}(v2::{side}Call::Ext(e, responder)) => \
                 responder.answer(handler.ext_method(&e.method, e.params, cx).map(acp_proto::ext::ExtResponse)),\n"
            ));
            s.push_str(&format!("{unknown}}}\n}}\n\n"));
        }
    }
}

/// The typed calls of the requests a side sends whose `call` column is `typed` (the `custom`
/// ones are written by hand beside them).
fn typed_calls(s: &mut String, spec: &Spec, requests: &[RequestRow]) {
    let Some((type_name, wrapper)) = spec.calls else { return };
    let typed: Vec<&RequestRow> = requests.iter().filter(|r| r.call == Call::Typed).collect();
    if typed.is_empty() {
        return;
    }
    let t = spec.types;
    s.push_str(&format!("impl {type_name} {{\n"));
    for row in typed {
        s.push_str(&out::doc(&row.doc));
        if let Some(note) = out::gate_note(&row.gate) {
            s.push_str(&format!("///\n/// {note}\n"));
        }
        s.push_str(&out::cfg(&row.feature));
        s.push_str(&format!(
            "pub fn {}(&self, request: {t}::{}) -> Result<{t}::{}, Error> {{\n",
            row.handler, row.params, row.result
        ));
        match wrapper {
            None => s.push_str("self.link.call_typed(request, self.timeout)\n"),
            Some((side, response)) => s.push_str(&format!(
                "match self.link.call(request.into(), self.timeout)? {{\n\
                 v2::Response::{side}(v2::{response}::{}(result)) => Ok(result),\n\
                 _ => Err(Error::UnexpectedResponse),\n\
                 }}\n",
                row.variant
            )),
        }
        s.push_str("}\n\n");
    }
    s.push_str("}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every handler of a side is written in its trait, forwarded by `Arc` and dispatched, each
    /// with its row's `cfg`; every typed row sent is a call.
    #[test]
    fn every_row_is_written_out() {
        for v in Version::ALL {
            let table = v.committed_table();
            let files = files(v, &table);
            assert_eq!(files.len(), 2);
            for ((path, source), side) in files.iter().zip([Side::Agent, Side::Client]) {
                assert!(path.starts_with(&format!("acp-blocking/src/generated/{}_", v.name())), "{path}");
                assert!(source.starts_with("// @generated by tools/acp-gen"), "{path}");
                for row in table.requests_to(side) {
                    let sig = format!("{}fn {}(&self, request: ", out::cfg(&row.feature), row.handler);
                    assert_eq!(source.matches(&sig).count(), 2, "{path}: {}", row.handler);
                    assert!(
                        source.contains(&format!("Call::{}(r, responder)", row.variant)),
                        "{path}: {}",
                        row.variant
                    );
                }
                for row in table.notifications_to(side) {
                    if let Some(h) = &row.handler {
                        let sig = format!("{}fn {h}(&self, notification: ", out::cfg(&row.feature));
                        assert_eq!(source.matches(&sig).count(), 2, "{path}: {h}");
                    }
                }
                if (v, side) != (Version::V1, Side::Agent) {
                    for row in table.requests_from(side).iter().filter(|r| r.call == Call::Typed) {
                        let call = format!("{}pub fn {}(&self, request: ", out::cfg(&row.feature), row.handler);
                        assert!(source.contains(&call), "{path}: {}", row.handler);
                    }
                }
            }
        }
    }
}
