//! The restricted JSON Schema of a form elicitation: a flat object of primitive fields
//! (strings, numbers, integers, booleans, multi-selects).

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::serde_util::{Meta, UnknownVariant, lenient, lenient_default, lenient_vec};

/// The fields of a form elicitation: always an object schema.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationSchema {
    /// Always `object` (a malformed value decodes as `object`).
    #[serde(rename = "type", default, deserialize_with = "lenient_default")]
    pub type_: ElicitationSchemaType,
    /// The form's title.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// A longer explanation of the form.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// The fields by name. Always written, `{}` included.
    #[serde(default)]
    pub properties: BTreeMap<String, ElicitationPropertySchema>,
    /// The names of the fields the user must fill in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ElicitationSchema {
    /// An empty form.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a field; `required` also lists it as required.
    pub fn field(mut self, name: impl Into<String>, schema: ElicitationPropertySchema, required: bool) -> Self {
        let name = name.into();
        if required {
            self.required.get_or_insert_with(Vec::new).push(name.clone());
        }
        self.properties.insert(name, schema);
        self
    }
}

/// The type of an [`ElicitationSchema`]: only `object`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ElicitationSchemaType {
    /// `"object"`.
    #[default]
    #[serde(rename = "object")]
    Object,
}

crate::v1::serde_util::tagged_union! {
    /// One field of a form, discriminated by `type`.
    pub enum ElicitationPropertySchema, tag = "type", expecting = "an elicitation property schema" {
        /// A text field (or a single choice with `enum`/`oneOf`).
        String(StringPropertySchema) = "string",
        /// A number field.
        Number(NumberPropertySchema) = "number",
        /// An integer field.
        Integer(IntegerPropertySchema) = "integer",
        /// A checkbox.
        Boolean(BooleanPropertySchema) = "boolean",
        /// A multi-select.
        Array(MultiSelectPropertySchema) = "array",
    }
}

/// A text field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringPropertySchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// A longer explanation of the field.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// A regular expression the value must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// A well-known format of the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// The prefilled value.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub default: Option<String>,
    /// The allowed values (a single choice without labels).
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_: Option<Vec<String>>,
    /// The allowed values with labels (a single choice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<EnumOption>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

crate::v1::serde_util::string_enum! {
    /// A well-known string format.
    pub enum StringFormat {
        /// An e-mail address.
        Email = "email",
        /// A URI.
        Uri = "uri",
        /// A date (ISO 8601).
        Date = "date",
        /// A date and time (ISO 8601).
        DateTime = "date-time",
    }
}

/// A labelled choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnumOption {
    /// The value.
    #[serde(rename = "const")]
    pub const_: String,
    /// The label.
    pub title: String,
    /// A longer explanation of the choice.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl EnumOption {
    /// `value` labelled `title`.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        EnumOption { const_: value.into(), title: title.into(), description: None, meta: None }
    }
}

/// A number field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberPropertySchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// A longer explanation of the field.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Smallest allowed value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Largest allowed value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// The prefilled value.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub default: Option<f64>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// An integer field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IntegerPropertySchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// A longer explanation of the field.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Smallest allowed value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i64>,
    /// Largest allowed value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i64>,
    /// The prefilled value.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub default: Option<i64>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A checkbox.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BooleanPropertySchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// A longer explanation of the field.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// The prefilled value.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub default: Option<bool>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A multi-select field: an array of strings chosen from `items`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MultiSelectPropertySchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// A longer explanation of the field.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: MultiSelectItems,
    /// The prefilled choices. Malformed items are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub default: Option<Vec<String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl MultiSelectPropertySchema {
    /// A multi-select over `items`.
    pub fn new(items: MultiSelectItems) -> Self {
        MultiSelectPropertySchema {
            title: None,
            description: None,
            min_items: None,
            max_items: None,
            items,
            default: None,
            meta: None,
        }
    }
}

/// The choices of a multi-select: plain strings (`"type": "string"`, an `enum` list), or
/// labelled choices (no `type`, an `anyOf` list).
///
/// Decoding reads `type`: `"string"` is [`MultiSelectItems::String`], any other string a kind
/// this version does not know (kept whole in [`MultiSelectItems::Unknown`]), and no `type` (or a
/// non-string one) is [`MultiSelectItems::Titled`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MultiSelectItems {
    /// Plain string choices.
    String(StringMultiSelectItems),
    /// Labelled choices (no `type` on the wire).
    Titled(TitledMultiSelectItems),
    /// A kind this version of the protocol does not know, kept as its whole JSON object.
    Unknown(UnknownVariant),
}

/// The tagged variant, borrowed, for encoding with the tag first.
#[derive(Serialize)]
#[serde(tag = "type")]
enum TaggedItemsRef<'a> {
    #[serde(rename = "string")]
    String(&'a StringMultiSelectItems),
}

impl Serialize for MultiSelectItems {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MultiSelectItems::String(items) => TaggedItemsRef::String(items).serialize(s),
            MultiSelectItems::Titled(items) => items.serialize(s),
            MultiSelectItems::Unknown(u) => u.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for MultiSelectItems {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = Map::deserialize(d)?;
        match fields.get("type") {
            Some(Value::String(t)) if t == "string" => StringMultiSelectItems::deserialize(Value::Object(fields))
                .map(MultiSelectItems::String)
                .map_err(|e| D::Error::custom(format_args!("string multi-select items: {e}"))),
            Some(Value::String(_)) => Ok(MultiSelectItems::Unknown(UnknownVariant(fields))),
            _ => TitledMultiSelectItems::deserialize(Value::Object(fields))
                .map(MultiSelectItems::Titled)
                .map_err(|e| D::Error::custom(format_args!("titled multi-select items: {e}"))),
        }
    }
}

/// Plain string choices of a multi-select.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StringMultiSelectItems {
    /// The choices.
    #[serde(rename = "enum")]
    pub enum_: Vec<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Labelled choices of a multi-select.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TitledMultiSelectItems {
    /// The choices.
    #[serde(rename = "anyOf")]
    pub any_of: Vec<EnumOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}
