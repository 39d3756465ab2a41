//! What acp-proto expands the tables into: the `Method` index enum and `METHODS` (the table as
//! data), the typed enums per side with their decoders and encoders, and the conversions into
//! the role-agnostic `Request`/`Response`/`Notification` (v1 also `TypedRequest`).
//!
//! v1 (`acp-proto/src/methods/generated.rs`) and v2 (`acp-proto/src/v2/generated.rs`) decode
//! their per-side enums differently (v1 in one pass from raw JSON; v2 from a `Value`), so each
//! has its own writer below; both enums have the same vocabulary (`method()`, `wire()`, an `Ext`
//! variant of the same extension types), and the `Method` enum, `METHODS`, the conversions and
//! the call enums are written by the same code.

use crate::out::{cfg, doc, header};
use crate::table::{NotificationRow, RequestRow, Side, Table, Version};
use std::fmt::Write;

/// The files written for `version`'s table: a module (`Method`, `METHODS`) with one file per
/// direction (that direction's request, response and notification enums and their
/// conversions), so that no file is long to read.
pub(crate) fn files(version: Version, table: &Table) -> Vec<(String, String)> {
    let dir = match version {
        Version::V1 => "acp-proto/src/methods/generated",
        Version::V2 => "acp-proto/src/v2/generated",
    };
    let mut top = header("acp-proto's `Method` enum and `METHODS`", version);
    let parent = if version == Version::V1 { "methods" } else { "v2" };
    let _ = write!(
        top,
        "//! The {v} method table expanded (see `{parent}`' docs): [`Method`] and [`METHODS`] here, the\n\
         //! typed enums of each direction in [`client_to_agent`] and [`agent_to_client`].\n\n\
         mod agent_to_client;\nmod client_to_agent;\n\npub use agent_to_client::*;\npub use client_to_agent::*;\n\n",
        v = version.name()
    );
    top.push_str(match version {
        Version::V1 => "use crate::methods::*;\n\n",
        Version::V2 => "use super::methods::*;\nuse super::*;\nuse crate::ext::ExtNotification;\nuse crate::methods::{Direction, Kind, Layer};\nuse serde::{Serialize, Serializer};\nuse serde_json::Value;\n\n",
    });
    method_enum(&mut top, version, table);
    method_rows(&mut top, version, table);
    if version == Version::V1 {
        v1_method_impl(&mut top, table);
    } else {
        let rows: Vec<_> = table
            .protocol
            .iter()
            .map(|r| (r.variant.clone(), r.params.clone(), r.wire.clone(), r.doc.clone()))
            .collect();
        v2_by_method(
            &mut top,
            "ProtocolNotification",
            "The params of a protocol-level (`$/`) notification, either side.",
            "ExtNotification",
            &rows,
        );
    }
    let mut files = vec![(format!("{dir}/mod.rs"), top)];
    for (from, to) in [(Side::Client, Side::Agent), (Side::Agent, Side::Client)] {
        let mut s = header(&format!("the {} -> {} enums of acp-proto", from.name(), to.name()), version);
        let _ = writeln!(
            s,
            "//! What the {} sends the {}: requests, their results, notifications.\n",
            from.name(),
            to.name()
        );
        direction(&mut s, version, table, from);
        files.push((format!("{dir}/{}_to_{}.rs", from.name(), to.name()), s));
    }
    files
}

