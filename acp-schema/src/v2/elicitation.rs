//! v2 elicitation requests and their form schemas.
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use super::*;
use crate::v1::serde_util::{lenient, lenient_vec, tagged_union};

/// The v2 `CreateElicitationRequest` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateElicitationRequest {
    /// The `message` field (required).
    pub message: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
    /// The variant, discriminated by `mode`.
    #[serde(flatten)]
    pub kind: CreateElicitationRequestKind,
}

impl CreateElicitationRequest {
    /// A `CreateElicitationRequest` of its required fields (`message`, `kind`); the optional ones are absent.
    pub fn new(message: impl Into<String>, kind: CreateElicitationRequestKind) -> Self {
        CreateElicitationRequest { message: message.into(), meta: None, kind }
    }
}

tagged_union! {
    /// The v2 `CreateElicitationRequest` union.
    pub enum CreateElicitationRequestKind, tag = "mode", expecting = "a CreateElicitationRequest object" {
        /// `form`.
        Form(ElicitationFormMode) = "form",
        /// `url`.
        Url(ElicitationUrlMode) = "url",
    }
}

/// The v2 `ElicitationSessionScope` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationSessionScope {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// The `toolCallId` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub tool_call_id: Option<ToolCallId>,
}

impl ElicitationSessionScope {
    /// A `ElicitationSessionScope` of its required fields (`session_id`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        ElicitationSessionScope { session_id: session_id.into(), tool_call_id: None }
    }
}

/// The v2 `ElicitationRequestScope` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationRequestScope {
    /// The `requestId` field (required).
    pub request_id: RequestId,
}

impl ElicitationRequestScope {
    /// A `ElicitationRequestScope` of its required fields (`request_id`); the optional ones are absent.
    pub fn new(request_id: impl Into<RequestId>) -> Self {
        ElicitationRequestScope { request_id: request_id.into() }
    }
}

/// The v2 `ElicitationSchema` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationSchema {
    /// The `type` field (required).
    pub type_: ElicitationSchemaType,
    /// The `title` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// The `properties` field (required).
    pub properties: BTreeMap<String, ElicitationPropertySchema>,
    /// The `required` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// The `description` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ElicitationSchema {
    /// A `ElicitationSchema` of its required fields (`type_`, `properties`); the optional ones are absent.
    pub fn new(
        type_: impl Into<ElicitationSchemaType>,
        properties: impl Into<BTreeMap<String, ElicitationPropertySchema>>,
    ) -> Self {
        ElicitationSchema {
            type_: type_.into(),
            title: None,
            properties: properties.into(),
            required: None,
            description: None,
            meta: None,
        }
    }
}

tagged_union! {
    /// The v2 `ElicitationPropertySchema` union.
    pub enum ElicitationPropertySchema, tag = "type", expecting = "a ElicitationPropertySchema object" {
        /// `string`.
        String(StringPropertySchema) = "string",
        /// `number`.
        Number(NumberPropertySchema) = "number",
        /// `integer`.
        Integer(IntegerPropertySchema) = "integer",
        /// `boolean`.
        Boolean(BooleanPropertySchema) = "boolean",
        /// `array`.
        Array(MultiSelectPropertySchema) = "array",
    }
}

/// The v2 `StringPropertySchema` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringPropertySchema {
    /// The `title` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// The `description` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// The `minLength` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    /// The `maxLength` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// The `format` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// The `default` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub default: Option<String>,
    /// The `enum` field (optional).
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<String>>,
    /// The `oneOf` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<EnumOption>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `TitledMultiSelectItems` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectItems {
    /// The `anyOf` field (required).
    pub any_of: Vec<EnumOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl TitledMultiSelectItems {
    /// A `TitledMultiSelectItems` of its required fields (`any_of`); the optional ones are absent.
    pub fn new(any_of: impl Into<Vec<EnumOption>>) -> Self {
        TitledMultiSelectItems { any_of: any_of.into(), meta: None }
    }
}

/// The v2 `MultiSelectPropertySchema` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MultiSelectPropertySchema {
    /// The `title` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// The `description` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// The `minItems` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// The `maxItems` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The `items` field (required).
    pub items: MultiSelectItems,
    /// The `default` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub default: Option<Vec<String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl MultiSelectPropertySchema {
    /// A `MultiSelectPropertySchema` of its required fields (`items`); the optional ones are absent.
    pub fn new(items: impl Into<MultiSelectItems>) -> Self {
        MultiSelectPropertySchema {
            title: None,
            description: None,
            min_items: None,
            max_items: None,
            items: items.into(),
            default: None,
            meta: None,
        }
    }
}

/// The v2 `CreateElicitationResponse` definition.
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

impl CreateElicitationResponse {
    /// A `CreateElicitationResponse` of its required fields (`kind`); the optional ones are absent.
    pub fn new(kind: CreateElicitationResponseKind) -> Self {
        CreateElicitationResponse { meta: None, kind }
    }
}

tagged_union! {
    /// The v2 `CreateElicitationResponse` union.
    pub enum CreateElicitationResponseKind, tag = "action", expecting = "a CreateElicitationResponse object" {
        /// `accept`.
        Accept(ElicitationAcceptAction) = "accept",
        /// `decline`.
        Decline = "decline",
        /// `cancel`.
        Cancel = "cancel",
    }
}

/// The v2 `ElicitationAcceptAction` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationAcceptAction {
    /// The `content` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitationContentValue>>,
}
