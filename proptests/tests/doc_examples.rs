//! The JSON-RPC messages shown in the protocol pages (`docs/*.mdx` of the newest official
//! release, `spec/v1.21.0/docs`: see `proptests::spec::docs_dir`) decode with acp-proto and
//! re-encode to an equivalent message, checked against the pinned schema.
//!
//! Every ```` ```json ```` block (whatever follows `json` on the fence line: `expandable`,
//! `highlight={…}`) is read. A block that is not valid JSON (comments, ellipses) or that is not
//! a whole message (an object with `"jsonrpc"`; the pages also show fragments such as a single
//! content block) is counted as skipped, with its reason. The others go through
//! `jsonrpc::parse` and the typed layer of the side that receives them:
//!
//! * requests: `Request::decode` for the side that handles the method
//!   (`Method::from_wire(m).row().direction`; an `_`-prefixed extension method is decoded as
//!   received by the agent, both sides treat them alike), re-encoded with `encode_request`;
//! * notifications: `Notification::decode` likewise, re-encoded with `encode_notification`;
//!   the protocol-level `$/cancel_request`, which acp-proto handles before the typed layer,
//!   decodes as `CancelRequestNotification`;
//! * responses: the method is the one of the nearest preceding request example of the same
//!   file with the same id; the result is decoded with `Response::decode_result` for the side
//!   that sent that request and re-encoded with `encode_result` (an error response with
//!   `encode_error`). When no such request exists (the pages often show an `initialize`
//!   response alone), only the envelope is decoded and the raw result re-encoded; these are
//!   counted separately as "envelope only".
//!
//! The re-encoded message must validate against the schema whenever the example does, and
//! must equal the example after the normalizations of `tests/oracle.rs` (null optionals,
//! schema defaults, numbers by value, undeclared keys dropped from the example only: the
//! re-encoded message may not contain any). Examples that do not validate against the schema
//! themselves, and undeclared keys dropped from examples, are printed as notes.

use std::collections::BTreeMap;
use std::path::Path;

use acp_proto::jsonrpc::{self, Incoming};
use acp_proto::methods::{Direction, Kind, Layer, Method, MethodRow};
use acp_proto::{Notification, Request, RequestId, Response, Side};
use proptests::oracle::roundtrip;
use proptests::schema_gen::{Schema, json_eq};
use serde_json::{Value, json};

/// One fenced ```` ```json ```` block.
struct Block {
    file: String,
    line: usize,
    info: String,
    text: String,
}

fn json_blocks(docs: &Path) -> Vec<Block> {
    let mut files: Vec<_> = std::fs::read_dir(docs)
        .unwrap_or_else(|e| panic!("reading {}: {e}", docs.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "mdx"))
        .collect();
    files.sort();
    let mut blocks = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let file = path.file_name().expect("file name").to_string_lossy().into_owned();
        let mut lines = text.lines().enumerate();
        while let Some((n, line)) = lines.next() {
            let fence = line.trim_start();
            let Some(info) = fence.strip_prefix("```json") else { continue };
            if info.starts_with(|c: char| c.is_alphanumeric()) {
                continue; // ```jsonc, ```json5, …
            }
            let body: Vec<&str> =
                lines.by_ref().map(|(_, l)| l).take_while(|l| !l.trim_start().starts_with("```")).collect();
            blocks.push(Block { file: file.clone(), line: n + 1, info: info.trim().to_owned(), text: body.join("\n") });
        }
    }
    blocks
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Category {
    Request,
    Notification,
    Response,
    /// A response whose request is not shown: envelope decoded, result kept raw.
    ResponseEnvelopeOnly,
}

/// The side that receives (handles) a method, and its row (`None` for an extension method).
fn receiver_of(method: &str) -> Result<(Side, Option<&'static MethodRow>), String> {
    match Method::from_wire(method) {
        Some(m) => {
            let row = m.row();
            let side = match row.direction {
                Direction::ClientToAgent => Side::Agent,
                Direction::AgentToClient => Side::Client,
                Direction::Both => Side::Agent,
            };
            Ok((side, Some(row)))
        }
        None if acp_proto::ext::is_extension_name(method) => Ok((Side::Agent, None)),
        None => Err(format!("method `{method}` is neither in the method table nor an extension")),
    }
}

