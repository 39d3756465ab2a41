//! The method table: the single source of truth for ACP v1's vocabulary.
//!
//! One literal table ([`method_table!`](crate::method_table), in `methods/table.rs`) lists every
//! method with its wire string, direction, kind, params and result types, capability gate,
//! layer, handler name and default. It is a callback macro: the adapters expand the same table
//! into their handler traits, dispatchers and typed calls. Here it derives:
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
use serde::{Serialize, Serializer};
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

macro_rules! request_group {
    (
        $(#[$rmeta:meta])* $req:ident,
        $(#[$smeta:meta])* $resp:ident,
        $dir:ident,
        [$( $(#[$vmeta:meta])* $v:ident = $w:literal, $p:ident => $r:ident, gate: [$($g:literal),*], cfg: [$($f:literal)?]; )*]
    ) => {
        $(#[$rmeta])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum $req {
            $( $(#[cfg(feature = $f)])? $(#[$vmeta])* $v($p), )*
            /// An extension request (`_`-prefixed method).
            Ext(ExtRequest),
        }

        $(#[$smeta])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum $resp {
            $( $(#[cfg(feature = $f)])? #[doc = concat!("Result of `", $w, "`.")] $v($r), )*
            /// Result of an extension request.
            Ext(ExtResponse),
        }

        impl $req {
            /// The table row's method, or `None` for an extension request.
            pub fn method(&self) -> Option<Method> {
                match self {
                    $( $(#[cfg(feature = $f)])? $req::$v(_) => Some(Method::$v), )*
                    $req::Ext(_) => None,
                }
            }

            /// The method name on the wire.
            pub fn wire(&self) -> &str {
                match self {
                    $( $(#[cfg(feature = $f)])? $req::$v(_) => $w, )*
                    $req::Ext(e) => &e.method,
                }
            }

            /// Decodes a request this side receives from its method name and raw params.
            /// Unknown (non-extension) methods give [`DecodeError::UnknownMethod`].
            pub fn decode(method: &str, params: Option<&RawValue>) -> Result<$req, DecodeError> {
                match method {
                    $( $(#[cfg(feature = $f)])? $w => decode_params(params).map($req::$v), )*
                    m if is_extension_name(m) => {
                        Ok($req::Ext(ExtRequest::new(m, raw_to_value(params)?)))
                    }
                    m => Err(DecodeError::UnknownMethod(m.to_owned())),
                }
            }

            /// Whether the params member is sent (only an extension request may have none).
            pub fn has_params(&self) -> bool {
                !matches!(self, $req::Ext(e) if e.params.is_null())
            }

            /// Decodes the params of a table `method` straight from a deserializer (one pass, no
            /// intermediate value). `Ok(None)` when `method` is not one of this enum's rows.
            pub(crate) fn deserialize_method<'de, D: serde::Deserializer<'de>>(
                method: Method,
                d: D,
            ) -> Result<Option<$req>, D::Error> {
                match method {
                    $( $(#[cfg(feature = $f)])? Method::$v => <$p as serde::Deserialize>::deserialize(d).map(|p| Some($req::$v(p))), )*
                    _ => Ok(None),
                }
            }
        }

        impl Serialize for $req {
            /// Writes the params object.
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $(#[cfg(feature = $f)])? $req::$v(p) => p.serialize(s), )*
                    $req::Ext(e) => e.params.serialize(s),
                }
            }
        }

        impl $resp {
            /// The table row's method, or `None` for an extension result.
            pub fn method(&self) -> Option<Method> {
                match self {
                    $( $(#[cfg(feature = $f)])? $resp::$v(_) => Some(Method::$v), )*
                    $resp::Ext(_) => None,
                }
            }

            /// Decodes the raw result of a request sent with `method` (`None`: extension).
            pub fn decode_result(method: Option<Method>, result: &RawValue) -> Result<$resp, DecodeError> {
                match method {
                    $( $(#[cfg(feature = $f)])? Some(Method::$v) => decode_result(result).map($resp::$v), )*
                    None => serde_json::from_str(result.get())
                        .map(|v| $resp::Ext(ExtResponse(v)))
                        .map_err(|e| DecodeError::Invalid(e.to_string())),
                    Some(other) => Err(DecodeError::UnknownMethod(other.wire().to_owned())),
                }
            }
        }

        impl Serialize for $resp {
            /// Writes the result object.
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $(#[cfg(feature = $f)])? $resp::$v(r) => r.serialize(s), )*
                    $resp::Ext(e) => e.serialize(s),
                }
            }
        }

        $(
            $(#[cfg(feature = $f)])?
            impl From<$p> for $req {
                fn from(p: $p) -> $req {
                    $req::$v(p)
                }
            }
            $(#[cfg(feature = $f)])?
            impl From<$r> for $resp {
                fn from(r: $r) -> $resp {
                    $resp::$v(r)
                }
            }
        )*
    };
}

macro_rules! notification_group {
    (
        $(#[$nmeta:meta])* $not:ident,
        [$( $(#[$vmeta:meta])* $v:ident = $w:literal, $p:ident, layer: $l:ident, cfg: [$($f:literal)?]; )*]
    ) => {
        $(#[$nmeta])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum $not {
            $( $(#[cfg(feature = $f)])? $(#[$vmeta])* $v($p), )*
            /// An extension notification (`_`-prefixed method).
            Ext(ExtNotification),
        }

        impl $not {
            /// The table row's method, or `None` for an extension notification.
            pub fn method(&self) -> Option<Method> {
                match self {
                    $( $(#[cfg(feature = $f)])? $not::$v(_) => Some(Method::$v), )*
                    $not::Ext(_) => None,
                }
            }

            /// The method name on the wire.
            pub fn wire(&self) -> &str {
                match self {
                    $( $(#[cfg(feature = $f)])? $not::$v(_) => $w, )*
                    $not::Ext(e) => &e.method,
                }
            }

            /// Decodes a notification this side receives.
            pub fn decode(method: &str, params: Option<&RawValue>) -> Result<$not, DecodeError> {
                match method {
                    $( $(#[cfg(feature = $f)])? $w => decode_params(params).map($not::$v), )*
                    m if is_extension_name(m) => {
                        Ok($not::Ext(ExtNotification::new(m, raw_to_value(params)?)))
                    }
                    m => Err(DecodeError::UnknownMethod(m.to_owned())),
                }
            }

            /// Whether the params member is sent (only an extension notification may have none).
            pub fn has_params(&self) -> bool {
                !matches!(self, $not::Ext(e) if e.params.is_null())
            }

            /// Decodes the params of a table `method` straight from a deserializer. `Ok(None)`
            /// when `method` is not one of this enum's rows.
            pub(crate) fn deserialize_method<'de, D: serde::Deserializer<'de>>(
                method: Method,
                d: D,
            ) -> Result<Option<$not>, D::Error> {
                match method {
                    $( $(#[cfg(feature = $f)])? Method::$v => <$p as serde::Deserialize>::deserialize(d).map(|p| Some($not::$v(p))), )*
                    _ => Ok(None),
                }
            }
        }

        impl Serialize for $not {
            /// Writes the params object.
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $(#[cfg(feature = $f)])? $not::$v(p) => p.serialize(s), )*
                    $not::Ext(e) => e.params.serialize(s),
                }
            }
        }

        $(
            $(#[cfg(feature = $f)])?
            impl From<$p> for $not {
                fn from(p: $p) -> $not {
                    $not::$v(p)
                }
            }
        )*
    };
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

macro_rules! define_methods {
    (
        {
            requests $(#[$crm:meta])* $creq:ident => $(#[$arm:meta])* $aresp:ident;
            requests $(#[$arqm:meta])* $areq:ident => $(#[$crsm:meta])* $cresp:ident;
            notifications $(#[$cnm:meta])* $cnot:ident;
            notifications $(#[$anm:meta])* $anot:ident;
        }
        client_requests: [ $( {
            $(#[$cm:meta])* $cv:ident = $cw:literal, $cp:ident => $cr:ident, gate: [$($cg:literal),*],
            handler: $ch:ident($ccx:ident), default: $cdef:ident, call: $ccall:ident $(, feature: $cf:literal)?
        } )* ]
        agent_requests: [ $( {
            $(#[$am:meta])* $av:ident = $aw:literal, $ap:ident => $ar:ident, gate: [$($ag:literal),*],
            handler: $ah:ident($acx:ident), default: $adef:ident, call: $acall:ident $(, feature: $af:literal)?
        } )* ]
        client_notifications: [ $( {
            $(#[$cnvm:meta])* $cnv:ident = $cnw:literal, $cnp:ident, gate: [$($cng:literal),*], layer: $cnl:ident, handler: [$($cnh:ident)?]
            $(, feature: $cnf:literal)?
        } )* ]
        agent_notifications: [ $( {
            $(#[$anvm:meta])* $anv:ident = $anw:literal, $anp:ident, gate: [$($ang:literal),*], layer: $anl:ident, handler: [$($anh:ident)?]
            $(, feature: $anf:literal)?
        } )* ]
        protocol: [ $( { $(#[$pm:meta])* $pv:ident = $pw:literal, $pp:ident } )* ]
    ) => {
        /// Every method of the table, one variant per row, in table order. Non-exhaustive: the
        /// `unstable_*` features add variants, and cargo unifies features across a build, so a
        /// crate's exhaustive match would break when another crate turns one on.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Method {
            $( $(#[cfg(feature = $cf)])? #[doc = concat!("`", $cw, "`")] $cv, )*
            $( $(#[cfg(feature = $af)])? #[doc = concat!("`", $aw, "`")] $av, )*
            $( $(#[cfg(feature = $cnf)])? #[doc = concat!("`", $cnw, "`")] $cnv, )*
            $( $(#[cfg(feature = $anf)])? #[doc = concat!("`", $anw, "`")] $anv, )*
            $( #[doc = concat!("`", $pw, "`")] $pv, )*
        }

        /// The method table.
        pub const METHODS: &[MethodRow] = &[
            $( $(#[cfg(feature = $cf)])? MethodRow { method: Method::$cv, wire: $cw, direction: Direction::ClientToAgent, kind: Kind::Request,
                params: stringify!($cp), result: Some(stringify!($cr)), gate: &[$($cg),*], layer: Layer::App, handler: Some(stringify!($ch)) }, )*
            $( $(#[cfg(feature = $af)])? MethodRow { method: Method::$av, wire: $aw, direction: Direction::AgentToClient, kind: Kind::Request,
                params: stringify!($ap), result: Some(stringify!($ar)), gate: &[$($ag),*], layer: Layer::App, handler: Some(stringify!($ah)) }, )*
            $( $(#[cfg(feature = $cnf)])? MethodRow { method: Method::$cnv, wire: $cnw, direction: Direction::ClientToAgent, kind: Kind::Notification,
                params: stringify!($cnp), result: None, gate: &[$($cng),*], layer: Layer::$cnl, handler: opt_name!($($cnh)?) }, )*
            $( $(#[cfg(feature = $anf)])? MethodRow { method: Method::$anv, wire: $anw, direction: Direction::AgentToClient, kind: Kind::Notification,
                params: stringify!($anp), result: None, gate: &[$($ang),*], layer: Layer::$anl, handler: opt_name!($($anh)?) }, )*
            $( MethodRow { method: Method::$pv, wire: $pw, direction: Direction::Both, kind: Kind::Notification,
                params: stringify!($pp), result: None, gate: &[], layer: Layer::Protocol, handler: None }, )*
        ];

        impl Method {
            /// Every method, in table order.
            pub const ALL: &'static [Method] = &[
                $($(#[cfg(feature = $cf)])? Method::$cv,)* $($(#[cfg(feature = $af)])? Method::$av,)*
                $($(#[cfg(feature = $cnf)])? Method::$cnv,)* $($(#[cfg(feature = $anf)])? Method::$anv,)*
                $(Method::$pv,)*
            ];

            /// The method's wire string.
            pub const fn wire(self) -> &'static str {
                match self {
                    $($(#[cfg(feature = $cf)])? Method::$cv => $cw,)*
                    $($(#[cfg(feature = $af)])? Method::$av => $aw,)*
                    $($(#[cfg(feature = $cnf)])? Method::$cnv => $cnw,)*
                    $($(#[cfg(feature = $anf)])? Method::$anv => $anw,)* $(Method::$pv => $pw,)*
                }
            }

            /// Looks a wire string up in the table. A wire string is unique per direction and
            /// kind; one that several rows share (`mcp/message`, `proxy/successor`) gives the
            /// first row here: use [`Method::received`] to resolve it for a receiving side, and
            /// [`Method::received_as`] for a side and a kind.
            #[allow(unreachable_patterns)] // the shared wire string's second row
            pub fn from_wire(wire: &str) -> Option<Method> {
                Some(match wire {
                    $($(#[cfg(feature = $cf)])? $cw => Method::$cv,)*
                    $($(#[cfg(feature = $af)])? $aw => Method::$av,)*
                    $($(#[cfg(feature = $cnf)])? $cnw => Method::$cnv,)*
                    $($(#[cfg(feature = $anf)])? $anw => Method::$anv,)* $($pw => Method::$pv,)*
                    _ => return None,
                })
            }
        }

        request_group!($(#[$crm])* $creq, $(#[$arm])* $aresp, ClientToAgent,
            [$( $(#[$cm])* $cv = $cw, $cp => $cr, gate: [$($cg),*], cfg: [$($cf)?]; )*]);
        request_group!($(#[$arqm])* $areq, $(#[$crsm])* $cresp, AgentToClient,
            [$( $(#[$am])* $av = $aw, $ap => $ar, gate: [$($ag),*], cfg: [$($af)?]; )*]);
        notification_group!($(#[$cnm])* $cnot, [$( $(#[$cnvm])* $cnv = $cnw, $cnp, layer: $cnl, cfg: [$($cnf)?]; )*]);
        notification_group!($(#[$anm])* $anot, [$( $(#[$anvm])* $anv = $anw, $anp, layer: $anl, cfg: [$($anf)?]; )*]);

        $(
            $(#[cfg(feature = $cf)])?
            impl From<$cp> for Request {
                fn from(p: $cp) -> Request { Request::Client($creq::$cv(p)) }
            }
            $(#[cfg(feature = $cf)])?
            impl From<$cr> for Response {
                fn from(r: $cr) -> Response { Response::Agent($aresp::$cv(r)) }
            }
            $(#[cfg(feature = $cf)])?
            impl TypedRequest for $cp {
                type Result = $cr;
                fn result(response: Response) -> Option<$cr> {
                    match response {
                        Response::Agent($aresp::$cv(r)) => Some(r),
                        _ => None,
                    }
                }
            }
        )*
        $(
            $(#[cfg(feature = $af)])?
            impl From<$ap> for Request {
                fn from(p: $ap) -> Request { Request::Agent($areq::$av(p)) }
            }
            $(#[cfg(feature = $af)])?
            impl From<$ar> for Response {
                fn from(r: $ar) -> Response { Response::Client($cresp::$av(r)) }
            }
            $(#[cfg(feature = $af)])?
            impl TypedRequest for $ap {
                type Result = $ar;
                fn result(response: Response) -> Option<$ar> {
                    match response {
                        Response::Client($cresp::$av(r)) => Some(r),
                        _ => None,
                    }
                }
            }
        )*
        $(
            $(#[cfg(feature = $cnf)])?
            impl From<$cnp> for Notification {
                fn from(p: $cnp) -> Notification { Notification::Client($cnot::$cnv(p)) }
            }
        )*
        $(
            $(#[cfg(feature = $anf)])?
            impl From<$anp> for Notification {
                fn from(p: $anp) -> Notification { Notification::Agent($anot::$anv(p)) }
            }
        )*
    };
}

/// `Some("name")` for a notification row with a handler, `None` without.
macro_rules! opt_name {
    () => {
        None
    };
    ($h:ident) => {
        Some(stringify!($h))
    };
}

crate::method_table!(define_methods {
    requests
        /// A request the client sends to the agent (the schema's `ClientRequest` params).
        ClientRequest =>
        /// The agent's result for a [`ClientRequest`] (the schema's `AgentResponse` results).
        AgentResponse;
    requests
        /// A request the agent sends to the client (the schema's `AgentRequest` params).
        AgentRequest =>
        /// The client's result for an [`AgentRequest`] (the schema's `ClientResponse` results).
        ClientResponse;
    notifications
        /// A notification the client sends to the agent (the schema's `ClientNotification`).
        ClientNotification;
    notifications
        /// A notification the agent sends to the client (the schema's `AgentNotification`).
        AgentNotification;
});

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

mod invariants;
mod table;
mod wrappers;

pub use wrappers::{Notification, Request, Response};

#[cfg(test)]
mod tests;
