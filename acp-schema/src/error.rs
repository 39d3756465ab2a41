//! JSON-RPC error objects and the ACP error codes.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON-RPC error code. The named constants are the codes of the schema's `ErrorCode`; any
/// other integer is allowed on the wire.
///
/// ```
/// use acp_schema::ErrorCode;
/// assert_eq!(ErrorCode::METHOD_NOT_FOUND.0, -32601);
/// assert_eq!(ErrorCode::METHOD_NOT_FOUND.name(), Some("Method not found"));
/// assert_eq!(ErrorCode(7).name(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// `-32700`: the frame is not valid JSON (or not valid UTF-8).
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// `-32600`: valid JSON that is not a valid request object, or a request not allowed now.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// `-32601`: the method does not exist or is not available (e.g. not advertised).
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// `-32602`: the params do not match the method's schema.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// `-32603`: an internal error of the receiver.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// `-32800`: the request was cancelled.
    pub const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);
    /// `-32000`: authentication is required first.
    pub const AUTH_REQUIRED: ErrorCode = ErrorCode(-32000);
    /// `-32002`: a resource (a session, a file) was not found.
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// `-32022`: no protocol version the agent speaks is at or below the one the client's
    /// `initialize` asked for (ACP v2's `ErrorCode`; v1's schema has no such code, so it is not
    /// in [`ALL`](Self::ALL)). Its data: [`RpcError::unsupported_protocol_version`].
    #[cfg(feature = "unstable_protocol_v2")]
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);

    /// Every named code, in schema order.
    pub const ALL: [ErrorCode; 8] = [
        Self::PARSE_ERROR,
        Self::INVALID_REQUEST,
        Self::METHOD_NOT_FOUND,
        Self::INVALID_PARAMS,
        Self::INTERNAL_ERROR,
        Self::REQUEST_CANCELLED,
        Self::AUTH_REQUIRED,
        Self::RESOURCE_NOT_FOUND,
    ];

    /// The code's name as the schema titles it, for the named codes.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::PARSE_ERROR => "Parse error",
            Self::INVALID_REQUEST => "Invalid request",
            Self::METHOD_NOT_FOUND => "Method not found",
            Self::INVALID_PARAMS => "Invalid params",
            Self::INTERNAL_ERROR => "Internal error",
            Self::REQUEST_CANCELLED => "Request cancelled",
            Self::AUTH_REQUIRED => "Authentication required",
            Self::RESOURCE_NOT_FOUND => "Resource not found",
            #[cfg(feature = "unstable_protocol_v2")]
            Self::UNSUPPORTED_PROTOCOL_VERSION => "Unsupported protocol version",
            _ => return None,
        })
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} ({name})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

