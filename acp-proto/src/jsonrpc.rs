//! The JSON-RPC 2.0 envelope: request ids, classification of incoming frames, and encoding of
//! outgoing ones.
//!
//! [`parse`] classifies one frame without building a `serde_json::Value`: `params` and
//! `result` are borrowed as raw JSON slices of the frame, for the typed layer to decode.
//!
//! | frame | classification |
//! |---|---|
//! | not UTF-8, or not JSON | [`Incoming::Invalid`] `-32700`, `id: null` |
//! | JSON but not an object (array/batch, scalar) | [`Incoming::Invalid`] `-32600`, `id: null` |
//! | object without `"jsonrpc":"2.0"`, without a string `method`, or with an id that is not an integer, string or null | [`Incoming::Invalid`] `-32600`, id echoed when it was valid |
//! | `method` and `id` | [`Incoming::Request`] (a `null` id is left for the connection to refuse) |
//! | `method`, no `id` | [`Incoming::Notification`] |
//! | no `method`, `result` or `error`, well formed | [`Incoming::Response`] |
//! | a response that is not well formed | [`Incoming::MalformedResponse`]: dropped and counted, never answered |
//!
//! [`parse`] reads one message: a v2 connection takes a batch array apart first and parses
//! each entry (module `connection::batch`, feature `unstable_protocol_v2`).
//!
//! Encoding is compact, with `"jsonrpc":"2.0"` first and a single `\n` after each frame;
//! string escaping guarantees that no raw newline appears inside a frame.
//!
//! ## Why it is public
//!
//! A [`Connection`](crate::Connection) parses and encodes every frame itself. The envelope is
//! public for code that inspects frames without running a connection (a proxy tagging what
//! passes, a logger, the schema oracles in `proptests`) and for extension authors who need the
//! exact [`RequestId`] type.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

pub use acp_schema::RequestId;

use crate::error::RpcError;

/// One classified incoming frame. Borrowed slices point into the frame.
#[derive(Debug)]
#[non_exhaustive]
pub enum Incoming<'a> {
    /// A request: it must get exactly one response.
    Request {
        /// The id, at its wire type. May be `Null`, which the connection refuses.
        id: RequestId,
        /// The method name.
        method: Cow<'a, str>,
        /// The raw params; `None` when absent or `null`.
        params: Option<&'a RawValue>,
    },
    /// A notification: never answered.
    Notification {
        /// The method name.
        method: Cow<'a, str>,
        /// The raw params; `None` when absent or `null`.
        params: Option<&'a RawValue>,
    },
    /// A well-formed response.
    Response {
        /// The id it answers (may be `Null` for a peer's error about an unparseable frame).
        id: RequestId,
        /// The raw result, or the error object.
        outcome: Result<&'a RawValue, RpcError>,
    },
    /// Not a valid message; answer with `error` under `id`.
    Invalid {
        /// The id to answer under: the frame's id when it was valid, otherwise `Null`.
        id: RequestId,
        /// `-32700` or `-32600`, with a reason in `data`.
        error: RpcError,
    },
    /// Looks like a response but is not well formed. JSON-RPC forbids answering a response,
    /// and an echoed error could be mis-correlated by the peer, so it is dropped and counted.
    MalformedResponse {
        /// Why it is malformed.
        reason: String,
    },
}

/// Classifies one frame (a line without its terminator). Never panics.
///
/// ```
/// use acp_proto::jsonrpc::{parse, Incoming};
/// match parse(br#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/"}}"#) {
///     Incoming::Request { id, method, params } => {
///         assert_eq!(id, acp_proto::RequestId::Number(7));
///         assert_eq!(method, "session/new");
///         assert_eq!(params.unwrap().get(), r#"{"cwd":"/"}"#);
///     }
///     other => panic!("{other:?}"),
/// }
/// assert!(matches!(parse(b"[1,2]"), Incoming::Invalid { .. }));
/// ```
pub fn parse(frame: &[u8]) -> Incoming<'_> {
    let Ok(text) = std::str::from_utf8(frame) else {
        return Incoming::Invalid { id: RequestId::Null, error: RpcError::parse_error("frame is not valid UTF-8") };
    };
    let raw = match serde_json::from_str::<RawEnvelope<'_>>(text) {
        Ok(raw) => raw,
        Err(e) => {
            // Tell invalid JSON (-32700) from valid JSON of the wrong shape (-32600).
            let error = match serde_json::from_str::<IgnoredAny>(text) {
                Err(_) => RpcError::parse_error(e.to_string()),
                Ok(_) => RpcError::invalid_request(format!("not a JSON-RPC message object: {e}")),
            };
            return Incoming::Invalid { id: RequestId::Null, error };
        }
    };
    classify(raw)
}

