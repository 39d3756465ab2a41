//! Helpers shared by the scenario tests (std only).
#![allow(dead_code)]

// The scratch directory of the unit tests, shared rather than written twice.
#[path = "../../src/testutil.rs"]
mod testutil;
pub(crate) use testutil::TempDir;

/// The `data.kind` of an error.
pub(crate) fn kind(e: &acp_proto::RpcError) -> Option<String> {
    Some(e.data.as_ref()?.get("kind")?.as_str()?.to_owned())
}
