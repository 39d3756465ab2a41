//! acp-proto
#![deny(missing_docs)]

pub mod error;
pub mod framer;
pub mod jsonrpc;
pub mod time;
pub mod types;

pub use error::{ErrorCode, RpcError};
pub use jsonrpc::RequestId;
pub use time::Instant;