fn classify(raw: RawEnvelope<'_>) -> Incoming<'_> {
    let id = match raw.id {
        None => None,
        Some(v) => match serde_json::from_str::<RequestId>(v.get()) {
            Ok(id) => Some(id),
            Err(e) => return invalid_id(&raw, e.to_string()),
        },
    };
    let version_ok = raw.jsonrpc.is_some_and(|v| {
        v.get() == "\"2.0\"" || serde_json::from_str::<Cow<'_, str>>(v.get()).is_ok_and(|s| s == "2.0")
    });
    let Some(method) = raw.method else {
        if raw.result.is_some() || raw.error.is_some() {
            return response(raw, id, version_ok);
        }
        return Incoming::Invalid {
            id: id.unwrap_or(RequestId::Null),
            error: RpcError::invalid_request("missing `method`"),
        };
    };
    if !version_ok {
        return Incoming::Invalid {
            id: id.unwrap_or(RequestId::Null),
            error: RpcError::invalid_request("`jsonrpc` must be \"2.0\""),
        };
    }
    let method = match serde_json::from_str::<Cow<'_, str>>(method.get()) {
        Ok(m) => m,
        Err(_) => {
            return Incoming::Invalid {
                id: id.unwrap_or(RequestId::Null),
                error: RpcError::invalid_request("`method` must be a string"),
            };
        }
    };
    let params = raw.params.filter(|p| p.get() != "null");
    match id {
        Some(id) => Incoming::Request { id, method, params },
        None => Incoming::Notification { method, params },
    }
}

fn invalid_id<'a>(raw: &RawEnvelope<'a>, why: String) -> Incoming<'a> {
    if raw.method.is_none() && (raw.result.is_some() || raw.error.is_some()) {
        return Incoming::MalformedResponse { reason: format!("invalid id: {why}") };
    }
    Incoming::Invalid { id: RequestId::Null, error: RpcError::invalid_request(format!("invalid id: {why}")) }
}

fn response<'a>(raw: RawEnvelope<'a>, id: Option<RequestId>, version_ok: bool) -> Incoming<'a> {
    let malformed = |reason: &str| Incoming::MalformedResponse { reason: reason.to_owned() };
    if !version_ok {
        return malformed("`jsonrpc` must be \"2.0\"");
    }
    let Some(id) = id else {
        return malformed("response without `id`");
    };
    match (raw.result, raw.error) {
        (Some(_), Some(_)) => malformed("response with both `result` and `error`"),
        (Some(result), None) => Incoming::Response { id, outcome: Ok(result) },
        (None, Some(error)) => match serde_json::from_str::<RpcError>(error.get()) {
            Ok(error) => Incoming::Response { id, outcome: Err(error) },
            Err(e) => Incoming::MalformedResponse { reason: format!("invalid error object: {e}") },
        },
        (None, None) => malformed("response without `result` or `error`"),
    }
}

/// The top-level members of a message object, each kept as raw JSON. A member that is
/// present with the value `null` is `Some("null")`, unlike an absent one.
struct RawEnvelope<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

impl<'de> Deserialize<'de> for RawEnvelope<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawEnvelope<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEnvelope<'de>, A::Error> {
                let mut env =
                    RawEnvelope { jsonrpc: None, id: None, method: None, params: None, result: None, error: None };
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let slot = match &*key {
                        "jsonrpc" => &mut env.jsonrpc,
                        "id" => &mut env.id,
                        "method" => &mut env.method,
                        "params" => &mut env.params,
                        "result" => &mut env.result,
                        "error" => &mut env.error,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    if slot.is_some() {
                        return Err(de::Error::custom(format_args!("duplicate member `{key}`")));
                    }
                    *slot = Some(map.next_value::<&'de RawValue>()?);
                }
                Ok(env)
            }
        }
        d.deserialize_map(V)
    }
}

/// Appends `{"jsonrpc":"2.0","id":ID,"method":M,"params":P}\n` to `out`. `params: None` omits
/// the member. On a serialization error `out` is left as it was.
pub fn encode_request<P: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    id: &RequestId,
    method: &str,
    params: Option<&P>,
) -> Result<(), serde_json::Error> {
    encode_call(out, Some(id), method, params)
}

