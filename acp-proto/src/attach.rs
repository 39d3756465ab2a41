//! Sessions shared by several clients (feature `unstable_session_attach`), after the draft RFD
//! "multi-client session attach": what a relay in front of one agent connection (the remote
//! server) needs to let a second client attach to a live session, so that the relay moves
//! bytes and never reads ACP itself. Sans-IO and deterministic: no clock, no I/O.
//!
//! Two roles, one per connection of the relay:
//!
//! * The **host** is the connection whose agent holds the session. Its [`Hub`] sees every
//!   frame of that connection (its client's, its agent's) and the frames of the guests
//!   attached to its sessions, and says where each goes ([`Out`]).
//! * A **guest** is another client's connection (with an agent of its own, which never sees
//!   the shared session). Its [`Guest`] says of each frame its client sends whether it stays on
//!   this connection or goes to a host ([`Route`]).
//!
//! # Rules
//!
//! 1. **Attach.** A client attaches with the request `session/attach {sessionId, role}`
//!    ([`AttachRequest`]; `role` is `"controller"` or `"observer"`, default `"controller"`).
//!    Only a session the host's agent announced (the [`Observer`]'s rule 4) can be attached;
//!    anything else is answered [`SESSION_NOT_FOUND`], as is a session of another credential
//!    (the relay checks that, and answers the same so that a stranger learns nothing). The
//!    answer is `{sessionId, role, connectedClients: [{clientId, role}]}` ([`AttachAnswer`]);
//!    the host's own client is `"host"`, always a controller.
//! 2. **Advertised.** A hub adds `sessionCapabilities.attach {roles, maxClients}` to the
//!    agent's successful answer to `initialize`, keeping what `sessionCapabilities` held.
//! 3. **Updates.** Every `session/update` of a session goes to the host and to each guest
//!    attached to it, observers included, in the agent's order.
//! 4. **Permission asks.** A `session/request_permission` goes to the host and, each with an
//!    id of the hub's own (`"acp/attach/N"`), to every controller guest of its session; an
//!    ask still open when a controller attaches is sent to it at once. The first answer wins:
//!    it goes to the agent under the agent's id; every guest of the session then gets the
//!    update `permission_resolved {toolCallId, chosenOptionId, resolvedBy}`, and every other
//!    holder of the ask a `$/cancel_request` for it; a later answer is dropped. Observers
//!    never get an ask (they could not answer it).
//! 5. **A controller guest acts.** Its requests naming its session (`session/prompt`,
//!    `session/set_mode`, …) reach the agent under an id of the hub's, and the answer comes
//!    back to it under its own id; its notifications naming its session (`session/cancel`)
//!    reach the agent as they are. A request naming any other session is answered
//!    [`SESSION_NOT_FOUND`].
//! 6. **An observer cannot act.** Its requests are answered [`NOT_AUTHORISED`]; its
//!    notifications and answers are dropped.
//! 7. **The agent's other requests** (`fs/*`, `terminal/*`, extensions) go to the host alone:
//!    a guest is never asked to read or write files or run commands.
//! 8. **Detach.** `session/detach {sessionId}` is answered `{sessionId, status: "detached"}`;
//!    a guest that detaches or goes away holds nothing: its asks are withdrawn and answers to
//!    its requests still in flight are dropped.
//! 9. **Bounds.** A hub takes at most [`MAX_GUESTS`] guests, shares at most [`MAX_ASKS`] open
//!    asks (later ones go to the host alone) and holds at most [`MAX_IN_FLIGHT`] guest requests
//!    awaiting the agent (past it a request is answered `-32603`). A guest remembers at most
//!    [`MAX_ASKS`] asks. Nothing else grows with the peers' input.
//! 10. **A client attaches through its link** ([`Attacher`]): a remote client that was asked
//!     to attach lets its core's `initialize` through, sends `session/attach` as soon as the
//!     answer to it passed, and keeps the answer to itself; everything else passes unchanged.
//! 11. **Never a panic on peer input**: a frame the hub cannot read goes where a frame of its
//!     sender goes when nothing is shared (the host's to the agent, the agent's to the host; a
//!     guest's is answered or dropped).
//!
//! Ids of the form `"acp/attach/N"` are the hub's: a host whose client uses such string ids
//! for its own requests may see them confused with a guest's.
//!
//! ```
//! use acp_proto::attach::{Guest, Hub, Out, Route, To};
//!
//! let mut hub = Hub::new();
//! let mut out = Vec::new();
//! // The host's client opens a session; the agent announces it.
//! hub.from_host(br#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#, &mut out);
//! hub.from_agent(br#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#, &mut out);
//! out.clear();
//!
//! // Another connection's client asks to attach: its guest hands the request to the relay...
//! let mut guest = Guest::new();
//! let Route::Attach(request) = guest.from_client(br#"{"jsonrpc":"2.0","id":9,"method":"session/attach","params":{"sessionId":"s1","role":"observer"}}"#)
//! else { unreachable!() };
//! // ...which hands it to the host's hub (after checking the credential).
//! hub.join(7, &request, &mut out);
//! assert!(matches!(out[0].to, To::Guest(7)));
//! guest.from_host("s1", &out[0].frame);
//! out.clear();
//!
//! // The agent's updates of the session now reach the guest too.
//! hub.from_agent(br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#, &mut out);
//! let to: Vec<_> = out.iter().map(|o: &Out| o.to).collect();
//! assert_eq!(to, [To::Host, To::Guest(7)]);
//! ```
//!
//! [`Observer`]: crate::observer::Observer

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::Side;
use crate::error::{ErrorCode, RpcError};
use crate::jsonrpc::{self, Incoming, RequestId};
use crate::observer::Observer;

