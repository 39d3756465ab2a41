//! What acp-tokio expands the tables into (the handler traits, their dispatch and the typed calls).
//!
//! Per version, under `acp-tokio/src/generated/{v1,v2}/`: one file per side (`agent.rs`,
//! `client.rs`) with its two handler traits (`Agent` with `Send` futures and `LocalAgent` without,
//! the same methods: one per row the side receives) and their dispatch, one `macro_rules!` body
//! expanded for each (as acp-tokio's `handlers::Dispatch` and `LocalDispatch`, which the driver's
//! hand-written `SendHandlers` and `LocalHandlers` run); and `calls.rs`, the typed calls of the
//! `typed` rows (`ClientConnection<P>`'s; v2's `AgentContext`'s, where v1's `RequestContext`
//! writes its calls by hand). acp-tokio's modules re-export them under their public names. What
//! is not a row (the traits' own docs, v1's extension methods, the v2 agent's cancellation hooks)
//! is fixed text in [`fixed`].

mod fixed;

use crate::out;
use crate::table::{Call, Context, Fallback, NotificationRow, RequestRow, Side, Table, Version};
use std::fmt::Write;

/// The files written for `version`'s table: (path from the workspace root, unformatted source).
pub(crate) fn files(version: Version, table: &Table) -> Vec<(String, String)> {
    let dir = format!("acp-tokio/src/generated/{}", version.name());
    let mut files = Vec::new();
    for side in [Side::Agent, Side::Client] {
        let spec = Spec { version, side };
        files.push((format!("{dir}/{}.rs", spec.side_name()), traits_file(spec, table)));
    }
    files.push((format!("{dir}/calls.rs"), calls_file(version, table)));
    files
}

/// Which file is being written: a version's table, received by one side.
#[derive(Clone, Copy)]
struct Spec {
    version: Version,
    side: Side,
}

impl Spec {
    fn side_name(self) -> &'static str {
        match self.side {
            Side::Agent => "agent",
            Side::Client => "client",
        }
    }

    /// The protocol type (`acp_proto::protocol::*`).
    fn protocol(self) -> &'static str {
        match self.version {
            Version::V1 => "V1",
            Version::V2 => "V2",
        }
    }

    /// The module of the version's `Request`, `Response`, `Notification` and `Method`.
    fn messages(self) -> &'static str {
        match self.version {
            Version::V1 => "methods",
            Version::V2 => "v2",
        }
    }

    /// The module of the version's params and results.
    fn params(self) -> &'static str {
        match self.version {
            Version::V1 => "types",
            Version::V2 => "v2",
        }
    }

    /// The receiving side's trait name (`Agent`, `Client`), also its role (`role::Agent`).
    fn trait_name(self) -> &'static str {
        match self.side {
            Side::Agent => "Agent",
            Side::Client => "Client",
        }
    }

    /// The other side: the prefix of the enums of what this side receives (`{sender}Request`,
    /// `{sender}Notification`) and of the answers to what it sends (`{sender}Response`).
    fn sender(self) -> &'static str {
        match self.side {
            Side::Agent => "Client",
            Side::Client => "Agent",
        }
    }

    /// The context every request handler of the side gets.
    fn context(self) -> &'static str {
        match (self.version, self.side) {
            (Version::V1, Side::Agent) => "RequestContext",
            (Version::V2, Side::Agent) => "AgentContext",
            (_, Side::Client) => "ClientContext",
        }
    }
}

/// One of a side's two handler traits.
#[derive(Clone, Copy)]
struct Flavour {
    local: bool,
}

impl Flavour {
    const BOTH: [Flavour; 2] = [Flavour { local: false }, Flavour { local: true }];

    fn trait_name(self, spec: Spec) -> String {
        format!("{}{}", if self.local { "Local" } else { "" }, spec.trait_name())
    }

    /// The trait of `handlers.rs` that the dispatch of this flavour implements.
    fn dispatch(self) -> &'static str {
        if self.local { "LocalDispatch" } else { "Dispatch" }
    }

    /// The bounds of the trait before `'static`.
    fn bounds(self) -> &'static str {
        if self.local { "" } else { "Send + Sync + " }
    }

    /// The bound the handler futures get after `Future<Output = …>`.
    fn futures(self) -> &'static str {
        if self.local { "" } else { " + Send" }
    }
}

