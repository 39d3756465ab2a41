//! Transitional (hidden): the engine of either version under its old names, for the adapters
//! until they are generic over [`Protocol`](crate::protocol::Protocol) themselves. Not part of
//! the API; it goes when they are.

pub use crate::connection::{AnyConnection, AnyEvent, AnyOutcome};
