//! A value of one ACP version as the other version's type of the same wire shape (the
//! requests, answers and updates whose JSON both versions share).

use acp_blocking::Error;
use acp_blocking::acp_proto::types::SessionConfigOption;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// `value` in the other version's type of the same wire shape.
pub(super) fn reshape<T: Serialize, U: DeserializeOwned>(value: &T) -> Result<U, Error> {
    serde_json::to_value(value).and_then(serde_json::from_value).map_err(|_| Error::UnexpectedResponse)
}

/// A v2 config option's JSON as v1's: v2 names it `configId` where v1 says `id`.
pub(super) fn config_option_v1(option: &mut Value) {
    if let Some(object) = option.as_object_mut()
        && let Some(id) = object.remove("configId")
    {
        object.insert("id".to_owned(), id);
    }
}

/// v2's config options as v1's; one that has no v1 form is left out.
pub(super) fn config_options<T: Serialize>(options: &[T]) -> Vec<SessionConfigOption> {
    let v1 = |option: &T| {
        let mut value = serde_json::to_value(option).ok()?;
        config_option_v1(&mut value);
        serde_json::from_value(value).ok()
    };
    options.iter().filter_map(v1).collect()
}
