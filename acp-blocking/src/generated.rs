//! What `tools/acp-gen` writes from the method tables (`acp-proto/methods/{v1,v2}.toml`): each
//! version's handler traits, their `Arc` forwarding and dispatch, and the typed calls, one file
//! per version and side under `generated/`. The hand-written modules re-export the traits
//! (`crate::agent`, `crate::client`, `crate::v2`) and call the dispatchers; a wire string is
//! written only in the tables. Edit a table (or the generator), then run `cargo run -p acp-gen`.

pub(crate) mod v1_agent;
pub(crate) mod v1_client;
#[cfg(feature = "unstable_protocol_v2")]
pub(crate) mod v2_agent;
#[cfg(feature = "unstable_protocol_v2")]
pub(crate) mod v2_client;
