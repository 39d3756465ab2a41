//! Replays every committed fuzz input (`fuzz/corpus/<target>/*` and
//! `fuzz/regressions/<target>/*`) through the same functions the fuzz targets call, on stable,
//! so CI exercises them without nightly or libFuzzer. With `--features proptests/unstable`,
//! `unstable_rows` also feeds the `typed` and `connection` targets inputs generated for every
//! unstable row of the method table.

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut files = Vec::new();
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
        for entry in entries {
            let path = entry.expect("readable corpus directory").path();
            if path.is_file() {
                let data = std::fs::read(&path).expect("readable corpus file");
                files.push((path, data));
            }
        }
    }
    files.sort();
    files
}

fn replay(target: &str, run: impl Fn(&[u8])) -> usize {
    let files = inputs(target);
    assert!(!files.is_empty(), "no committed inputs for the `{target}` target");
    for (path, data) in &files {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(data)));
        assert!(result.is_ok(), "`{target}` fails on {}", path.display());
    }
    println!("fuzz corpus: {target}: {} inputs replayed", files.len());
    files.len()
}

#[test]
fn framer_corpus() {
    replay("framer", proptests::fuzzing::framer);
}

#[test]
fn envelope_corpus() {
    replay("envelope", proptests::fuzzing::envelope);
}

#[test]
fn attach_corpus() {
    replay("attach", proptests::fuzzing::attach);
}

#[test]
fn resume_corpus() {
    replay("resume", proptests::fuzzing::resume);
}

#[test]
fn typed_corpus() {
    replay("typed", proptests::fuzzing::typed);
}

#[test]
fn connection_corpus() {
    replay("connection", proptests::fuzzing::connection);
}

#[test]
fn sim_corpus() {
    replay("sim", |data| {
        let _ = proptests::sim::run_bytes(data);
    });
}

/// The committed `unstable-*` seeds (fuzz/seed_gen/connection_unstable.py) are replayed above
/// in every build: with the features the agent advertises and answers them, without them it
/// does not know the methods and answers `-32601`; neither may panic.
#[test]
fn connection_corpus_has_unstable_seeds() {
    let unstable: Vec<_> = inputs("connection")
        .into_iter()
        .filter(|(p, _)| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("unstable-")))
        .collect();
    assert!(unstable.len() >= 10, "{} unstable-* connection seeds", unstable.len());
    for (path, data) in &unstable {
        let result = std::panic::catch_unwind(|| proptests::fuzzing::connection(data));
        assert!(result.is_ok(), "`connection` fails on {}", path.display());
    }
    println!("fuzz corpus: connection: {} unstable-* seeds replayed", unstable.len());
}

/// The committed `v2-*` seeds (fuzz/seed_gen/connection_v2.py) are replayed above in every
/// build; with feature `unstable_protocol_v2` the machine speaks v2 for them (bit 1 of the
/// first byte) and they reach the v2 rules: each negotiates the version its name says, the
/// turn seeds end their turns, the v1 ones fall back or close, the batch seeds' arrays are
/// taken apart.
#[test]
fn connection_corpus_has_v2_seeds() {
    let v2: Vec<_> = inputs("connection")
        .into_iter()
        .filter(|(p, _)| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("v2-")))
        .collect();
    assert!(v2.len() >= 20, "{} v2-* connection seeds", v2.len());
    for (path, data) in &v2 {
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let run = std::panic::catch_unwind(|| proptests::fuzzing::connection_run(data));
        let run = run.unwrap_or_else(|_| panic!("`connection` fails on {}", path.display()));
        if !cfg!(feature = "unstable_protocol_v2") {
            assert_ne!(run.protocol_version, Some(2), "{name}: v2 without the feature");
            continue;
        }
        let expected = match name.as_str() {
            "v2-agent-v1-client" => Some(1),
            // A client that offers 2 is a `Connection<Client, V2>`: an answer of 1 (or 3) closes it.
            "v2-client-answered-1" | "v2-client-answered-3" => None,
            _ => Some(2),
        };
        assert_eq!(run.protocol_version, expected, "{name}: {run:?}");
        if expected == Some(2) {
            assert!(run.v2_events > 0, "{name}: no v2 event: {run:?}");
        }
        // The turn seeds: one turn ended by its idle; the failed prompt's turn, then the next
        // prompt's turn ended by the EOF.
        let turns = match name.as_str() {
            "v2-client-turn" | "v2-client-cancel-turn" | "v2-client-batch" => 1,
            "v2-client-prompt-failed" => 2,
            "v2-client-session-close" | "v2-client-terminal-cancel" | "v2-client-elicitation" | "v2-client-resume" => 1,
            _ => 0,
        };
        assert_eq!(run.turns_ended, turns, "{name}: {run:?}");
        // The close seed's turn ends by the close answer (the idle after it ends nothing).
        let closed = usize::from(name == "v2-client-session-close");
        assert_eq!(run.turns_closed, closed, "{name}: {run:?}");
        // The batch seeds: the agent's request batch and response batch, the client's one.
        let batches = match name.as_str() {
            "v2-agent-batch" => 2,
            "v2-agent-batch-held" => 5,
            "v2-client-batch" => 1,
            _ => 0,
        };
        assert_eq!(run.batches, batches, "{name}: {run:?}");
    }
    println!("fuzz corpus: connection: {} v2-* seeds replayed", v2.len());
}

