use std::collections::BTreeSet;

use serde_json::Value;
use serde_json::value::RawValue;

use super::*;
use crate::Side;
use crate::spec::{read_json, spec_dir};

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

/// Whether any `unstable_*` feature is on: the table then follows `meta.unstable.json` and the
/// rows follow `schema.unstable.json`.
const UNSTABLE: bool = cfg!(any(
    feature = "unstable_agent_skills",
    feature = "unstable_auth_status",
    feature = "unstable_end_turn_token_usage",
    feature = "unstable_llm_providers",
    feature = "unstable_mcp_over_acp",
    feature = "unstable_prompt_suggestions",
    feature = "unstable_proxy_chains",
    feature = "unstable_session_archive",
    feature = "unstable_session_cursors",
    feature = "unstable_session_fork",
    feature = "unstable_session_options",
    feature = "unstable_session_set_title",
    feature = "unstable_session_status",
    feature = "unstable_speed_config_category",
));

/// The schema the table is checked against: `schema.unstable.json` with any unstable feature.
fn schema_file() -> &'static str {
    if UNSTABLE { "schema.unstable.json" } else { "schema.json" }
}

/// The unstable methods of `meta.unstable.json` that have no row yet (with the feature that
/// will add each, as upstream names it), per `meta.unstable.json` key. With every feature on
/// (`unstable`) the table plus this list must equal `meta.unstable.json` exactly, so adding a
/// row without taking it off this list (or the reverse) fails the test.
const NOT_YET: &[(&str, &str, &str)] = &[];

/// The schema's side of the proxy-chains methods (`x-side: "proxy"`, `proxyMethods` in
/// `meta.unstable.json`). On a conductor–proxy connection the conductor is the client side and
/// the proxy the agent side: `proxy/initialize` is a client → agent request; `proxy/successor`
/// runs both ways as request and notification (four rows on one wire string, told apart by
/// the receiving side and the kind, see `Method::received_as`).
const PROXY_PREFIX: &str = "proxy/";

/// The proxy's own rows carry wrappers of the schema's types (one params type per row in the
/// typed layer): Rust name, schema name.
const SCHEMA_NAMES: &[(&str, &str)] = &[
    ("ProxyForwardRequest", "ProxySuccessorRequest"),
    ("ProxyForwardResponse", "ProxySuccessorResponse"),
    ("ProxyForwardNotification", "ProxySuccessorNotification"),
];

fn schema_name(rust: &str) -> &str {
    SCHEMA_NAMES.iter().find(|(r, _)| *r == rust).map_or(rust, |(_, s)| s)
}

/// Unstable rows without a gate: the schema gives their receiver no capability for them. The
/// client receives `mcp/message` requests for the ACP-transport MCP servers it declared itself.
/// The proxy-chains rows have none either: the conductor opens the connection with
/// `proxy/initialize` (the method itself says "you have a successor"), and `proxy/successor`
/// only wraps messages between conductor and proxy (listed once per row: request, then
/// notification, in table order).
const UNGATED_UNSTABLE: &[(&str, Direction)] = &[
    ("proxy/initialize", Direction::ClientToAgent),
    ("proxy/successor", Direction::ClientToAgent),
    ("mcp/message", Direction::AgentToClient),
    ("proxy/successor", Direction::AgentToClient),
    ("proxy/successor", Direction::ClientToAgent),
    ("proxy/successor", Direction::AgentToClient),
];

