//! Extension methods: `_`-prefixed requests and notifications, passed through as raw JSON.
//!
//! The schema's `ExtRequest`, `ExtNotification` and `ExtResponse` allow any JSON value. Here an
//! extension request or notification carries its method name beside its params, since both are
//! needed to send or dispatch it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An extension request (`_vendor/method`), params kept as raw JSON (`Value::Null` when the
/// request had none).
///
/// ```
/// use acp_proto::ext::ExtRequest;
/// let r = ExtRequest::new("_zed.dev/workspace/buffers", serde_json::json!({"language": "rust"}));
/// assert!(r.is_valid_name());
/// assert!(!ExtRequest::new("workspace/buffers", serde_json::Value::Null).is_valid_name());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ExtRequest {
    /// The method name; extension names start with `_`.
    pub method: Arc<str>,
    /// The params, any JSON; `Null` means none (the member is omitted on the wire).
    pub params: Value,
}

/// An extension notification, params kept as raw JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtNotification {
    /// The method name; extension names start with `_`.
    pub method: Arc<str>,
    /// The params, any JSON; `Null` means none.
    pub params: Value,
}

/// The result of an extension request: any JSON.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ExtResponse(pub Value);

impl ExtRequest {
    /// An extension request.
    pub fn new(method: impl Into<Arc<str>>, params: Value) -> ExtRequest {
        ExtRequest { method: method.into(), params }
    }

    /// Whether the name is a valid extension name (starts with `_`).
    pub fn is_valid_name(&self) -> bool {
        is_extension_name(&self.method)
    }
}

impl ExtNotification {
    /// An extension notification.
    pub fn new(method: impl Into<Arc<str>>, params: Value) -> ExtNotification {
        ExtNotification { method: method.into(), params }
    }

    /// Whether the name is a valid extension name (starts with `_`).
    pub fn is_valid_name(&self) -> bool {
        is_extension_name(&self.method)
    }
}

/// Whether `method` is reserved for extensions: it starts with `_`.
pub fn is_extension_name(method: &str) -> bool {
    method.starts_with('_')
}