/// Appends `{"jsonrpc":"2.0","method":M,"params":P}\n` to `out`.
pub fn encode_notification<P: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    method: &str,
    params: Option<&P>,
) -> Result<(), serde_json::Error> {
    encode_call(out, None, method, params)
}

/// Appends `{"jsonrpc":"2.0","id":ID,"result":R}\n` to `out`.
pub fn encode_result<R: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    id: &RequestId,
    result: &R,
) -> Result<(), serde_json::Error> {
    encode_reply(out, id, b"result", result)
}

/// Appends `{"jsonrpc":"2.0","id":ID,"error":E}\n` to `out`. Cannot fail for a well-formed
/// [`RpcError`]; should its `data` fail to serialize, it is dropped.
pub fn encode_error(out: &mut Vec<u8>, id: &RequestId, error: &RpcError) {
    if encode_reply(out, id, b"error", error).is_err() {
        // A code and a string always serialize.
        let _ = encode_reply(out, id, b"error", &RpcError::new(error.code, error.message.clone()));
    }
}

/// A request (with `id`) or a notification (without).
fn encode_call<P: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    id: Option<&RequestId>,
    method: &str,
    params: Option<&P>,
) -> Result<(), serde_json::Error> {
    encode_with(out, |out| {
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
        if let Some(id) = id {
            out.extend_from_slice(b"\"id\":");
            serde_json::to_writer(&mut *out, id)?;
            out.push(b',');
        }
        out.extend_from_slice(b"\"method\":");
        serde_json::to_writer(&mut *out, method)?;
        if let Some(p) = params {
            out.extend_from_slice(b",\"params\":");
            serde_json::to_writer(&mut *out, p)?;
        }
        Ok(())
    })
}

/// A response: `key` is `result` or `error`.
fn encode_reply<V: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    id: &RequestId,
    key: &[u8],
    value: &V,
) -> Result<(), serde_json::Error> {
    encode_with(out, |out| {
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        serde_json::to_writer(&mut *out, id)?;
        out.push(b',');
        out.push(b'"');
        out.extend_from_slice(key);
        out.extend_from_slice(b"\":");
        serde_json::to_writer(&mut *out, value)
    })
}

