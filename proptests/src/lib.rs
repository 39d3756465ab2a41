//! Property tests and the simulation harness for acp-proto.

pub mod schema_gen;
pub mod sim;