/// A side's two handler traits (`Send` and local) and their dispatch, written once for both.
fn traits_file(spec: Spec, table: &Table) -> String {
    let v = spec.version.name();
    let [send, local] = Flavour::BOTH.map(|f| f.trait_name(spec));
    let mut o = out::header(&format!("the {v} handler traits `{send}` and `{local}` and their dispatch"), spec.version);
    writeln!(
        o,
        "//! The {v} handler traits [`{send}`] and [`{local}`] (the same methods, with `Send` futures and\n\
         //! without) and their dispatch, written once for both.\n"
    )
    .unwrap();
    o += &imports(spec);
    for flavour in Flavour::BOTH {
        o += &handler_trait(spec, flavour, table);
    }
    if spec.side == Side::Client {
        writeln!(o, "impl {send} for () {{}}\n\nimpl {local} for () {{}}\n").unwrap();
    }
    o += &dispatch(spec, table);
    o
}

/// The `use` lines of a side's file: each is used whatever the features.
fn imports(spec: Spec) -> String {
    let mut o = String::from("use std::future::Future;\n\n");
    writeln!(o, "use acp_proto::protocol::{};\nuse acp_proto::role;", spec.protocol()).unwrap();
    match spec.version {
        Version::V1 => {
            o += "use acp_proto::{Answer, InboundRequest, RpcError, methods, types};\nuse serde_json::Value;\n\n"
        }
        Version::V2 => o += "use acp_proto::{Answer, InboundRequest, RpcError, v2};\n\n",
    }
    match (spec.version, spec.side) {
        (Version::V1, Side::Agent) => o += "use crate::context::{HandlerContext, RequestContext};\n",
        (Version::V2, Side::Agent) => o += "use crate::context::HandlerContext;\nuse crate::v2::AgentContext;\n",
        (_, Side::Client) => o += "use crate::context::{ClientContext, HandlerContext};\n",
    }
    o += "use crate::handle::{Done, catch_unwind, run_handler};\n\
          use crate::handlers::{Dispatch, Gate, LocalDispatch};\n\
          use crate::version::Inbound;\n\n";
    o
}

/// A handler trait: a method per request and notification row the side receives, then the
/// version's own methods.
fn handler_trait(spec: Spec, flavour: Flavour, table: &Table) -> String {
    let mut o = out::doc(fixed::trait_doc(spec.version, spec.side, flavour.local));
    writeln!(o, "pub trait {}: {}'static {{", flavour.trait_name(spec), flavour.bounds()).unwrap();
    let mut methods = Vec::new();
    for row in table.requests_to(spec.side) {
        methods.push(handler_method(spec, flavour, row));
    }
    for row in table.notifications_to(spec.side) {
        methods.extend(notification_method(spec, flavour, row));
    }
    methods.push(fixed::extra_methods(spec.version, spec.side, spec.context(), flavour.futures()));
    o += &methods.into_iter().filter(|m| !m.is_empty()).collect::<Vec<_>>().join("\n");
    o += "}\n\n";
    o
}

/// The context type a row's handler gets.
fn context_type(spec: Spec, row: &RequestRow) -> &'static str {
    match row.context {
        Context::Request => spec.context(),
        Context::Prompt => "crate::context::PromptContext",
    }
}

/// A request's handler method: its doc, gate and default notes, and its default body.
fn handler_method(spec: Spec, flavour: Flavour, row: &RequestRow) -> String {
    let (p, m) = (spec.params(), spec.messages());
    let mut o = out::doc(&row.doc);
    if let Some(gate) = out::gate_note(&row.gate) {
        writeln!(o, "///\n/// {gate}").unwrap();
    }
    writeln!(o, "///\n/// {}", out::default_note(row.default)).unwrap();
    o += &out::cfg(&row.feature);
    write!(
        o,
        "fn {h}(&self, request: {p}::{params}, cx: {cx}) -> impl Future<Output = Result<{p}::{result}, RpcError>>{send}",
        h = row.handler,
        params = row.params,
        cx = context_type(spec, row),
        result = row.result,
        send = flavour.futures(),
    )
    .unwrap();
    let answer = match row.default {
        Fallback::Required => return o + ";\n",
        Fallback::MethodNotFound => format!("Err(RpcError::method_not_found({m}::Method::{}.wire()))", row.variant),
        Fallback::Cancelled => format!("Ok({p}::{}::cancelled())", row.result),
    };
    writeln!(o, " {{\n    let _ = (request, cx);\n    std::future::ready({answer})\n}}").unwrap();
    o
}

