//! Shared by the interop test binaries: the official SDK's peers (v1 agent; v2 agent and client),
//! the raw v2 frame pipe, and small helpers.
#![allow(dead_code, unreachable_pub)]

pub mod sdk_agent;
pub mod sdk_v2_agent;
pub mod sdk_v2_client;
pub mod wire;

use std::time::Duration;

/// How long any one scenario may take before it counts as hung.
pub const LIMIT: Duration = Duration::from_secs(20);

/// Runs `future` to completion within [`LIMIT`].
pub async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, future).await.unwrap_or_else(|_| panic!("{what}: no answer within {LIMIT:?}"))
}
