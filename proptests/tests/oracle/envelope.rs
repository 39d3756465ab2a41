//! The six message envelopes (and the proxy ones with the `unstable` feature), generated
//! consistently from a row of the method table or an extension method, through the envelope
//! and typed layers (module docs of `tests/oracle.rs`, "Special case").

use super::*;

pub(super) fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).expect("valid JSON text")
}

/// The wire form of a generated value: serialized, then parsed back.
pub(super) fn wire(value: &Value) -> Value {
    serde_json::from_str(&value.to_string()).expect("serde_json reparses its output")
}

/// The direction of the methods `sender` sends.
pub(super) fn direction_of(sender: Side) -> Direction {
    match sender {
        Side::Client => Direction::ClientToAgent,
        Side::Agent => Direction::AgentToClient,
    }
}

pub(super) fn ext_method(rng: &mut Rng) -> String {
    const NAMES: &[&str] = &["_zed.dev/workspace/buffers", "_x", "_vendor/méthode", "_a/b/c", "_"];
    if rng.chance(1, 2) { (*rng.pick(NAMES)).to_owned() } else { format!("_{}", random_string(rng)) }
}

/// Arbitrary extension params: absent, `null`, or any JSON.
pub(super) fn ext_params(rng: &mut Rng) -> Option<Value> {
    match rng.below(6) {
        0 => None,
        1 => Some(Value::Null),
        _ => Some(arbitrary_json(rng, 2)),
    }
}

/// Generates a consistent message of an envelope definition, sends it through the envelope
/// and typed layers, and returns input and output frames.
pub(super) fn trip_envelope(
    ctx: &Ctx,
    sender: Side,
    kind: Envelope,
    proxy: bool,
    rng: &mut Rng,
) -> Result<Trip, String> {
    // Both the conductor (client side) and the proxy (agent side) send the proxy envelopes.
    let sender = if proxy && rng.chance(1, 2) { sender.peer() } else { sender };
    let wanted = match kind {
        Envelope::Request | Envelope::Response => Kind::Request,
        Envelope::Notification => Kind::Notification,
    };
    // A response answers a request of the other side.
    let requester = match kind {
        Envelope::Response => sender.peer(),
        Envelope::Request | Envelope::Notification => sender,
    };
    // The proxy methods are in the proxy envelopes only, which have no extension branch.
    let rows: Vec<&MethodRow> = METHODS
        .iter()
        .filter(|r| r.direction == direction_of(requester) && r.kind == wanted)
        .filter(|r| r.wire.starts_with("proxy/") == proxy)
        .collect();
    assert!(!rows.is_empty());
    let ext = !proxy && rng.chance(1, rows.len() as u64 + 1);
    let row: Option<&MethodRow> = if ext { None } else { Some(*rng.pick(&rows)) };
    let method = row.map_or_else(|| ext_method(rng), |r| r.wire.to_owned());

    let mut msg = serde_json::Map::new();
    msg.insert("jsonrpc".into(), json!("2.0"));
    let mut props = serde_json::Map::new();
    props.insert("jsonrpc".into(), json!({"const": "2.0"}));
    props.insert("id".into(), Schema::def_ref("RequestId"));
    props.insert("method".into(), json!({"type": "string"}));
    let free = json!({});
    match kind {
        Envelope::Request | Envelope::Notification => {
            if kind == Envelope::Request {
                msg.insert("id".into(), ctx.schema.generate("RequestId", rng));
            }
            msg.insert("method".into(), Value::String(method.clone()));
            let params = match row {
                Some(r) => Some(ctx.schema.generate(schema_name(r.params), rng)),
                None => ext_params(rng),
            };
            if let Some(p) = params {
                msg.insert("params".into(), p);
            }
            props.insert("params".into(), row.map_or(free, |r| Schema::def_ref(schema_name(r.params))));
        }
        Envelope::Response => {
            msg.insert("id".into(), ctx.schema.generate("RequestId", rng));
            if rng.chance(1, 4) {
                msg.insert("error".into(), ctx.schema.generate("Error", rng));
            } else {
                let result = match row {
                    Some(r) => ctx.schema.generate(schema_name(r.result.expect("a request row")), rng),
                    None => ctx.schema.generate("ExtResponse", rng),
                };
                msg.insert("result".into(), result);
            }
            props.insert(
                "result".into(),
                row.map_or(free, |r| Schema::def_ref(schema_name(r.result.expect("a request row")))),
            );
            props.insert("error".into(), Schema::def_ref("Error"));
        }
    }
    let input = wire(&Value::Object(msg));
    let text = to_text_shuffled(&input, rng);

    let output = decode_envelope(sender, kind, row, &method, &text).map_err(|e| format!("{e}\n  input:  {text}"))?;
    Ok(Trip {
        input,
        output,
        norm_schema: json!({
            "type": "object",
            "properties": props,
            "required": ["jsonrpc", "id", "method", "result", "error"],
        }),
    })
}

/// Parses a frame, decodes it with the typed layer of the side that receives it, and
/// re-encodes it.
pub(super) fn decode_envelope(
    sender: Side,
    kind: Envelope,
    row: Option<&MethodRow>,
    method: &str,
    text: &str,
) -> Result<Value, String> {
    let receiver = sender.peer();
    let mut out = Vec::new();
    match (kind, jsonrpc::parse(text.as_bytes())) {
        (Envelope::Request, Incoming::Request { id, method: m, params }) => {
            let req = Request::decode(receiver, &m, params).map_err(|e| format!("Request::decode: {e}"))?;
            if req.sender() != sender || req.wire() != method || req.method() != row.map(|r| r.method) {
                return Err(format!("decoded as {req:?}"));
            }
            jsonrpc::encode_request(&mut out, &id, req.wire(), req.has_params().then_some(&req))
                .map_err(|e| format!("encode_request: {e}"))?;
        }
        (Envelope::Notification, Incoming::Notification { method: m, params }) => {
            let n = Notification::decode(receiver, &m, params).map_err(|e| format!("Notification::decode: {e}"))?;
            if n.sender() != sender || n.wire() != method || n.method() != row.map(|r| r.method) {
                return Err(format!("decoded as {n:?}"));
            }
            jsonrpc::encode_notification(&mut out, n.wire(), n.has_params().then_some(&n))
                .map_err(|e| format!("encode_notification: {e}"))?;
        }
        (Envelope::Response, Incoming::Response { id, outcome }) => match outcome {
            Ok(result) => {
                // The requester is the peer of the responding side.
                let resp = Response::decode_result(receiver, row.map(|r| r.method), result)
                    .map_err(|e| format!("Response::decode_result: {e}"))?;
                if resp.sender() != sender || resp.method() != row.map(|r| r.method) {
                    return Err(format!("decoded as {resp:?}"));
                }
                jsonrpc::encode_result(&mut out, &id, &resp).map_err(|e| format!("encode_result: {e}"))?;
            }
            Err(error) => jsonrpc::encode_error(&mut out, &id, &error),
        },
        (_, other) => return Err(format!("parse: {other:?}")),
    }
    let line = out.strip_suffix(b"\n").ok_or("frame without its newline")?;
    if line.contains(&b'\n') {
        return Err("raw newline inside a frame".into());
    }
    serde_json::from_slice(line).map_err(|e| format!("re-encoded frame is not JSON: {e}"))
}