/// One direction's enums (sent by `from`) and their conversions into the role-agnostic unions.
fn direction(s: &mut String, version: Version, table: &Table, from: Side) {
    let (me, peer) = if from == Side::Client { ("Client", "Agent") } else { ("Agent", "Client") };
    let requests = table.requests_from(from);
    let notifications = table.notifications_from(from);
    match version {
        Version::V1 => {
            s.push_str(
                "use crate::connection::{InboundId, Responder};\nuse crate::methods::*;\nuse serde::{Serialize, Serializer};\nuse serde_json::value::RawValue;\n\n",
            );
            v1_request_enums(s, &format!("{me}Request"), &format!("{peer}Response"), requests);
            v1_notification_enum(s, &format!("{me}Notification"), notifications);
        }
        Version::V2 => {
            s.push_str("use super::super::methods::*;\nuse super::super::wrappers::*;\nuse super::super::*;\nuse crate::connection::{InboundId, Responder};\nuse crate::ext::{ExtNotification, ExtRequest, ExtResponse};\nuse serde::{Serialize, Serializer};\nuse serde_json::Value;\n\n");
            let params: Vec<_> = requests
                .iter()
                .map(|r| (r.variant.clone(), r.payload(&r.params), r.wire.clone(), r.variant_doc()))
                .collect();
            let results: Vec<_> = requests
                .iter()
                .map(|r| (r.variant.clone(), r.payload(&r.result), r.wire.clone(), r.variant_doc()))
                .collect();
            let notes: Vec<_> = notifications
                .iter()
                .map(|r| (r.variant.clone(), r.params.clone(), r.wire.clone(), r.doc.clone()))
                .collect();
            let who = me.to_lowercase();
            let them = peer.to_lowercase();
            v2_by_method(
                s,
                &format!("{me}Request"),
                &format!("The params of a request the {who} sends."),
                "ExtRequest",
                &params,
            );
            v2_by_method(
                s,
                &format!("{peer}Response"),
                &format!("The result of a request the {who} sent (what the {them} answers)."),
                "ExtResponse",
                &results,
            );
            v2_by_method(
                s,
                &format!("{me}Notification"),
                &format!("The params of a notification the {who} sends."),
                "ExtNotification",
                &notes,
            );
        }
    }
    conversions(s, version, me, peer, requests, notifications);
    call_enum(s, me, peer, requests);
}

/// The `{me}Call` enum: each request `me` sends, with the `Responder` typed by its result, as
/// the receiver's machine hands it out; `{me}Request::into_call`, which pairs a request with
/// its handle (the machine's only); and the call's `id` and `wire`.
fn call_enum(s: &mut String, me: &str, peer: &str, rows: &[RequestRow]) {
    let (who, them) = (me.to_lowercase(), peer.to_lowercase());
    let _ = writeln!(
        s,
        "/// A request the {who} sent, as the {them} receives it: its params and the [`Responder`]\n\
         /// that answers it, typed by the request's result, so that an answer of another type\n\
         /// does not compile.\n#[derive(Debug)]\n#[non_exhaustive]\npub enum {me}Call {{"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{}{}{}({}, Responder<{}>),",
            doc(&r.variant_doc()),
            cfg(&r.feature),
            r.variant,
            r.payload(&r.params),
            r.result
        );
    }
    let ext_variant = "/// An extension request (`_`-prefixed method).\nExt(ExtRequest, Responder<ExtResponse>),";
    let ext_request = format!("{me}Request::Ext(e) => {me}Call::Ext(e, Responder::new(id)),");
    let ext_id = format!("{me}Call::Ext(_, r) => r.id(),");
    let ext_wire = format!("{me}Call::Ext(e, _) => &e.method,");
    let _ = writeln!(s, "{ext_variant}\n}}\n");
    let _ = writeln!(
        s,
        "impl {me}Request {{\n\
         /// This request with the responder of the inbound request `id`: the machine pairs them,\n\
         /// and only it, so that a responder always answers its own request.\n\
         pub(crate) fn into_call(self, id: InboundId) -> {me}Call {{\nmatch self {{"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{}{me}Request::{v}(p) => {me}Call::{v}(p, Responder::new(id)),",
            cfg(&r.feature),
            v = r.variant
        );
    }
    let _ = writeln!(
        s,
        "{ext_request}\n}}\n}}\n}}\n\n\
         impl {me}Call {{\n/// The handle of the inbound request.\npub fn id(&self) -> InboundId {{\nmatch self {{"
    );
    for r in rows {
        let _ = writeln!(s, "{}{me}Call::{}(_, r) => r.id(),", cfg(&r.feature), r.variant);
    }
    let _ = writeln!(
        s,
        "{ext_id}\n}}\n}}\n\n/// The method name on the wire.\npub fn wire(&self) -> &str {{\nmatch self {{"
    );
    for r in rows {
        let _ = writeln!(s, "{}{me}Call::{}(..) => \"{}\",", cfg(&r.feature), r.variant, r.wire);
    }
    let _ = writeln!(s, "{ext_wire}\n}}\n}}\n}}\n");
}

