//! Small additions to [`serde_util`](super::serde_util) used by a few schema types.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Decodes a nullable field where `null` means something different from absence (e.g.
/// "clear the title"), into `Option<Option<T>>`: absent is `None` (via `#[serde(default)]`),
/// `null` is `Some(None)`, a value is `Some(Some(v))`. Following
/// `x-deserialize-default-on-error`, a value that does not decode as `T` counts as absent.
pub(crate) fn lenient_nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    match Value::deserialize(d)? {
        Value::Null => Ok(Some(None)),
        v => Ok(T::deserialize(v).ok().map(Some)),
    }
}

/// Like `serde_util::lenient`, for capability objects: anything but a JSON object (an array,
/// which serde would otherwise accept for a struct, included) decodes as `None`, i.e. "not
/// supported".
pub(crate) fn lenient_object<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    match Value::deserialize(d)? {
        v @ Value::Object(_) => Ok(T::deserialize(v).ok()),
        _ => Ok(None),
    }
}

/// Like `serde_util::lenient_default`, for capability objects with a schema default: anything
/// but a JSON object decodes as `T::default()`.
pub(crate) fn lenient_object_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    Ok(lenient_object(d)?.unwrap_or_default())
}

/// Decodes a field the schema marks `x-deserialize-default-on-null`: `null` becomes
/// `T::default()`; any other value must decode as `T` (the field stays strict).
pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Like [`lenient_nullable`], for a patch array whose items the schema marks
/// `x-deserialize-skip-invalid-items`: absent is `None`, `null` is `Some(None)`, an array is
/// `Some(Some(items))` without the items that do not decode, anything else counts as absent.
pub(crate) fn lenient_nullable_items<'de, D, T>(d: D) -> Result<Option<Option<Vec<T>>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    match Value::deserialize(d)? {
        Value::Null => Ok(Some(None)),
        Value::Array(items) => Ok(Some(Some(items.into_iter().filter_map(|item| T::deserialize(item).ok()).collect()))),
        _ => Ok(None),
    }
}

/// Declares a struct whose only field is `_meta` (empty responses, marker capabilities).
macro_rules! meta_only {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
        pub struct $name {
            /// Extension metadata.
            #[serde(
                rename = "_meta",
                default,
                skip_serializing_if = "Option::is_none",
                deserialize_with = "crate::v1::serde_util::lenient"
            )]
            pub meta: Option<crate::v1::Meta>,
        }
    };
}

pub(crate) use meta_only;

/// Declares, per unstable feature, the serializer of that feature's fields on stable types in a
/// build without it. Such a field always exists, so that a struct literal compiles whatever
/// features cargo unifies (see [`session_options`](super::session_options)); without its
/// feature it is never decoded (the key is ignored like any unknown one) and a value set on it
/// is refused when encoded (an error naming the feature) instead of being silently dropped.
/// Used as `serialize_with = "…::without::FEATURE"` with `skip_serializing_if` for the unset
/// value, so an unset field is never written.
macro_rules! refuse_without {
    ($($feature:ident),* $(,)?) => {$(
        #[allow(dead_code, reason = "used only by builds without the feature")]
        pub(crate) fn $feature<T, S: serde::Serializer>(_: &T, _: S) -> Result<S::Ok, S::Error> {
            Err(<S::Error as serde::ser::Error>::custom(concat!(
                "a field of the `",
                stringify!($feature),
                "` feature is set, but this build does not enable that feature"
            )))
        }
    )*};
}

/// The refusing serializers of [`refuse_without!`], one per feature.
pub(crate) mod without {
    refuse_without!(
        unstable_auth_status,
        unstable_end_turn_token_usage,
        unstable_llm_providers,
        unstable_mcp_over_acp,
        unstable_prompt_suggestions,
        unstable_session_archive,
        unstable_session_cursors,
        unstable_session_fork,
        unstable_session_options,
        unstable_session_set_title,
        unstable_session_status,
    );
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Deserialize, Serialize, PartialEq)]
    struct Patch {
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "super::lenient_nullable")]
        title: Option<Option<String>>,
    }

    #[test]
    fn null_absent_and_value_are_distinct() {
        let cases = [("{}", None), (r#"{"title":null}"#, Some(None)), (r#"{"title":"t"}"#, Some(Some("t".to_owned())))];
        for (json, title) in cases {
            let p: Patch = serde_json::from_str(json).unwrap();
            assert_eq!(p.title, title);
            assert_eq!(serde_json::to_string(&p).unwrap(), json);
        }
        let p: Patch = serde_json::from_str(r#"{"title":5}"#).unwrap();
        assert_eq!(p.title, None);
    }

    #[derive(Debug, Deserialize, PartialEq, Default)]
    struct Flag {
        #[serde(default)]
        on: bool,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Caps {
        #[serde(default, deserialize_with = "super::lenient_object")]
        opt: Option<Flag>,
        #[serde(default, deserialize_with = "super::lenient_object_default")]
        def: Flag,
    }

    #[test]
    fn capability_objects_must_be_objects() {
        let c: Caps = serde_json::from_str(r#"{"opt":[true],"def":[true]}"#).unwrap();
        assert_eq!(c, Caps { opt: None, def: Flag::default() });
        let c: Caps = serde_json::from_str(r#"{"opt":{},"def":{"on":true}}"#).unwrap();
        assert_eq!(c, Caps { opt: Some(Flag::default()), def: Flag { on: true } });
        let c: Caps = serde_json::from_str(r#"{"opt":{"on":1}}"#).unwrap();
        assert_eq!(c, Caps { opt: None, def: Flag::default() });
    }

    #[test]
    fn meta_only_is_lenient() {
        use crate::v1::KillTerminalResponse as Empty;
        let e: Empty = serde_json::from_str(r#"{"_meta":1,"x":2}"#).unwrap();
        assert_eq!(e, Empty::default());
        let e: Empty = serde_json::from_str(r#"{"_meta":{"a":1}}"#).unwrap();
        assert_eq!(serde_json::to_string(&e).unwrap(), r#"{"_meta":{"a":1}}"#);
    }
}
