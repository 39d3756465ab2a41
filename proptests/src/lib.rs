//! Property tests and the simulation harness for acp-proto.

pub mod fuzzing;
mod fuzzing_attach;
mod fuzzing_observer;
mod fuzzing_resume;
#[cfg(feature = "unstable_protocol_v2")]
mod fuzzing_v2;
pub mod link;
pub mod oracle;
pub mod oracle_unstable;
#[cfg(feature = "unstable_protocol_v2")]
pub mod oracle_v2;
pub mod schema_gen;
pub mod sim;
pub mod spec;