/// `Some("name")` or `None`, as Rust source.
fn opt_str(v: Option<&str>) -> String {
    v.map_or("None".to_owned(), |h| format!("Some(\"{h}\")"))
}

/// `&["a", "b"]`, as Rust source.
fn str_slice(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|g| format!("\"{g}\"")).collect();
    format!("&[{}]", quoted.join(", "))
}

/// One entry of a table-wide list: (variant, wire, feature).
fn all_rows(table: &Table) -> Vec<(&str, &str, &Option<String>)> {
    let none: &Option<String> = &None;
    let mut rows = Vec::new();
    for r in table.client_requests.iter().chain(&table.agent_requests) {
        rows.push((r.variant.as_str(), r.wire.as_str(), &r.feature));
    }
    for r in table.client_notifications.iter().chain(&table.agent_notifications) {
        rows.push((r.variant.as_str(), r.wire.as_str(), &r.feature));
    }
    for r in &table.protocol {
        rows.push((r.variant.as_str(), r.wire.as_str(), none));
    }
    rows
}

fn method_enum(s: &mut String, version: Version, table: &Table) {
    let docs: Vec<&str> = table
        .client_requests
        .iter()
        .chain(&table.agent_requests)
        .map(|r| r.doc.as_str())
        .chain(table.client_notifications.iter().chain(&table.agent_notifications).map(|r| r.doc.as_str()))
        .chain(table.protocol.iter().map(|r| r.doc.as_str()))
        .collect();
    match version {
        Version::V1 => s.push_str(
            "/// Every method of the table, one variant per row, in table order. Non-exhaustive: the\n\
             /// `unstable_*` features add variants, and cargo unifies features across a build, so a\n\
             /// crate's exhaustive match would break when another crate turns one on.\n\
             #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\n",
        ),
        Version::V2 => {
            s.push_str("/// A method of the v2 table.\n#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n")
        }
    }
    s.push_str("#[non_exhaustive]\npub enum Method {\n");
    for ((variant, _, feature), text) in all_rows(table).into_iter().zip(docs) {
        let _ = writeln!(s, "{}{}{variant},", doc(text), cfg(feature));
    }
    s.push_str("}\n\n");
}

fn method_rows(s: &mut String, version: Version, table: &Table) {
    match version {
        Version::V1 => s.push_str("/// The method table.\npub const METHODS: &[MethodRow] = &[\n"),
        Version::V2 => {
            s.push_str("/// Every row of the v2 method table, in table order.\npub static METHODS: &[MethodRow] = &[\n")
        }
    }
    for (direction, rows) in [("ClientToAgent", &table.client_requests), ("AgentToClient", &table.agent_requests)] {
        for r in rows {
            let _ = writeln!(
                s,
                "{}MethodRow {{ method: Method::{}, wire: \"{}\", direction: Direction::{direction}, \
                 kind: Kind::Request, params: \"{}\", result: Some(\"{}\"), gate: {}, layer: Layer::App, \
                 handler: Some(\"{}\") }},",
                cfg(&r.feature),
                r.variant,
                r.wire,
                r.params,
                r.result,
                str_slice(&r.gate),
                r.handler
            );
        }
    }
    for (direction, rows) in
        [("ClientToAgent", &table.client_notifications), ("AgentToClient", &table.agent_notifications)]
    {
        for r in rows {
            let _ = writeln!(
                s,
                "{}MethodRow {{ method: Method::{}, wire: \"{}\", direction: Direction::{direction}, \
                 kind: Kind::Notification, params: \"{}\", result: None, gate: {}, layer: Layer::{}, \
                 handler: {} }},",
                cfg(&r.feature),
                r.variant,
                r.wire,
                r.params,
                str_slice(&r.gate),
                r.layer,
                opt_str(r.handler.as_deref())
            );
        }
    }
    for r in &table.protocol {
        let _ = writeln!(
            s,
            "MethodRow {{ method: Method::{}, wire: \"{}\", direction: Direction::Both, kind: Kind::Notification, \
             params: \"{}\", result: None, gate: &[], layer: Layer::Protocol, handler: None }},",
            r.variant, r.wire, r.params
        );
    }
    s.push_str("];\n\n");
}

