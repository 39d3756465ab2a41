//! The method table: the single source of truth for ACP v1's vocabulary.
//!
//! One literal table (`acp-proto/methods/v1.toml`) lists every method with its wire string,
//! direction, kind, params and result types, capability gate, layer, handler name and default.
//! `tools/acp-gen` (`cargo run -p acp-gen`) writes what it derives as checked-in Rust, which CI
//! checks is fresh: the adapters' handler traits, dispatchers and typed calls (in their
//! `src/generated/`), and here (`methods/generated/`):
//!
//! * [`METHODS`], the table as data, and the [`Method`] index enum;
//! * the typed enums per side: [`ClientRequest`] / [`AgentResponse`] (client → agent requests
//!   and their results), [`AgentRequest`] / [`ClientResponse`] (agent → client),
//!   [`ClientNotification`], [`AgentNotification`], and the role-agnostic wrappers [`Request`],
//!   [`Response`], [`Notification`];
//! * their decoders (`decode`, `decode_result`) and encoders (`Serialize` writes the params);
//! * [`TypedRequest`], which names the result type of each request params type;
//! * the capability gate (internal: the connection applies it), which reads the `gate` column.
//!
//! Extension methods (`_`-prefixed) are not rows: every request and notification enum has an
//! `Ext` variant that passes them through as raw JSON.
//!
//! Invariants checked at compile time (a `const` assertion over [`METHODS`]): wire strings are
//! unique per direction, and so are handler names per receiving side; a notification has no
//! result type and a request has one; no row starts with `_`; `$/` appears only on protocol
//! rows and protocol rows only use it; exactly the application's rows have a handler. A wire
//! string may so be written in two rows of opposite directions (the unstable `mcp/message`:
//! a request the client handles, a notification the agent handles); the receiving side picks
//! its row with [`Method::received`], which the connection uses on every inbound message. Tests
//! check the rest: the table equals the pinned `meta.json`, each row's types are the ones the
//! schema names for that method, and every gate path resolves to a capability field.
//!
//! | wire | direction | kind | gate (receiver's own capabilities) | layer |
//! |---|---|---|---|---|
//! | `initialize` | client → agent | request | | app |
//! | `authenticate` | client → agent | request | | app |
//! | `session/new` | client → agent | request | | app |
//! | `session/load` | client → agent | request | `loadSession` | app |
//! | `session/set_mode` | client → agent | request | | app |
//! | `session/set_config_option` | client → agent | request | | app |
//! | `session/prompt` | client → agent | request | | app |
//! | `session/list` | client → agent | request | `sessionCapabilities.list` | app |
//! | `session/delete` | client → agent | request | `sessionCapabilities.delete` | app |
//! | `session/resume` | client → agent | request | `sessionCapabilities.resume` | app |
//! | `session/close` | client → agent | request | `sessionCapabilities.close` | app |
//! | `logout` | client → agent | request | `auth.logout` | app |
//! | `auth/status` (feature `unstable_auth_status`) | client → agent | request | `auth.status` | app |
//! | `providers/list`, `providers/set`, `providers/disable` (feature `unstable_llm_providers`) | client → agent | request | `providers` | app |
//! | `session/options` (feature `unstable_session_options`) | client → agent | request | `sessionCapabilities.options` | app |
//! | `session/set_title` (feature `unstable_session_set_title`) | client → agent | request | `sessionCapabilities.title` | app |
//! | `session/status` (feature `unstable_session_status`) | client → agent | request | `sessionCapabilities.status` | app |
//! | `session/archive`, `session/unarchive` (feature `unstable_session_archive`) | client → agent | request | `sessionCapabilities.archive` | app |
//! | `session/fork` (feature `unstable_session_fork`) | client → agent | request | `sessionCapabilities.fork` | app |
//! | `session/cancel` | client → agent | notification | | session_control |
//! | `mcp/message` (feature `unstable_mcp_over_acp`) | client → agent | notification | `mcpCapabilities.acp` (outbound only) | app |
//! | `mcp/message` (feature `unstable_mcp_over_acp`) | agent → client | request | (none: the client invites it by declaring an `acp` MCP server) | app |
//! | `session/request_permission` | agent → client | request | | app |
//! | `fs/read_text_file` | agent → client | request | `fs.readTextFile` | app |
//! | `fs/write_text_file` | agent → client | request | `fs.writeTextFile` | app |
//! | `terminal/create`, `terminal/output`, `terminal/release`, `terminal/wait_for_exit`, `terminal/kill` | agent → client | request | `terminal` | app |
//! | `elicitation/create` | agent → client | request | `elicitation` (and, by mode, `.form` or `.url`: the gate's content rules) | app |
//! | `session/update` | agent → client | notification | (by update kind: the gate's content rules) | app |
//! | `auth/status_update` (feature `unstable_auth_status`) | agent → client | notification | none; the **sender's** own `auth.status` (the gate's sender rules, outbound only) | app |
//! | `elicitation/complete` | agent → client | notification | `elicitation.url` (outbound only) | app |
//! | `$/cancel_request` | both | notification | | protocol |

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::RpcError;
use crate::ext::{ExtNotification, ExtRequest, ExtResponse, is_extension_name};
use crate::types::*;

