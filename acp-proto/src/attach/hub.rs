//! The host's side of a shared session: [`Hub`]. Its rules are the [module docs](super)'.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{
    AttachRequest, ConnectedClient, ID_PREFIX, MAX_ASKS, MAX_GUESTS, MAX_IN_FLIGHT, NOT_AUTHORISED,
    PERMISSION_RESOLVED, Role, error_frame, not_found, notification_frame, result_frame, session_of, with_id,
};
use crate::error::{ErrorCode, RpcError};
use crate::jsonrpc::{self, Incoming, RequestId};
use crate::observer::Observer;
use crate::types::{RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse};
use crate::{Method, Side};

/// A guest connection, as the relay numbers them (unique for the relay's life: a number is
/// never given twice).
pub type GuestId = u64;

/// Where a frame goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum To {
    /// The host connection's client.
    Host,
    /// The host connection's agent.
    Agent,
    /// A guest connection's client.
    Guest(GuestId),
}

/// One frame to deliver (JSON text without a newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Out {
    /// Its destination.
    pub to: To,
    /// The frame.
    pub frame: Vec<u8>,
}

#[derive(Debug)]
struct Joined {
    session: Arc<str>,
    role: Role,
}

/// An open permission ask of the agent, shared with the controllers of its session.
#[derive(Debug)]
struct Ask {
    session: Arc<str>,
    tool_call: Option<String>,
    /// The agent's frame, forwarded to a controller that attaches while the ask is open.
    frame: Vec<u8>,
    /// The guests holding it, each under the hub's id it got.
    holders: Vec<(GuestId, RequestId)>,
}

/// A guest's request on its way to the agent.
#[derive(Debug)]
struct Flight {
    guest: GuestId,
    id: RequestId,
}

/// The hub of one host connection. See the [module docs](super).
#[derive(Debug, Default)]
pub struct Hub {
    observer: Observer,
    guests: BTreeMap<GuestId, Joined>,
    /// Open asks by the agent's id.
    asks: BTreeMap<RequestId, Ask>,
    /// Each hub id an ask went out under: the agent's id.
    forwarded: BTreeMap<RequestId, RequestId>,
    /// Guest requests awaiting the agent, by the hub's id.
    flights: BTreeMap<RequestId, Flight>,
    /// Asks a guest answered while the host's copy was open: the host's late answer is dropped.
    host_settled: BTreeSet<RequestId>,
    next: u64,
    /// The host connection ended: nothing can be attached or reached any more.
    closed: bool,
}

impl Hub {
    /// A hub with nothing shared yet.
    pub fn new() -> Hub {
        Hub::default()
    }

    /// Whether the agent announced `session` (so that it can be attached).
    pub fn has_session(&self, session: &str) -> bool {
        !self.closed && self.observer.has_session(session)
    }

    /// The host connection ended: every guest is let go, and from now on an attach or a
    /// guest's request is answered [`SESSION_NOT_FOUND`](super::SESSION_NOT_FOUND).
    pub fn close(&mut self) {
        self.closed = true;
        self.guests.clear();
        self.asks.clear();
        self.forwarded.clear();
        self.flights.clear();
    }

