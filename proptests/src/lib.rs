//! Property tests and the simulation harness for acp-proto.
