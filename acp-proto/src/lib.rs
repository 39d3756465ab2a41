//! acp-proto
#![deny(missing_docs)]

pub mod types;