fn v1_method_impl(s: &mut String, table: &Table) {
    let rows = all_rows(table);
    s.push_str("impl Method {\n/// Every method, in table order.\npub const ALL: &'static [Method] = &[\n");
    for (variant, _, feature) in &rows {
        let _ = writeln!(s, "{}Method::{variant},", cfg(feature));
    }
    s.push_str("];\n\n/// The method's wire string.\npub const fn wire(self) -> &'static str {\nmatch self {\n");
    for (variant, wire, feature) in &rows {
        let _ = writeln!(s, "{}Method::{variant} => \"{wire}\",", cfg(feature));
    }
    s.push_str(
        "}\n}\n\n\
         /// Looks a wire string up in the table. A wire string is unique per direction and\n\
         /// kind; one that several rows share (`mcp/message`, `proxy/successor`) gives the\n\
         /// first row here: use [`Method::received`] to resolve it for a receiving side, and\n\
         /// [`Method::received_as`] for a side and a kind.\n\
         #[allow(unreachable_patterns)] // the shared wire string's second row\n\
         pub fn from_wire(wire: &str) -> Option<Method> {\nSome(match wire {\n",
    );
    for (variant, wire, feature) in &rows {
        let _ = writeln!(s, "{}\"{wire}\" => Method::{variant},", cfg(feature));
    }
    s.push_str("_ => return None,\n})\n}\n}\n\n");
}

/// The docs of v1's per-side enums (the schema's names for them).
fn v1_enum_doc(name: &str) -> &'static str {
    match name {
        "ClientRequest" => "A request the client sends to the agent (the schema's `ClientRequest` params).",
        "AgentResponse" => "The agent's result for a [`ClientRequest`] (the schema's `AgentResponse` results).",
        "AgentRequest" => "A request the agent sends to the client (the schema's `AgentRequest` params).",
        "ClientResponse" => "The client's result for an [`AgentRequest`] (the schema's `ClientResponse` results).",
        "ClientNotification" => "A notification the client sends to the agent (the schema's `ClientNotification`).",
        "AgentNotification" => "A notification the agent sends to the client (the schema's `AgentNotification`).",
        _ => unreachable!("one of v1's six per-side enums"),
    }
}

/// Writes `match self { Self::V(x) => <arm>, … <last> }` arms, one per row, with their `cfg`s.
fn arms(s: &mut String, rows: &[(&str, &Option<String>)], arm: impl Fn(&str) -> String) {
    for (variant, feature) in rows {
        let _ = writeln!(s, "{}{}", cfg(feature), arm(variant));
    }
}

