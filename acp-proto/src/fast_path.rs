//! One-pass decoding of the frames that dominate traffic.
//!
//! [`jsonrpc::parse`](crate::jsonrpc::parse) classifies a frame with its params kept as a raw
//! slice, which the typed layer then decodes: two passes over the params. Here a request or
//! notification whose `method` comes before its `params` (what every SDK writes) and whose method
//! is an application method this side receives is decoded in a single pass, straight into its
//! typed params. Anything else (responses, extensions, `$/cancel_request`, `session/cancel`,
//! params before method, any error at all) returns `None`, and the caller takes the general path,
//! which produces the exact classification and error answer. So this path may only ever agree
//! with the general one; the connection tests and the simulation run through both.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::Side;
use crate::jsonrpc::RequestId;
use crate::methods::{
    AgentNotification, AgentRequest, ClientNotification, ClientRequest, Kind, Layer, Method, Notification, Request,
};

/// A frame decoded in one pass.
#[derive(Debug)]
pub(crate) enum Fast<'a> {
    /// A request with a non-null id, for a method this side handles.
    Request { id: RequestId, method: Cow<'a, str>, request: Request },
    /// A notification for a method this side handles.
    Notification(Notification),
}

/// Decodes `frame` in one pass, or `None` when the general path must handle it.
pub(crate) fn parse(frame: &[u8], side: Side) -> Option<Fast<'_>> {
    let text = std::str::from_utf8(frame).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let fast = de.deserialize_map(FastVisitor { side }).ok()?;
    de.end().ok()?;
    Some(fast)
}

struct FastVisitor {
    side: Side,
}

/// Aborts the fast path; the general path will classify the frame.
fn bail<E: de::Error>() -> E {
    E::custom("not for the fast path")
}

impl<'de> Visitor<'de> for FastVisitor {
    type Value = Fast<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC request or notification")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fast<'de>, A::Error> {
        let mut version_ok = false;
        let mut id: Option<RequestId> = None;
        let mut method: Option<(Cow<'de, str>, Method)> = None;
        let mut decoded: Option<Decoded> = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                "jsonrpc" if !version_ok => {
                    let v = map.next_value::<Cow<'de, str>>()?;
                    if v != "2.0" {
                        return Err(bail());
                    }
                    version_ok = true;
                }
                "id" if id.is_none() => {
                    let v = map.next_value::<RequestId>()?;
                    if v == RequestId::Null {
                        return Err(bail());
                    }
                    id = Some(v);
                }
                "method" if method.is_none() => {
                    let name = map.next_value::<Cow<'de, str>>()?;
                    let m = Method::received(&name, self.side).ok_or_else(bail)?;
                    let row = m.row();
                    if row.layer != Layer::App || !row.received_by(self.side) {
                        return Err(bail());
                    }
                    method = Some((name, m));
                }
                "params" if decoded.is_none() => {
                    let (_, m) = method.as_ref().ok_or_else(bail)?;
                    decoded = Some(map.next_value_seed(ParamsSeed { side: self.side, method: *m })?);
                }
                "jsonrpc" | "id" | "method" | "params" | "result" | "error" => return Err(bail()),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let (name, m) = method.ok_or_else(bail)?;
        if !version_ok {
            return Err(bail());
        }
        let decoded = match decoded {
            Some(d) => d,
            // Absent params decode as `{}`, as on the general path.
            None => {
                let mut empty = serde_json::Deserializer::from_str("{}");
                ParamsSeed { side: self.side, method: m }.deserialize(&mut empty).map_err(|_| bail::<A::Error>())?
            }
        };
        match (m.row().kind, id, decoded) {
            (Kind::Request, Some(id), Decoded::Request(request)) => Ok(Fast::Request { id, method: name, request }),
            (Kind::Notification, None, Decoded::Notification(n)) => Ok(Fast::Notification(n)),
            _ => Err(bail()),
        }
    }
}

enum Decoded {
    Request(Request),
    Notification(Notification),
}

