//! Content blocks: the text, images, audio and resources exchanged in prompts, message chunks
//! and tool call output. They follow the shape of MCP's content types.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::serde_util::{Meta, lenient, lenient_vec};

crate::v1::serde_util::tagged_union! {
    /// One piece of content, discriminated by `type`.
    ///
    /// Text and resource links must always be accepted in prompts; images, audio and embedded
    /// resources only when the agent advertised the matching prompt capability.
    pub enum ContentBlock, tag = "type", expecting = "a content block object" {
        /// Plain text (often Markdown).
        Text(TextContent) = "text",
        /// A base64-encoded image.
        Image(ImageContent) = "image",
        /// Base64-encoded audio.
        Audio(AudioContent) = "audio",
        /// A reference to a resource the agent can fetch itself.
        ResourceLink(ResourceLink) = "resource_link",
        /// A resource whose contents are included inline.
        Resource(EmbeddedResource) = "resource",
    }
}

impl ContentBlock {
    /// A text block without annotations.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        ContentBlock::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        ContentBlock::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        ContentBlock::Audio(c)
    }
}

impl From<ResourceLink> for ContentBlock {
    fn from(c: ResourceLink) -> Self {
        ContentBlock::ResourceLink(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        ContentBlock::Resource(c)
    }
}

impl From<&str> for ContentBlock {
    fn from(text: &str) -> Self {
        ContentBlock::text(text)
    }
}

impl From<String> for ContentBlock {
    fn from(text: String) -> Self {
        ContentBlock::text(text)
    }
}

/// Hints for the client about how to use or display a piece of content.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the content is meant for. Unknown roles are kept; malformed entries are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub audience: Option<Vec<Role>>,
    /// When the content was last modified (free-form timestamp string).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub last_modified: Option<String>,
    /// Relative importance of the content.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub priority: Option<f64>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

crate::v1::serde_util::string_enum! {
    /// The sender or recipient of a message.
    pub enum Role {
        /// The agent (the model).
        Assistant = "assistant",
        /// The human user.
        User = "user",
    }
}

/// Text content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// The text.
    pub text: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// Text without annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent { annotations: None, text: text.into(), meta: None }
    }
}

/// An image, base64-encoded. Needs the `image` prompt capability in prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// The base64-encoded image bytes.
    pub data: String,
    /// The image's MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Where the image came from, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub uri: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ImageContent {
    /// An image from base64 data and its MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ImageContent { annotations: None, data: data.into(), mime_type: mime_type.into(), uri: None, meta: None }
    }
}

/// Audio, base64-encoded. Needs the `audio` prompt capability in prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// The base64-encoded audio bytes.
    pub data: String,
    /// The audio's MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AudioContent {
    /// Audio from base64 data and its MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        AudioContent { annotations: None, data: data.into(), mime_type: mime_type.into(), meta: None }
    }
}

/// A link to a resource that the agent may read on its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// A human-readable description of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// The resource's MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<String>,
    /// The resource's name.
    pub name: String,
    /// The size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub size: Option<i64>,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// The resource's URI.
    pub uri: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ResourceLink {
    /// A link with just a name and a URI.
    pub fn new(name: impl Into<String>, uri: impl Into<String>) -> Self {
        ResourceLink {
            annotations: None,
            description: None,
            mime_type: None,
            name: name.into(),
            size: None,
            title: None,
            uri: uri.into(),
            meta: None,
        }
    }
}

/// The contents of an embedded resource: text or binary.
///
/// Untagged on the wire: an object with a `text` field is text, one with a `blob` field is
/// binary.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum EmbeddedResourceResource {
    /// Text contents.
    TextResourceContents(TextResourceContents),
    /// Binary contents.
    BlobResourceContents(BlobResourceContents),
}

impl<'de> Deserialize<'de> for EmbeddedResourceResource {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::Object(Map::deserialize(d)?);
        let has_text = value.get("text").is_some();
        let has_blob = value.get("blob").is_some();
        if has_text {
            match TextResourceContents::deserialize(&value) {
                Ok(text) => return Ok(EmbeddedResourceResource::TextResourceContents(text)),
                Err(e) if !has_blob => {
                    return Err(D::Error::custom(format_args!("text resource contents: {e}")));
                }
                Err(_) => {}
            }
        }
        if has_blob {
            return BlobResourceContents::deserialize(&value)
                .map(EmbeddedResourceResource::BlobResourceContents)
                .map_err(|e| D::Error::custom(format_args!("blob resource contents: {e}")));
        }
        Err(D::Error::custom("resource contents need a `text` or a `blob` field"))
    }
}

/// Text contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// The resource's URI.
    pub uri: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl TextResourceContents {
    /// Text contents of the resource at `uri`.
    pub fn new(text: impl Into<String>, uri: impl Into<String>) -> Self {
        TextResourceContents { mime_type: None, text: text.into(), uri: uri.into(), meta: None }
    }
}

/// Binary contents of a resource, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The base64-encoded bytes.
    pub blob: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<String>,
    /// The resource's URI.
    pub uri: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl BlobResourceContents {
    /// Base64 contents of the resource at `uri`.
    pub fn new(blob: impl Into<String>, uri: impl Into<String>) -> Self {
        BlobResourceContents { blob: blob.into(), mime_type: None, uri: uri.into(), meta: None }
    }
}