fn v1_request_enums(s: &mut String, req: &str, resp: &str, rows: &[RequestRow]) {
    let keys: Vec<(&str, &Option<String>)> = rows.iter().map(|r| (r.variant.as_str(), &r.feature)).collect();
    let _ = writeln!(
        s,
        "/// {}\n#[derive(Debug, Clone, PartialEq)]\n#[non_exhaustive]\npub enum {req} {{",
        v1_enum_doc(req)
    );
    for r in rows {
        let _ = writeln!(s, "{}{}{}({}),", doc(&r.variant_doc()), cfg(&r.feature), r.variant, r.payload(&r.params));
    }
    s.push_str("/// An extension request (`_`-prefixed method).\nExt(ExtRequest),\n}\n\n");
    let _ = writeln!(
        s,
        "/// {}\n#[derive(Debug, Clone, PartialEq)]\n#[non_exhaustive]\npub enum {resp} {{",
        v1_enum_doc(resp)
    );
    for r in rows {
        let boxed = if r.boxed { " In a `Box`, as its request." } else { "" };
        let _ = writeln!(
            s,
            "{}/// Result of `{}`.{boxed}\n{}({}),",
            cfg(&r.feature),
            r.wire,
            r.variant,
            r.payload(&r.result)
        );
    }
    s.push_str("/// Result of an extension request.\nExt(ExtResponse),\n}\n\n");

    let _ = writeln!(
        s,
        "impl {req} {{\n/// The table row's method, or `None` for an extension request.\npub fn method(&self) -> Option<Method> {{\nmatch self {{"
    );
    arms(s, &keys, |v| format!("{req}::{v}(_) => Some(Method::{v}),"));
    let _ = writeln!(
        s,
        "{req}::Ext(_) => None,\n}}\n}}\n\n/// The method name on the wire.\npub fn wire(&self) -> &str {{\nmatch self {{"
    );
    for r in rows {
        let _ = writeln!(s, "{}{req}::{}(_) => \"{}\",", cfg(&r.feature), r.variant, r.wire);
    }
    let _ = writeln!(
        s,
        "{req}::Ext(e) => &e.method,\n}}\n}}\n\n\
         /// Decodes a request this side receives from its method name and raw params.\n\
         /// Unknown (non-extension) methods give [`DecodeError::UnknownMethod`].\n\
         pub fn decode(method: &str, params: Option<&RawValue>) -> Result<{req}, DecodeError> {{\nmatch method {{"
    );
    for r in rows {
        let _ = writeln!(s, "{}\"{}\" => decode_params(params).map({req}::{}),", cfg(&r.feature), r.wire, r.variant);
    }
    let _ = writeln!(
        s,
        "m if is_extension_name(m) => Ok({req}::Ext(ExtRequest::new(m, raw_to_value(params)?))),\n\
         m => Err(DecodeError::UnknownMethod(m.to_owned())),\n}}\n}}\n\n\
         /// Whether the params member is sent (only an extension request may have none).\n\
         pub fn has_params(&self) -> bool {{\n!matches!(self, {req}::Ext(e) if e.params.is_null())\n}}\n\n\
         /// Decodes the params of a table `method` straight from a deserializer (one pass, no\n\
         /// intermediate value). `Ok(None)` when `method` is not one of this enum's rows.\n\
         pub(crate) fn deserialize_method<'de, D: serde::Deserializer<'de>>(method: Method, d: D) -> Result<Option<{req}>, D::Error> {{\nmatch method {{"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{}Method::{v} => <{p} as serde::Deserialize>::deserialize(d).map(|p| Some({req}::{v}({w}))),",
            cfg(&r.feature),
            v = r.variant,
            p = r.params,
            w = r.wrap("p")
        );
    }
    let _ = writeln!(
        s,
        "_ => Ok(None),\n}}\n}}\n}}\n\nimpl Serialize for {req} {{\n/// Writes the params object.\nfn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {{\nmatch self {{"
    );
    arms(s, &keys, |v| format!("{req}::{v}(p) => p.serialize(s),"));
    let _ = write!(s, "{req}::Ext(e) => e.params.serialize(s),\n}}\n}}\n}}\n\n");

    let _ = writeln!(
        s,
        "impl {resp} {{\n/// The table row's method, or `None` for an extension result.\npub fn method(&self) -> Option<Method> {{\nmatch self {{"
    );
    arms(s, &keys, |v| format!("{resp}::{v}(_) => Some(Method::{v}),"));
    let _ = writeln!(
        s,
        "{resp}::Ext(_) => None,\n}}\n}}\n\n\
         /// Decodes the raw result of a request sent with `method` (`None`: extension).\n\
         pub fn decode_result(method: Option<Method>, result: &RawValue) -> Result<{resp}, DecodeError> {{\nmatch method {{"
    );
    arms(s, &keys, |v| format!("Some(Method::{v}) => decode_result(result).map({resp}::{v}),"));
    let _ = writeln!(
        s,
        "None => serde_json::from_str(result.get()).map(|v| {resp}::Ext(ExtResponse(v))).map_err(|e| DecodeError::Invalid(e.to_string())),\n\
         Some(other) => Err(DecodeError::UnknownMethod(other.wire().to_owned())),\n}}\n}}\n}}\n\n\
         impl Serialize for {resp} {{\n/// Writes the result object.\nfn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {{\nmatch self {{"
    );
    arms(s, &keys, |v| format!("{resp}::{v}(r) => r.serialize(s),"));
    let _ = write!(s, "{resp}::Ext(e) => e.serialize(s),\n}}\n}}\n}}\n\n");
}