fn encode_with(
    out: &mut Vec<u8>,
    body: impl FnOnce(&mut Vec<u8>) -> Result<(), serde_json::Error>,
) -> Result<(), serde_json::Error> {
    let start = out.len();
    match body(out) {
        Ok(()) => {
            // serde_json escapes newlines inside strings, so a raw LF can only be whitespace
            // written verbatim by a `RawValue` (e.g. pretty-printed JSON). Turn it into a space:
            // a frame must never contain a raw newline.
            let mut pos = start;
            while let Some(i) = crate::framer::find_newline(&out[pos..]) {
                out[pos + i] = b' ';
                pos += i + 1;
            }
            out.extend_from_slice(b"}\n");
            Ok(())
        }
        Err(e) => {
            out.truncate(start);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use serde_json::{Value, json};

    fn code_of(frame: &str) -> (RequestId, ErrorCode) {
        match parse(frame.as_bytes()) {
            Incoming::Invalid { id, error } => (id, error.code),
            other => panic!("{frame}: expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn ids_round_trip_at_their_exact_type() {
        for raw in
            ["0", "-1", "9223372036854775807", "-9223372036854775808", "\"\"", "\"1\"", "\"h\u{e9}\u{1F600}\"", "null"]
        {
            let id: RequestId = serde_json::from_str(raw).unwrap();
            assert_eq!(serde_json::to_string(&id).unwrap(), raw);
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"m"}}"#);
            match parse(frame.as_bytes()) {
                Incoming::Request { id: got, .. } => assert_eq!(got, id),
                other => panic!("{other:?}"),
            }
        }
        assert_ne!(RequestId::Number(1), RequestId::from("1"));
    }

    #[test]
    fn invalid_json_and_utf8_are_parse_errors() {
        assert_eq!(code_of("{"), (RequestId::Null, ErrorCode::PARSE_ERROR));
        assert_eq!(code_of("not json"), (RequestId::Null, ErrorCode::PARSE_ERROR));
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#), (RequestId::Null, ErrorCode::PARSE_ERROR));
        match parse(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}") {
            Incoming::Invalid { id, error } => {
                assert_eq!((id, error.code), (RequestId::Null, ErrorCode::PARSE_ERROR));
                assert!(error.reason().unwrap().contains("UTF-8"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn non_request_objects_are_invalid_requests() {
        let cases = [
            (r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#, RequestId::Null),
            ("42", RequestId::Null),
            ("\"s\"", RequestId::Null),
            ("null", RequestId::Null),
            (r#"{"jsonrpc":"2.0","id":1}"#, RequestId::Number(1)),
            (r#"{"jsonrpc":"2.0","id":"a","method":5}"#, RequestId::from("a")),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#, RequestId::Null),
            (r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#, RequestId::Null),
            (r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#, RequestId::Null),
            (r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"m"}"#, RequestId::Null),
            (r#"{"id":3,"method":"m"}"#, RequestId::Number(3)),
            (r#"{"jsonrpc":"1.0","id":3,"method":"m"}"#, RequestId::Number(3)),
            (r#"{"jsonrpc":2.0,"id":3,"method":"m"}"#, RequestId::Number(3)),
            (r#"{"jsonrpc":"2.0","id":3,"id":4,"method":"m"}"#, RequestId::Null),
        ];
        for (frame, want_id) in cases {
            assert_eq!(code_of(frame), (want_id, ErrorCode::INVALID_REQUEST), "{frame}");
        }
    }

    #[test]
    fn requests_notifications_and_responses() {
        match parse(br#"{"method":"session/update","params":{"a":1},"jsonrpc":"2.0","extra":[1]}"#) {
            Incoming::Notification { method, params } => {
                assert_eq!(method, "session/update");
                assert_eq!(params.unwrap().get(), r#"{"a":1}"#);
            }
            other => panic!("{other:?}"),
        }
        match parse(br#"{"jsonrpc":"2.0","id":1,"method":"logout","params":null}"#) {
            Incoming::Request { params, .. } => assert!(params.is_none()),
            other => panic!("{other:?}"),
        }
        match parse(br#"{"jsonrpc":"2.0","id":"x","result":null}"#) {
            Incoming::Response { id, outcome } => {
                assert_eq!(id, RequestId::from("x"));
                assert_eq!(outcome.unwrap().get(), "null");
            }
            other => panic!("{other:?}"),
        }
        match parse(br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"nope","data":"m"}}"#) {
            Incoming::Response { outcome: Err(e), .. } => {
                assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
                assert_eq!(e.data, Some(json!("m")));
            }
            other => panic!("{other:?}"),
        }
        // An escaped method name is decoded.
        match parse(br#"{"jsonrpc":"2.0","method":"session\/cancel"}"#) {
            Incoming::Notification { method, .. } => assert_eq!(method, "session/cancel"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_responses_are_never_answered() {
        for frame in [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":1}"#,
            r#"{"jsonrpc":"2.0","result":1}"#,
            r#"{"id":1,"result":1}"#,
        ] {
            assert!(matches!(parse(frame.as_bytes()), Incoming::MalformedResponse { .. }), "{frame}");
        }
    }

    #[test]
    fn encoding_is_compact_with_jsonrpc_first() {
        let mut out = Vec::new();
        encode_request(&mut out, &RequestId::Number(0), "session/new", Some(&json!({"cwd": "/x\ny"}))).unwrap();
        encode_notification::<Value>(&mut out, "n", None).unwrap();
        encode_result(&mut out, &RequestId::from("id"), &json!({})).unwrap();
        encode_error(&mut out, &RequestId::Null, &RpcError::new(ErrorCode(-1), "e"));
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"jsonrpc":"2.0","id":0,"method":"session/new","params":{"cwd":"/x\ny"}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"n"}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":"id","result":{}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"e"}}"#,
                "\n"
            )
        );
        assert_eq!(text.lines().count(), 4);
    }

    #[test]
    fn raw_json_with_newlines_stays_on_one_line() {
        let raw = RawValue::from_string("{\n  \"a\": [1,\n 2]\n}".into()).unwrap();
        let mut out = Vec::new();
        encode_result(&mut out, &RequestId::Number(1), &*raw).unwrap();
        assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 1);
        match parse(&out[..out.len() - 1]) {
            Incoming::Response { outcome: Ok(r), .. } => {
                assert_eq!(serde_json::from_str::<Value>(r.get()).unwrap(), json!({"a": [1, 2]}))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn failed_encoding_leaves_the_buffer_unchanged() {
        struct Bad;
        impl Serialize for Bad {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("nope"))
            }
        }
        let mut out = b"keep".to_vec();
        assert!(encode_notification(&mut out, "m", Some(&Bad)).is_err());
        assert_eq!(out, b"keep");
    }
}
