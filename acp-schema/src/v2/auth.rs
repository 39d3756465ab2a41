//! v2 authentication (`auth/login`, `auth/logout`).
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

use super::*;
use crate::v1::serde_util::{lenient, tagged_union};

tagged_union! {
    /// The v2 `AuthMethod` union.
    pub enum AuthMethod, tag = "type", expecting = "a AuthMethod object" {
        /// `terminal`.
        Terminal(AuthMethodTerminal) = "terminal",
        /// `agent`.
        Agent(AuthMethodAgent) = "agent",
    }
}

/// The v2 `AuthMethodAgent` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthMethodAgent {
    /// The `methodId` field (required).
    pub method_id: AuthMethodId,
    /// The `name` field (required).
    pub name: String,
    /// The `description` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AuthMethodAgent {
    /// A `AuthMethodAgent` of its required fields (`method_id`, `name`); the optional ones are absent.
    pub fn new(method_id: impl Into<AuthMethodId>, name: impl Into<String>) -> Self {
        AuthMethodAgent { method_id: method_id.into(), name: name.into(), description: None, meta: None }
    }
}

/// The v2 `LoginAuthResponse` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginAuthResponse {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `LogoutAuthResponse` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogoutAuthResponse {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `LoginAuthRequest` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginAuthRequest {
    /// The `methodId` field (required).
    pub method_id: AuthMethodId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl LoginAuthRequest {
    /// A `LoginAuthRequest` of its required fields (`method_id`); the optional ones are absent.
    pub fn new(method_id: impl Into<AuthMethodId>) -> Self {
        LoginAuthRequest { method_id: method_id.into(), meta: None }
    }
}

/// The v2 `LogoutAuthRequest` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogoutAuthRequest {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}
