//! Fuzz target `observer`: see [`observer`] and the table in module `fuzzing`.

use acp_proto::Side;
use acp_proto::jsonrpc::RequestId;
use acp_proto::observer::{Counters, FrameKind, Limits, Observer};

use crate::fuzzing::Reader;

/// The observer's limits here: small, so that the fuzzer reaches every bound.
const LIMITS: Limits = Limits { max_open_requests: 4, max_sessions: 3, max_turns: 2, max_key_len: 12 };

/// Fuzz target `observer`: one observer fed frames from either peer, raw or built from a small
/// vocabulary; panics when an invariant breaks.
pub fn observer(data: &[u8]) {
    let _ = observer_run(data);
}

/// [`observer`], returning the observer's counters at the end and the turns that ended (for
/// the tests that the inputs reach every bound and rule).
pub fn observer_run(data: &[u8]) -> (Counters, usize) {
    let mut ended = 0;
    let mut r = Reader::new(data);
    let mut obs = Observer::with_limits(LIMITS);
    let mut before = obs.counters();
    let mut frames = 0;
    while !r.done() && frames < 256 {
        frames += 1;
        let op = r.byte();
        let from = if op & 1 == 0 { Side::Client } else { Side::Agent };
        let frame = match (op >> 1) % 4 {
            0 => {
                let len = usize::from(r.byte());
                r.take(len).to_vec()
            }
            3 => {
                let n = 1 + r.byte() % 3;
                let entries: Vec<String> = (0..n).map(|_| message(&mut r)).collect();
                format!("[{}]", entries.join(",")).into_bytes()
            }
            _ => message(&mut r).into_bytes(),
        };
        let open_before: Vec<RequestId> = obs.open_requests(other(from)).map(|o| o.id.clone()).collect();
        let alone = Observer::read(from, &frame);
        let seen = obs.observe(from, &frame);
        check(&obs, &frame, &alone, &seen, &open_before, from);
        ended += usize::from(seen.turn_ended.is_some());
        let after = obs.counters();
        assert!(grew(before, after), "a counter went down: {before:?} -> {after:?}");
        before = after;
    }
    (before, ended)
}

fn other(side: Side) -> Side {
    match side {
        Side::Client => Side::Agent,
        Side::Agent => Side::Client,
    }
}

/// The invariants after one frame.
fn check(
    obs: &Observer,
    frame: &[u8],
    alone: &acp_proto::observer::Observed,
    seen: &acp_proto::observer::Observed,
    open_before: &[RequestId],
    from: Side,
) {
    let text = String::from_utf8_lossy(frame);
    for side in [Side::Client, Side::Agent] {
        assert!(obs.open_request_count(side) <= LIMITS.max_open_requests, "open requests past the bound: {text}");
        assert_eq!(obs.open_request_count(side), obs.open_requests(side).count(), "the count is the list");
    }
    assert!(obs.sessions().count() <= LIMITS.max_sessions, "sessions past the bound: {text}");
    assert!(obs.turns().count() <= LIMITS.max_turns, "turns past the bound: {text}");
    assert_eq!(obs.no_turn_open(), obs.turns().count() == 0, "no_turn_open disagrees with turns: {text}");
    for (session, _) in obs.turns() {
        assert!(session.len() <= LIMITS.max_key_len, "a turn kept a key past max_key_len");
    }
    assert_eq!((seen.kind, seen.method, &seen.id), (alone.kind, alone.method, &alone.id), "read disagrees: {text}");
    if let Some(answered) = &seen.answered {
        assert_eq!(seen.kind, FrameKind::Response, "only a response answers: {text}");
        assert_eq!(answered.from, other(from), "an answer closes a request of the other peer: {text}");
        assert!(open_before.contains(&answered.id) || loose(open_before, &answered.id), "it was open: {text}");
    }
}

/// Whether `id` was open under the other wire type (rule 3's loose match).
fn loose(open: &[RequestId], id: &RequestId) -> bool {
    let key = |id: &RequestId| match id {
        RequestId::Number(n) => Some(n.to_string()),
        RequestId::Str(s) => Some(s.to_string()),
        RequestId::Null => None,
    };
    open.iter().any(|o| key(o).is_some() && key(o) == key(id))
}

fn grew(a: Counters, b: Counters) -> bool {
    b.invalid >= a.invalid
        && b.unmatched_responses >= a.unmatched_responses
        && b.loose_ids >= a.loose_ids
        && b.requests_untracked >= a.requests_untracked
        && b.sessions_untracked >= a.sessions_untracked
        && b.turns_untracked >= a.turns_untracked
        && b.keys_too_long >= a.keys_too_long
}

/// One JSON-RPC message from the vocabulary: a few ids (numbers and strings, one too long),
/// a few sessions (one too long), the methods and answers the observer's rules read.
fn message(r: &mut Reader) -> String {
    const IDS: [&str; 6] = ["0", "1", "\"1\"", "2", "null", "\"an-id-longer-than-twelve\""];
    const SESSIONS: [&str; 5] = ["s1", "s2", "s3", "s4", "a-session-longer-than-twelve"];
    let id = IDS[usize::from(r.byte()) % IDS.len()];
    let s = SESSIONS[usize::from(r.byte()) % SESSIONS.len()];
    match r.byte() % 12 {
        0 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"/"}}}}"#),
        1 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessionId":"{s}"}}}}"#),
        2 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{s}","prompt":[]}}}}"#
        ),
        3 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"stopReason":"end_turn"}}}}"#),
        4 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"messageId":"m"}}}}"#),
        5 => format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"x"}}}}"#),
        6 => {
            let state = ["idle", "running", "requires_action"][usize::from(r.byte()) % 3];
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{s}","update":{{"sessionUpdate":"state_update","state":"{state}"}}}}}}"#
            )
        }
        7 => format!(r#"{{"jsonrpc":"2.0","method":"session/cancel","params":{{"sessionId":"{s}"}}}}"#),
        8 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/load","params":{{"sessionId":"{s}","cwd":"/","mcpServers":[]}}}}"#
        ),
        9 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":null}}"#),
        10 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/request_permission","params":{{"sessionId":"{s}"}}}}"#
        ),
        _ => format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{s}","update":{{"sessionUpdate":"agent_message_chunk"}}}}}}"#
        ),
    }
}