/// A resource included inline in a message. Needs the `embeddedContext` prompt capability in
/// prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub annotations: Option<Annotations>,
    /// The resource's contents.
    pub resource: EmbeddedResourceResource,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl EmbeddedResource {
    /// Embeds the given contents without annotations.
    pub fn new(resource: EmbeddedResourceResource) -> Self {
        EmbeddedResource { annotations: None, resource, meta: None }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn round_trip(input: Value) -> ContentBlock {
        let block: ContentBlock = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&block).unwrap(), input);
        let from_str: ContentBlock = serde_json::from_str(&input.to_string()).unwrap();
        assert_eq!(from_str, block);
        block
    }

    #[test]
    fn every_variant_round_trips() {
        let b = round_trip(json!({"type": "text", "text": "hi"}));
        assert_eq!(b, ContentBlock::text("hi"));
        let b = round_trip(json!({
            "type": "image",
            "annotations": {"audience": ["user"], "priority": 0.5},
            "data": "iVBOR",
            "mimeType": "image/png",
            "uri": "file:///a.png"
        }));
        assert!(matches!(b, ContentBlock::Image(ref i) if i.mime_type == "image/png"));
        let b = round_trip(json!({"type": "audio", "data": "UklG", "mimeType": "audio/wav"}));
        assert!(matches!(b, ContentBlock::Audio(_)));
        let b = round_trip(json!({
            "type": "resource_link",
            "description": "d",
            "mimeType": "text/x-rust",
            "name": "main.rs",
            "size": 1024,
            "title": "Main",
            "uri": "file:///main.rs",
            "_meta": {"x": 1}
        }));
        assert!(matches!(b, ContentBlock::ResourceLink(ref l) if l.size == Some(1024)));
        let b = round_trip(json!({
            "type": "resource",
            "resource": {"mimeType": "text/plain", "text": "fn main() {}", "uri": "file:///m.rs"}
        }));
        assert!(matches!(
            b,
            ContentBlock::Resource(EmbeddedResource {
                resource: EmbeddedResourceResource::TextResourceContents(_),
                ..
            })
        ));
        let b = round_trip(json!({
            "type": "resource",
            "resource": {"blob": "AAEC", "uri": "file:///b.bin"}
        }));
        assert!(matches!(
            b,
            ContentBlock::Resource(EmbeddedResource {
                resource: EmbeddedResourceResource::BlobResourceContents(_),
                ..
            })
        ));
    }

    #[test]
    fn unknown_variant_is_kept_whole() {
        let input = json!({"type": "video", "frames": [1, 2], "_meta": {"k": "v"}});
        let b: ContentBlock = serde_json::from_value(input.clone()).unwrap();
        assert!(matches!(&b, ContentBlock::Unknown(u) if u.tag("type") == Some("video")));
        assert_eq!(serde_json::to_value(&b).unwrap(), input);
    }

    #[test]
    fn tag_not_first_decodes() {
        let b: ContentBlock = serde_json::from_str(r#"{"text":"hello","extra":1,"type":"text"}"#).unwrap();
        assert_eq!(b, ContentBlock::text("hello"));
        assert_eq!(serde_json::to_string(&b).unwrap(), r#"{"type":"text","text":"hello"}"#);
    }

    #[test]
    fn lenient_annotations() {
        let b: ContentBlock = serde_json::from_value(json!({
            "type": "text",
            "text": "x",
            "annotations": {"audience": ["user", 7, "robot"], "priority": "high", "_meta": 3}
        }))
        .unwrap();
        let ContentBlock::Text(t) = b else { panic!("not text") };
        let a = t.annotations.unwrap();
        assert_eq!(a.audience, Some(vec![Role::User, Role::Unknown("robot".into())]));
        assert_eq!(a.priority, None);
        assert_eq!(a.meta, None);
        let bad: ContentBlock = serde_json::from_value(json!({"type": "text", "text": "x", "annotations": 5})).unwrap();
        assert_eq!(bad, ContentBlock::text("x"));
    }

    #[test]
    fn resource_contents_errors_are_specific() {
        let e = serde_json::from_value::<EmbeddedResourceResource>(json!({"uri": "u"})).unwrap_err();
        assert!(e.to_string().contains("`text` or a `blob`"), "{e}");
        let e = serde_json::from_value::<EmbeddedResourceResource>(json!({"text": "t"})).unwrap_err();
        assert!(e.to_string().contains("missing field `uri`"), "{e}");
        // A bad `text` with a good `blob` still decodes as a blob.
        let r: EmbeddedResourceResource = serde_json::from_value(json!({"text": 1, "blob": "AA", "uri": "u"})).unwrap();
        assert!(matches!(r, EmbeddedResourceResource::BlobResourceContents(_)));
    }

    #[test]
    fn errors_in_known_variants_are_reported() {
        let e = serde_json::from_str::<ContentBlock>(r#"{"type":"image","data":"x"}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `mimeType`"), "{e}");
    }
}
