//! The adapter's error type: [`acp_runtime::Error`], shared with acp-blocking.

pub use acp_runtime::Error;
