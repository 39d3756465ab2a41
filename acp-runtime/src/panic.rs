//! [`handler_panicked`]: the answer to a request whose handler panicked, the same on every
//! adapter.

use std::any::Any;

use acp_proto::RpcError;

/// The answer to a request whose handler panicked: `-32603` saying only that the handler
/// failed. The panic's message stays in this process: the panic hook printed it, and with the
/// `tracing` feature it is an `ERROR` event (target `acp`, `a request handler panicked`).
///
/// ```
/// let panic = std::panic::catch_unwind(|| panic!("secret detail")).unwrap_err();
/// let answer = acp_runtime::handler_panicked(&*panic);
/// assert_eq!(answer.code, acp_proto::ErrorCode::INTERNAL_ERROR);
/// assert!(!format!("{answer:?}").contains("secret detail"));
/// ```
pub fn handler_panicked(panic: &(dyn Any + Send)) -> RpcError {
    let _message = panic.downcast_ref::<&str>().copied().or_else(|| panic.downcast_ref::<String>().map(String::as_str));
    #[cfg(feature = "tracing")]
    tracing::error!(target: "acp", message = _message.unwrap_or("(not a string)"), "a request handler panicked");
    RpcError::internal_error("the request handler panicked")
}
