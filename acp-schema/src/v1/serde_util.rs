//! Serde machinery shared by the schema types.
//!
//! * `tagged_union!` (crate-private) declares a discriminated union (`"type"`,
//!   `"sessionUpdate"`, `"outcome"`, …) with a fast, single-pass decoder and an `Unknown`
//!   variant that keeps a newer peer's unknown variants intact instead of failing the whole
//!   message.
//! * `string_enum!` (crate-private) declares a closed set of string constants with an
//!   `Unknown(String)` fallback.
//! * `lenient` and `lenient_vec` (crate-private) implement the schema's `x-deserialize-default-on-error` and
//!   `x-deserialize-skip-invalid-items` markers.
//!
//! # How a tagged union decodes
//!
//! The decoder reads the object's entries in order. When the discriminator is the first key
//! (what every known SDK sends), the rest of the object is handed straight to the variant's
//! struct decoder: one pass, no intermediate `serde_json::Value`. When other keys come first,
//! those entries are buffered as `Value`s until the discriminator arrives, then replayed in
//! front of the remaining entries. An unknown discriminator collects the whole object into
//! [`UnknownVariant`], which re-encodes to the same JSON value.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// The `_meta` object ACP reserves for extension metadata. Implementations must not assume
/// anything about its keys.
pub type Meta = Map<String, Value>;

/// A variant of a discriminated union that this version of the protocol does not know.
///
/// It holds the complete JSON object, discriminator included, so that it can be inspected,
/// logged or forwarded unchanged. It encodes back to the same JSON value.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UnknownVariant(pub Map<String, Value>);

impl UnknownVariant {
    /// The discriminator value under `key`, if it is a string.
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }
}

/// Decodes an optional field the schema marks `x-deserialize-default-on-error`: a value that
/// does not decode as `T` becomes `None` instead of failing the enclosing object.
pub(crate) fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    if v.is_null() {
        return Ok(None);
    }
    Ok(T::deserialize(v).ok())
}

/// Decodes a field with a schema default that the schema marks
/// `x-deserialize-default-on-error`: a value that does not decode as `T` (including `null`)
/// becomes `T::default()`.
pub(crate) fn lenient_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let v = Value::deserialize(d)?;
    Ok(T::deserialize(v).unwrap_or_default())
}

/// Decodes an array with a schema default (`[]`) that the schema marks
/// `x-deserialize-default-on-error` and `x-deserialize-skip-invalid-items`: a non-array becomes
/// empty, items that do not decode are skipped.
pub(crate) fn lenient_items<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    Ok(lenient_vec(d)?.unwrap_or_default())
}

/// Decodes an optional array the schema marks `x-deserialize-default-on-error` and
/// `x-deserialize-skip-invalid-items`: a non-array becomes `None`, items that do not decode are
/// skipped.
pub(crate) fn lenient_vec<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    match Value::deserialize(d)? {
        Value::Array(items) => Ok(Some(items.into_iter().filter_map(|item| T::deserialize(item).ok()).collect())),
        _ => Ok(None),
    }
}

/// The discriminator of a tagged union as read from the wire.
#[derive(Debug)]
pub(crate) enum TagValue {
    /// One of the union's declared tags.
    Known(&'static str),
    /// A tag this version does not know.
    Unknown(String),
}

impl TagValue {
    fn as_str(&self) -> &str {
        match self {
            TagValue::Known(s) => s,
            TagValue::Unknown(s) => s,
        }
    }
}

struct TagSeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for TagSeed {
    type Value = TagValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<TagValue, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for TagSeed {
    type Value = TagValue;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string discriminator")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<TagValue, E> {
        Ok(match self.0.iter().find(|t| **t == v) {
            Some(t) => TagValue::Known(t),
            None => TagValue::Unknown(v.to_owned()),
        })
    }
}

/// A map key: either the discriminator key or another key, owned.
enum Key {
    Tag,
    Other(String),
}

struct KeySeed(&'static str);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(if v == self.0 { Key::Tag } else { Key::Other(v.to_owned()) })
    }
}