fn v1_notification_enum(s: &mut String, not: &str, rows: &[NotificationRow]) {
    let keys: Vec<(&str, &Option<String>)> = rows.iter().map(|r| (r.variant.as_str(), &r.feature)).collect();
    let _ = writeln!(
        s,
        "/// {}\n#[derive(Debug, Clone, PartialEq)]\n#[non_exhaustive]\npub enum {not} {{",
        v1_enum_doc(not)
    );
    for r in rows {
        let _ = writeln!(s, "{}{}{}({}),", doc(&r.doc), cfg(&r.feature), r.variant, r.params);
    }
    s.push_str("/// An extension notification (`_`-prefixed method).\nExt(ExtNotification),\n}\n\n");
    let _ = writeln!(
        s,
        "impl {not} {{\n/// The table row's method, or `None` for an extension notification.\npub fn method(&self) -> Option<Method> {{\nmatch self {{"
    );
    arms(s, &keys, |v| format!("{not}::{v}(_) => Some(Method::{v}),"));
    let _ = writeln!(
        s,
        "{not}::Ext(_) => None,\n}}\n}}\n\n/// The method name on the wire.\npub fn wire(&self) -> &str {{\nmatch self {{"
    );
    for r in rows {
        let _ = writeln!(s, "{}{not}::{}(_) => \"{}\",", cfg(&r.feature), r.variant, r.wire);
    }
    let _ = writeln!(
        s,
        "{not}::Ext(e) => &e.method,\n}}\n}}\n\n\
         /// Decodes a notification this side receives.\n\
         pub fn decode(method: &str, params: Option<&RawValue>) -> Result<{not}, DecodeError> {{\nmatch method {{"
    );
    for r in rows {
        let _ = writeln!(s, "{}\"{}\" => decode_params(params).map({not}::{}),", cfg(&r.feature), r.wire, r.variant);
    }
    let _ = writeln!(
        s,
        "m if is_extension_name(m) => Ok({not}::Ext(ExtNotification::new(m, raw_to_value(params)?))),\n\
         m => Err(DecodeError::UnknownMethod(m.to_owned())),\n}}\n}}\n\n\
         /// Whether the params member is sent (only an extension notification may have none).\n\
         pub fn has_params(&self) -> bool {{\n!matches!(self, {not}::Ext(e) if e.params.is_null())\n}}\n\n\
         /// Decodes the params of a table `method` straight from a deserializer. `Ok(None)`\n\
         /// when `method` is not one of this enum's rows.\n\
         pub(crate) fn deserialize_method<'de, D: serde::Deserializer<'de>>(method: Method, d: D) -> Result<Option<{not}>, D::Error> {{\nmatch method {{"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{}Method::{v} => <{p} as serde::Deserialize>::deserialize(d).map(|p| Some({not}::{v}(p))),",
            cfg(&r.feature),
            v = r.variant,
            p = r.params
        );
    }
    let _ = writeln!(
        s,
        "_ => Ok(None),\n}}\n}}\n}}\n\nimpl Serialize for {not} {{\n/// Writes the params object.\nfn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {{\nmatch self {{"
    );
    arms(s, &keys, |v| format!("{not}::{v}(p) => p.serialize(s),"));
    let _ = write!(s, "{not}::Ext(e) => e.params.serialize(s),\n}}\n}}\n}}\n\n");
}