    /// The guests attached now.
    pub fn guests(&self) -> impl Iterator<Item = GuestId> + '_ {
        self.guests.keys().copied()
    }

    fn next_id(&mut self) -> RequestId {
        self.next += 1;
        RequestId::Str(format!("{ID_PREFIX}{}", self.next).into())
    }

    /// A frame of the agent: where it goes (rules 2, 3, 4, 7). Returns the session it
    /// announced, if any (the relay registers it).
    pub fn from_agent(&mut self, frame: &[u8], out: &mut Vec<Out>) -> Option<Arc<str>> {
        let observed = self.observer.observe(Side::Agent, frame);
        match jsonrpc::parse(frame) {
            Incoming::Response { id, .. } => {
                if let Some(flight) = self.flights.remove(&id) {
                    if self.guests.contains_key(&flight.guest)
                        && let Some(frame) = with_id(frame, &flight.id)
                    {
                        out.push(Out { to: To::Guest(flight.guest), frame });
                    }
                    return None;
                }
                let initialize = observed.answered.as_ref().and_then(|a| a.method) == Some(Method::Initialize);
                let frame =
                    if initialize { advertise(frame).unwrap_or_else(|| frame.to_vec()) } else { frame.to_vec() };
                out.push(Out { to: To::Host, frame });
            }
            Incoming::Request { id, method, params } if method == Method::RequestPermission.wire() => {
                out.push(Out { to: To::Host, frame: frame.to_vec() });
                let ask = params.and_then(|p| serde_json::from_str::<RequestPermissionRequest>(p.get()).ok());
                if let Some(ask) = ask.filter(|_| self.asks.len() < MAX_ASKS && !self.asks.contains_key(&id)) {
                    let session: Arc<str> = ask.session_id.0.clone();
                    let tool_call = Some(ask.tool_call.tool_call_id.0.to_string());
                    self.asks.insert(
                        id.clone(),
                        Ask { session: session.clone(), tool_call, frame: frame.to_vec(), holders: Vec::new() },
                    );
                    let controllers: Vec<GuestId> = self.of_session(&session, Some(Role::Controller));
                    for guest in controllers {
                        self.forward(&id, guest, out);
                    }
                }
            }
            Incoming::Notification { method, .. } if method == Method::SessionUpdate.wire() => {
                out.push(Out { to: To::Host, frame: frame.to_vec() });
                if let Some(session) = &observed.session {
                    for guest in self.of_session(session, None) {
                        out.push(Out { to: To::Guest(guest), frame: frame.to_vec() });
                    }
                }
            }
            Incoming::Notification { method, params } if method == Method::CancelRequest.wire() => {
                out.push(Out { to: To::Host, frame: frame.to_vec() });
                // The agent withdrew an ask: so do its guests' copies.
                if let Some(id) = params.and_then(|p| serde_json::from_str::<super::CancelParams>(p.get()).ok())
                    && let Some(ask) = self.asks.remove(&id.request_id)
                {
                    self.withdraw(ask, None, out);
                }
            }
            _ => out.push(Out { to: To::Host, frame: frame.to_vec() }),
        }
        observed.announced
    }

    /// A frame of the host's client: on to the agent, unless it answers an ask a guest
    /// answered first (rule 4).
    pub fn from_host(&mut self, frame: &[u8], out: &mut Vec<Out>) {
        if let Incoming::Response { id, outcome } = jsonrpc::parse(frame) {
            if self.host_settled.remove(&id) {
                return;
            }
            if let Some(ask) = self.asks.remove(&id) {
                let chosen = outcome.ok().and_then(|r| chosen_option(r.get()));
                self.observer.observe(Side::Client, frame);
                out.push(Out { to: To::Agent, frame: frame.to_vec() });
                self.resolved(ask, chosen, "host", None, out);
                return;
            }
        }
        self.observer.observe(Side::Client, frame);
        out.push(Out { to: To::Agent, frame: frame.to_vec() });
    }

    /// `guest` asks to attach (rule 1), its credential already checked by the relay: the
    /// answer, and for a controller the asks open in the session, go out to it.
    pub fn join(&mut self, guest: GuestId, request: &AttachRequest, out: &mut Vec<Out>) {
        let to = To::Guest(guest);
        if !self.has_session(&request.session) {
            out.push(Out { to, frame: error_frame(&request.id, &not_found()) });
            return;
        }
        if self.guests.len() >= MAX_GUESTS && !self.guests.contains_key(&guest) {
            let error = RpcError::new(ErrorCode::INTERNAL_ERROR, "the session has as many clients as it takes");
            out.push(Out { to, frame: error_frame(&request.id, &error) });
            return;
        }
        self.leave(guest, out);
        self.guests.insert(guest, Joined { session: request.session.clone(), role: request.role });
        let mut clients = vec![ConnectedClient { client_id: "host".into(), role: Role::Controller }];
        for (id, joined) in &self.guests {
            if joined.session == request.session {
                clients.push(ConnectedClient { client_id: format!("guest-{id}"), role: joined.role });
            }
        }
        let answer = json!({ "sessionId": &*request.session, "role": request.role, "connectedClients": clients });
        out.push(Out { to, frame: result_frame(&request.id, &answer) });
        if request.role == Role::Controller {
            let open: Vec<RequestId> =
                self.asks.iter().filter(|(_, ask)| ask.session == request.session).map(|(id, _)| id.clone()).collect();
            for id in open {
                self.forward(&id, guest, out);
            }
        }
    }

    /// `guest` detached or went away (rule 8): its asks are withdrawn from it, answers to its
    /// requests still in flight will be dropped.
    pub fn leave(&mut self, guest: GuestId, _out: &mut Vec<Out>) {
        if self.guests.remove(&guest).is_none() {
            return;
        }
        for ask in self.asks.values_mut() {
            ask.holders.retain(|(holder, hub_id)| {
                let keep = *holder != guest;
                if !keep {
                    self.forwarded.remove(hub_id);
                }
                keep
            });
        }
    }

    /// A frame of `guest`'s client, for the session it attached (rules 4, 5, 6).
    pub fn from_guest(&mut self, guest: GuestId, frame: &[u8], out: &mut Vec<Out>) {
        let to = To::Guest(guest);
        let Some(joined) = self.guests.get(&guest) else {
            if let Incoming::Request { id, .. } = jsonrpc::parse(frame) {
                out.push(Out { to, frame: error_frame(&id, &not_found()) });
            }
            return;
        };
        let (session, role) = (joined.session.clone(), joined.role);
        match jsonrpc::parse(frame) {
            Incoming::Request { id, .. } => {
                let error = if role == Role::Observer {
                    Some(RpcError::new(NOT_AUTHORISED, "an observer of a shared session cannot act in it"))
                } else if session_of(Side::Client, frame).as_deref() != Some(&*session) {
                    Some(not_found())
                } else if self.flights.len() >= MAX_IN_FLIGHT {
                    Some(RpcError::new(ErrorCode::INTERNAL_ERROR, "too many requests of attached clients in flight"))
                } else {
                    None
                };
                if let Some(error) = error {
                    out.push(Out { to, frame: error_frame(&id, &error) });
                    return;
                }
                let hub_id = self.next_id();
                let Some(rewritten) = with_id(frame, &hub_id) else { return };
                self.flights.insert(hub_id, Flight { guest, id });
                self.observer.observe(Side::Client, &rewritten);
                out.push(Out { to: To::Agent, frame: rewritten });
            }
            Incoming::Notification { .. }
                if role == Role::Controller && session_of(Side::Client, frame).as_deref() == Some(&*session) =>
            {
                self.observer.observe(Side::Client, frame);
                out.push(Out { to: To::Agent, frame: frame.to_vec() });
            }
            Incoming::Response { id, outcome } if role == Role::Controller => {
                let Some(agent_id) = self.forwarded.get(&id).cloned() else { return };
                let Some(ask) = self.asks.remove(&agent_id) else { return };
                if !ask.holders.iter().any(|(holder, hub_id)| *holder == guest && *hub_id == id) {
                    self.asks.insert(agent_id, ask);
                    return;
                }
                let chosen = outcome.ok().and_then(|r| chosen_option(r.get()));
                let Some(answer) = with_id(frame, &agent_id) else {
                    self.asks.insert(agent_id, ask);
                    return;
                };
                self.observer.observe(Side::Client, &answer);
                out.push(Out { to: To::Agent, frame: answer });
                // The host's copy is still open: cancel it, and drop its late answer.
                if self.host_settled.len() >= MAX_ASKS {
                    self.host_settled.pop_first();
                }
                self.host_settled.insert(agent_id.clone());
                out.push(Out { to: To::Host, frame: cancel_request(&agent_id) });
                self.resolved(ask, chosen, &format!("guest-{guest}"), Some(guest), out);
            }
            _ => {}
        }
    }

    /// The guests of `session`, those of `role` only when given.
    fn of_session(&self, session: &str, role: Option<Role>) -> Vec<GuestId> {
        self.guests
            .iter()
            .filter(|(_, joined)| &*joined.session == session && role.is_none_or(|r| r == joined.role))
            .map(|(id, _)| *id)
            .collect()
    }

    /// Sends `guest` the ask `agent_id` under an id of the hub's.
    fn forward(&mut self, agent_id: &RequestId, guest: GuestId, out: &mut Vec<Out>) {
        let hub_id = self.next_id();
        let Some(ask) = self.asks.get_mut(agent_id) else { return };
        let Some(frame) = with_id(&ask.frame, &hub_id) else { return };
        ask.holders.push((guest, hub_id.clone()));
        self.forwarded.insert(hub_id, agent_id.clone());
        out.push(Out { to: To::Guest(guest), frame });
    }

    /// An ask was answered by `by` (`guest`, when a guest): every guest of its session learns
    /// it, every other holder's copy is cancelled.
    fn resolved(
        &mut self,
        ask: Ask,
        chosen: Option<Option<String>>,
        by: &str,
        guest: Option<GuestId>,
        out: &mut Vec<Out>,
    ) {
        let mut update = Map::new();
        update.insert("sessionUpdate".into(), PERMISSION_RESOLVED.into());
        if let Some(tool_call) = &ask.tool_call {
            update.insert("toolCallId".into(), tool_call.clone().into());
        }
        let (outcome, option) = match chosen {
            Some(Some(option)) => ("selected", Value::String(option)),
            _ => ("cancelled", Value::Null),
        };
        update.insert("outcome".into(), outcome.into());
        update.insert("chosenOptionId".into(), option);
        update.insert("resolvedBy".into(), by.into());
        let params = json!({ "sessionId": &*ask.session, "update": update });
        let note = notification_frame(Method::SessionUpdate.wire(), &params);
        for watcher in self.of_session(&ask.session, None) {
            out.push(Out { to: To::Guest(watcher), frame: note.clone() });
        }
        self.withdraw(ask, guest, out);
    }

    /// Cancels the copies of `ask` its holders (but `except`) still hold.
    fn withdraw(&mut self, ask: Ask, except: Option<GuestId>, out: &mut Vec<Out>) {
        for (holder, hub_id) in ask.holders {
            self.forwarded.remove(&hub_id);
            if Some(holder) != except {
                out.push(Out { to: To::Guest(holder), frame: cancel_request(&hub_id) });
            }
        }
    }
}