/// Who sends a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Sent by the client, handled by the agent.
    ClientToAgent,
    /// Sent by the agent, handled by the client.
    AgentToClient,
    /// Sent by either side (`$/cancel_request`).
    Both,
}

/// Request (answered) or notification (never answered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Gets exactly one response.
    Request,
    /// Gets no response.
    Notification,
}

/// Which part of the stack owns a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// Dispatched to the application.
    App,
    /// Handled by the connection before decoding (`$/cancel_request`).
    Protocol,
    /// Handled by the connection's session bookkeeping (`session/cancel`).
    SessionControl,
}

/// One row of a method table: `MethodRow` (`v1::MethodRow`) for v1's, `v2::MethodRow`
/// (`MethodRow<v2::Method>`) for v2's; the same fields, so code reading a table reads either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodRow<M = Method> {
    /// The method this row describes.
    pub method: M,
    /// The method name on the wire.
    pub wire: &'static str,
    /// Who sends it.
    pub direction: Direction,
    /// Request or notification.
    pub kind: Kind,
    /// Name of the schema definition of its params.
    pub params: &'static str,
    /// Name of the schema definition of its result (requests only).
    pub result: Option<&'static str>,
    /// Path into the **receiver's own** capabilities that must be advertised for the method to
    /// be allowed; empty when the method is always allowed. (v2 enforces it both ways on a
    /// connection that negotiated v2.)
    pub gate: &'static [&'static str],
    /// Who owns it.
    pub layer: Layer,
    /// The receiver's handler method in the adapters' handler traits; `None` for the
    /// notifications the connection owns (`session/cancel`, `$/cancel_request`).
    pub handler: Option<&'static str>,
}

impl<M> MethodRow<M> {
    /// Whether `side` receives (handles) this method.
    pub fn received_by(&self, side: crate::Side) -> bool {
        matches!(
            (self.direction, side),
            (Direction::Both, _)
                | (Direction::ClientToAgent, crate::Side::Agent)
                | (Direction::AgentToClient, crate::Side::Client)
        )
    }
}

/// Why params or a result did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not a method this side handles (answered `-32601`).
    UnknownMethod(String),
    /// The params (or result) do not match the schema (answered `-32602`); a readable reason.
    Invalid(String),
}

impl DecodeError {
    /// What did not decode: the method name, or the readable reason.
    pub fn reason(&self) -> &str {
        match self {
            DecodeError::UnknownMethod(m) => m,
            DecodeError::Invalid(reason) => reason,
        }
    }

