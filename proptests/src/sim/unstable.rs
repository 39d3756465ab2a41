//! The unstable methods in the simulation (feature `unstable`; nothing happens without it).
//!
//! Generic over the method table: a row is *unstable* when its params definition is one of
//! [`crate::oracle_unstable::UNSTABLE_DEFS`] (the types the `unstable_*` features compile in),
//! so a group added to the table and to that list is simulated without more code. Today that
//! is `session/set_title`, `session/status`, `session/archive`, `session/unarchive` and
//! `session/fork`, all client → agent requests.
//!
//! * The agent advertises the capability each row's gate names (`MethodRow::gate`) at random,
//!   one row at a time, so both the allowed and the refused paths run.
//! * The client application calls an unstable row with params generated from
//!   `schema.unstable.json` ([`crate::schema_gen`], seeded by the chooser), carrying its label
//!   in `_meta` and one of its sessions (and no `systemPrompt` or `configOptions`, which have
//!   content gates of their own). The send must be accepted exactly when the agent
//!   advertised the gate, refused with `NotSupportedByPeer` otherwise (and the request comes
//!   back untouched).
//! * The agent must never receive one it did not advertise; its application answers with a
//!   result generated from the row's result definition, which the client's outcome check
//!   compares with the model (invariant 1) like every other reply.
//!
//! `proxy/initialize` (feature `unstable_proxy_chains`) is left out: it is a handshake request
//! like `initialize`, which the simulated client has already sent, so the core refuses it
//! (`AlreadyInitialized`; tested in acp-proto's `connection::tests::proxy_handshake`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use acp_proto::methods::{Direction, Kind, METHODS, MethodRow};
use acp_proto::{Method, Request, Response, RpcError, SendError, Side};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{Chooser, Out, Sim, opt_in};
use crate::schema_gen::{Rng, Schema};

/// Counts of the unstable calls the simulation made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnstableCounts {
    /// Unstable requests accepted for sending.
    pub sent: u64,
    /// Unstable requests refused locally because the agent did not advertise their gate.
    pub refused: u64,
    /// Unstable requests the agent application answered with a result.
    pub answered: u64,
    /// Results of unstable requests the client got (each checked against the model).
    pub results: u64,
    /// Per wire method name: the calls attempted (sent or refused) and the results received.
    pub by_method: BTreeMap<&'static str, (u64, u64)>,
}

impl UnstableCounts {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &UnstableCounts) {
        self.sent += other.sent;
        self.refused += other.refused;
        self.answered += other.answered;
        self.results += other.results;
        for (wire, (calls, results)) in &other.by_method {
            let e = self.by_method.entry(wire).or_default();
            e.0 += calls;
            e.1 += results;
        }
    }

    /// The unstable client → agent requests of this build's table (empty without the
    /// features), by wire name.
    pub fn methods() -> Vec<&'static str> {
        client_rows().iter().map(|r| r.wire).collect()
    }
}

/// Encoded params or results above this size are generated again (the simulated frame limit
/// is small).
const MAX_GENERATED: usize = 1024;

/// Whether `method` is an unstable row (see the module docs).
pub(super) fn is_unstable(method: Option<Method>) -> bool {
    method.is_some_and(|m| crate::oracle_unstable::UNSTABLE_DEFS.contains(&m.row().params))
}

/// The unstable requests the client sends to the agent, but the handshake's (see the module
/// docs).
fn client_rows() -> Vec<&'static MethodRow> {
    METHODS
        .iter()
        .filter(|r| r.kind == Kind::Request && r.direction == Direction::ClientToAgent && is_unstable(Some(r.method)))
        .filter(|r| r.wire != "proxy/initialize")
        .collect()
}

fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let dir = crate::spec::vendored().join(crate::spec::SPEC_VERSION);
        Schema::new(crate::spec::read_json(&dir, "schema.unstable.json"))
    })
}

/// An instance of `def`, small enough for a frame, that `decode` accepts; `None` when a few
/// tries give none.
fn generate<T, C: Chooser>(
    c: &mut C,
    def: &str,
    edit: impl Fn(&mut Value),
    decode: impl Fn(&RawValue) -> Option<T>,
) -> Option<T> {
    for _ in 0..8 {
        let mut v = schema().generate(def, &mut Rng::new(c.range(0, u64::MAX - 1)));
        edit(&mut v);
        let text = v.to_string();
        if text.len() > MAX_GENERATED {
            continue;
        }
        let raw = RawValue::from_string(text).expect("serde_json output is JSON");
        if let Some(t) = decode(&raw) {
            return Some(t);
        }
    }
    None
}

/// Sets `path` in the JSON object `v` to `leaf`, creating objects on the way.
fn set_path(v: &mut Value, path: &[&str], leaf: Value) {
    let Some((last, init)) = path.split_last() else { return };
    let mut node = v;
    for seg in init {
        let Value::Object(m) = node else { return };
        node = m.entry(*seg).or_insert_with(|| Value::Object(Default::default()));
    }
    if let Value::Object(m) = node {
        m.insert((*last).to_owned(), leaf);
    }
}