#[test]
fn table_equals_meta_json() {
    let dir = spec_dir("table_equals_meta_json");
    let meta = read_json(&dir, "meta.json");
    let wires = |meta: &Value, key: &str| -> BTreeSet<String> {
        meta[key]
            .as_object()
            .map_or_else(BTreeSet::new, |o| o.values().map(|v| v.as_str().unwrap().to_owned()).collect())
    };
    let rows = |dir: Direction| -> BTreeSet<String> {
        METHODS
            .iter()
            .filter(|r| r.direction == dir && !r.wire.starts_with(PROXY_PREFIX))
            .map(|r| r.wire.to_owned())
            .collect()
    };
    let stable = |dir: Direction| -> BTreeSet<String> {
        let key = match dir {
            Direction::ClientToAgent => "agentMethods",
            Direction::AgentToClient => "clientMethods",
            Direction::Both => "protocolMethods",
        };
        wires(&meta, key)
    };
    if !UNSTABLE {
        assert_eq!(rows(Direction::ClientToAgent), stable(Direction::ClientToAgent), "methods the agent handles");
        assert_eq!(rows(Direction::AgentToClient), stable(Direction::AgentToClient), "methods the client handles");
        assert_eq!(rows(Direction::Both), stable(Direction::Both), "protocol methods");
        assert_eq!(METHODS.len(), 25);
        println!("method table: {} rows equal meta.json", METHODS.len());
        return;
    }
    let unstable_meta = read_json(&dir, "meta.unstable.json");
    for (key, dir) in [
        ("agentMethods", Direction::ClientToAgent),
        ("clientMethods", Direction::AgentToClient),
        ("protocolMethods", Direction::Both),
    ] {
        let rows = rows(dir);
        // The stable rows are always there; every extra row is an unstable method.
        let stable = stable(dir);
        let missing: Vec<_> = stable.difference(&rows).collect();
        assert!(missing.is_empty(), "{key}: stable rows missing from the table: {missing:?}");
        let all = wires(&unstable_meta, key);
        assert!(
            rows.is_subset(&all),
            "{key}: rows not in meta.unstable.json: {:?}",
            rows.difference(&all).collect::<Vec<_>>()
        );
        let pending: BTreeSet<String> =
            NOT_YET.iter().filter(|(k, ..)| *k == key).map(|(_, w, _)| (*w).to_owned()).collect();
        let existing: Vec<_> = rows.intersection(&pending).collect();
        assert!(existing.is_empty(), "{key}: NOT_YET lists rows that exist: {existing:?}");
        if cfg!(feature = "unstable") {
            let union: BTreeSet<String> = rows.union(&pending).cloned().collect();
            assert_eq!(union, all, "{key}: rows + NOT_YET must equal meta.unstable.json");
        }
    }
    let proxy = wires(&unstable_meta, "proxyMethods");
    assert!(proxy.iter().all(|w| w.starts_with(PROXY_PREFIX)), "{proxy:?}");
    let proxy_rows: BTreeSet<String> =
        METHODS.iter().filter(|r| r.wire.starts_with(PROXY_PREFIX)).map(|r| r.wire.to_owned()).collect();
    let pending_proxy: BTreeSet<String> =
        NOT_YET.iter().filter(|(k, ..)| *k == "proxyMethods").map(|(_, w, _)| (*w).to_owned()).collect();
    assert!(proxy_rows.is_disjoint(&pending_proxy), "proxyMethods: NOT_YET lists rows that exist");
    if cfg!(feature = "unstable") {
        let union: BTreeSet<String> = proxy_rows.union(&pending_proxy).cloned().collect();
        assert_eq!(union, proxy, "proxyMethods: rows + NOT_YET must equal meta.unstable.json");
    }
    println!(
        "method table: {} rows ({} stable, {} unstable), {} unstable methods not yet rows",
        METHODS.len(),
        25,
        METHODS.len() - 25,
        NOT_YET.len()
    );
}

