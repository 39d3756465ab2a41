//! One `acp_proto` machine playing one recorded peer, to judge both peers by the machine's
//! rules: it consumes the other peer's lines (and refuses what its role must refuse: a request
//! before `initialize`, a method the role does not handle or did not advertise, bad params),
//! and it re-sends the recorded peer's own lines through its commands (which refuse what that
//! peer may not send: a request to a capability the other side did not advertise, an update
//! for a session never announced, a permission answer naming an option that was not offered,
//! a second prompt while a turn runs).
//!
//! The machine numbers its own requests, so the recorded ids are mapped: a response the other
//! peer sent to the recorded id X is fed with the machine's id for X, and a response the
//! recorded peer sent to the other's request is given to the machine by the handle it
//! dispatched that request under.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use acp_blocking::acp_proto::jsonrpc::{Incoming, RequestId, parse};
use acp_blocking::acp_proto::role::Role;
use acp_blocking::acp_proto::{
    Config, Connection, Event, InboundRequest, Instant, Notification, OutboundId, Request, Side, V1,
};
use serde_json::Value;

/// The longest frame the machines read (a recorded line is at most 1 MiB).
const MAX_FRAME: usize = 16 << 20;
/// Long enough that the machines never answer a cancelled request by themselves.
const NEVER: Duration = Duration::from_secs(365 * 86_400);

/// A machine playing one recorded peer, of role `R`.
pub(super) struct Mirror<R: Role> {
    conn: Connection<R>,
    /// The other peer's requests consumed and not yet dispatched (held behind `initialize`).
    awaiting: VecDeque<RequestId>,
    /// The other peer's requests dispatched, by recorded id.
    inbound: HashMap<RequestId, InboundRequest>,
    /// The recorded peer's requests sent through the machine, by recorded id.
    outbound: HashMap<RequestId, OutboundId>,
}

fn role(side: Side) -> &'static str {
    match side {
        Side::Agent => "agent",
        Side::Client => "client",
    }
}

impl<R: Role> Mirror<R> {
    pub(super) fn new() -> Mirror<R> {
        let config = Config::default()
            .with_max_frame_len(MAX_FRAME)
            .with_outbound_budget(usize::MAX / 2)
            .with_max_held_bytes(64 << 20)
            .with_max_events(1 << 16)
            .with_max_inbound(1 << 16)
            .with_max_pending_outbound(1 << 16)
            .with_cancel_grace(NEVER)
            .with_turn_cancel_grace(NEVER);
        Mirror {
            conn: Connection::new(config, Instant::ZERO),
            awaiting: VecDeque::new(),
            inbound: HashMap::new(),
            outbound: HashMap::new(),
        }
    }

    /// A line the other peer sent, consumed by this machine; what this role refuses in it.
    pub(super) fn input(&mut self, now: Instant, line: &str) -> Vec<String> {
        self.conn.handle_timeout(now);
        let mut line = line.as_bytes().to_vec();
        let mut request = None;
        match parse(&line) {
            Incoming::Response { id, .. } => {
                // A response to no request of ours: the wire checks report it.
                let Some(ours) = self.outbound.remove(&id) else { return Vec::new() };
                match remap_id(&line, ours.wire()) {
                    Some(remapped) => line = remapped,
                    None => return Vec::new(),
                }
            }
            Incoming::Request { id, .. } => request = Some(id),
            Incoming::Notification { .. } => {}
            // Not a valid message: the wire checks report it.
            _ => {
                self.feed(now, &line);
                self.drain();
                return Vec::new();
            }
        }
        if let Some(id) = &request {
            self.awaiting.push_back(id.clone());
        }
        let before = self.conn.stats();
        self.feed(now, &line);
        let refusals = self.drain();
        let after = self.conn.stats();
        let mut found = Vec::new();
        if let Some(id) = request {
            let refused: Vec<&(RequestId, String)> = refusals.iter().filter(|(r, _)| *r == id).collect();
            if let Some((_, why)) = refused.first() {
                found.push(format!("the {} role refuses this request: {why}", role(R::SIDE)));
            } else if after.duplicate_ids > before.duplicate_ids {
                if let Some(at) = self.awaiting.iter().rposition(|a| *a == id) {
                    self.awaiting.remove(at);
                }
                found.push(format!("reuses id {id} of a request still in flight"));
            }
        } else if after.notifications_dropped > before.notifications_dropped && !is_extension(&line) {
            found.push(format!(
                "the {} role drops this notification (before the handshake, unknown, or invalid params)",
                role(R::SIDE)
            ));
        }
        found
    }