    /// The JSON-RPC error to answer with.
    pub fn to_rpc_error(&self) -> RpcError {
        match self {
            DecodeError::UnknownMethod(m) => RpcError::method_not_found(m),
            DecodeError::Invalid(reason) => RpcError::invalid_params(reason.clone()),
        }
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::UnknownMethod(m) => write!(f, "unknown method `{m}`"),
            DecodeError::Invalid(reason) => write!(f, "invalid params: {reason}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Decodes typed params; absent params decode as `{}` (so a type with only optional fields
/// accepts them and one with required fields names the missing field).
fn decode_params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, DecodeError> {
    let text = params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(|e| DecodeError::Invalid(e.to_string()))
}

/// Decodes a typed result. A `null` result is read as `{}`, which some peers send for results
/// without required fields.
fn decode_result<T: DeserializeOwned>(result: &RawValue) -> Result<T, DecodeError> {
    serde_json::from_str(result.get()).or_else(|e| {
        if result.get() == "null" {
            serde_json::from_str("{}").map_err(|_| DecodeError::Invalid(e.to_string()))
        } else {
            Err(DecodeError::Invalid(e.to_string()))
        }
    })
}

fn raw_to_value(raw: Option<&RawValue>) -> Result<Value, DecodeError> {
    match raw {
        None => Ok(Value::Null),
        Some(r) => serde_json::from_str(r.get()).map_err(|e| DecodeError::Invalid(e.to_string())),
    }
}

/// A request params type whose result type the method table knows: `NewSessionRequest` is
/// answered by `NewSessionResponse`, `ReadTextFileRequest` by `ReadTextFileResponse`, and so on
/// for every request row of both directions (the impls are generated from the table).
///
/// It lets an adapter offer one typed call for every method instead of a table of its own.
/// Extension requests are not rows, so they have no impl.
///
/// ```
/// use acp_proto::types::*;
/// use acp_proto::{Request, Response, TypedRequest};
///
/// /// A typed call over an untyped transport (here: a closure that answers at once).
/// fn call<R: TypedRequest>(request: R, send: impl FnOnce(Request) -> Response) -> Option<R::Result> {
///     R::result(send(request.into()))
/// }
///
/// let init = InitializeRequest::new(ProtocolVersion::V1);
/// let response: InitializeResponse = call(init, |_| InitializeResponse::new(ProtocolVersion::V1).into()).unwrap();
/// assert_eq!(response.protocol_version, ProtocolVersion::V1);
///
/// // A result of another method is not this request's result.
/// let other: Response = InitializeResponse::new(ProtocolVersion::V1).into();
/// assert!(AuthenticateRequest::result(other).is_none());
/// ```
pub trait TypedRequest: Into<Request> {
    /// The result type that answers this request.
    type Result;

    /// Picks the typed result out of a decoded response; `None` when the response is the
    /// result of another method.
    fn result(response: Response) -> Option<Self::Result>;
}

impl Method {
    /// The method's table row.
    pub fn row(self) -> &'static MethodRow {
        &METHODS[self as usize]
    }

    /// The row of `wire` that `side` receives, if any: [`Method::from_wire`], and for a wire
    /// string that rows of both directions share, the row of the other direction when the
    /// first is not `side`'s.
    ///
    /// ```
    /// use acp_proto::Side;
    /// use acp_proto::methods::Method;
    /// assert_eq!(Method::received("session/prompt", Side::Agent), Some(Method::Prompt));
    /// assert_eq!(Method::received("session/prompt", Side::Client), None);
    /// assert_eq!(Method::received("$/cancel_request", Side::Client), Some(Method::CancelRequest));
    /// ```
    pub fn received(wire: &str, side: crate::Side) -> Option<Method> {
        let first = Method::from_wire(wire)?;
        if first.row().received_by(side) {
            return Some(first);
        }
        // Rare: only a shared wire string gets here, and the table is short.
        METHODS.iter().find(|r| r.wire == wire && r.received_by(side)).map(|r| r.method)
    }

    /// Resolves a wire string received by `side` as a message of `kind`: as
    /// [`received`](Self::received), but also telling apart the request and the notification
    /// rows that share a wire string in one direction (`proxy/successor`, feature
    /// `unstable_proxy_chains`). `None` when no row of that kind is received by `side`.
    ///
    /// ```
    /// use acp_proto::Side;
    /// use acp_proto::methods::{Kind, Method};
    /// assert_eq!(Method::received_as("session/prompt", Side::Agent, Kind::Request), Some(Method::Prompt));
    /// assert_eq!(Method::received_as("session/prompt", Side::Agent, Kind::Notification), None);
    /// ```
    pub fn received_as(wire: &str, side: crate::Side, kind: Kind) -> Option<Method> {
        let first = Method::received(wire, side)?;
        if first.row().kind == kind {
            return Some(first);
        }
        METHODS.iter().find(|r| r.wire == wire && r.kind == kind && r.received_by(side)).map(|r| r.method)
    }
}

mod generated;
mod invariants;
mod wrappers;

pub use generated::*;
pub use wrappers::{Call, Notification, Request, Response};

#[cfg(test)]
mod tests;