/// The schema names each method's params and result types with `x-method` and `x-side`.
#[test]
fn row_types_are_the_schema_types() {
    let dir = spec_dir("row_types_are_the_schema_types");
    let schema = read_json(&dir, schema_file());
    let defs = schema["$defs"].as_object().unwrap();
    for row in METHODS {
        let receiver = match row.direction {
            _ if row.wire.starts_with(PROXY_PREFIX) => "proxy",
            Direction::ClientToAgent => "agent",
            Direction::AgentToClient => "client",
            Direction::Both => "protocol",
        };
        // By wire and receiving side: `mcp/message` names a request the client handles and a
        // notification the agent handles. The proxy methods' types are all `x-side: "proxy"`,
        // told apart by kind (`ProxySuccessorRequest`, `ProxySuccessorNotification`).
        let named: Vec<&String> = defs
            .iter()
            .filter(|(_, d)| d.get("x-method").and_then(Value::as_str) == Some(row.wire))
            .filter(|(_, d)| d.get("x-side").and_then(Value::as_str) == Some(receiver))
            .map(|(name, _)| name)
            .collect();
        let suffix = match row.kind {
            Kind::Request => "Request",
            Kind::Notification => "Notification",
        };
        let params = named
            .iter()
            .find(|n| n.ends_with(suffix))
            .unwrap_or_else(|| panic!("{}: no params type in schema", row.wire));
        assert_eq!(schema_name(row.params), params.as_str(), "{}", row.wire);
        let result = named.iter().find(|n| n.ends_with("Response")).map(|s| s.as_str());
        let result = if row.kind == Kind::Request { result } else { None };
        assert_eq!(row.result.map(schema_name), result, "{}", row.wire);
        // x-side names the side that handles the method.
        let side = defs[schema_name(row.params)]["x-side"].as_str().unwrap();
        assert_eq!(side, receiver, "{}", row.wire);
    }
}

/// Every gate path names a real field of the receiver's capability definition (following
/// `$ref`s), whose final value is a boolean or a capability object.
#[test]
fn gate_paths_resolve_to_capability_fields() {
    let dir = spec_dir("gate_paths_resolve_to_capability_fields");
    let schema = read_json(&dir, schema_file());
    let defs = &schema["$defs"];
    let resolve = |node: &Value| -> Value {
        let mut node = node.clone();
        loop {
            let r = node
                .get("$ref")
                .or_else(|| node.get("allOf").and_then(|a| a[0].get("$ref")))
                .or_else(|| node.get("anyOf").and_then(|a| a[0].get("$ref")))
                .and_then(Value::as_str)
                .map(str::to_owned);
            match r {
                Some(r) => node = defs[r.trim_start_matches("#/$defs/")].clone(),
                None => return node,
            }
        }
    };
    let mut checked = 0;
    for row in METHODS.iter().filter(|r| !r.gate.is_empty()) {
        let root = match row.direction {
            Direction::ClientToAgent => "AgentCapabilities",
            Direction::AgentToClient => "ClientCapabilities",
            Direction::Both => panic!("protocol rows are never gated"),
        };
        let mut node = defs[root].clone();
        for (i, seg) in row.gate.iter().enumerate() {
            let field = node["properties"]
                .get(*seg)
                .unwrap_or_else(|| panic!("{}: `{seg}` is not a field of {root} path", row.wire));
            node = resolve(field);
            if i + 1 == row.gate.len() {
                let leaf_ok = node["type"] == "boolean" || node["type"] == "object";
                assert!(leaf_ok, "{}: gate leaf is {node}", row.wire);
            }
        }
        checked += 1;
    }
    // The gate's sender rules name a field of the sender's own capability definition.
    let mut sender_gated = 0;
    for row in METHODS.iter().filter(|r| !crate::gate::sender_capability(r.method).is_empty()) {
        let root = match row.direction {
            Direction::ClientToAgent => "ClientCapabilities",
            Direction::AgentToClient => "AgentCapabilities",
            Direction::Both => panic!("protocol rows have no sender rule"),
        };
        let mut node = defs[root].clone();
        for seg in crate::gate::sender_capability(row.method) {
            let field = node["properties"]
                .get(*seg)
                .unwrap_or_else(|| panic!("{}: `{seg}` is not a field of the sender's {root}", row.wire));
            node = resolve(field);
        }
        assert_eq!(node["type"], "object", "{}: sender rule leaf is {node}", row.wire);
        sender_gated += 1;
    }
    // Every unstable row (a row `meta.json` does not have) is gated by a capability: the
    // receiver's, or (a sender rule) the sender's own; but the rows in UNGATED_UNSTABLE, for which
    // the schema gives no capability at all.
    let stable_meta = read_json(&dir, "meta.json").to_string();
    let unstable = |r: &&MethodRow| !stable_meta.contains(&format!("\"{}\"", r.wire));
    let ungated: Vec<(&str, Direction)> = METHODS
        .iter()
        .filter(unstable)
        .filter(|r| r.gate.is_empty() && crate::gate::sender_capability(r.method).is_empty())
        .map(|r| (r.wire, r.direction))
        .collect();
    let expected: Vec<(&str, Direction)> = UNGATED_UNSTABLE
        .iter()
        .copied()
        .filter(|(w, d)| METHODS.iter().any(|r| r.wire == *w && r.direction == *d))
        .collect();
    assert_eq!(ungated, expected, "every unstable row is gated, but UNGATED_UNSTABLE");
    assert_eq!(checked + sender_gated, 15 + METHODS.iter().filter(unstable).count() - ungated.len());
}