/// A notification's handler method (ignored by default); none for a row without a handler.
fn notification_method(spec: Spec, flavour: Flavour, row: &NotificationRow) -> Option<String> {
    let handler = row.handler.as_ref()?;
    let mut o = out::doc(&row.doc);
    o += "///\n/// Default: ignored.\n";
    o += &out::cfg(&row.feature);
    writeln!(
        o,
        "fn {handler}(&self, notification: {p}::{params}) -> impl Future<Output = ()>{send} {{\n    \
             let _ = notification;\n    std::future::ready(())\n}}",
        p = spec.params(),
        params = row.params,
        send = flavour.futures(),
    )
    .unwrap();
    Some(o)
}

/// The dispatch of a side's two handler traits: one `macro_rules!` body (so that it is written,
/// and read, once), expanded for the `Send` trait as `handlers.rs`'s `Dispatch` and for the local
/// one as its `LocalDispatch`.
fn dispatch(spec: Spec, table: &Table) -> String {
    let [send, local] = Flavour::BOTH.map(|f| f.trait_name(spec));
    let (m, protocol, cx, sender, role) =
        (spec.messages(), spec.protocol(), spec.context(), spec.sender(), spec.trait_name());
    let mut o = String::new();
    writeln!(
        o,
        "/// The dispatch of both traits, written once: expanded for [`{send}`] as `Dispatch` and for\n\
         /// [`{local}`] as `LocalDispatch`.\n\
         macro_rules! dispatch {{\n\
         ($Trait:ident, $Dispatch:ident) => {{\n\
         impl<H: $Trait> $Dispatch<{protocol}, role::{role}> for H {{\n\
         async fn handle(&self, request: InboundRequest<{protocol}>, cx: HandlerContext<{protocol}, role::{role}>, \
             done: Done<{protocol}, role::{role}>, gate: Gate) {{\n\
         /// Calls the handler method for `call`; its responder makes the answer.\n\
         async fn dispatch<H: $Trait>(handler: &H, call: {m}::Call, cx: {cx}) \
             -> Answer<role::{role}, {protocol}> {{\n\
         let call = match call {{\n\
         {m}::Call::{sender}(call) => call,\n\
         other => return Answer::error(other.id(), RpcError::method_not_found(other.wire())),\n\
         }};\n\
         match call {{"
    )
    .unwrap();
    for row in table.requests_to(spec.side) {
        o += &out::cfg(&row.feature);
        write!(o, "{m}::{sender}Call::{}(r, responder) => ", row.variant).unwrap();
        match row.context {
            Context::Request => {
                writeln!(o, "responder.answer(handler.{}({}, cx).await),", row.handler, row.unwrap("r")).unwrap()
            }
            Context::Prompt => writeln!(
                o,
                "{{\n    let cx = crate::context::PromptContext::new(cx, r.session_id.clone());\n    \
                 responder.answer(handler.{}({}, cx).await)\n}}",
                row.handler,
                row.unwrap("r")
            )
            .unwrap(),
        }
    }
    o += &fixed::extra_dispatch_arms(spec.version, spec.side);
    o += "other => Answer::error(other.id(), RpcError::method_not_found(other.wire())),\n}\n}\n\n";
    match (spec.version, spec.side) {
        // A v2 agent's context waits for the answer to go out (`AgentContext::answered`).
        (Version::V2, Side::Agent) => {
            o += "let (cx, answered) = AgentContext::new(cx);\n\
                  run_handler(done, gate, dispatch(self, request.into_call(), cx)).await;\n\
                  answered.set();\n}\n\n"
        }
        _ => writeln!(o, "run_handler(done, gate, dispatch(self, request.into_call(), {cx}::new(cx))).await;\n}}\n")
            .unwrap(),
    }
    writeln!(o, "async fn notify(&self, item: Inbound<{protocol}>) {{\nlet handler = self;").unwrap();
    o += fixed::inbound(spec.version, spec.side);
    o += "match notification {\n";
    for row in table.notifications_to(spec.side) {
        o += &out::cfg(&row.feature);
        let pattern = format!("{m}::Notification::{sender}({m}::{sender}Notification::{}", row.variant);
        match &row.handler {
            Some(h) => writeln!(o, "{pattern}(n)) => {{\n    let _ = catch_unwind(handler.{h}(n)).await;\n}}").unwrap(),
            None => writeln!(o, "// The connection's own: no handler.\n{pattern}(_)) => {{}}").unwrap(),
        }
    }
    o += &fixed::extra_notify_arms(spec.version, spec.side);
    // Bound, not `_ => {}`: a match whose other arms are all feature-gated stays a match.
    o += "other => {\n    let _ = other;\n}\n}\n}\n}\n};\n}\n\n";
    for flavour in Flavour::BOTH {
        writeln!(o, "dispatch!({}, {});", flavour.trait_name(spec), flavour.dispatch()).unwrap();
    }
    o
}