mod attacher;
mod hub;
#[cfg(test)]
mod tests;

pub use attacher::{Attacher, Linked, PermissionResolved};
pub use hub::{GuestId, Hub, Out, To};

/// The request that attaches a session.
pub const ATTACH: &str = "session/attach";
/// The request that detaches one.
pub const DETACH: &str = "session/detach";
/// The session update a hub sends once a permission ask was answered.
pub const PERMISSION_RESOLVED: &str = "permission_resolved";
/// What starts the ids a hub gives the messages it forwards.
pub const ID_PREFIX: &str = "acp/attach/";
/// The session is unknown here, or belongs to another credential (the draft's code).
pub const SESSION_NOT_FOUND: ErrorCode = ErrorCode(-32001);
/// The client may not do this in the session: an observer acting (the draft's code).
pub const NOT_AUTHORISED: ErrorCode = ErrorCode(-32002);
/// Guests one hub takes at most (advertised as `maxClients`, the host's client not counted).
pub const MAX_GUESTS: usize = 16;
/// Open permission asks a hub shares at most.
pub const MAX_ASKS: usize = 256;
/// Guest requests a hub holds at most while the agent has not answered them.
pub const MAX_IN_FLIGHT: usize = 1024;

/// What an attached client may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Prompts, answers permission asks, cancels.
    #[default]
    Controller,
    /// Sees every update; cannot act.
    Observer,
}

impl Role {
    /// The role's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Controller => "controller",
            Role::Observer => "observer",
        }
    }
}

/// A `session/attach` request, as a guest reads it off its client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachRequest {
    /// The request's id (its answer goes back under it).
    pub id: RequestId,
    /// The session to attach.
    pub session: Arc<str>,
    /// The role asked for.
    pub role: Role,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AttachParams {
    session_id: String,
    #[serde(default)]
    role: Role,
}

impl AttachRequest {
    /// A request with `id` to attach `session` as `role`.
    pub fn new(id: impl Into<RequestId>, session: impl Into<Arc<str>>, role: Role) -> AttachRequest {
        AttachRequest { id: id.into(), session: session.into(), role }
    }

    /// The frame (one line of JSON, no newline).
    pub fn to_frame(&self) -> String {
        let params = json!({ "sessionId": &*self.session, "role": self.role.as_str() });
        json!({ "jsonrpc": "2.0", "id": &self.id, "method": ATTACH, "params": params }).to_string()
    }
}

/// The answer to `session/attach`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachAnswer {
    /// The session attached.
    pub session_id: String,
    /// The role granted.
    pub role: Role,
    /// Who is attached now, the host's client first.
    pub connected_clients: Vec<ConnectedClient>,
}

/// One client of a shared session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectedClient {
    /// `"host"`, or `"guest-N"`.
    pub client_id: String,
    /// Its role.
    pub role: Role,
}