/// The committed `v2-*` seeds of the `sim` target (fuzz/seed_gen/sim_v2.py): with feature
/// `unstable_protocol_v2` they run the v2 and the mixed simulations, and together reach v2
/// turns and (the `v2-v2-flows-*` ones) the session lifecycle, auth, terminal and elicitation
/// flows; without it they are v1 runs.
#[test]
fn sim_corpus_has_v2_seeds() {
    let seeds: Vec<_> = inputs("sim")
        .into_iter()
        .filter(|(p, _)| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("v2-")))
        .collect();
    assert!(seeds.len() >= 12, "{} v2-* sim seeds", seeds.len());
    let mut total = proptests::sim::V2Counts::default();
    for (path, data) in &seeds {
        let run = std::panic::catch_unwind(|| proptests::sim::run_bytes(data));
        let summary = run.unwrap_or_else(|_| panic!("`sim` fails on {}", path.display()));
        total.add(&summary.v2);
    }
    if cfg!(feature = "unstable_protocol_v2") {
        assert!(total.negotiated_v2 > 0 && total.turns_opened > 0, "the v2 seeds reach no v2 turn: {total:?}");
        // The lifecycle, auth, terminal and elicitation flows (the v2-v2-flows-* seeds).
        for (what, n) in [
            ("resume of a known session", total.resumes[0]),
            ("session/close", total.closes[0]),
            ("session/delete", total.closes[1]),
            ("turn ended by its session's close", total.turns_ended[3]),
            ("auth/login", total.auth[0]),
            ("auth/logout", total.auth[1]),
            ("form elicitation", total.elicitations[0]),
            ("URL elicitation", total.elicitations[1]),
            ("elicitation cancelled by the agent", total.elicitations[4]),
            ("elicitation/complete", total.elicitations[5]),
            ("terminal/cancel accepted", total.terminal_cancels[0]),
        ] {
            assert!(n > 0, "the v2 seeds reach no {what}: {total:?}");
        }
        assert!(total.accepted_v1 > 0, "the mixed seeds never reach an acceptor that picks v1: {total:?}");
    } else {
        assert_eq!(total, Default::default(), "v2 without the feature");
    }
    println!("fuzz corpus: sim: {} v2-* seeds replayed ({total:?})", seeds.len());
}

/// Generated inputs for every unstable row of the method table (its params definition is one
/// of `oracle_unstable::UNSTABLE_DEFS`), so that a group added to the table and to that list is
/// fuzzed here with no change: instances of its params and result definitions from
/// `schema.unstable.json` go through the `typed` target, and the agent-bound requests through
/// the `connection` target (after a handshake, advertised and not). Row indices depend on the
/// build's table, so these inputs are made here rather than committed.
#[cfg(feature = "unstable")]
mod unstable_rows {
    use acp_proto::methods::{Kind, METHODS, MethodRow};
    use acp_proto::{Request, Response, Side};
    use proptests::oracle_unstable::UNSTABLE_DEFS;
    use proptests::schema_gen::{Rng, Schema, seed_for};
    use serde_json::value::RawValue;
    use serde_json::{Value, json};

    /// Instances per definition.
    const PER_DEF: u64 = 24;

    fn schema() -> Schema {
        let dir = proptests::spec::spec_dir("fuzz_corpus");
        Schema::new(proptests::spec::read_json(&dir, "schema.unstable.json"))
    }

    fn rows() -> Vec<(usize, &'static MethodRow)> {
        let rows: Vec<_> = METHODS.iter().enumerate().filter(|(_, r)| UNSTABLE_DEFS.contains(&r.params)).collect();
        assert!(!rows.is_empty(), "the unstable features add no table row");
        rows
    }

    fn receiver(row: &MethodRow) -> Side {
        if row.received_by(Side::Agent) { Side::Agent } else { Side::Client }
    }

    fn replay(run: fn(&[u8]), data: &[u8], what: &str) {
        let result = std::panic::catch_unwind(|| run(data));
        assert!(result.is_ok(), "{what}: the target panicked on {}", String::from_utf8_lossy(data));
    }

