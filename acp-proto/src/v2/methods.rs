//! The v2 method table expanded: [`Method`], [`METHODS`] and, per message kind and sender,
//! the typed params (or results) keyed by method name, on which the envelopes
//! ([`ClientRequest`], …) are built.

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::*;
use crate::methods::{Direction, Kind, Layer};

/// Any JSON value: the params of an extension request (`ExtRequest`).
pub type ExtRequest = Value;
/// Any JSON value: the result of an extension request (`ExtResponse`).
pub type ExtResponse = Value;
/// Any JSON value: the params of an extension notification (`ExtNotification`).
pub type ExtNotification = Value;

/// One row of the v2 method table: the one row type of both tables
/// ([`methods::MethodRow`](crate::methods::MethodRow)) over v2's [`Method`].
pub type MethodRow = crate::methods::MethodRow<Method>;

/// Why params or a result did not decode: the one error of both tables
/// ([`methods::DecodeError`](crate::methods::DecodeError)).
pub use crate::methods::DecodeError;

/// Decodes the params or result of a known method (absent counts as `null`).
fn typed<T: serde::de::DeserializeOwned>(value: Option<Value>) -> Result<T, DecodeError> {
    serde_json::from_value(value.unwrap_or(Value::Null)).map_err(|e| DecodeError::Invalid(e.to_string()))
}

/// A row's handler name, if the table names one.
macro_rules! handler_of {
    () => {
        None
    };
    ($h:ident) => {
        Some(stringify!($h))
    };
}

/// Declares an enum of typed params (or results) keyed by method, with an `Other` variant for
/// methods not in the table (extensions), kept verbatim.
macro_rules! by_method {
    ($(#[$doc:meta])* $name:ident, other: $other:ty { $($(#[$vdoc:meta])* $v:ident($t:ident) = $w:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vdoc])* $v($t),)*
            /// A method not in the v2 table (an extension method), with its wire name and
            /// params kept verbatim.
            Other {
                /// The wire method name.
                method: String,
                /// The params (or result), as sent.
                value: $other,
            },
        }

        impl $name {
            /// The wire method name.
            pub fn method(&self) -> &str {
                match self {
                    $($name::$v(_) => $w,)*
                    $name::Other { method, .. } => method,
                }
            }

            /// Decodes `value` as the params (or result) of `method`: typed for a method of the
            /// table (an error if they do not decode), kept verbatim otherwise.
            pub fn decode(method: &str, value: Option<Value>) -> Result<Self, DecodeError> {
                match method {
                    $($w => typed(value).map($name::$v),)*
                    _ => Ok($name::Other { method: method.to_owned(), value: value.into() }),
                }
            }

            /// Whether there is a value to write (an `Other` notification or request may have no
            /// params).
            pub fn has_value(&self) -> bool {
                match self {
                    $name::Other { value, .. } => MaybeValue::is_present(value),
                    _ => true,
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $($name::$v(p) => p.serialize(s),)*
                    $name::Other { value, .. } => value.serialize(s),
                }
            }
        }
    };
}

/// An `Other` value: optional for params, always there for results.
trait MaybeValue {
    fn is_present(&self) -> bool;
}

impl MaybeValue for Option<Value> {
    fn is_present(&self) -> bool {
        self.is_some()
    }
}

impl MaybeValue for Value {
    fn is_present(&self) -> bool {
        true
    }
}

