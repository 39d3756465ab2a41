//! How each definition is routed (module docs of `tests/oracle.rs`, "How each definition is
//! decoded"), the plain (non-envelope) decode and re-encode, and checks 1 to 3 on one instance.

use super::*;

/// How a definition is decoded and re-encoded.
#[derive(Debug, Clone, Copy)]
pub(super) enum Route {
    Typed,
    RequestId,
    Error,
    ErrorCode,
    ExtRequest,
    ExtNotification,
    ExtResponse,
    /// A message envelope sent by `sender` (for the proxy envelopes, `ProxyRequest`, …, a
    /// random side: both the conductor and the proxy send them).
    Envelope {
        sender: Side,
        kind: Envelope,
        proxy: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Envelope {
    Request,
    Response,
    Notification,
}

pub(super) fn route(def: &str) -> Option<Route> {
    use Envelope as E;
    Some(match def {
        "RequestId" => Route::RequestId,
        "Error" => Route::Error,
        "ErrorCode" => Route::ErrorCode,
        "ExtRequest" => Route::ExtRequest,
        "ExtNotification" => Route::ExtNotification,
        "ExtResponse" => Route::ExtResponse,
        "ClientRequest" => Route::Envelope { sender: Side::Client, kind: E::Request, proxy: false },
        "AgentRequest" => Route::Envelope { sender: Side::Agent, kind: E::Request, proxy: false },
        "AgentResponse" => Route::Envelope { sender: Side::Agent, kind: E::Response, proxy: false },
        "ClientResponse" => Route::Envelope { sender: Side::Client, kind: E::Response, proxy: false },
        "ClientNotification" => Route::Envelope { sender: Side::Client, kind: E::Notification, proxy: false },
        "AgentNotification" => Route::Envelope { sender: Side::Agent, kind: E::Notification, proxy: false },
        "ProxyRequest" => Route::Envelope { sender: Side::Client, kind: E::Request, proxy: true },
        "ProxyResponse" => Route::Envelope { sender: Side::Client, kind: E::Response, proxy: true },
        "ProxyNotification" => Route::Envelope { sender: Side::Client, kind: E::Notification, proxy: true },
        d if DEFS.contains(&d) || UNSTABLE_DEFS.contains(&d) => Route::Typed,
        _ => return None,
    })
}

/// Counters of one run.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) instances: u64,
    pub(super) validations: u64,
}

/// One checked instance: the value sent in, the value that came out, and how to normalize
/// them for the comparison.
pub(super) struct Trip {
    pub(super) input: Value,
    pub(super) output: Value,
    /// The schema both are normalized with.
    pub(super) norm_schema: Value,
}

pub(super) fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(v), Some(w)) => first_difference(v, w, &format!("{path}/{k}")),
                (v, w) => Some(format!("{path}/{k}: input {v:?} vs output {w:?}")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (v, w))| first_difference(v, w, &format!("{path}/{i}")))
        }
        _ if json_eq(a, b) => None,
        _ => Some(format!("{}: input {a} vs output {b}", if path.is_empty() { "/" } else { path })),
    }
}

/// Decodes and re-encodes one instance of a non-envelope definition.
pub(super) fn trip_plain(ctx: &Ctx, def: &str, route: Route, rng: &mut Rng) -> Result<Trip, String> {
    let input = wire(&ctx.schema.generate(def, rng));
    let text = input.to_string();
    let output = decode_plain(def, route, &text).map_err(|e| format!("{e}\n  input:  {text}"))?;
    Ok(Trip { input, output, norm_schema: Schema::def_ref(def) })
}

pub(super) fn decode_plain(def: &str, route: Route, text: &str) -> Result<Value, String> {
    let input: Value = serde_json::from_str(text).expect("valid JSON text");
    Ok(match route {
        Route::Typed => roundtrip(def, input).expect("def is covered by oracle::DEFS")?,
        Route::RequestId => {
            let id: RequestId = serde_json::from_str(text).map_err(|e| e.to_string())?;
            serde_json::to_value(&id).map_err(|e| e.to_string())?
        }
        Route::Error => {
            let e: RpcError = serde_json::from_str(text).map_err(|e| e.to_string())?;
            serde_json::to_value(&e).map_err(|e| e.to_string())?
        }
        Route::ErrorCode => {
            let c: ErrorCode = serde_json::from_str(text).map_err(|e| e.to_string())?;
            serde_json::to_value(c).map_err(|e| e.to_string())?
        }
        Route::ExtRequest => {
            let r = Request::decode(Side::Agent, "_oracle/ext", Some(&raw(text))).map_err(|e| e.to_string())?;
            if r.method().is_some() || r.wire() != "_oracle/ext" {
                return Err(format!("decoded as {r:?}"));
            }
            serde_json::to_value(&r).map_err(|e| e.to_string())?
        }
        Route::ExtNotification => {
            let n = Notification::decode(Side::Client, "_oracle/ext", Some(&raw(text))).map_err(|e| e.to_string())?;
            if n.method().is_some() || n.wire() != "_oracle/ext" {
                return Err(format!("decoded as {n:?}"));
            }
            serde_json::to_value(&n).map_err(|e| e.to_string())?
        }
        Route::ExtResponse => {
            let r = Response::decode_result(Side::Client, None, &raw(text)).map_err(|e| e.to_string())?;
            if r.method().is_some() {
                return Err(format!("decoded as {r:?}"));
            }
            serde_json::to_value(&r).map_err(|e| e.to_string())?
        }
        Route::Envelope { .. } => unreachable!("envelopes go through trip_envelope"),
    })
}

/// Checks one instance; `Err` describes a failure.
pub(super) fn check_one(ctx: &Ctx, def: &str, route: Route, rng: &mut Rng, tally: &mut Tally) -> Result<(), String> {
    let trip = trip_for(ctx, def, route, rng);
    let trip = trip.map_err(|e| format!("decode/encode failed: {e}"))?;
    tally.validations += 2;
    compare(ctx, def, &trip)
}

pub(super) fn trip_for(ctx: &Ctx, def: &str, route: Route, rng: &mut Rng) -> Result<Trip, String> {
    match route {
        Route::Envelope { sender, kind, proxy } => trip_envelope(ctx, sender, kind, proxy, rng),
        _ => trip_plain(ctx, def, route, rng),
    }
}

/// Checks 1 to 3 of the module docs on one decoded-and-re-encoded instance.
pub(super) fn compare(ctx: &Ctx, def: &str, trip: &Trip) -> Result<(), String> {
    ctx.validate(def, &trip.input).map_err(|e| format!("generated input is invalid: {e}\n  input:  {}", trip.input))?;
    ctx.validate(def, &trip.output).map_err(|e| {
        format!("re-encoded output is invalid: {e}\n  input:  {}\n  output: {}", trip.input, trip.output)
    })?;
    let opts = norm_options();
    let a = ctx.schema.normalize_schema(&trip.norm_schema, &trip.input, &opts);
    let b = ctx.schema.normalize_schema(&trip.norm_schema, &trip.output, &opts);
    if !b.dropped_unknown.is_empty() {
        return Err(format!(
            "output has undeclared keys {:?}\n  input:  {}\n  output: {}",
            b.dropped_unknown, trip.input, trip.output
        ));
    }
    if let Some(diff) = first_difference(&a.value, &b.value, "") {
        return Err(format!(
            "output differs from input after normalization at {diff}\n  input:  {}\n  output: {}",
            trip.input, trip.output
        ));
    }
    Ok(())
}
