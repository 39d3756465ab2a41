//! Property tests of [`acp_proto::observer`]: random and adversarial frame streams, both
//! directions (ids of every type, escapes, keys given twice, batches, garbage, over-long keys,
//! v1 answers, v2 acknowledgements and state updates), and the committed fuzz corpus. After
//! every frame the observer must not have panicked, must hold within its limits, and must
//! count its open requests as it lists them; the same stream must give the same answers twice;
//! and once every open request is answered and every running turn reports idle, nothing is
//! open.

use std::path::Path;

use acp_proto::Side;
use acp_proto::observer::{Limits, Observed, Observer, TurnState};
use proptest::prelude::*;
use serde_json::{Value, json};

const LIMITS: Limits = Limits { max_open_requests: 8, max_sessions: 4, max_turns: 4, max_key_len: 12 };

/// The invariants that hold after any frame.
fn check(o: &Observer) {
    let limits = o.limits();
    for side in [Side::Client, Side::Agent] {
        let listed: Vec<_> = o.open_requests(side).collect();
        assert_eq!(listed.len(), o.open_request_count(side), "{side:?}: listed as counted");
        assert!(listed.len() <= limits.max_open_requests, "{side:?}: bounded");
        for r in listed {
            assert_eq!(r.from, side);
            assert!(r.session.as_deref().is_none_or(|s| s.len() <= limits.max_key_len));
            assert!(r.method.is_some() || r.wire.len() <= limits.max_key_len);
            if let acp_proto::RequestId::Str(id) = &r.id {
                assert!(id.len() <= limits.max_key_len);
            }
            assert!(r.id != acp_proto::RequestId::Null, "null ids are never open");
        }
    }
    assert!(o.sessions().count() <= limits.max_sessions);
    assert!(o.sessions().all(|s| s.len() <= limits.max_key_len));
    assert!(o.turns().count() <= limits.max_turns);
    for (session, turn) in o.turns() {
        assert!(session.len() <= limits.max_key_len);
        assert!(turn.state != TurnState::Prompted || turn.prompts > 0, "a prompted turn waits on a prompt");
    }
}

fn pick<T: Clone>(pool: &[T], i: u8) -> T {
    pool[usize::from(i) % pool.len()].clone()
}

/// One frame from five random bytes: its shape and the pools it draws from.
fn frame(shape: u8, a: u8, b: u8, c: u8) -> Vec<u8> {
    let ids = [json!(1), json!("1"), json!(2), json!(-3), json!("x"), json!(null), json!(1.5), json!([1]), json!(true)];
    let sessions = [json!("s1"), json!("s2"), json!("s\u{e9}"), json!("a-very-long-session-id"), json!(7), json!(null)];
    let methods = [
        "session/prompt",
        "session/new",
        "session/load",
        "session/resume",
        "session/cancel",
        "session/update",
        "session/request_permission",
        "_x/very/long/extension",
        "initialize",
    ];
    let results = [
        json!({"stopReason": "end_turn"}),
        json!({"messageId": "m"}),
        json!({"sessionId": pick(&sessions, c)}),
        json!(null),
        json!(["stopReason"]),
        json!({"stopReason": null, "sessionId": "s2"}),
    ];
    let states = ["idle", "running", "requires_action", "unknown"];
    let (id, session, method) = (pick(&ids, a), pick(&sessions, b), pick(&methods, c));
    let value: Value = match shape % 9 {
        0 | 1 => json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"sessionId": session, "prompt": []}}),
        2 => json!({"jsonrpc": "2.0", "method": method, "params": {"sessionId": session}}),
        3 => json!({"jsonrpc": "2.0", "id": id, "result": pick(&results, b)}),
        4 => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "no"}}),
        5 => json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session,
            "update": {"sessionUpdate": "state_update", "state": pick(&states, c), "stopReason": pick(&ids, a)}}}),
        6 => json!([
            {"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": {"sessionId": session}},
            {"jsonrpc": "2.0", "id": pick(&ids, c), "result": pick(&results, a)},
        ]),
        7 => {
            let raw: &[&[u8]] = &[
                b"not json",
                br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"session/prompt","params":{"sessionId":"s1"}}"#,
                br#"{"jsonrpc":"2.0","id":1,"method":"session\/prompt","params":{"sessionId":"s\u0031"}}"#,
                br#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","sessionId":"s2"}}"#,
                b"[]",
                b"[[[",
                b"\xff\xfe",
                br#"{"jsonrpc":"2.0","method":"session/update","params":[1]}"#,
            ];
            return pick(raw, a).to_vec();
        }
        _ => json!({"jsonrpc": "2.0", "id": id, "method": method, "params": [session]}),
    };
    let mut bytes = value.to_string().into_bytes();
    if c.is_multiple_of(5) {
        bytes.push(b'\n');
    }
    bytes
}

