//! The seven v2 message envelopes, generated consistently (as the v1 oracle does): a row of
//! the v2 method table sent by the right side, or an extension method about as often as one
//! row; params from the row's params definition (a result from its result definition, or an
//! `Error` one time in four); an id from `RequestId`. Requests and notifications decode with
//! serde into `acp_proto::v2::{ClientRequest, …}`, responses with `AgentResponse::decode` /
//! `ClientResponse::decode` given the request's method; each is re-encoded with `Serialize`.

use acp_proto::methods::{Direction, Kind};
use acp_proto::v2::{self, METHODS, MethodRow, envelope};
use proptests::schema_gen::{Rng, Schema};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::super::{Ctx, Trip, ext_method, ext_params, wire};

/// The envelope definitions this module routes.
pub(super) const ENVELOPES: &[&str] = &[
    "ClientRequest",
    "AgentRequest",
    "ClientResponse",
    "AgentResponse",
    "ClientNotification",
    "AgentNotification",
    "ProtocolLevelNotification",
];

/// A trip of envelope `def`, or `None` if `def` is not an envelope.
pub(super) fn trip(ctx: &Ctx, def: &str, rng: &mut Rng) -> Option<Result<Trip, String>> {
    use Direction::{AgentToClient as A2C, Both, ClientToAgent as C2A};
    Some(match def {
        "ClientRequest" => message::<envelope::ClientRequest>(ctx, C2A, Kind::Request, rng),
        "AgentRequest" => message::<envelope::AgentRequest>(ctx, A2C, Kind::Request, rng),
        "ClientNotification" => message::<envelope::ClientNotification>(ctx, C2A, Kind::Notification, rng),
        "AgentNotification" => message::<envelope::AgentNotification>(ctx, A2C, Kind::Notification, rng),
        "ProtocolLevelNotification" => {
            message::<envelope::ProtocolLevelNotification>(ctx, Both, Kind::Notification, rng)
        }
        "AgentResponse" => response(ctx, C2A, rng, |v, m| envelope::AgentResponse::decode(v, m).map(to_value)),
        "ClientResponse" => response(ctx, A2C, rng, |v, m| envelope::ClientResponse::decode(v, m).map(to_value)),
        _ => return None,
    })
}

fn to_value<T: Serialize>(t: T) -> Result<Value, String> {
    serde_json::to_value(t).map_err(|e| e.to_string())
}

/// A row of `direction` and `kind`, or `None` (an extension method) one time in rows + 1.
fn pick_row(direction: Direction, kind: Kind, rng: &mut Rng) -> Option<&'static MethodRow> {
    let rows: Vec<&MethodRow> = METHODS.iter().filter(|r| r.direction == direction && r.kind == kind).collect();
    assert!(!rows.is_empty());
    if rng.chance(1, rows.len() as u64 + 1) { None } else { Some(*rng.pick(&rows)) }
}

fn message<T: DeserializeOwned + Serialize>(
    ctx: &Ctx,
    direction: Direction,
    kind: Kind,
    rng: &mut Rng,
) -> Result<Trip, String> {
    let row = pick_row(direction, kind, rng);
    // An unknown protocol-level method is a `$/` one, and the schema allows it no params
    // but `null`.
    let protocol = direction == Direction::Both;
    let method = match row {
        Some(r) => r.wire.to_owned(),
        None if protocol => format!("$/{}", ext_method(rng)),
        None => ext_method(rng),
    };
    let mut msg = Map::new();
    let mut props = Map::new();
    if kind == Kind::Request {
        msg.insert("id".into(), ctx.schema.generate("RequestId", rng));
        props.insert("id".into(), Schema::def_ref("RequestId"));
    }
    msg.insert("method".into(), Value::String(method));
    props.insert("method".into(), json!({"type": "string"}));
    let params = match row {
        Some(r) => Some(ctx.schema.generate(r.params, rng)),
        None if protocol => rng.chance(1, 2).then_some(Value::Null),
        None => ext_params(rng),
    };
    if let Some(p) = params {
        msg.insert("params".into(), p);
    }
    props.insert("params".into(), row.map_or(json!({}), |r| Schema::def_ref(r.params)));
    let input = wire(&Value::Object(msg));
    let decoded: T = serde_json::from_value(input.clone()).map_err(|e| format!("{e}\n  input:  {input}"))?;
    let output = to_value(decoded)?;
    Ok(Trip { input, output, norm_schema: json!({"type": "object", "properties": props}) })
}

fn response(
    ctx: &Ctx,
    requests: Direction,
    rng: &mut Rng,
    decode: impl Fn(Value, &str) -> Result<Result<Value, String>, v2::DecodeError>,
) -> Result<Trip, String> {
    let row = pick_row(requests, Kind::Request, rng);
    let method = row.map_or_else(|| ext_method(rng), |r| r.wire.to_owned());
    let result_def = row.map_or("ExtResponse", |r| r.result.expect("a request row"));
    let mut msg = Map::new();
    msg.insert("id".into(), ctx.schema.generate("RequestId", rng));
    if rng.chance(1, 4) {
        msg.insert("error".into(), ctx.schema.generate("Error", rng));
    } else {
        msg.insert("result".into(), ctx.schema.generate(result_def, rng));
    }
    let input = wire(&Value::Object(msg));
    let output = decode(input.clone(), &method).map_err(|e| format!("{e}\n  input:  {input}"))??;
    let props = json!({
        "id": Schema::def_ref("RequestId"),
        "result": row.map_or(json!({}), |_| Schema::def_ref(result_def)),
        "error": Schema::def_ref("Error"),
    });
    Ok(Trip { input, output, norm_schema: json!({"type": "object", "properties": props}) })
}
