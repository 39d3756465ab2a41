//! The adapter's error type: [`acp_runtime::Error`], shared with acp-tokio.

pub use acp_runtime::Error;