    #[test]
    fn typed_target_on_every_unstable_row() {
        let schema = schema();
        let (mut inputs, mut decoded) = (0, 0);
        for (index, row) in rows() {
            let index = u8::try_from(index).expect("the typed target picks rows by one byte");
            let mut row_decoded = 0;
            for (as_result, def) in [(0u8, Some(row.params)), (1, row.result)] {
                let Some(def) = def else { continue };
                for i in 0..PER_DEF {
                    let text = schema.generate(def, &mut Rng::new(seed_for(0x0AC9_F022, def, i))).to_string();
                    let raw = RawValue::from_string(text.clone()).expect("JSON");
                    let ok = if as_result == 1 {
                        Response::decode_result(receiver(row).peer(), Some(row.method), &raw).is_ok()
                    } else if row.kind == Kind::Request {
                        Request::decode(receiver(row), row.wire, Some(&raw)).is_ok()
                    } else {
                        acp_proto::Notification::decode(receiver(row), row.wire, Some(&raw)).is_ok()
                    };
                    row_decoded += u64::from(ok);
                    let mut data = vec![index, as_result];
                    data.extend_from_slice(text.as_bytes());
                    replay(proptests::fuzzing::typed, &data, row.wire);
                    inputs += 1;
                }
            }
            // Most schema-valid instances decode (the oracle checks every definition this
            // build covers; one that references an uncovered group may be refused).
            assert!(row_decoded > PER_DEF / 2, "{}: only {row_decoded} generated instances decode", row.wire);
            decoded += row_decoded;
        }
        println!("fuzz corpus (unstable): typed: {} rows, {inputs} generated inputs, {decoded} decoded", rows().len());
    }

    fn feed(frame: &Value) -> Vec<u8> {
        let mut line = frame.to_string().into_bytes();
        line.push(b'\n');
        line.chunks(255).flat_map(|c| [&[0, c.len() as u8][..], c].concat()).collect()
    }

    #[test]
    fn connection_target_on_every_unstable_request() {
        let schema = schema();
        let mut inputs = 0;
        let requests: Vec<_> = rows().into_iter().filter(|(_, r)| r.kind == Kind::Request).collect();
        for (_, row) in &requests {
            let side = u8::from(receiver(row) != Side::Agent);
            for i in 0..PER_DEF {
                let mut params = schema.generate(row.params, &mut Rng::new(seed_for(0x0AC9_F023, row.params, i)));
                if let Some(m) = params.as_object_mut().filter(|m| m.contains_key("sessionId")) {
                    m.insert("sessionId".into(), json!("s0"));
                }
                let refused = i % 2 == 1;
                let mut init = json!({"protocolVersion": 1, "clientCapabilities": {}});
                if refused {
                    init["_meta"] = json!({"acpFuzzNoUnstable": true});
                }
                let mut data = vec![side];
                data.extend(feed(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})));
                data.extend([5, 0]);
                let call = json!({"jsonrpc": "2.0", "id": 2 + i, "method": row.wire, "params": params});
                data.extend(feed(&call));
                data.extend([5, 0, 4, 0xff, 0, 8, 0]);
                replay(proptests::fuzzing::connection, &data, row.wire);
                inputs += 1;
            }
        }
        assert!(inputs > 0, "no unstable request row");
        println!("fuzz corpus (unstable): connection: {} request rows, {inputs} generated inputs", requests.len());
    }
}

#[test]
fn observer_corpus() {
    replay("observer", proptests::fuzzing::observer);
}

/// The observer target on inputs drawn from a seeded generator, beyond the committed corpus
/// (what a short fuzzing run does, on stable); together they reach every bound of the
/// observer's `Limits`, loose ids, unmatched answers and turn ends.
#[test]
fn observer_on_generated_inputs() {
    let mut state: u64 = 0x0b5e_17e4;
    let mut total = acp_proto::observer::Counters::default();
    let mut ended = 0;
    for _ in 0..3000 {
        let len = 1 + (state % 700) as usize;
        let data: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        let (c, e) = proptests::fuzzing::observer_run(&data);
        ended += e;
        total.invalid += c.invalid;
        total.unmatched_responses += c.unmatched_responses;
        total.loose_ids += c.loose_ids;
        total.requests_untracked += c.requests_untracked;
        total.sessions_untracked += c.sessions_untracked;
        total.turns_untracked += c.turns_untracked;
        total.keys_too_long += c.keys_too_long;
    }
    println!("fuzz corpus: observer: generated inputs reached {total:?}, {ended} turn ends");
    let c = total;
    let reached = [
        c.invalid,
        c.unmatched_responses,
        c.loose_ids,
        c.requests_untracked,
        c.sessions_untracked,
        c.turns_untracked,
        c.keys_too_long,
    ];
    assert!(reached.iter().all(|&n| n > 0) && ended > 0, "some rule never reached: {c:?}, {ended} turn ends");
}
