//! v2 content blocks and resources.
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

tagged_union! {
    /// Content produced by a tool call.
    pub enum ToolCallContent, tag = "type", expecting = "a ToolCallContent object" {
        /// Standard content block (text, images, resources).
        Content(Content) = "content",
        /// File modification shown as a diff.
        Diff(Diff) = "diff",
        /// A display-only reference to an Agent-owned terminal.
        Terminal(Terminal) = "terminal",
        /// A display-only reference to another session, such as a subagent.
        Session(SessionReference) = "session",
    }
}

tagged_union! {
    /// Content blocks represent displayable information in the Agent Client Protocol.
    pub enum ContentBlock, tag = "type", expecting = "a ContentBlock object" {
        /// Text content. May be plain text or formatted with Markdown.
        Text(TextContent) = "text",
        /// Images for visual context or analysis.
        Image(ImageContent) = "image",
        /// Audio data for transcription or analysis.
        Audio(AudioContent) = "audio",
        /// References to resources that the receiver may be able to read.
        ResourceLink(ResourceLink) = "resource_link",
        /// Complete resource contents embedded directly in the message.
        Resource(EmbeddedResource) = "resource",
    }
}

/// An Internet media type identifying the format of protocol content.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MediaType(pub String);

/// An image provided to or from an LLM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded media payload.
    pub data: String,
    /// MIME type describing the encoded media payload.
    pub mime_type: MediaType,
    /// URI associated with this resource or media payload.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub uri: Option<String>,
    /// Optional annotations that help Clients decide how to display or route this content.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Audio provided to or from an LLM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Base64-encoded media payload.
    pub data: String,
    /// MIME type describing the encoded media payload.
    pub mime_type: MediaType,
    /// Optional annotations that help Clients decide how to display or route this content.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// An optionally-sized icon that can be displayed in a user interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// A standard URI pointing to an icon resource. May be an HTTP/HTTPS URL or a `data:` URI with Base64-encoded image data.
    pub src: String,
    /// Optional MIME type override if the source MIME type is missing or generic.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<MediaType>,
    /// Optional array of strings that specify sizes at which the icon can be used. Each string SHOULD be in `WxH` format (e.g., `"48x48"`, `"96x96"`) or `"any"` for scalable formats like SVG.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub sizes: Option<Vec<String>>,
    /// Optional theme this icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub theme: Option<IconTheme>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

string_enum! {
    /// Theme an icon is designed for.
    pub enum IconTheme {
        /// Icon designed for light backgrounds.
        Light = "light",
        /// Icon designed for dark backgrounds.
        Dark = "dark",
    }
}

/// A link to a resource that the receiver may be able to read, included in a prompt or tool call result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// Human-readable name shown for this protocol object.
    pub name: String,
    /// URI associated with this resource or media payload.
    pub uri: String,
    /// Optional display title for end-user UI.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// Optional human-readable details shown with this protocol object.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Optional set of sized icons that the Client can display in a user interface.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub icons: Option<Vec<Icon>>,
    /// MIME type describing the encoded media payload.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<MediaType>,
    /// Optional size of the linked resource in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub size: Option<u64>,
    /// Optional annotations that help Clients decide how to display or route this content.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Text-based resource contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// Text payload carried by this content block.
    pub text: String,
    /// URI associated with this resource or media payload.
    pub uri: String,
    /// MIME type describing the encoded media payload.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<MediaType>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Binary resource contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// Base64-encoded bytes for a binary resource payload.
    pub blob: String,
    /// URI associated with this resource or media payload.
    pub uri: String,
    /// MIME type describing the encoded media payload.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<MediaType>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The contents of a resource, embedded into a prompt or tool call result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// Embedded resource payload, either text or binary data.
    pub resource: EmbeddedResourceResource,
    /// Optional annotations that help Clients decide how to display or route this content.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Standard content block (text, images, resources).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Content {
    /// The actual content block.
    pub content: ContentBlock,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Capabilities for image content in prompt requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptImageCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Capabilities for audio content in prompt requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptAudioCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Capabilities for embedded context in prompt requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptEmbeddedContextCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// All text that was typed after the command name is provided as input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextCommandInput {
    /// A hint to display when the input hasn't been provided yet
    pub hint: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A streamed item of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentChunk {
    /// A unique identifier for the message this chunk belongs to.
    pub message_id: MessageId,
    /// A single item of content
    pub content: ContentBlock,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A streamed item of tool-call content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallContentChunk {
    /// The ID of the tool call this content belongs to.
    pub tool_call_id: ToolCallId,
    /// A single item of content produced by the tool call.
    pub content: ToolCallContent,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

tagged_union! {
    /// Updated content for a plan.
    pub enum PlanUpdateContent, tag = "type", expecting = "a PlanUpdateContent object" {
        /// Structured plan entries.
        Items(PlanItems) = "items",
        /// The complete plan as Markdown.
        Markdown(PlanMarkdown) = "markdown",
    }
}