/// Implemented by every `tagged_union!` (crate-private) type; drives [`TaggedVisitor`].
pub(crate) trait TaggedUnion: Sized {
    /// The discriminator's key, e.g. `"type"`.
    const TAG_KEY: &'static str;
    /// Every declared discriminator value.
    const TAGS: &'static [&'static str];
    /// What the decoder expects, for error messages.
    const EXPECTING: &'static str;
    /// Decodes the variant named `tag` from the rest of the map (the tag entry excluded).
    fn decode_variant<'de, M: MapAccess<'de>>(tag: &'static str, map: M) -> Result<Self, M::Error>;
    /// Builds the union from an object without a discriminator; an error by default.
    fn decode_untagged(_fields: Map<String, Value>) -> Result<Self, String> {
        Err(format!("missing field `{}`", Self::TAG_KEY))
    }
    /// Wraps a variant this version does not know.
    fn unknown(fields: UnknownVariant) -> Self;
}

/// The map visitor behind every tagged union's `Deserialize`.
pub(crate) struct TaggedVisitor<T>(PhantomData<T>);

impl<T> TaggedVisitor<T> {
    /// A visitor for `T`.
    pub(crate) fn new() -> Self {
        TaggedVisitor(PhantomData)
    }
}

impl<T> Default for TaggedVisitor<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'de, T: TaggedUnion> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut buffered: Vec<(String, Value)> = Vec::new();
        loop {
            match map.next_key_seed(KeySeed(T::TAG_KEY))? {
                Some(Key::Tag) => {
                    let tag = map.next_value_seed(TagSeed(T::TAGS))?;
                    return finish::<T, _>(tag, buffered, map);
                }
                Some(Key::Other(k)) => {
                    let v: Value = map.next_value()?;
                    buffered.push((k, v));
                }
                None => {
                    let fields: Map<String, Value> = buffered.into_iter().collect();
                    return T::decode_untagged(fields).map_err(de::Error::custom);
                }
            }
        }
    }
}

fn finish<'de, T: TaggedUnion, A: MapAccess<'de>>(
    tag: TagValue,
    buffered: Vec<(String, Value)>,
    map: A,
) -> Result<T, A::Error> {
    match tag {
        TagValue::Known(t) if buffered.is_empty() => T::decode_variant(t, map),
        TagValue::Known(t) => T::decode_variant(t, Replay::new(buffered, map)),
        TagValue::Unknown(_) => {
            let mut fields = Map::new();
            fields.insert(T::TAG_KEY.to_owned(), Value::String(tag.as_str().to_owned()));
            fields.extend(buffered);
            let mut map = map;
            while let Some((k, v)) = map.next_entry::<String, Value>()? {
                fields.insert(k, v);
            }
            Ok(T::unknown(UnknownVariant(fields)))
        }
    }
}

/// Replays buffered entries in front of the entries still in `rest`.
struct Replay<M> {
    buffered: std::vec::IntoIter<(String, Value)>,
    value: Option<Value>,
    rest: M,
}

impl<M> Replay<M> {
    fn new(buffered: Vec<(String, Value)>, rest: M) -> Self {
        Replay { buffered: buffered.into_iter(), value: None, rest }
    }
}

