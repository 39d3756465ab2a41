//! v2 content blocks and resources.
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

use super::*;
use crate::v1::serde_util::{lenient, lenient_vec, string_enum, tagged_union};

tagged_union! {
    /// The v2 `ToolCallContent` union.
    pub enum ToolCallContent, tag = "type", expecting = "a ToolCallContent object" {
        /// `content`.
        Content(Content) = "content",
        /// `diff`.
        Diff(Diff) = "diff",
        /// `terminal`.
        Terminal(Terminal) = "terminal",
        /// `session`.
        Session(SessionReference) = "session",
    }
}

tagged_union! {
    /// The v2 `ContentBlock` union.
    pub enum ContentBlock, tag = "type", expecting = "a ContentBlock object" {
        /// `text`.
        Text(TextContent) = "text",
        /// `image`.
        Image(ImageContent) = "image",
        /// `audio`.
        Audio(AudioContent) = "audio",
        /// `resource_link`.
        ResourceLink(ResourceLink) = "resource_link",
        /// `resource`.
        Resource(EmbeddedResource) = "resource",
    }
}

/// The v2 `MediaType` string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MediaType(pub String);

impl From<String> for MediaType {
    fn from(s: String) -> Self {
        MediaType(s)
    }
}

impl From<&str> for MediaType {
    fn from(s: &str) -> Self {
        MediaType(s.to_owned())
    }
}

/// The v2 `ImageContent` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// The `data` field (required).
    pub data: String,
    /// The `mimeType` field (required).
    pub mime_type: MediaType,
    /// The `uri` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub uri: Option<String>,
    /// The `annotations` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ImageContent {
    /// A `ImageContent` of its required fields (`data`, `mime_type`); the optional ones are absent.
    pub fn new(data: impl Into<String>, mime_type: impl Into<MediaType>) -> Self {
        ImageContent { data: data.into(), mime_type: mime_type.into(), uri: None, annotations: None, meta: None }
    }
}

/// The v2 `AudioContent` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// The `data` field (required).
    pub data: String,
    /// The `mimeType` field (required).
    pub mime_type: MediaType,
    /// The `annotations` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AudioContent {
    /// A `AudioContent` of its required fields (`data`, `mime_type`); the optional ones are absent.
    pub fn new(data: impl Into<String>, mime_type: impl Into<MediaType>) -> Self {
        AudioContent { data: data.into(), mime_type: mime_type.into(), annotations: None, meta: None }
    }
}

/// The v2 `Icon` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// The `src` field (required).
    pub src: String,
    /// The `mimeType` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<MediaType>,
    /// The `sizes` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub sizes: Option<Vec<String>>,
    /// The `theme` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub theme: Option<IconTheme>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Icon {
    /// A `Icon` of its required fields (`src`); the optional ones are absent.
    pub fn new(src: impl Into<String>) -> Self {
        Icon { src: src.into(), mime_type: None, sizes: None, theme: None, meta: None }
    }
}

string_enum! {
    /// The v2 `IconTheme` values.
    pub enum IconTheme {
        /// `light`.
        Light = "light",
        /// `dark`.
        Dark = "dark",
    }
}

/// The v2 `ResourceLink` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The `name` field (required).
    pub name: String,
    /// The `uri` field (required).
    pub uri: String,
    /// The `title` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// The `description` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// The `icons` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub icons: Option<Vec<Icon>>,
    /// The `mimeType` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<MediaType>,
    /// The `size` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub size: Option<u64>,
    /// The `annotations` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ResourceLink {
    /// A `ResourceLink` of its required fields (`name`, `uri`); the optional ones are absent.
    pub fn new(name: impl Into<String>, uri: impl Into<String>) -> Self {
        ResourceLink {
            name: name.into(),
            uri: uri.into(),
            title: None,
            description: None,
            icons: None,
            mime_type: None,
            size: None,
            annotations: None,
            meta: None,
        }
    }
}

/// The v2 `TextResourceContents` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The `text` field (required).
    pub text: String,
    /// The `uri` field (required).
    pub uri: String,
    /// The `mimeType` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<MediaType>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl TextResourceContents {
    /// A `TextResourceContents` of its required fields (`text`, `uri`); the optional ones are absent.
    pub fn new(text: impl Into<String>, uri: impl Into<String>) -> Self {
        TextResourceContents { text: text.into(), uri: uri.into(), mime_type: None, meta: None }
    }
}

/// The v2 `BlobResourceContents` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The `blob` field (required).
    pub blob: String,
    /// The `uri` field (required).
    pub uri: String,
    /// The `mimeType` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<MediaType>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl BlobResourceContents {
    /// A `BlobResourceContents` of its required fields (`blob`, `uri`); the optional ones are absent.
    pub fn new(blob: impl Into<String>, uri: impl Into<String>) -> Self {
        BlobResourceContents { blob: blob.into(), uri: uri.into(), mime_type: None, meta: None }
    }
}

/// The v2 `EmbeddedResource` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The `resource` field (required).
    pub resource: EmbeddedResourceResource,
    /// The `annotations` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl EmbeddedResource {
    /// A `EmbeddedResource` of its required fields (`resource`); the optional ones are absent.
    pub fn new(resource: impl Into<EmbeddedResourceResource>) -> Self {
        EmbeddedResource { resource: resource.into(), annotations: None, meta: None }
    }
}

/// The v2 `Content` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Content {
    /// The `content` field (required).
    pub content: ContentBlock,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Content {
    /// A `Content` of its required fields (`content`); the optional ones are absent.
    pub fn new(content: impl Into<ContentBlock>) -> Self {
        Content { content: content.into(), meta: None }
    }
}

/// The v2 `PromptImageCapabilities` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptImageCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `PromptAudioCapabilities` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptAudioCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `PromptEmbeddedContextCapabilities` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptEmbeddedContextCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `TextCommandInput` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextCommandInput {
    /// The `hint` field (required).
    pub hint: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl TextCommandInput {
    /// A `TextCommandInput` of its required fields (`hint`); the optional ones are absent.
    pub fn new(hint: impl Into<String>) -> Self {
        TextCommandInput { hint: hint.into(), meta: None }
    }
}

/// The v2 `ContentChunk` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentChunk {
    /// The `messageId` field (required).
    pub message_id: MessageId,
    /// The `content` field (required).
    pub content: ContentBlock,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ContentChunk {
    /// A `ContentChunk` of its required fields (`message_id`, `content`); the optional ones are absent.
    pub fn new(message_id: impl Into<MessageId>, content: impl Into<ContentBlock>) -> Self {
        ContentChunk { message_id: message_id.into(), content: content.into(), meta: None }
    }
}

/// The v2 `ToolCallContentChunk` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallContentChunk {
    /// The `toolCallId` field (required).
    pub tool_call_id: ToolCallId,
    /// The `content` field (required).
    pub content: ToolCallContent,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ToolCallContentChunk {
    /// A `ToolCallContentChunk` of its required fields (`tool_call_id`, `content`); the optional ones are absent.
    pub fn new(tool_call_id: impl Into<ToolCallId>, content: impl Into<ToolCallContent>) -> Self {
        ToolCallContentChunk { tool_call_id: tool_call_id.into(), content: content.into(), meta: None }
    }
}

tagged_union! {
    /// The v2 `PlanUpdateContent` union.
    pub enum PlanUpdateContent, tag = "type", expecting = "a PlanUpdateContent object" {
        /// `items`.
        Items(PlanItems) = "items",
        /// `markdown`.
        Markdown(PlanMarkdown) = "markdown",
    }
}