/// A JSON-RPC error object: `{code, message, data?}` (the schema's `Error`).
///
/// ```
/// use acp_schema::{ErrorCode, RpcError};
/// let e = RpcError::invalid_params("missing field `cwd`");
/// assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
/// assert_eq!(
///     serde_json::to_string(&e).unwrap(),
///     r#"{"code":-32602,"message":"Invalid params","data":{"reason":"missing field `cwd`"}}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// The error code.
    pub code: ErrorCode,
    /// A short description, one sentence.
    pub message: String,
    /// Optional details. A JSON `null` decodes as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with the given code and message and no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into(), data: None }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    fn named(code: ErrorCode) -> RpcError {
        RpcError::new(code, code.name().unwrap_or("Error"))
    }

    fn with_reason(code: ErrorCode, reason: impl Into<String>) -> RpcError {
        let mut data = serde_json::Map::new();
        data.insert("reason".into(), Value::String(reason.into()));
        RpcError::named(code).with_data(Value::Object(data))
    }

    /// `-32700` with a reason.
    pub fn parse_error(reason: impl Into<String>) -> RpcError {
        RpcError::with_reason(ErrorCode::PARSE_ERROR, reason)
    }

    /// `-32600` with a reason.
    pub fn invalid_request(reason: impl Into<String>) -> RpcError {
        RpcError::with_reason(ErrorCode::INVALID_REQUEST, reason)
    }

    /// `-32601` naming the method, as `data: {"method": ...}`.
    pub fn method_not_found(method: &str) -> RpcError {
        let mut data = serde_json::Map::new();
        data.insert("method".into(), Value::String(method.to_owned()));
        RpcError::named(ErrorCode::METHOD_NOT_FOUND).with_data(Value::Object(data))
    }

    /// `-32602` with a readable reason.
    pub fn invalid_params(reason: impl Into<String>) -> RpcError {
        RpcError::with_reason(ErrorCode::INVALID_PARAMS, reason)
    }

    /// `-32603` with a reason.
    pub fn internal_error(reason: impl Into<String>) -> RpcError {
        RpcError::with_reason(ErrorCode::INTERNAL_ERROR, reason)
    }

    /// `-32800`, the answer to a cancelled request.
    pub fn request_cancelled() -> RpcError {
        RpcError::named(ErrorCode::REQUEST_CANCELLED)
    }

    /// `-32000`.
    pub fn auth_required() -> RpcError {
        RpcError::named(ErrorCode::AUTH_REQUIRED)
    }

    /// `-32002` with a reason, e.g. an unknown session or a missing file.
    pub fn resource_not_found(reason: impl Into<String>) -> RpcError {
        RpcError::with_reason(ErrorCode::RESOURCE_NOT_FOUND, reason)
    }

    /// `-32022` with `data: {requested, supported}` (v2's `UnsupportedProtocolVersionErrorData`):
    /// the agent's answer to an `initialize` asking for `requested` when none of the versions it
    /// speaks, `supported`, is at or below it (`spec/crate-1.20.0/v2/schema.json`,
    /// `InitializeResponse.protocolVersion` and `ErrorCode`).
    ///
    /// ```
    /// use acp_schema::{ErrorCode, RpcError};
    /// use acp_schema::v1::ProtocolVersion;
    /// let e = RpcError::unsupported_protocol_version(ProtocolVersion::V1, &[ProtocolVersion::V2]);
    /// assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    /// assert_eq!(
    ///     serde_json::to_string(&e).unwrap(),
    ///     r#"{"code":-32022,"message":"Unsupported protocol version","data":{"requested":1,"supported":[2]}}"#
    /// );
    /// ```
    #[cfg(feature = "unstable_protocol_v2")]
    pub fn unsupported_protocol_version(
        requested: crate::v1::ProtocolVersion,
        supported: &[crate::v1::ProtocolVersion],
    ) -> RpcError {
        let supported = supported.iter().map(|v| Value::from(v.0)).collect();
        let mut data = serde_json::Map::new();
        data.insert("requested".into(), Value::from(requested.0));
        data.insert("supported".into(), Value::Array(supported));
        RpcError::named(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION).with_data(Value::Object(data))
    }

    /// The one rule of v2's version negotiation that refuses: when `supported` names versions
    /// and none is at or below `requested`, the
    /// [`unsupported_protocol_version`](Self::unsupported_protocol_version) answer; otherwise
    /// `None` (the agent answers with the highest version at or below). Both
    /// `acp_proto::Acceptor::refusal` and a v2-only connection's engine ask it.
    #[cfg(feature = "unstable_protocol_v2")]
    pub fn refusing_version(
        requested: crate::v1::ProtocolVersion,
        supported: &[crate::v1::ProtocolVersion],
    ) -> Option<RpcError> {
        let none_at_or_below = !supported.is_empty() && supported.iter().all(|v| *v > requested);
        none_at_or_below.then(|| RpcError::unsupported_protocol_version(requested, supported))
    }

    /// The `data.reason` string, when the error carries one.
    pub fn reason(&self) -> Option<&str> {
        self.data.as_ref()?.get("reason")?.as_str()
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.0, self.message)?;
        if let Some(reason) = self.reason() {
            write!(f, " ({reason})")?;
        }
        Ok(())
    }
}

impl std::error::Error for RpcError {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn all_schema_codes_are_named() {
        let codes: Vec<i32> = ErrorCode::ALL.iter().map(|c| c.0).collect();
        assert_eq!(codes, [-32700, -32600, -32601, -32602, -32603, -32800, -32000, -32002]);
        assert!(ErrorCode::ALL.iter().all(|c| c.name().is_some()));
    }

    #[test]
    fn error_objects_round_trip() {
        let e: RpcError = serde_json::from_value(json!({"code": -1, "message": "x", "data": null})).unwrap();
        assert_eq!(e, RpcError::new(ErrorCode(-1), "x"));
        assert_eq!(serde_json::to_value(&e).unwrap(), json!({"code": -1, "message": "x"}));
        let e = RpcError::method_not_found("foo/bar");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"code": -32601, "message": "Method not found", "data": {"method": "foo/bar"}})
        );
        assert_eq!(e.to_string(), "-32601: Method not found");
        assert_eq!(RpcError::invalid_params("bad").to_string(), "-32602: Invalid params (bad)");
    }
}