/// `Some(Some(option))` for a selected option, `Some(None)` for a cancelled ask, `None` for
/// a result that is no permission answer.
fn chosen_option(result: &str) -> Option<Option<String>> {
    match serde_json::from_str::<RequestPermissionResponse>(result).ok()?.outcome {
        RequestPermissionOutcome::Selected(selected) => Some(Some(selected.option_id.0.to_string())),
        _ => Some(None),
    }
}

/// `$/cancel_request` for `id`.
fn cancel_request(id: &RequestId) -> Vec<u8> {
    notification_frame(Method::CancelRequest.wire(), &json!({ "requestId": id }))
}

/// The answer to `initialize` with `sessionCapabilities.attach` added (rule 2); `None` for an
/// error answer or one without `agentCapabilities`.
fn advertise(frame: &[u8]) -> Option<Vec<u8>> {
    let mut answer: Map<String, Value> = serde_json::from_slice(frame).ok()?;
    let capabilities = answer.get_mut("result")?.as_object_mut()?.get_mut("agentCapabilities")?.as_object_mut()?;
    let session = capabilities.entry("sessionCapabilities").or_insert_with(|| Value::Object(Map::new()));
    let roles = [Role::Controller.as_str(), Role::Observer.as_str()];
    session.as_object_mut()?.insert("attach".into(), json!({ "roles": roles, "maxClients": MAX_GUESTS }));
    serde_json::to_vec(&answer).ok()
}