/// The typed calls of a version's `typed` rows, as methods of the sending side's handle.
fn calls_file(version: Version, table: &Table) -> String {
    let v = version.name();
    let mut o = out::header(&format!("the typed calls of the {v} requests"), version);
    match version {
        Version::V1 => {
            o += "//! The typed calls of the v1 requests a client sends, as methods of `ClientConnection<V1>` (an\n\
            //! agent sends its requests with `RequestContext`'s hand-written methods).\n\n\
            use acp_proto::protocol::V1;\nuse acp_proto::types;\n\n\
            use crate::Error;\nuse crate::client::ClientConnection;\n"
        }
        Version::V2 => {
            o += "//! The typed calls of the v2 requests, as methods of the sender's handle: `ClientConnection<V2>`\n\
            //! for a client's, `AgentContext` for an agent's.\n\n\
            use acp_proto::protocol::V2;\nuse acp_proto::v2;\n\n\
            use crate::Error;\nuse crate::client::ClientConnection;\nuse crate::v2::AgentContext;\n"
        }
    }
    o += &typed_calls(Spec { version, side: Side::Client }, table);
    o += &typed_calls(Spec { version, side: Side::Agent }, table);
    o
}

/// The typed calls of the `typed` rows the side sends, as methods of the side's sending type:
/// `ClientConnection<P>` for a client, v2's `AgentContext` for an agent (v1's `RequestContext`
/// writes its calls by hand).
fn typed_calls(spec: Spec, table: &Table) -> String {
    let target = match (spec.version, spec.side) {
        (Version::V1, Side::Agent) => return String::new(),
        (Version::V1, Side::Client) => "ClientConnection<V1>",
        (Version::V2, Side::Agent) => "AgentContext",
        (Version::V2, Side::Client) => "ClientConnection<V2>",
    };
    let p = spec.params();
    // The answers come from the other side (the one that sends what `spec.side` receives).
    let answers = spec.sender();
    let mut calls = Vec::new();
    for row in table.requests_from(spec.side).iter().filter(|r| r.call == Call::Typed) {
        let mut o = out::doc(&row.doc);
        if let Some(gate) = out::gate_note(&row.gate) {
            writeln!(o, "///\n/// {gate}").unwrap();
        }
        o += &out::cfg(&row.feature);
        writeln!(
            o,
            "pub async fn {h}(&self, request: {p}::{params}) -> Result<{p}::{result}, Error> {{",
            h = row.handler,
            params = row.params,
            result = row.result
        )
        .unwrap();
        match spec.version {
            Version::V1 => o += "self.handle().request_typed(request, self.timeout()).await\n}\n",
            Version::V2 => writeln!(
                o,
                "match self.handle().request(request.into(), self.timeout()).await? {{\n\
                     v2::Response::{answers}(v2::{answers}Response::{v}(result)) => Ok(result),\n\
                     _ => Err(Error::UnexpectedResponse),\n\
                 }}\n}}",
                v = row.variant
            )
            .unwrap(),
        }
        calls.push(o);
    }
    format!("\nimpl {target} {{\n{}}}\n", calls.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_a_method_of_both_traits_and_a_typed_row_a_call() {
        for version in Version::ALL {
            let table = version.committed_table();
            let files = files(version, &table);
            assert_eq!(files.len(), 3);
            let file = |name: &str| {
                let path = format!("acp-tokio/src/generated/{}/{name}.rs", version.name());
                &files.iter().find(|(p, _)| *p == path).unwrap().1
            };
            for (side, name) in [(Side::Agent, "agent"), (Side::Client, "client")] {
                // Once in each trait, the `Send` one and the local one, and one dispatch for both.
                let source = file(name);
                for row in table.requests_to(side) {
                    let method = format!("fn {}(&self, request:", row.handler);
                    assert_eq!(source.matches(&method).count(), 2, "{}", row.wire);
                }
                for h in table.notifications_to(side).iter().filter_map(|r| r.handler.as_ref()) {
                    assert_eq!(source.matches(&format!("fn {h}(&self, notification:")).count(), 2, "{h}");
                }
                assert_eq!(source.matches("macro_rules! dispatch").count(), 1);
                assert_eq!(source.matches("\ndispatch!(").count(), 2);
            }
            let calls = file("calls");
            for row in table.client_requests.iter().filter(|r| r.call == Call::Typed) {
                assert!(calls.contains(&format!("pub async fn {}(&self, request:", row.handler)), "{}", row.wire);
            }
        }
    }
}
