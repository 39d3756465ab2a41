//! Serde types for every definition of the ACP v1.19.0 JSON schema.

pub mod serde_util;

pub use serde_util::{Meta, UnknownVariant};