/// The agent's capabilities with each unstable row's gate advertised at random (an empty
/// capability object, or `true` where the schema wants a boolean).
pub(super) fn advertise<C: Chooser>(c: &mut C, caps: &mut acp_proto::types::AgentCapabilities) {
    advertise_with(caps, || c.chance(1, 2));
}

/// `caps` with the gate of each unstable client → agent row for which `choose()` says yes
/// advertised (asked once per gated row, in table order). Also used by the `connection` fuzz
/// target's agent.
pub(crate) fn advertise_with(caps: &mut acp_proto::types::AgentCapabilities, mut choose: impl FnMut() -> bool) {
    for row in client_rows() {
        if row.gate.is_empty() || !choose() {
            continue;
        }
        for leaf in [Value::Object(Default::default()), Value::Bool(true)] {
            let mut v = serde_json::to_value(&*caps).expect("capabilities encode");
            // The gate is a path into the agent's capabilities object.
            set_path(&mut v, row.gate, leaf);
            if let Ok(decoded) = serde_json::from_value(v) {
                *caps = decoded;
                break;
            }
        }
    }
}

impl<C: Chooser> Sim<'_, C> {
    /// Client: calls one unstable row (see the module docs).
    pub(super) fn client_unstable_call(&mut self) {
        let rows = client_rows();
        // The unstable rows are v1 methods: a v2 connection refuses them (`WrongProtocolVersion`).
        if rows.is_empty() || self.client.closed || !self.client.conn.is_ready() || self.speaks_v2(Side::Client) {
            return;
        }
        let row = *self.c.pick(&rows);
        let label = self.label();
        let session = (!self.client.sessions.is_empty()).then(|| self.c.pick(&self.client.sessions).clone());
        let edit = |v: &mut Value| {
            if let Value::Object(m) = v {
                m.insert("_meta".into(), serde_json::json!({ "label": label }));
                // A system prompt and initial config option values have content gates of their
                // own (`gate::check_system_prompt`, `gate::check_initial_config`, unit-tested
                // there), which would make the method gate's verdict here ambiguous.
                m.remove("systemPrompt");
                m.remove("configOptions");
                if let Some(s) = &session
                    && m.contains_key("sessionId")
                {
                    m.insert("sessionId".into(), Value::from(s.as_str()));
                }
            }
        };
        let decode = |raw: &RawValue| Request::decode(Side::Agent, row.wire, Some(raw)).ok();
        let Some(request) = generate(&mut self.c, row.params, edit, decode) else { return };
        let allowed = row.gate.is_empty() || opt_in::advertises(self.client.peer_caps.as_ref(), row.gate);
        let deadline = self.deadline();
        let before = self.client.conn.bytes_queued();
        let sent = request.clone();
        let r = self.client.conn.send_request::<acp_proto::V1>(self.now, request, deadline).map_err(|refused| {
            assert_eq!(refused.message, sent, "a refused request comes back untouched");
            refused.error
        });
        self.client.note_app_output(before);
        self.log(format!("client send {} r{label} -> {r:?}", row.wire));
        if matches!(r, Ok(_) | Err(SendError::NotSupportedByPeer { .. })) {
            self.summary.unstable.by_method.entry(row.wire).or_default().0 += 1;
        }
        match r {
            Ok(id) => {
                assert!(allowed, "{} accepted for an agent that did not advertise {:?}", row.wire, row.gate);
                self.summary.unstable.sent += 1;
                let method = Some(row.method);
                self.client.outstanding.insert(id, Out { label, method, deadline, session, locally_cancelled: false });
            }
            Err(SendError::NotSupportedByPeer { .. }) => {
                assert!(!allowed, "{} refused for an agent that advertised {:?}", row.wire, row.gate);
                self.summary.unstable.refused += 1;
            }
            Err(SendError::Backpressure { .. } | SendError::TooManyPending { .. }) => {}
            Err(SendError::Closed) => assert!(self.client.conn.is_closed()),
            Err(e) => panic!("client: unexpected refusal of {}: {e}", row.wire),
        }
    }

    /// Agent: an unstable request arrived; its gate must be advertised.
    pub(super) fn agent_check_unstable(&self, request: &Request) {
        let Some(method) = request.method().filter(|m| is_unstable(Some(*m))) else { return };
        let own = self.agent.conn.negotiated().map(|n| n.own.json().clone());
        let gate = method.row().gate;
        assert!(
            gate.is_empty() || opt_in::advertises(own.as_ref(), gate),
            "the agent received {} without advertising {gate:?}",
            method.row().wire
        );
    }

    /// Agent: the application's result for an unstable request (`None`: none could be made,
    /// answered as an internal error).
    pub(super) fn agent_unstable_result(&mut self, method: Method) -> Result<Response, RpcError> {
        let row = method.row();
        let Some(def) = row.result else { return Err(RpcError::internal_error("no result definition")) };
        let decode = |raw: &RawValue| Response::decode_result(Side::Client, Some(method), raw).ok();
        match generate(&mut self.c, def, |_| {}, decode) {
            Some(r) => {
                self.summary.unstable.answered += 1;
                Ok(r)
            }
            None => Err(RpcError::internal_error("no result generated")),
        }
    }
}
