//! v2 elicitation requests and their form schemas.
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); docs are the schema's own descriptions.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

#[allow(unused_imports)]
use super::manual::skip_invalid_items;
#[allow(unused_imports)]
use super::*;
#[allow(unused_imports)]
use crate::types::serde_ext::{
    lenient_nullable, lenient_nullable_items, lenient_object, lenient_object_default, null_as_default,
};
#[allow(unused_imports)]
use crate::types::serde_util::{lenient, lenient_default, lenient_items, lenient_vec, string_enum, tagged_union};
#[allow(unused_imports)]
use std::collections::BTreeMap;

/// Request from the Agent to elicit structured user input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateElicitationRequest {
    /// A human-readable message describing what input is needed.
    pub message: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
    /// The variant, discriminated by `mode`.
    #[serde(flatten)]
    pub kind: CreateElicitationRequestKind,
}

tagged_union! {
    /// Request from the Agent to elicit structured user input.
    pub enum CreateElicitationRequestKind, tag = "mode", expecting = "a CreateElicitationRequest object" {
        /// Form-based elicitation where the Client renders a form from the provided schema.
        Form(ElicitationFormMode) = "form",
        /// URL-based elicitation where the Client directs the user to a URL.
        Url(ElicitationUrlMode) = "url",
    }
}

/// Session-scoped elicitation, optionally tied to a specific tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationSessionScope {
    /// The session this elicitation is tied to.
    pub session_id: SessionId,
    /// Optional tool call within the session.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub tool_call_id: Option<ToolCallId>,
}

/// Request-scoped elicitation, tied to a specific JSON-RPC request outside of a session (e.g., during auth/configuration phases before any session is started).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationRequestScope {
    /// The pending Client-to-Agent request this elicitation is tied to.
    pub request_id: RequestId,
}

/// Type-safe elicitation schema for requesting structured user input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationSchema {
    /// Type discriminator. Always `"object"`. Any other value is rejected.
    pub type_: ElicitationSchemaType,
    /// Optional title for the schema.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// Property definitions (MUST be primitive types).
    pub properties: BTreeMap<String, ElicitationPropertySchema>,
    /// List of required property names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// Optional description of what this schema represents.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

tagged_union! {
    /// Property schema for elicitation form fields.
    pub enum ElicitationPropertySchema, tag = "type", expecting = "a ElicitationPropertySchema object" {
        /// String property (or single-select enum when `enum`/`oneOf` is set).
        String(StringPropertySchema) = "string",
        /// Number (floating-point) property.
        Number(NumberPropertySchema) = "number",
        /// Integer property.
        Integer(IntegerPropertySchema) = "integer",
        /// Boolean property.
        Boolean(BooleanPropertySchema) = "boolean",
        /// Multi-select array property.
        Array(MultiSelectPropertySchema) = "array",
    }
}

/// Schema for string properties in an elicitation form.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringPropertySchema {
    /// Optional title for the property.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Minimum string length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    /// Maximum string length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// String format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub default: Option<String>,
    /// Enum values for untitled single-select enums. Must contain at least one value when present. Optional. Omitted and `null` are equivalent and mean no untitled single-select choices are declared by `enum`.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<String>>,
    /// Titled enum options for titled single-select enums. Must contain at least one option when present. Optional. Omitted and `null` are equivalent and mean no titled single-select choices are declared by `oneOf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<EnumOption>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Titled multi-select items use `anyOf` and omit `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectItems {
    /// Titled enum options. Must contain at least one option.
    pub any_of: Vec<EnumOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Schema for multi-select (array) properties in an elicitation form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MultiSelectPropertySchema {
    /// Optional title for the property.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Minimum number of items to select.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of items to select.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The items definition describing allowed values.
    pub items: MultiSelectItems,
    /// Default selected values.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub default: Option<Vec<String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Response from the Client to an elicitation request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateElicitationResponse {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
    /// The variant, discriminated by `action`.
    #[serde(flatten)]
    pub kind: CreateElicitationResponseKind,
}

tagged_union! {
    /// Response from the Client to an elicitation request.
    pub enum CreateElicitationResponseKind, tag = "action", expecting = "a CreateElicitationResponse object" {
        /// The user accepted and provided content.
        Accept(ElicitationAcceptAction) = "accept",
        /// The user declined the elicitation.
        Decline = "decline",
        /// The elicitation was cancelled.
        Cancel = "cancel",
    }
}

/// The user accepted the elicitation and provided content.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationAcceptAction {
    /// The user-provided content, if any, as an object matching the requested schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitationContentValue>>,
}