impl AttachAnswer {
    /// Reads the answer to the request `id`: the answer, or the error the relay gave. `None`
    /// when `frame` is no answer to `id`.
    pub fn read(frame: &[u8], id: &RequestId) -> Option<Result<AttachAnswer, RpcError>> {
        match jsonrpc::parse(frame) {
            Incoming::Response { id: got, outcome } if &got == id => Some(match outcome {
                Ok(result) => serde_json::from_str(result.get()).map_err(|e| {
                    RpcError::new(ErrorCode::INTERNAL_ERROR, format!("an attach answer that cannot be read: {e}"))
                }),
                Err(error) => Err(error),
            }),
            _ => None,
        }
    }
}

/// Whether `frame` is a `session/attach` request (a relay lets it name a session its own
/// connection does not know: another connection's).
pub fn is_attach(frame: &[u8]) -> bool {
    matches!(jsonrpc::parse(frame), Incoming::Request { method, .. } if method == ATTACH)
}

/// Where a guest connection's client frame goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// To this connection's own agent, as when nothing is shared.
    Local,
    /// To the hub of the host holding this session.
    Host(Arc<str>),
    /// A `session/attach`: the relay checks the credential and hands it to the host's hub
    /// ([`Hub::join`]), or answers it with [`Guest::refuse`].
    Attach(AttachRequest),
    /// A `session/detach` of an attached session: the relay tells the host's hub
    /// ([`Hub::leave`]) and sends the client [`Guest::detached`]'s answer.
    Detach {
        /// The request's id.
        id: RequestId,
        /// The session.
        session: Arc<str>,
    },
    /// Answer the client with this frame and send nothing on (a `session/attach` or
    /// `session/detach` that cannot be read, or names nothing attached).
    Answer(Vec<u8>),
}

/// The sessions one guest connection attached, and the asks its client holds. See the
/// [module docs](self).
#[derive(Debug, Default)]
pub struct Guest {
    /// Sessions attached, each with its host's answer received.
    sessions: BTreeMap<Arc<str>, Role>,
    /// `session/attach` requests awaiting their answer: the session each names.
    attaching: BTreeMap<RequestId, Arc<str>>,
    /// Requests a host forwarded (permission asks), by id: the session each belongs to.
    asks: BTreeMap<RequestId, Arc<str>>,
}

/// The session a request or notification names (`params.sessionId`), as the connection's
/// observer reads it (one reader of that field in the core).
pub(crate) fn session_of(from: Side, frame: &[u8]) -> Option<Arc<str>> {
    Observer::read(from, frame).session
}

impl Guest {
    /// A guest with nothing attached.
    pub fn new() -> Guest {
        Guest::default()
    }

    /// Whether `session` is attached.
    pub fn is_attached(&self, session: &str) -> bool {
        self.sessions.contains_key(session)
    }

    /// The sessions attached.
    pub fn sessions(&self) -> impl Iterator<Item = &str> {
        self.sessions.keys().map(|s| &**s)
    }

    /// Where a frame of the client goes (rules 1, 5 and 8).
    pub fn from_client(&mut self, frame: &[u8]) -> Route {
        match jsonrpc::parse(frame) {
            Incoming::Request { id, method, params } if method == ATTACH => {
                let Some(params) = params.and_then(|p| serde_json::from_str::<AttachParams>(p.get()).ok()) else {
                    let error = RpcError::new(ErrorCode::INVALID_PARAMS, "session/attach needs a sessionId and a role");
                    return Route::Answer(error_frame(&id, &error));
                };
                if self.attaching.len() >= MAX_GUESTS && !self.attaching.contains_key(&id) {
                    return Route::Answer(error_frame(
                        &id,
                        &RpcError::new(ErrorCode::INTERNAL_ERROR, "too many attaches at once"),
                    ));
                }
                let session: Arc<str> = params.session_id.into();
                self.attaching.insert(id.clone(), session.clone());
                Route::Attach(AttachRequest { id, session, role: params.role })
            }
            Incoming::Request { id, method, .. } if method == DETACH => match session_of(Side::Client, frame) {
                Some(session) if self.is_attached(&session) => Route::Detach { id, session },
                _ => Route::Answer(error_frame(&id, &not_found())),
            },
            Incoming::Request { .. } | Incoming::Notification { .. } => match session_of(Side::Client, frame) {
                Some(session) => match self.sessions.get_key_value(&*session) {
                    Some((session, _)) => Route::Host(session.clone()),
                    None => Route::Local,
                },
                None => Route::Local,
            },
            Incoming::Response { id, .. } => match self.asks.remove(&id) {
                Some(session) if self.is_attached(&session) => Route::Host(session),
                _ => Route::Local,
            },
            _ => Route::Local,
        }
    }

