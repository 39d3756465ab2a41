//! What the generated v2 table (`v2/generated/`, written by `tools/acp-gen` from
//! `acp-proto/methods/v2.toml`) builds on: the row and error types it shares with v1, the
//! extension value types, the decoder of typed params, and [`Method`]'s lookups.

use serde_json::Value;

use super::*;

/// One row of the v2 method table: the one row type of both tables
/// ([`methods::MethodRow`](crate::methods::MethodRow)) over v2's [`Method`].
pub type MethodRow = crate::methods::MethodRow<Method>;

/// Why params or a result did not decode: the one error of both tables
/// ([`methods::DecodeError`](crate::methods::DecodeError)).
pub use crate::methods::DecodeError;

/// Decodes the params or result of a known method (absent counts as `null`).
pub(super) fn typed<T: serde::de::DeserializeOwned>(value: Option<Value>) -> Result<T, DecodeError> {
    serde_json::from_value(value.unwrap_or(Value::Null)).map_err(|e| DecodeError::Invalid(e.to_string()))
}

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