/// The schema the example and its re-encoding are normalized with.
fn envelope_schema(params: Option<&str>, result: Option<&str>) -> Value {
    let or_free = |def: Option<&str>| def.map_or(json!({}), Schema::def_ref);
    json!({
        "type": "object",
        "properties": {
            "jsonrpc": {"const": "2.0"},
            "id": Schema::def_ref("RequestId"),
            "method": {"type": "string"},
            "params": or_free(params),
            "result": or_free(result),
            "error": Schema::def_ref("Error"),
        },
        "required": ["jsonrpc", "id", "method", "result", "error"],
    })
}

/// What checking one message produced.
struct Checked {
    category: Category,
    output: Value,
    norm_schema: Value,
}

/// Decodes one message and re-encodes it. `requests` holds the requests seen so far in the
/// file, for responses to find their method.
fn decode_and_encode(text: &str, requests: &mut Vec<(RequestId, String)>) -> Result<Checked, String> {
    let mut out = Vec::new();
    let (category, norm_schema) = match jsonrpc::parse(text.as_bytes()) {
        Incoming::Request { id, method, params } => {
            let (receiver, row) = receiver_of(&method)?;
            if row.is_some_and(|r| r.kind != Kind::Request) {
                return Err(format!("`{method}` is a notification but has an id"));
            }
            let req = Request::decode(receiver, &method, params).map_err(|e| format!("Request::decode: {e}"))?;
            if req.wire() != method {
                return Err(format!("decoded as {req:?}"));
            }
            jsonrpc::encode_request(&mut out, &id, req.wire(), req.has_params().then_some(&req))
                .map_err(|e| format!("encode_request: {e}"))?;
            requests.push((id, method.into_owned()));
            (Category::Request, envelope_schema(row.map(|r| r.params), None))
        }
        Incoming::Notification { method, params } => {
            let (receiver, row) = receiver_of(&method)?;
            if row.is_some_and(|r| r.kind != Kind::Notification) {
                return Err(format!("`{method}` is a request but has no id"));
            }
            match row {
                Some(r) if r.layer == Layer::Protocol => {
                    // Handled by the connection before the typed layer: decode the params type.
                    let p: Value = params
                        .map(|p| serde_json::from_str(p.get()).expect("parse checked the JSON"))
                        .unwrap_or(json!({}));
                    let typed = roundtrip(r.params, p).expect("params type is covered")?;
                    jsonrpc::encode_notification(&mut out, r.wire, Some(&typed))
                        .map_err(|e| format!("encode_notification: {e}"))?;
                }
                _ => {
                    let n = Notification::decode(receiver, &method, params)
                        .map_err(|e| format!("Notification::decode: {e}"))?;
                    if n.wire() != method {
                        return Err(format!("decoded as {n:?}"));
                    }
                    jsonrpc::encode_notification(&mut out, n.wire(), n.has_params().then_some(&n))
                        .map_err(|e| format!("encode_notification: {e}"))?;
                }
            }
            (Category::Notification, envelope_schema(row.map(|r| r.params), None))
        }
        Incoming::Response { id, outcome } => {
            let request = requests.iter().rev().find(|(rid, _)| *rid == id).map(|(_, m)| m.clone());
            match (outcome, request) {
                (Err(error), request) => {
                    jsonrpc::encode_error(&mut out, &id, &error);
                    let category = if request.is_some() { Category::Response } else { Category::ResponseEnvelopeOnly };
                    (category, envelope_schema(None, None))
                }
                (Ok(result), Some(method)) => {
                    let (receiver, row) = receiver_of(&method)?;
                    let requester = receiver.peer();
                    let resp = Response::decode_result(requester, row.map(|r| r.method), result)
                        .map_err(|e| format!("Response::decode_result ({method}): {e}"))?;
                    jsonrpc::encode_result(&mut out, &id, &resp).map_err(|e| format!("encode_result: {e}"))?;
                    (Category::Response, envelope_schema(None, row.and_then(|r| r.result)))
                }
                (Ok(result), None) => {
                    jsonrpc::encode_result(&mut out, &id, result).map_err(|e| format!("encode_result: {e}"))?;
                    (Category::ResponseEnvelopeOnly, envelope_schema(None, None))
                }
            }
        }
        other => return Err(format!("parse: {other:?}")),
    };
    let line = out.strip_suffix(b"\n").ok_or("frame without its newline")?;
    let output = serde_json::from_slice(line).map_err(|e| format!("re-encoded frame is not JSON: {e}"))?;
    Ok(Checked { category, output, norm_schema })
}

fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(v), Some(w)) => first_difference(v, w, &format!("{path}/{k}")),
                (v, w) => Some(format!("{path}/{k}: example {v:?} vs re-encoded {w:?}")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (v, w))| first_difference(v, w, &format!("{path}/{i}")))
        }
        _ if json_eq(a, b) => None,
        _ => Some(format!("{}: example {a} vs re-encoded {b}", if path.is_empty() { "/" } else { path })),
    }
}

/// The definition that the example's params (or result) must satisfy, and that member's name:
/// from the method table for requests and notifications, from the correlated request for
/// results. `None` for extension methods and uncorrelated responses.
fn member_def(example: &Value, requests: &[(RequestId, String)]) -> Option<(&'static str, &'static str)> {
    if let Some(m) = example.get("method").and_then(Value::as_str) {
        return Some((Method::from_wire(m)?.row().params, "params"));
    }
    example.get("result")?;
    let id: RequestId = serde_json::from_value(example.get("id")?.clone()).ok()?;
    let method = &requests.iter().rev().find(|(rid, _)| *rid == id)?.1;
    Some((Method::from_wire(method)?.row().result?, "result"))
}

#[test]
fn doc_examples_round_trip() {
    let dir = proptests::spec::spec_dir("doc_examples_round_trip");
    let root = proptests::spec::read_json(&dir, "schema.json");
    let validators = jsonschema::options().build_map(&root).unwrap_or_else(|e| panic!("compiling schema.json: {e}"));
    let validate = |pointer: &str, v: &Value| -> Result<(), String> {
        let validator = validators.get(pointer).unwrap_or_else(|| panic!("no validator for {pointer}"));
        validator.validate(v).map_err(|e| format!("{e} at {}", e.instance_path()))
    };
    let schema = Schema::new(root);
    let opts = proptests::oracle::normalize_options();

    let docs = proptests::spec::docs_dir("doc_examples_round_trip");
    let blocks = json_blocks(&docs);
    assert!(!blocks.is_empty(), "no ```json blocks in {}", docs.display());

    let mut counts: BTreeMap<Category, usize> = BTreeMap::new();
    let mut skipped: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut requests: Vec<(RequestId, String)> = Vec::new();
    let mut current_file = String::new();
    for block in &blocks {
        if block.file != current_file {
            current_file = block.file.clone();
            requests.clear();
        }
        let at = format!(
            "{}:{}{}",
            block.file,
            block.line,
            if block.info.is_empty() { String::new() } else { format!(" ({})", block.info) }
        );
        let mut example: Value = match serde_json::from_str(&block.text) {
            Ok(v) => v,
            Err(e) => {
                skipped.push(format!("{at}: not valid JSON ({e})"));
                continue;
            }
        };
        if !example.get("jsonrpc").is_some_and(|_| example.is_object()) {
            skipped.push(format!("{at}: not a whole JSON-RPC message (a fragment)"));
            continue;
        }

        // Is the example valid, for its method? The message schema alone says little: its
        // params and results unions end with the extension branch, which accepts any JSON.
        let member = member_def(&example, &requests);
        if let Some((_, "result")) = member
            && example["result"].is_null()
        {
            // Documented leniency (acp_proto::methods): a `null` result reads as `{}`.
            notes.push(format!("{at}: `\"result\": null` read as `{{}}`"));
            example["result"] = json!({});
        }
        let mut invalid = validate("#", &example).err();
        if let Some((def, name)) = member
            && let Some(v) = example.get(name)
            && let Err(e) = validate(&format!("#/$defs/{def}"), v)
        {
            invalid.get_or_insert(format!("{name} is not a valid {def}: {e}"));
        }

        // A frame is one line on the wire. JSON text has no raw newline inside strings, so
        // joining the lines keeps the example as written (key order included).
        let frame = block.text.replace(['\n', '\r'], " ");
        let checked = match (decode_and_encode(&frame, &mut requests), &invalid) {
            (Ok(c), _) => c,
            (Err(e), None) => {
                failures.push(format!("{at}: {e}\n  example: {example}"));
                continue;
            }
            (Err(e), Some(why)) => {
                skipped.push(format!("{at}: invalid against the schema ({why}); acp-proto rejects it ({e})"));
                continue;
            }
        };
        if checked.category == Category::ResponseEnvelopeOnly {
            notes.push(format!("{at}: response without a preceding request of id {}: envelope only", example["id"]));
        }
        let a = schema.normalize_schema(&checked.norm_schema, &example, &opts);
        let b = schema.normalize_schema(&checked.norm_schema, &checked.output, &opts);
        // The output must be valid when the example is; an invalid example that decodes
        // (an unknown variant, kept for forward compatibility) must come back unchanged.
        let mismatch = if let Err(e) = validate("#", &checked.output) {
            Some(format!("re-encoded message does not validate: {e}"))
        } else if invalid.is_none()
            && let Some((def, name)) = member
            && let Some(v) = checked.output.get(name)
            && checked.category != Category::ResponseEnvelopeOnly
            && let Err(e) = validate(&format!("#/$defs/{def}"), v)
        {
            Some(format!("re-encoded {name} is not a valid {def}: {e}"))
        } else if let Some(k) = b.dropped_unknown.iter().find(|k| {
            !a.dropped_unknown.contains(k)
                || !matches!((example.pointer(k), checked.output.pointer(k)), (Some(x), Some(y)) if json_eq(x, y))
        }) {
            Some(format!("re-encoded message has the undeclared key {k} (not kept from the example)"))
        } else {
            first_difference(&a.value, &b.value, "").map(|d| format!("re-encoded message differs at {d}"))
        };
        match (mismatch, &invalid) {
            (None, None) => {
                if !a.dropped_unknown.is_empty() {
                    notes.push(format!("{at}: undeclared keys dropped from the example: {:?}", a.dropped_unknown));
                }
            }
            (None, Some(why)) => {
                notes.push(format!(
                    "{at}: invalid against the schema ({why}); acp-proto accepts it and re-encodes it unchanged"
                ));
            }
            (Some(m), None) => {
                failures.push(format!("{at}: {m}\n  example: {example}\n  output:  {}", checked.output));
                continue;
            }
            (Some(m), Some(why)) => {
                skipped.push(format!("{at}: invalid against the schema ({why}); acp-proto accepts it but {m}"));
                continue;
            }
        }
        *counts.entry(checked.category).or_default() += 1;
    }

    let count = |c: Category| counts.get(&c).copied().unwrap_or(0);
    let responses = count(Category::Response) + count(Category::ResponseEnvelopeOnly);
    let checked: usize = counts.values().sum();
    for note in &notes {
        eprintln!("note: {note}");
    }
    for skip in &skipped {
        eprintln!("skipped: {skip}");
    }
    let summary = format!(
        "doc examples: {checked} checked ({} requests, {} notifications, {responses} responses), {} skipped",
        count(Category::Request),
        count(Category::Notification),
        skipped.len()
    );
    println!("{summary}");
    eprintln!("{summary}");
    eprintln!(
        "doc examples: {} of the responses decoded as envelopes only (no preceding request with their id)",
        count(Category::ResponseEnvelopeOnly)
    );
    assert!(failures.is_empty(), "{} doc examples fail:\n\n{}", failures.len(), failures.join("\n\n"));
    assert!(checked > 0, "no doc example was checked");
}