    /// A frame a host sent for `session`, on its way to the client: an attach answer attaches
    /// the session (an error leaves it unattached); an ask is remembered, so that the
    /// client's answer goes back to the host.
    pub fn from_host(&mut self, session: &str, frame: &[u8]) {
        match jsonrpc::parse(frame) {
            Incoming::Response { id, outcome } => {
                if let Some(asked) = self.attaching.remove(&id)
                    && let (Ok(result), true) = (outcome, &*asked == session)
                {
                    let role = serde_json::from_str::<AttachAnswer>(result.get()).map(|a| a.role).unwrap_or_default();
                    self.sessions.insert(asked, role);
                }
            }
            Incoming::Request { id, .. } => {
                if let Some((session, _)) = self.sessions.get_key_value(session)
                    && self.asks.len() < MAX_ASKS
                {
                    self.asks.insert(id, session.clone());
                }
            }
            Incoming::Notification { method, params, .. } if method == crate::Method::CancelRequest.wire() => {
                // The ask was answered elsewhere: the client's late answer has nowhere to go.
                if let Some(id) = params.and_then(|p| serde_json::from_str::<CancelParams>(p.get()).ok()) {
                    self.asks.remove(&id.request_id);
                }
            }
            _ => {}
        }
    }

    /// The answer to a `session/attach` the relay refuses (no such session here, or another
    /// credential's): [`SESSION_NOT_FOUND`].
    pub fn refuse(&mut self, request: &AttachRequest) -> Vec<u8> {
        self.attaching.remove(&request.id);
        error_frame(&request.id, &not_found())
    }

    /// `session` is no longer attached (detached, or its host went away); with the id of a
    /// `session/detach`, the answer to send the client.
    pub fn detached(&mut self, session: &str, id: Option<&RequestId>) -> Option<Vec<u8>> {
        self.sessions.remove(session);
        self.asks.retain(|_, s| &**s != session);
        let id = id?;
        Some(result_frame(id, &json!({ "sessionId": session, "status": "detached" })))
    }

    /// The answer to a request the host could not take in time: `-32603` (`None` for
    /// anything but a request); the session stays attached.
    pub fn busy(&self, frame: &[u8]) -> Option<Vec<u8>> {
        match jsonrpc::parse(frame) {
            Incoming::Request { id, .. } => {
                let error = RpcError::new(ErrorCode::INTERNAL_ERROR, "the shared session's host is not keeping up");
                Some(error_frame(&id, &error))
            }
            _ => None,
        }
    }

    /// The answer to a request for `session` whose host is gone: [`SESSION_NOT_FOUND`]
    /// (`None` for anything but a request).
    pub fn host_gone(&mut self, session: &str, frame: &[u8]) -> Option<Vec<u8>> {
        self.detached(session, None);
        match jsonrpc::parse(frame) {
            Incoming::Request { id, .. } => Some(error_frame(&id, &not_found())),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CancelParams {
    request_id: RequestId,
}

pub(crate) fn not_found() -> RpcError {
    RpcError::new(SESSION_NOT_FOUND, "session not found")
}

/// An error answer under `id`, without a newline.
pub(crate) fn error_frame(id: &RequestId, error: &RpcError) -> Vec<u8> {
    let mut out = Vec::new();
    jsonrpc::encode_error(&mut out, id, error);
    trim_newline(out)
}

/// A result answer under `id`, without a newline.
pub(crate) fn result_frame(id: &RequestId, result: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    // A `Value` always serializes.
    let _ = jsonrpc::encode_result(&mut out, id, result);
    trim_newline(out)
}

/// A notification, without a newline.
pub(crate) fn notification_frame(method: &str, params: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = jsonrpc::encode_notification(&mut out, method, Some(params));
    trim_newline(out)
}

fn trim_newline(mut frame: Vec<u8>) -> Vec<u8> {
    if frame.last() == Some(&b'\n') {
        frame.pop();
    }
    frame
}

/// `frame` with its `id` replaced by `id`; `None` when it is no JSON object.
pub(crate) fn with_id(frame: &[u8], id: &RequestId) -> Option<Vec<u8>> {
    let mut object: Map<String, Value> = serde_json::from_slice(frame).ok()?;
    object.insert("id".to_owned(), serde_json::to_value(id).ok()?);
    serde_json::to_vec(&object).ok()
}