/// The table callback: expands the rows into the items of this module.
macro_rules! v2_methods {
    (
        {}
        client_requests: [ $( {
            $(#[doc = $cd:literal])* $cv:ident = $cw:literal, $cp:ident => $cr:ident,
            gate: [$($cg:literal),*], handler: $ch:ident($ccx:ident), default: $cdef:ident, call: $ccall:ident
        } )* ]
        agent_requests: [ $( {
            $(#[doc = $ad:literal])* $av:ident = $aw:literal, $ap:ident => $ar:ident,
            gate: [$($ag:literal),*], handler: $ah:ident($acx:ident), default: $adef:ident, call: $acall:ident
        } )* ]
        client_notifications: [ $( {
            $(#[doc = $nd:literal])* $nv:ident = $nw:literal, $np:ident,
            gate: [$($ng:literal),*], layer: $nl:ident, handler: [$($nh:ident)?]
        } )* ]
        agent_notifications: [ $( {
            $(#[doc = $md:literal])* $mv:ident = $mw:literal, $mp:ident,
            gate: [$($mg:literal),*], layer: $ml:ident, handler: [$($mh:ident)?]
        } )* ]
        protocol: [ $( { $(#[doc = $pd:literal])* $pv:ident = $pw:literal, $pp:ident } )* ]
    ) => {
        /// A method of the v2 table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Method {
            $($(#[doc = $cd])* $cv,)*
            $($(#[doc = $ad])* $av,)*
            $($(#[doc = $nd])* $nv,)*
            $($(#[doc = $md])* $mv,)*
            $($(#[doc = $pd])* $pv,)*
        }

        /// Every row of the v2 method table, in table order.
        pub static METHODS: &[MethodRow] = &[
            $(MethodRow { method: Method::$cv, wire: $cw, direction: Direction::ClientToAgent, kind: Kind::Request,
                params: stringify!($cp), result: Some(stringify!($cr)), gate: &[$($cg),*], layer: Layer::App,
                handler: Some(stringify!($ch)) },)*
            $(MethodRow { method: Method::$av, wire: $aw, direction: Direction::AgentToClient, kind: Kind::Request,
                params: stringify!($ap), result: Some(stringify!($ar)), gate: &[$($ag),*], layer: Layer::App,
                handler: Some(stringify!($ah)) },)*
            $(MethodRow { method: Method::$nv, wire: $nw, direction: Direction::ClientToAgent,
                kind: Kind::Notification, params: stringify!($np), result: None, gate: &[$($ng),*],
                layer: Layer::$nl, handler: handler_of!($($nh)?) },)*
            $(MethodRow { method: Method::$mv, wire: $mw, direction: Direction::AgentToClient,
                kind: Kind::Notification, params: stringify!($mp), result: None, gate: &[$($mg),*],
                layer: Layer::$ml, handler: handler_of!($($mh)?) },)*
            $(MethodRow { method: Method::$pv, wire: $pw, direction: Direction::Both, kind: Kind::Notification,
                params: stringify!($pp), result: None, gate: &[], layer: Layer::Protocol, handler: None },)*
        ];

        by_method! {
            /// The params of a request the client sends.
            ClientRequest, other: Option<Value> { $($(#[doc = $cd])* $cv($cp) = $cw),* }
        }
        by_method! {
            /// The result of a request the client sent (what the agent answers).
            AgentResponse, other: Value { $($(#[doc = $cd])* $cv($cr) = $cw),* }
        }
        by_method! {
            /// The params of a request the agent sends.
            AgentRequest, other: Option<Value> { $($(#[doc = $ad])* $av($ap) = $aw),* }
        }
        by_method! {
            /// The result of a request the agent sent (what the client answers).
            ClientResponse, other: Value { $($(#[doc = $ad])* $av($ar) = $aw),* }
        }
        by_method! {
            /// The params of a notification the client sends.
            ClientNotification, other: Option<Value> { $($(#[doc = $nd])* $nv($np) = $nw),* }
        }
        by_method! {
            /// The params of a notification the agent sends.
            AgentNotification, other: Option<Value> { $($(#[doc = $md])* $mv($mp) = $mw),* }
        }
        by_method! {
            /// The params of a protocol-level (`$/`) notification, either side.
            ProtocolNotification, other: Option<Value> { $($(#[doc = $pd])* $pv($pp) = $pw),* }
        }
    };
}

crate::method_table_v2!(v2_methods {});

impl Method {
    /// The method's row.
    pub fn row(self) -> &'static MethodRow {
        METHODS.iter().find(|r| r.method == self).unwrap_or_else(|| unreachable!("every method has a row"))
    }

    /// The wire name.
    pub fn wire(self) -> &'static str {
        self.row().wire
    }

    /// The method of a wire name, if it is in the v2 table.
    pub fn from_wire(wire: &str) -> Option<Method> {
        METHODS.iter().find(|r| r.wire == wire).map(|r| r.method)
    }
}