/// A v2 enum of typed params (or results) keyed by method, with an `Ext` variant for the methods
/// outside the table (extensions), kept verbatim: the same as v1's, with the same types (`ext`
/// names which: `ExtRequest`, `ExtNotification` or `ExtResponse`). A result names no method, so
/// a result enum has no `wire`.
fn v2_by_method(s: &mut String, name: &str, what: &str, ext: &str, rows: &[(String, String, String, String)]) {
    let result = ext == "ExtResponse";
    let _ = writeln!(s, "/// {what}\n#[derive(Debug, Clone, PartialEq)]\n#[non_exhaustive]\npub enum {name} {{");
    for (variant, ty, _, text) in rows {
        let _ = writeln!(s, "{}{variant}({ty}),", doc(text));
    }
    let _ = writeln!(
        s,
        "/// An extension (a `_`-prefixed method; decoded, any method outside the v2 table), kept\n\
         /// verbatim: v1's extension type.\nExt({ext}),\n}}\n\n\
         impl {name} {{\n/// The table row's method, or `None` for an extension.\npub fn method(&self) -> Option<Method> {{\nmatch self {{"
    );
    for (variant, _, _, _) in rows {
        let _ = writeln!(s, "{name}::{variant}(_) => Some(Method::{variant}),");
    }
    let _ = writeln!(s, "{name}::Ext(_) => None,\n}}\n}}\n");
    if !result {
        let _ = writeln!(s, "/// The method name on the wire.\npub fn wire(&self) -> &str {{\nmatch self {{");
        for (variant, _, wire, _) in rows {
            let _ = writeln!(s, "{name}::{variant}(_) => \"{wire}\",");
        }
        let _ = writeln!(s, "{name}::Ext(e) => &e.method,\n}}\n}}\n");
    }
    let _ = writeln!(
        s,
        "/// Decodes `value` as the params (or result) of `method`: typed for a method of the\n\
         /// table (an error if they do not decode), kept verbatim otherwise.\n\
         pub fn decode(method: &str, value: Option<Value>) -> Result<Self, DecodeError> {{\nmatch method {{"
    );
    for (variant, _, wire, _) in rows {
        let _ = writeln!(s, "\"{wire}\" => typed(value).map({name}::{variant}),");
    }
    // An absent value is `null`, as in v1's extension types.
    let (ext_value, has_value, write_ext) = if result {
        ("ExtResponse(value.unwrap_or_default())".to_owned(), "true".to_owned(), "e.serialize(s)")
    } else {
        (
            format!("{ext}::new(method, value.unwrap_or_default())"),
            format!("match self {{\n{name}::Ext(e) => !e.params.is_null(),\n_ => true,\n}}"),
            "e.params.serialize(s)",
        )
    };
    let _ = writeln!(
        s,
        "_ => Ok({name}::Ext({ext_value})),\n}}\n}}\n\n\
         /// Whether there is a value to write (an extension's params may be absent, `null`; a\n\
         /// result always has one).\npub fn has_value(&self) -> bool {{\n{has_value}\n}}\n}}\n\n\
         impl Serialize for {name} {{\nfn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {{\nmatch self {{"
    );
    for (variant, _, _, _) in rows {
        let _ = writeln!(s, "{name}::{variant}(p) => p.serialize(s),");
    }
    let _ = write!(s, "{name}::Ext(e) => {write_ext},\n}}\n}}\n}}\n\n");
    // A result's envelope writes no method: `wire` is for the requests and notifications.
    let wire =
        if result { format!("{name}::method(self).map_or(\"\", Method::wire)") } else { format!("{name}::wire(self)") };
    let _ = write!(
        s,
        "#[cfg(any(test, feature = \"test-exports\"))]\n\
         impl crate::v2::envelope::Keyed for {name} {{\n\
         fn method(&self) -> &str {{\n{wire}\n}}\n\n\
         fn has_value(&self) -> bool {{\n{name}::has_value(self)\n}}\n\n\
         fn decode(method: &str, value: Option<Value>) -> Result<Self, DecodeError> {{\n{name}::decode(method, value)\n}}\n}}\n\n"
    );
}