#[test]
fn method_index_matches_table() {
    for (i, m) in Method::ALL.iter().enumerate() {
        assert_eq!(*m as usize, i);
        assert_eq!(m.row().method, *m);
        let receiver = if m.row().received_by(Side::Agent) { Side::Agent } else { Side::Client };
        assert_eq!(Method::received_as(m.wire(), receiver, m.row().kind), Some(*m));
        assert_eq!(Method::received(m.wire(), receiver).map(|r| r.row().direction), Some(m.row().direction));
    }
    assert_eq!(Method::from_wire("nope"), None);
    assert!(Method::Initialize.row().received_by(Side::Agent));
    assert!(!Method::Initialize.row().received_by(Side::Client));
    assert!(Method::CancelRequest.row().received_by(Side::Client));
}

#[test]
fn decode_by_side() {
    let p = raw(r#"{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}"#);
    let req = Request::decode(Side::Agent, "session/prompt", Some(&p)).unwrap();
    assert_eq!(req.method(), Some(Method::Prompt));
    assert_eq!(req.session_id().map(SessionId::as_str), Some("s1"));
    // The client does not handle session/prompt.
    assert_eq!(
        Request::decode(Side::Client, "session/prompt", Some(&p)),
        Err(DecodeError::UnknownMethod("session/prompt".into()))
    );
    let bad = raw(r#"{"prompt":[]}"#);
    match Request::decode(Side::Agent, "session/prompt", Some(&bad)) {
        Err(DecodeError::Invalid(reason)) => assert!(reason.contains("sessionId"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // Absent params decode as {} (all fields of LogoutRequest are optional).
    assert!(matches!(Request::decode(Side::Agent, "logout", None), Ok(Request::Client(ClientRequest::Logout(_)))));
}

#[test]
fn extensions_pass_through_raw() {
    let p = raw(r#"{"language":"rust","n":[1,2]}"#);
    let req = ClientRequest::decode("_zed.dev/workspace/buffers", Some(&p)).unwrap();
    assert_eq!(req.method(), None);
    assert_eq!(req.wire(), "_zed.dev/workspace/buffers");
    assert_eq!(serde_json::to_string(&req).unwrap(), r#"{"language":"rust","n":[1,2]}"#);
    let bare = AgentNotification::decode("_x", None).unwrap();
    assert!(!bare.has_params());
    let res = AgentResponse::decode_result(None, &raw(r#"[1,"a"]"#)).unwrap();
    assert_eq!(serde_json::to_string(&res).unwrap(), r#"[1,"a"]"#);
}

#[test]
fn results_decode_by_the_requested_method() {
    let r = raw(r#"{"stopReason":"end_turn"}"#);
    let res = Response::decode_result(Side::Client, Some(Method::Prompt), &r).unwrap();
    assert_eq!(res.method(), Some(Method::Prompt));
    assert_eq!(serde_json::to_string(&res).unwrap(), r#"{"stopReason":"end_turn"}"#);
    // A null result reads as {} for results without required fields.
    assert!(ClientResponse::decode_result(Some(Method::WriteTextFile), &raw("null")).is_ok());
    assert!(ClientResponse::decode_result(Some(Method::ReadTextFile), &raw("null")).is_err());
    // A method of the other side is refused.
    assert!(ClientResponse::decode_result(Some(Method::Prompt), &r).is_err());
}

/// The wire string both sides handle resolves by the receiving side.
#[cfg(feature = "unstable_mcp_over_acp")]
#[test]
fn a_shared_wire_string_resolves_by_the_receiving_side() {
    assert_eq!(Method::received("mcp/message", Side::Client), Some(Method::McpMessage));
    assert_eq!(Method::received("mcp/message", Side::Agent), Some(Method::McpMessageNotification));
    assert_eq!(Method::McpMessage.wire(), Method::McpMessageNotification.wire());
    let params = RawValue::from_string(r#"{"serverId":"s","requestId":"r","method":"ping"}"#.into()).unwrap();
    assert!(matches!(
        Notification::decode(Side::Agent, "mcp/message", Some(&params)),
        Ok(Notification::Client(ClientNotification::McpMessageNotification(_)))
    ));
    assert!(matches!(
        Request::decode(Side::Client, "mcp/message", Some(&params)),
        Ok(Request::Agent(AgentRequest::McpMessage(_)))
    ));
}

/// `proxy/successor` is a request and a notification in each direction: resolved by the
/// receiving side and the kind.
#[cfg(feature = "unstable_proxy_chains")]
#[test]
fn proxy_successor_resolves_by_side_and_kind() {
    use Kind::{Notification as N, Request as R};
    let w = "proxy/successor";
    assert_eq!(Method::received_as(w, Side::Agent, R), Some(Method::ProxySuccessor));
    assert_eq!(Method::received_as(w, Side::Agent, N), Some(Method::ProxySuccessorNotification));
    assert_eq!(Method::received_as(w, Side::Client, R), Some(Method::ProxySuccessorForward));
    assert_eq!(Method::received_as(w, Side::Client, N), Some(Method::ProxySuccessorForwardNotification));
    assert_eq!(Method::received_as("proxy/initialize", Side::Agent, R), Some(Method::InitializeProxy));
    assert_eq!(Method::received_as("proxy/initialize", Side::Client, R), None);
    let params = raw(r#"{"method":"session/update","params":{"sessionId":"s"}}"#);
    assert!(matches!(
        Notification::decode(Side::Agent, w, Some(&params)),
        Ok(Notification::Client(ClientNotification::ProxySuccessorNotification(_)))
    ));
    assert!(matches!(
        Request::decode(Side::Client, w, Some(&params)),
        Ok(Request::Agent(AgentRequest::ProxySuccessorForward(_)))
    ));
}

/// An enum is as large as its largest variant, and every message of it is moved at that size
/// (into the event queue, out of it, through the adapters' channels). `initialize`'s
/// capabilities made every v1 client request 744 bytes where a prompt needs 72; its rows are
/// `boxed` (see the column's note at the head of `methods/v1.toml`), so the handshake's messages
/// no longer set the size of the enums that carry every other message.
#[test]
fn the_handshake_does_not_set_the_size_of_every_message() {
    use crate::types::{InitializeRequest, InitializeResponse};
    use std::mem::size_of;
    let v1 = [
        ("ClientRequest", size_of::<ClientRequest>(), size_of::<InitializeRequest>()),
        ("AgentResponse", size_of::<AgentResponse>(), size_of::<InitializeResponse>()),
        ("Request", size_of::<Request>(), size_of::<InitializeRequest>()),
        ("Response", size_of::<Response>(), size_of::<InitializeResponse>()),
    ];
    #[cfg(feature = "unstable_protocol_v2")]
    let v2 = {
        use crate::v2;
        [
            ("v2::ClientRequest", size_of::<v2::ClientRequest>(), size_of::<v2::InitializeRequest>()),
            ("v2::AgentResponse", size_of::<v2::AgentResponse>(), size_of::<v2::InitializeResponse>()),
        ]
    };
    #[cfg(not(feature = "unstable_protocol_v2"))]
    let v2 = [];
    for (name, size, handshake) in v1.into_iter().chain(v2) {
        println!("{name}: {size} bytes (the handshake's message: {handshake})");
        assert!(size < handshake, "{name} is {size} bytes, as large as the handshake's message: box its row");
    }
}