/// Decodes the params of `method` as received by `side`.
struct ParamsSeed {
    side: Side,
    method: Method,
}

impl<'de> DeserializeSeed<'de> for ParamsSeed {
    type Value = Decoded;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Decoded, D::Error> {
        let decoded = match (self.method.row().kind, self.side) {
            (Kind::Request, Side::Agent) => {
                ClientRequest::deserialize_method(self.method, d)?.map(|r| Decoded::Request(Request::Client(r)))
            }
            (Kind::Request, Side::Client) => {
                AgentRequest::deserialize_method(self.method, d)?.map(|r| Decoded::Request(Request::Agent(r)))
            }
            (Kind::Notification, Side::Agent) => ClientNotification::deserialize_method(self.method, d)?
                .map(|n| Decoded::Notification(Notification::Client(n))),
            (Kind::Notification, Side::Client) => AgentNotification::deserialize_method(self.method, d)?
                .map(|n| Decoded::Notification(Notification::Agent(n))),
        };
        decoded.ok_or_else(bail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hot_frames_take_the_fast_path() {
        let update = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}"#;
        assert!(matches!(parse(update, Side::Client), Some(Fast::Notification(_))));
        let prompt =
            br#"{"jsonrpc":"2.0","id":"u-1","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#;
        assert!(matches!(parse(prompt, Side::Agent), Some(Fast::Request { .. })));
        let logout = br#"{"jsonrpc":"2.0","id":3,"method":"logout"}"#;
        assert!(matches!(parse(logout, Side::Agent), Some(Fast::Request { .. })));
    }

    #[test]
    fn everything_else_falls_back() {
        for (frame, side) in [
            // wrong side, params before method, bad params, responses, protocol rows, extensions
            (&br#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#[..], Side::Agent),
            (
                br#"{"jsonrpc":"2.0","params":{"sessionId":"s","prompt":[]},"id":1,"method":"session/prompt"}"#,
                Side::Agent,
            ),
            (br#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"prompt":[]}}"#, Side::Agent),
            (br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, Side::Agent),
            (br#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}"#, Side::Agent),
            (br#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#, Side::Agent),
            (br#"{"jsonrpc":"2.0","id":1,"method":"_x","params":{}}"#, Side::Agent),
            (br#"{"jsonrpc":"2.0","id":null,"method":"logout"}"#, Side::Agent),
            (br#"{"jsonrpc":"2.0","method":"logout"}"#, Side::Agent),
            (br#"{"id":1,"method":"logout"}"#, Side::Agent),
            (br#"{"jsonrpc":"2.0","id":1,"method":"logout"} trailing"#, Side::Agent),
            (br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"logout"}"#, Side::Agent),
            // a batch array of hot frames (v2 takes batches apart on the general path)
            (br#"[{"jsonrpc":"2.0","id":3,"method":"logout"}]"#, Side::Agent),
            (
                br#" [{"jsonrpc":"2.0","id":3,"method":"logout"},{"jsonrpc":"2.0","id":4,"method":"logout"}]"#,
                Side::Agent,
            ),
        ] {
            assert!(parse(frame, side).is_none(), "{}", String::from_utf8_lossy(frame));
        }
    }

    /// A batch array is never read as one message by either one-pass decoder: the connection
    /// takes it apart on the general path (v2) or refuses it there (v1).
    #[test]
    fn a_batch_line_takes_neither_fast_path() {
        let chunk = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}"#;
        assert!(crate::chunk_path::decode(chunk.as_bytes(), Side::Client).is_some());
        assert!(parse(chunk.as_bytes(), Side::Client).is_some());
        for line in [format!("[{chunk}]"), format!("[{chunk},{chunk}]"), format!(" [{chunk}]"), format!("[{chunk}")] {
            assert!(crate::chunk_path::decode(line.as_bytes(), Side::Client).is_none(), "{line}");
            assert!(parse(line.as_bytes(), Side::Client).is_none(), "{line}");
        }
    }
}