    /// A line the recorded peer sent, re-sent through this machine; what its rules refuse.
    pub(super) fn own(&mut self, now: Instant, line: &str) -> Vec<String> {
        self.conn.handle_timeout(now);
        let peer = R::SIDE.peer();
        let found = match parse(line.as_bytes()) {
            Incoming::Response { id, outcome } => {
                let Some(request) = self.inbound.remove(&id) else { return Vec::new() };
                // Decoded as the result type of the request it answers.
                let answer = match request.answer_json::<R>(outcome) {
                    Ok(answer) => answer,
                    Err(e) => return vec![format!("the result does not decode: {e}")],
                };
                match self.conn.respond(now, answer) {
                    Ok(_) => Vec::new(),
                    Err(e) => vec![e.to_string()],
                }
            }
            Incoming::Request { id, method, params } => {
                // Bad params are the other role's to refuse (see `input`). Decoded as a request
                // the other role receives, it is this role's.
                let Ok(request) = Request::decode(peer, &method, params) else { return Vec::new() };
                let Some(request) = R::own_request::<V1>(request) else { return Vec::new() };
                if self.outbound.contains_key(&id) {
                    return vec![format!("reuses id {id} of a request still pending")];
                }
                match self.conn.send_request(now, request, None) {
                    Ok(ours) => {
                        self.outbound.insert(id, ours);
                        Vec::new()
                    }
                    Err(refused) => vec![format!("{method}: {}", refused.error)],
                }
            }
            Incoming::Notification { method, params } => {
                let Ok(notification) = Notification::decode(peer, &method, params) else { return Vec::new() };
                let Some(notification) = R::own_notification::<V1>(notification) else { return Vec::new() };
                match self.conn.send_notification(now, notification) {
                    Ok(()) => Vec::new(),
                    Err(refused) => vec![format!("{method}: {}", refused.error)],
                }
            }
            _ => Vec::new(),
        };
        self.drain();
        self.dispatched_events();
        found
    }

    fn feed(&mut self, now: Instant, line: &[u8]) {
        let mut framed = line.to_vec();
        framed.push(b'\n');
        let mut rest = &framed[..];
        // The bounds are far above a transcript's needs; stop rather than spin if one is hit.
        for _ in 0..4 {
            let n = self.conn.handle_input(now, rest);
            rest = &rest[n..];
            if rest.is_empty() {
                break;
            }
            self.drain();
        }
    }

    /// Takes the machine's output: the error responses it wrote by itself (id and reason).
    fn drain(&mut self) -> Vec<(RequestId, String)> {
        let mut out = Vec::new();
        let _ = self.conn.poll_transmit(&mut out);
        let mut refusals = Vec::new();
        for frame in out.split(|b| *b == b'\n').filter(|f| !f.is_empty()) {
            if let Incoming::Response { id, outcome: Err(error) } = parse(frame) {
                let reason = error.data.as_ref().and_then(|d| d["reason"].as_str()).map(str::to_owned);
                let why = match reason {
                    Some(reason) => format!("{} {} ({reason})", error.code.0, error.message),
                    None => format!("{} {}", error.code.0, error.message),
                };
                refusals.push((id, why));
            }
        }
        // A request refused (now, or when the `initialize` it was held behind failed) is
        // never dispatched.
        self.awaiting.retain(|a| !refusals.iter().any(|(r, _)| r == a));
        self.dispatched_events();
        refusals
    }

    /// Matches the requests the machine dispatched with the recorded ids, in order.
    fn dispatched_events(&mut self) {
        while let Some(event) = self.conn.poll_event() {
            if let Event::Request(request) = event
                && let Some(recorded) = self.awaiting.pop_front()
            {
                self.inbound.insert(recorded, request);
            }
        }
    }
}

/// The frame with its `id` replaced.
fn remap_id(line: &[u8], id: i64) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(line).ok()?;
    value["id"] = Value::from(id);
    serde_json::to_vec(&value).ok()
}

/// Whether a frame's method is an extension (`_…`), which a role may ignore.
fn is_extension(line: &[u8]) -> bool {
    serde_json::from_slice::<Value>(line)
        .ok()
        .and_then(|v| v["method"].as_str().map(|m| m.starts_with('_')))
        .unwrap_or(false)
}