fn side(bit: u8) -> Side {
    if bit.is_multiple_of(2) { Side::Client } else { Side::Agent }
}

/// Runs the stream, checking after every frame; the answers in order.
fn run(steps: &[(u8, u8, u8, u8, u8)]) -> (Vec<Observed>, Observer) {
    let mut o = Observer::with_limits(LIMITS);
    let mut seen = Vec::new();
    for &(dir, shape, a, b, c) in steps {
        seen.push(o.observe(side(dir), &frame(shape, a, b, c)));
        check(&o);
    }
    (seen, o)
}

/// Answers every open request and idles every open turn: then nothing is open.
fn drain(o: &mut Observer) {
    for asker in [Side::Client, Side::Agent] {
        let open: Vec<_> = o.open_requests(asker).map(|r| r.id.clone()).collect();
        for id in open {
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}});
            let seen = o.observe(asker.peer(), answer.to_string().as_bytes());
            assert!(seen.answered.is_some(), "{id} answered");
            check(o);
        }
        assert_eq!(o.open_request_count(asker), 0);
    }
    let open: Vec<String> = o.turns().map(|(s, _)| s.to_owned()).collect();
    for session in open {
        let idle = json!({"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": session, "update": {"sessionUpdate": "state_update", "state": "idle"}}});
        assert!(o.observe_from_agent(idle.to_string().as_bytes()).turn_ended.is_some(), "{session}");
    }
    assert!(o.no_turn_open());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_streams_keep_the_observer_bounded_consistent_and_deterministic(
        steps in proptest::collection::vec(any::<(u8, u8, u8, u8, u8)>(), 0..200)
    ) {
        let (first, mut observer) = run(&steps);
        let (second, again) = run(&steps);
        prop_assert_eq!(first, second);
        prop_assert_eq!(format!("{observer:?}"), format!("{again:?}"));
        drain(&mut observer);
    }

    #[test]
    fn arbitrary_bytes_never_panic(frames in proptest::collection::vec((any::<bool>(), proptest::collection::vec(any::<u8>(), 0..64)), 0..50)) {
        let mut o = Observer::with_limits(LIMITS);
        for (agent, bytes) in &frames {
            o.observe(if *agent { Side::Agent } else { Side::Client }, bytes);
            check(&o);
        }
    }
}

/// Every line of the committed fuzz inputs of the envelope and connection targets, as frames
/// of either peer.
#[test]
fn the_fuzz_corpus_lines_keep_the_observer_bounded() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut lines = 0;
    for target in ["envelope", "connection"] {
        for dir in ["corpus", "regressions"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
            let mut paths: Vec<_> = entries.map(|e| e.expect("readable corpus directory").path()).collect();
            paths.sort();
            for path in paths.iter().filter(|p| p.is_file()) {
                let data = std::fs::read(path).expect("readable corpus file");
                let mut o = Observer::with_limits(LIMITS);
                for (i, line) in data.split(|b| *b == b'\n').enumerate() {
                    o.observe(side(i as u8), line);
                    check(&o);
                    lines += 1;
                }
                drain(&mut o);
            }
        }
    }
    assert!(lines > 100, "the corpus was read ({lines} lines)");
}
