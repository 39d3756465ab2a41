//! The adapter's error type: [`acp_runtime::Error`], shared with acp-tokio.

use acp_proto::{Method, RpcError};

pub use acp_runtime::Error;

/// The `-32601` answer of a method a handler trait does not implement (their default).
pub(crate) fn unhandled<T>(method: Method) -> Result<T, RpcError> {
    Err(RpcError::method_not_found(method.wire()))
}