impl<'de, M: MapAccess<'de>> MapAccess<'de> for Replay<M> {
    type Error = M::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, M::Error> {
        match self.buffered.next() {
            Some((k, v)) => {
                self.value = Some(v);
                let de: de::value::StringDeserializer<M::Error> = k.into_deserializer();
                seed.deserialize(de).map(Some)
            }
            None => self.rest.next_key_seed(seed),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, M::Error> {
        match self.value.take() {
            Some(v) => seed.deserialize(v).map_err(de::Error::custom),
            None => self.rest.next_value_seed(seed),
        }
    }
}

/// Drains the rest of a map, ignoring every entry (used by unit variants).
pub(crate) fn drain_map<'de, M: MapAccess<'de>>(mut map: M) -> Result<(), M::Error> {
    while map.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Declares a discriminated union of the schema.
///
/// ```ignore
/// tagged_union! {
///     /// Docs.
///     pub enum ContentBlock, tag = "type", expecting = "a content block" {
///         /// Text.
///         Text(TextContent) = "text",
///         /// A unit variant (no fields besides the tag).
///         Cancelled = "cancelled",
///         /// A variant an unstable feature adds (without it, the tag decodes as `Unknown`).
///         Later(LaterContent) = "later" [feature = "unstable_x"],
///     }
/// }
/// ```
///
/// Generates the enum with the listed variants plus `Unknown(UnknownVariant)`, a derived
/// `Serialize` that writes the tag first, and the single-pass `Deserialize` described in the
/// module docs. An optional `untagged = |fields| expr` clause decodes an object that has no
/// discriminator at all (e.g. `McpServer`'s stdio variant).
macro_rules! tagged_union {
    (
        $(#[$meta:meta])*
        pub enum $name:ident, tag = $tag_key:literal, expecting = $expecting:literal {
            $(
                $(#[$vmeta:meta])*
                $variant:ident $(($ty:ty))? = $tag:literal $([feature = $feature:literal])?
            ),* $(,)?
        }
        $(untagged = |$fields:ident| $untagged:expr;)?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        #[serde(tag = $tag_key)]
        #[non_exhaustive]
        pub enum $name {
            $(
                $(#[$vmeta])*
                $(#[cfg(feature = $feature)])?
                #[serde(rename = $tag)]
                $variant $(($ty))?,
            )*
            /// A variant this version of the protocol does not know, kept as its whole JSON
            /// object (discriminator included) so that it can be inspected or forwarded.
            #[serde(untagged)]
            Unknown($crate::v1::UnknownVariant),
        }

        impl $crate::v1::serde_util::TaggedUnion for $name {
            const TAG_KEY: &'static str = $tag_key;
            const TAGS: &'static [&'static str] = &[$($(#[cfg(feature = $feature)])? $tag),*];
            const EXPECTING: &'static str = $expecting;

            fn decode_variant<'de, M: serde::de::MapAccess<'de>>(
                tag: &'static str,
                map: M,
            ) -> Result<Self, M::Error> {
                $(
                    $(#[cfg(feature = $feature)])?
                    if tag == $tag {
                        return $crate::v1::serde_util::tagged_union!(@decode $name, $variant, map $(, $ty)?);
                    }
                )*
                // Not reachable: the tag seed only yields declared tags.
                Err(<M::Error as serde::de::Error>::custom(format_args!("unknown tag `{tag}`")))
            }

            $(
                fn decode_untagged(
                    $fields: serde_json::Map<String, serde_json::Value>,
                ) -> Result<Self, String> {
                    $untagged
                }
            )?

            fn unknown(fields: $crate::v1::UnknownVariant) -> Self {
                $name::Unknown(fields)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_map($crate::v1::serde_util::TaggedVisitor::<$name>::new())
            }
        }
    };
    (@decode $name:ident, $variant:ident, $map:ident, $ty:ty) => {
        <$ty as serde::Deserialize>::deserialize(
            serde::de::value::MapAccessDeserializer::new($map),
        )
        .map($name::$variant)
    };
    (@decode $name:ident, $variant:ident, $map:ident) => {
        $crate::v1::serde_util::drain_map($map).map(|()| $name::$variant)
    };
}
pub(crate) use tagged_union;

/// Declares a set of string constants of the schema with an `Unknown(String)` fallback, so that
/// a value added by a newer protocol version does not fail the enclosing message.
///
/// ```ignore
/// string_enum! {
///     /// Docs.
///     pub enum StopReason {
///         /// Docs.
///         EndTurn = "end_turn",
///         /// A value an unstable feature adds (without it, the value is `Unknown`).
///         Later = "later" [feature = "unstable_x"],
///     }
/// }
/// ```
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $wire:literal $([feature = $feature:literal])?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum $name {
            $(
                $(#[$vmeta])*
                $(#[cfg(feature = $feature)])?
                $variant,
            )*
            /// A value this version of the protocol does not know, kept verbatim.
            Unknown(String),
        }

        impl $name {
            /// Every value this version knows, in schema order.
            pub const KNOWN: &'static [$name] = &[$($(#[cfg(feature = $feature)])? $name::$variant),*];

            /// The wire string.
            pub fn as_str(&self) -> &str {
                match self {
                    $($(#[cfg(feature = $feature)])? $name::$variant => $wire,)*
                    $name::Unknown(s) => s,
                }
            }

            /// Parses a wire string; unknown strings become `Unknown`.
            pub fn from_wire(s: &str) -> Self {
                match s {
                    $($(#[cfg(feature = $feature)])? $wire => $name::$variant,)*
                    other => $name::Unknown(other.to_owned()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " string"))
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        Ok($name::from_wire(v))
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}
pub(crate) use string_enum;

#[cfg(test)]
#[allow(unreachable_pub)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Txt {
        pub text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub extra_field: Option<u32>,
    }

    crate::v1::serde_util::tagged_union! {
        /// Test union.
        pub enum Block, tag = "type", expecting = "a block" {
            /// Text.
            Text(Txt) = "text",
            /// Unit.
            Nothing = "nothing",
        }
    }

    crate::v1::serde_util::string_enum! {
        /// Test enum.
        pub enum Color {
            /// Red.
            Red = "red",
            /// Dark blue.
            DarkBlue = "dark_blue",
        }
    }

    #[test]
    fn tag_first_decodes_in_one_pass() {
        let b: Block = serde_json::from_str(r#"{"type":"text","text":"hi"}"#).unwrap();
        assert_eq!(b, Block::Text(Txt { text: "hi".into(), extra_field: None }));
        assert_eq!(serde_json::to_string(&b).unwrap(), r#"{"type":"text","text":"hi"}"#);
    }

    #[test]
    fn tag_later_replays_buffered_fields() {
        let b: Block = serde_json::from_str(r#"{"extraField":7,"text":"hi","type":"text","zzz":1}"#).unwrap();
        assert_eq!(b, Block::Text(Txt { text: "hi".into(), extra_field: Some(7) }));
    }

    #[test]
    fn unit_variant_round_trips() {
        let b: Block = serde_json::from_str(r#"{"type":"nothing","ignored":[1]}"#).unwrap();
        assert_eq!(b, Block::Nothing);
        assert_eq!(serde_json::to_value(&b).unwrap(), json!({"type":"nothing"}));
    }

    #[test]
    fn unknown_variant_is_preserved_whole() {
        let input = json!({"a": 1, "type": "hologram", "depth": {"x": [1, 2]}});
        let b: Block = serde_json::from_value(input.clone()).unwrap();
        match &b {
            Block::Unknown(u) => assert_eq!(u.tag("type"), Some("hologram")),
            other => panic!("expected Unknown, got {other:?}"),
        }
        assert_eq!(serde_json::to_value(&b).unwrap(), input);
        let from_str: Block = serde_json::from_str(&input.to_string()).unwrap();
        assert_eq!(from_str, b);
    }

    #[test]
    fn errors_are_readable() {
        let e = serde_json::from_str::<Block>(r#"{"type":"text"}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `text`"), "{e}");
        let e = serde_json::from_str::<Block>(r#"{"text":"x"}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `type`"), "{e}");
        let e = serde_json::from_str::<Block>(r#"{"type":5}"#).unwrap_err();
        assert!(e.to_string().contains("discriminator"), "{e}");
        let e = serde_json::from_str::<Block>(r#"[1]"#).unwrap_err();
        assert!(e.to_string().contains("a block"), "{e}");
    }

    #[test]
    fn string_enum_keeps_unknown_values() {
        let c: Color = serde_json::from_str(r#""dark_blue""#).unwrap();
        assert_eq!(c, Color::DarkBlue);
        let c: Color = serde_json::from_str(r#""ultraviolet""#).unwrap();
        assert_eq!(c, Color::Unknown("ultraviolet".into()));
        assert_eq!(serde_json::to_string(&c).unwrap(), r#""ultraviolet""#);
        assert_eq!(Color::KNOWN.len(), 2);
    }

    #[test]
    fn lenient_fields_default_on_error() {
        #[derive(Deserialize, Debug)]
        struct S {
            #[serde(default, deserialize_with = "super::lenient")]
            n: Option<u8>,
            #[serde(default, deserialize_with = "super::lenient_vec")]
            v: Option<Vec<u8>>,
        }
        let s: S = serde_json::from_str(r#"{"n":"nope","v":[1,"x",300,2]}"#).unwrap();
        assert_eq!(s.n, None);
        assert_eq!(s.v, Some(vec![1, 2]));
        let s: S = serde_json::from_str(r#"{"n":3,"v":{}}"#).unwrap();
        assert_eq!((s.n, s.v), (Some(3), None));
    }
}