/// `From` every params and result type of one direction into its side's enum (`ClientRequest`,
/// `AgentResponse`, …) and into the role-agnostic `Request`/`Response`/`Notification`, the same
/// for both versions; and (v1) `TypedRequest`, which names each params type's result type.
fn conversions(
    s: &mut String,
    version: Version,
    side: &str,
    other: &str,
    requests: &[RequestRow],
    notifications: &[NotificationRow],
) {
    for r in requests {
        let _ = write!(
            s,
            "{c}impl From<{p}> for {side}Request {{\nfn from(p: {p}) -> {side}Request {{\n{side}Request::{v}({wp})\n}}\n}}\n\n\
             {c}impl From<{r}> for {other}Response {{\nfn from(r: {r}) -> {other}Response {{\n{other}Response::{v}({wr})\n}}\n}}\n\n",
            c = cfg(&r.feature),
            p = r.params,
            r = r.result,
            v = r.variant,
            wp = r.wrap("p"),
            wr = r.wrap("r")
        );
        let _ = write!(
            s,
            "{c}impl From<{p}> for Request {{\nfn from(p: {p}) -> Request {{\nRequest::{side}({side}Request::{v}({wp}))\n}}\n}}\n\n\
             {c}impl From<{r}> for Response {{\nfn from(r: {r}) -> Response {{\nResponse::{other}({other}Response::{v}({wr}))\n}}\n}}\n\n",
            c = cfg(&r.feature),
            p = r.params,
            r = r.result,
            v = r.variant,
            wp = r.wrap("p"),
            wr = r.wrap("r")
        );
        if version == Version::V1 {
            let _ = write!(
                s,
                "{c}impl TypedRequest for {p} {{\ntype Result = {r};\nfn result(response: Response) -> Option<{r}> {{\n\
                 match response {{\nResponse::{other}({other}Response::{v}(r)) => Some({u}),\n_ => None,\n}}\n}}\n}}\n\n",
                c = cfg(&r.feature),
                p = r.params,
                r = r.result,
                v = r.variant,
                u = r.unwrap("r")
            );
        }
    }
    for r in notifications {
        let _ = write!(
            s,
            "{c}impl From<{p}> for {side}Notification {{\nfn from(p: {p}) -> {side}Notification {{\n{side}Notification::{v}(p)\n}}\n}}\n\n",
            c = cfg(&r.feature),
            p = r.params,
            v = r.variant
        );
        let _ = write!(
            s,
            "{c}impl From<{p}> for Notification {{\nfn from(p: {p}) -> Notification {{\nNotification::{side}({side}Notification::{v}(p))\n}}\n}}\n\n",
            c = cfg(&r.feature),
            p = r.params,
            v = r.variant
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request row is a variant of its sender's call enum, with the responder of its own
    /// result type, and the machine pairs each request with its handle in `into_call`.
    #[test]
    fn every_request_is_a_call_with_the_responder_of_its_result() {
        for v in Version::ALL {
            let table = v.committed_table();
            let source: String = files(v, &table).into_iter().map(|(_, s)| s).collect();
            for (sender, rows) in [("Client", &table.client_requests), ("Agent", &table.agent_requests)] {
                assert!(source.contains(&format!("pub enum {sender}Call {{")), "{}: {sender}Call", v.name());
                for r in rows.iter() {
                    let variant = format!("{}({}, Responder<{}>),", r.variant, r.payload(&r.params), r.result);
                    assert!(source.contains(&variant), "{}: {variant}", v.name());
                    let paired =
                        format!("{sender}Request::{v}(p) => {sender}Call::{v}(p, Responder::new(id)),", v = r.variant);
                    assert!(source.contains(&paired), "{}: {paired}", v.name());
                }
            }
        }
    }

    /// A boxed row (`initialize`, in both tables) is held in a `Box` by the enums, and every
    /// conversion in or out takes or gives the type itself.
    #[test]
    fn a_boxed_row_is_boxed_in_the_enums_only() {
        for v in Version::ALL {
            let table = v.committed_table();
            let init = table.client_requests.iter().find(|r| r.wire == "initialize").unwrap();
            assert!(init.boxed, "{}: initialize is boxed", v.name());
            let source: String = files(v, &table).into_iter().map(|(_, s)| s).collect();
            for expected in [
                "Initialize(Box<InitializeRequest>),",
                "Initialize(Box<InitializeResponse>),",
                "AgentResponse::Initialize(Box::new(r))",
                "ClientRequest::Initialize(Box::new(p))",
                "Initialize(Box<InitializeRequest>, Responder<InitializeResponse>),",
            ] {
                assert!(source.contains(expected), "{}: {expected}", v.name());
            }
            if v == Version::V1 {
                assert!(source.contains("Response::Agent(AgentResponse::Initialize(r)) => Some(*r),"));
            }
            let plain = table.client_requests.iter().find(|r| !r.boxed).unwrap();
            assert!(source.contains(&format!("{}({}),", plain.variant, plain.params)), "{}", plain.variant);
        }
    }
}
