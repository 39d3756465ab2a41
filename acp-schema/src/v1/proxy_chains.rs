//! **Unstable** proxy chains (feature `unstable_proxy_chains`): a *conductor* runs a chain of
//! components, each proxy in front of its *successor*, the last one the agent.
//!
//! On a conductor–proxy connection the conductor is the client side and the proxy the agent
//! side. As the pinned schema has it:
//!
//! * `proxy/initialize` ([`InitializeProxyRequest`] ⇒ [`InitializeProxyResponse`]) is sent by
//!   the conductor *instead of* `initialize` to a component that has a successor; params and
//!   result are those of `initialize`. The proxy answers with the capabilities of the chain from
//!   itself onward, and must not change `protocolVersion`.
//! * `proxy/successor` wraps one message, request ([`ProxySuccessorRequest`] ⇒
//!   [`ProxySuccessorResponse`]) or notification ([`ProxySuccessorNotification`]), and runs both
//!   ways: the proxy sends it to forward a message downstream, the conductor sends it to deliver
//!   a message from the successor. The wrapped request's result or error is the envelope's,
//!   unchanged; the envelope's `_meta` is hop-local.
//!
//! Upstream may change or remove this in any release.
//!
//! ```
//! use acp_schema::v1::*;
//! let wrapped = ProxySuccessorRequest::new("session/new")
//!     .with_params(serde_json::json!({"cwd": "/w", "mcpServers": []}));
//! assert_eq!(
//!     serde_json::to_value(&wrapped).unwrap(),
//!     serde_json::json!({"method": "session/new", "params": {"cwd": "/w", "mcpServers": []}})
//! );
//! let init = InitializeProxyRequest::from(InitializeRequest::new(ProtocolVersion::V1));
//! assert_eq!(serde_json::to_value(&init).unwrap()["protocolVersion"], 1);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::serde_util::{Meta, lenient};
use super::{InitializeRequest, InitializeResponse};

/// Params of `proxy/initialize`: those of `initialize` (the protocol version the conductor
/// selected, the client's capabilities), sent to a component that has a successor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InitializeProxyRequest(pub InitializeRequest);

impl From<InitializeRequest> for InitializeProxyRequest {
    fn from(request: InitializeRequest) -> Self {
        InitializeProxyRequest(request)
    }
}

/// Result of `proxy/initialize`: that of `initialize`, the capabilities of the chain from the
/// proxy onward (its `protocolVersion` unchanged from the successor's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InitializeProxyResponse(pub InitializeResponse);

impl From<InitializeResponse> for InitializeProxyResponse {
    fn from(response: InitializeResponse) -> Self {
        InitializeProxyResponse(response)
    }
}

/// Params of a `proxy/successor` request: one wrapped request, its `method` and `params`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProxySuccessorRequest {
    /// The wrapped request's method.
    pub method: String,
    /// The wrapped request's params, forwarded unchanged (absent and `null` both mean none; a
    /// JSON object or array otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// The envelope's own metadata, hop-local (the wrapped message's stays in `params`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ProxySuccessorRequest {
    /// Wraps a request of `method` without params.
    pub fn new(method: impl Into<String>) -> Self {
        ProxySuccessorRequest { method: method.into(), params: None, meta: None }
    }

    /// The wrapped request's params.
    pub fn with_params(mut self, params: Value) -> Self {
        self.params = Some(params);
        self
    }
}

/// Result of a `proxy/successor` request: the wrapped request's result, any JSON, unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProxySuccessorResponse(pub Value);

/// Params of a `proxy/successor` notification: one wrapped notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProxySuccessorNotification {
    /// The wrapped notification's method.
    pub method: String,
    /// The wrapped notification's params, forwarded unchanged (absent and `null` both mean
    /// none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// The envelope's own metadata, hop-local.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ProxySuccessorNotification {
    /// Wraps a notification of `method` without params.
    pub fn new(method: impl Into<String>) -> Self {
        ProxySuccessorNotification { method: method.into(), params: None, meta: None }
    }

    /// The wrapped notification's params.
    pub fn with_params(mut self, params: Value) -> Self {
        self.params = Some(params);
        self
    }
}

/// Params of a `proxy/successor` request sent by the **proxy** (to forward a request to its
/// successor): a [`ProxySuccessorRequest`] under another Rust name. The schema has one type
/// for both directions; the typed layer maps each params type to one row of the method table
/// (`From<T> for Request`, `acp_proto::methods::TypedRequest`), so the proxy's rows
/// carry these wrappers. The wire form is the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProxyForwardRequest(pub ProxySuccessorRequest);

impl From<ProxySuccessorRequest> for ProxyForwardRequest {
    fn from(request: ProxySuccessorRequest) -> Self {
        ProxyForwardRequest(request)
    }
}

/// Result of a `proxy/successor` request the proxy sent: a [`ProxySuccessorResponse`] (see
/// [`ProxyForwardRequest`] for why it has its own name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProxyForwardResponse(pub ProxySuccessorResponse);

/// Params of a `proxy/successor` notification sent by the **proxy**: a
/// [`ProxySuccessorNotification`] (see [`ProxyForwardRequest`] for why it has its own name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProxyForwardNotification(pub ProxySuccessorNotification);

impl From<ProxySuccessorNotification> for ProxyForwardNotification {
    fn from(notification: ProxySuccessorNotification) -> Self {
        ProxyForwardNotification(notification)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn envelopes_round_trip_and_null_params_is_none() {
        let r: ProxySuccessorRequest =
            serde_json::from_value(json!({"method": "m", "params": null, "_meta": 3})).unwrap();
        assert_eq!(r, ProxySuccessorRequest::new("m"));
        let n = json!({"method": "session/update", "params": [1], "_meta": {"hop": 1}});
        let decoded: ProxySuccessorNotification = serde_json::from_value(n.clone()).unwrap();
        assert_eq!(serde_json::to_value(&decoded).unwrap(), n);
        assert!(serde_json::from_value::<ProxySuccessorRequest>(json!({"params": {}})).is_err());
        let result: ProxySuccessorResponse = serde_json::from_value(json!(null)).unwrap();
        assert_eq!(result.0, Value::Null);
    }
}
