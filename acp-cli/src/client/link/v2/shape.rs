//! A value of one ACP version as the other version's type of the same wire shape (the
//! requests, answers and updates whose JSON both versions share).

use acp_blocking::Error;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// `value` in the other version's type of the same wire shape.
pub(super) fn reshape<T: Serialize, U: DeserializeOwned>(value: &T) -> Result<U, Error> {
    serde_json::to_value(value).and_then(serde_json::from_value).map_err(|_| Error::UnexpectedResponse)
}
