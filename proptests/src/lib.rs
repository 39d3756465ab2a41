//! Property tests and the simulation harness for acp-proto.

pub mod fuzzing;
pub mod oracle;
pub mod oracle_unstable;
pub mod schema_gen;
pub mod sim;
pub mod spec;
