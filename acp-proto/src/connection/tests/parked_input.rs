//! Input parked while the machine's own answers fill the output (module `parked`): one test
//! per rule, and two machines flooding each other through full pipes, which deadlocked when
//! those answers stopped all input.

use crate::protocol::V1;
use std::collections::VecDeque;

use super::*;
use crate::connection::{AnyConnection as Connection, AnyEvent as Event, AnyOutcome as Outcome};
use crate::ext::{ExtRequest, ExtResponse};

fn ext_line(id: i64) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"_x/work","params":{"n":id}}).to_string()
}

/// A request for a method nobody handles: the machine answers it `-32601`, with its id.
fn unknown_line(id: i64) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"x/unknown"}).to_string()
}

fn ids(frames: &[Value]) -> Vec<i64> {
    frames.iter().map(|f| f["id"].as_i64().unwrap_or(-1)).collect()
}

/// Feeds junk lines (the machine answers each `-32700`, about 100 bytes) until its answers
/// fill the output budget; returns how many it answered.
fn fill_owed(a: &mut Connection) -> usize {
    let mut n = 0;
    while !a.parking() {
        feed(a, T0, &["junk"]);
        n += 1;
    }
    n
}

/// A ready agent with a 500-byte output budget that its own answers to junk fill (nothing
/// taken yet), awaiting the answer to one request of its own (wire id 1); and how many
/// answers it owes.
fn agent_owing(config: Config) -> (Connection, usize) {
    let mut a = ready_agent_with(config.with_outbound_budget(500), json!({}), AgentCapabilities::default());
    a.send_request::<V1>(T0, AgentRequest::Ext(ExtRequest::new("_x/ask", json!({}))), None).unwrap();
    let _ = a.poll_transmit(&mut Vec::new());
    let owed = fill_owed(&mut a);
    assert_eq!(a.stats().input_parked, 0);
    (a, owed)
}

/// Rules 1, 2 and 4: a request is parked, the response and the notification behind it are
/// handled at once; once the owed answers are taken the request goes through the checks,
/// and what was parked is answered in arrival order.
#[test]
fn owed_answers_park_what_owes_an_answer_and_handle_the_rest_at_once() {
    let (mut a, owed) = agent_owing(Config::default());
    let response = json!({"jsonrpc":"2.0","id":1,"result":{"ok":true}}).to_string();
    let note = json!({"jsonrpc":"2.0","method":"_x/note","params":{}}).to_string();
    feed(&mut a, T0, &[&ext_line(7), &response, &note, &unknown_line(8)]);
    assert_eq!(a.stats().input_parked, 2, "the two requests");
    assert_eq!(a.inbound_in_flight(), 2, "parked requests are in flight");
    let evs = events(&mut a);
    assert!(matches!(evs[0], Event::Outcome { outcome: Outcome::Result(_), .. }), "{evs:?}");
    assert!(matches!(evs[1], Event::Notification { .. }), "{evs:?}");
    assert_eq!(evs.len(), 2, "the request waits: {evs:?}");
    assert!(!a.has_events());
    // The peer reads the owed answers: the parked frames are handled, in order.
    assert_eq!(sent(&mut a).len(), owed);
    assert!(a.has_events(), "parked frames wait to be handled");
    let Some(Event::Request { request, .. }) = a.poll_any() else { panic!("the parked request") };
    assert_eq!(serde_json::to_value(&request).unwrap()["n"], 7);
    let out = sent(&mut a);
    assert_eq!((ids(&out), error_code(&out[0])), (vec![8], -32601), "the second, answered after");
    assert_eq!(a.inbound_in_flight(), 1);
}

/// Rule 5: input stops at `max_inbound` parked frames, or `max_held_bytes` of them; it
/// resumes once the owed answers are taken, the parked frames answered first, in order.
#[test]
fn parked_frames_stop_input_at_their_bounds() {
    let (mut a, owed) = agent_owing(Config::default().with_max_inbound(5));
    let data: String = (100..120).map(|i| unknown_line(i) + "\n").collect();
    let mut fed = a.handle_input(T0, data.as_bytes());
    assert!(!a.wants_input(), "six requests parked: one more than max_inbound");
    assert_eq!((a.stats().input_parked, data[..fed].lines().count()), (6, 6));
    assert_eq!(sent(&mut a).len(), owed);
    let mut answered = Vec::new();
    while answered.len() < 20 {
        fed += a.handle_input(T0, &data.as_bytes()[fed..]);
        answered.extend(ids(&sent(&mut a)));
        assert!(a.memory_estimate() < 16 * 1024, "{}", a.memory_estimate());
    }
    assert_eq!(answered, (100..120).collect::<Vec<_>>(), "each answered once, in arrival order");
    assert!(a.stats().input_parked > 6, "parked again as the answers filled the budget");

    // Bytes: three 400-byte requests fill 1000 bytes of parking.
    let (mut a, _) = agent_owing(Config::default().with_max_held_bytes(1000));
    let big = |id: i64| json!({"jsonrpc":"2.0","id":id,"method":"_x/work","params":{"pad":"p".repeat(360)}});
    let data: String = (10..20).map(|i| big(i).to_string() + "\n").collect();
    let n = a.handle_input(T0, data.as_bytes());
    assert_eq!(a.stats().input_parked, 3);
    assert!(!a.wants_input() && n < data.len());
}

/// Rule 3: a cancellation of a parked request waits with it: the request is dispatched,
/// then cancelled. A cancellation of anything else is handled at once.
#[test]
fn a_cancellation_of_a_parked_request_waits_with_it() {
    let (mut a, owed) = agent_owing(Config::default());
    let cancel = |id: i64| json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":id}}).to_string();
    feed(&mut a, T0, &[&ext_line(7), &cancel(8), &cancel(7)]);
    assert_eq!(a.stats().input_parked, 1, "the request; its cancellation is kept with it");
    assert_eq!(a.parked.len(), 1);
    assert_eq!(sent(&mut a).len(), owed);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!("the parked request") };
    assert_eq!(a.poll_any(), Some(Event::Cancelled { id, reason: CancelReason::CancelRequest }));
    assert!(a.poll_any().is_none());
}

/// Rule 3 for a prompt: `session/cancel` of a session whose prompt is parked waits with the
/// prompt, so the turn it starts is the one cancelled.
#[test]
fn session_cancel_waits_with_a_parked_prompt_of_its_session() {
    let (mut a, _) = agent_owing(Config::default());
    feed(&mut a, T0, &[&new_session_line(2)]);
    let _ = sent(&mut a);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!("session/new") };
    a.respond::<V1>(T0, id, Ok(NewSessionResponse::new("s").into())).unwrap();
    let _ = sent(&mut a);
    fill_owed(&mut a);
    let parked = a.stats().input_parked;
    let prompt = json!({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}});
    let cancel = |s: &str| json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":s}}).to_string();
    feed(&mut a, T0, &[&prompt.to_string(), &cancel("other"), &cancel("s")]);
    assert_eq!(a.stats().input_parked - parked, 1, "the prompt, with its session's cancel");
    let _ = sent(&mut a);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!("the parked prompt") };
    assert_eq!(a.poll_any(), Some(Event::Cancelled { id, reason: CancelReason::SessionCancelled }));
}

/// Rule 3, per session, client side: the user cancelled a turn while the agent asked a
/// permission of it; the ask is parked, then the agent withdraws it and answers the prompt
/// `cancelled`. The ask is handled first (answered `cancelled` by the turn rules, never
/// shown), its withdrawal and the turn's end after it; an update of another session is
/// handled at once.
#[test]
fn a_turn_never_ends_before_an_ask_of_its_session_that_came_ahead() {
    let config = Config::default().with_outbound_budget(500);
    let mut c = ready_client_with(config, ClientCapabilities::default(), json!({}));
    let prompt = c.send_request::<V1>(T0, PromptRequest::new("s", vec![]), None).unwrap();
    assert_eq!(c.cancel_turn(T0, &"s".into()), Ok(0));
    let _ = sent(&mut c);
    fill_owed(&mut c);
    let ask = json!({"jsonrpc":"2.0","id":"p","method":"session/request_permission","params":{
        "sessionId":"s","toolCall":{"toolCallId":"t"},
        "options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}});
    let withdrawn = json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"p"}});
    let other = json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"o",
        "update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}});
    let ended = json!({"jsonrpc":"2.0","id":prompt.wire(),"result":{"stopReason":"cancelled"}});
    feed(&mut c, T0, &[&ask.to_string(), &withdrawn.to_string(), &other.to_string(), &ended.to_string()]);
    assert_eq!(c.parked.len(), 1, "the ask, with its withdrawal and the turn's end");
    let evs = events(&mut c);
    assert!(matches!(evs.as_slice(), [Event::Notification { turn: None, .. }]), "{evs:?}");
    let _ = sent(&mut c);
    let evs = events(&mut c);
    assert!(matches!(evs.as_slice(), [Event::Outcome { id, .. }] if *id == prompt), "never shown: {evs:?}");
    let out = sent(&mut c);
    let answer = out.iter().find(|f| f["id"] == "p").expect("the ask is answered");
    assert_eq!(answer["result"], json!({"outcome":{"outcome":"cancelled"}}));
}

/// Rule 6: the end of input handles the parked frames (before the final line).
#[test]
fn the_end_of_input_handles_the_parked_frames() {
    let (mut a, owed) = agent_owing(Config::default());
    feed(&mut a, T0, &[&unknown_line(5)]);
    assert_eq!(a.handle_input(T0, b"final junk"), 10);
    a.handle_eof(T0);
    let out = sent(&mut a);
    assert_eq!(ids(&out[owed..]), [5, -1], "the parked request, then the final line");
}

/// One side of [`two_machines_flooding_each_other_through_full_pipes_settle`]: its machine,
/// the requests its application still has to send and the handlers waiting to answer.
struct Flooder {
    pad: usize,
    conn: Connection,
    to_send: i64,
    handlers: VecDeque<InboundId>,
    outcomes: usize,
}

impl Flooder {
    /// The application: answers what it holds (its handlers are slow: only when `answer`)
    /// and sends more, only while `can_send`.
    fn act(&mut self, answer: bool) {
        while let Some(event) = self.conn.poll_any() {
            match event {
                Event::Request { id, .. } => self.handlers.push_back(id),
                Event::Outcome { .. } => self.outcomes += 1,
                _ => {}
            }
        }
        while answer
            && self.conn.can_send()
            && let Some(id) = self.handlers.pop_front()
        {
            let answer = ExtResponse(json!("done"));
            let answer = match self.conn.side() {
                Side::Agent => Response::Agent(AgentResponse::Ext(answer)),
                Side::Client => Response::Client(ClientResponse::Ext(answer)),
            };
            assert_eq!(self.conn.respond::<V1>(T0, id, Ok(answer)), Ok(Completion::Sent));
        }
        while self.conn.can_send() && self.to_send > 0 {
            let ext = ExtRequest::new("_x/work", json!({"pad": "p".repeat(self.pad)}));
            let request = match self.conn.side() {
                Side::Agent => Request::Agent(AgentRequest::Ext(ext)),
                Side::Client => Request::Client(ClientRequest::Ext(ext)),
            };
            match self.conn.send_request::<V1>(T0, request, None).map_err(SendError::from) {
                Ok(_) => self.to_send -= 1,
                Err(SendError::TooManyPending { .. }) => break,
                Err(e) => panic!("{e}"),
            }
        }
    }
}

/// Knobs of [`flood`].
#[derive(Debug, Clone, Copy)]
struct Flood {
    budget: usize,
    max_inbound: usize,
    max_pending: usize,
    pad: usize,
    chunk: usize,
    answer_every: u64,
    stall: u64,
}

/// Runs two flooding machines; whether every request got its outcome, and the parked counts.
fn flood(f: Flood) -> (bool, [u64; 2]) {
    const REQUESTS: i64 = 60;
    let config = Config::default()
        .with_outbound_budget(f.budget)
        .with_max_inbound(f.max_inbound)
        .with_max_pending_outbound(f.max_pending)
        .with_max_held_bytes(4096);
    let flooder = |conn| Flooder { conn, to_send: REQUESTS, handlers: VecDeque::new(), outcomes: 0, pad: f.pad };
    let mut sides = [
        flooder(ready_client_with(config.clone(), ClientCapabilities::default(), json!({}))),
        flooder(ready_agent_with(config, json!({}), AgentCapabilities::default())),
    ];
    // pipes[0]: client → agent; pipes[1]: agent → client.
    let mut pipes: [VecDeque<u8>; 2] = Default::default();
    let mut rounds = 0u64;
    while sides.iter().any(|s| s.outcomes < REQUESTS as usize) {
        rounds += 1;
        if rounds > 20_000 {
            return (false, [0, 1].map(|i| sides[i].conn.stats().input_parked));
        }
        for (i, side) in sides.iter_mut().enumerate() {
            side.act(rounds.is_multiple_of(f.answer_every));
            if pipes[i].len() < 256 {
                let mut batch = Vec::new();
                let _ = side.conn.poll_transmit(&mut batch);
                pipes[i].extend(batch);
            }
        }
        for (i, side) in sides.iter_mut().enumerate() {
            // Each reader is busy elsewhere for a while, in turn.
            if f.stall > 0 && (rounds / f.stall) % 4 == 2 * i as u64 + 1 {
                continue;
            }
            let input = &mut pipes[1 - i];
            let chunk: Vec<u8> = input.iter().take(f.chunk).copied().collect();
            let n = side.conn.handle_input(T0, &chunk);
            input.drain(..n);
            assert!(side.conn.memory_estimate() < 64 * 1024, "{}", side.conn.memory_estimate());
        }
    }
    (true, [0, 1].map(|i| sides[i].conn.stats().input_parked))
}

/// Two machines whose applications flood each other with requests (up to twice the other's
/// `max_inbound` in flight, its handlers slow), through pipes that hold 256 bytes, each
/// writer taking a batch only when its pipe has room (as an adapter writes), each reader busy
/// elsewhere for a while in turn (`stall` rounds). Every request must get its outcome. Before
/// parking, each side's refusals of the other's surplus filled its output budget, both
/// stopped reading with full pipes, and nothing moved again (each of these three runs; of
/// 486 combinations of these knobs, 11 deadlocked then, none now).
#[test]
fn two_machines_flooding_each_other_through_full_pipes_settle() {
    for stall in [0, 20, 100] {
        let f = Flood { budget: 256, max_inbound: 4, max_pending: 8, pad: 100, chunk: 200, answer_every: 8, stall };
        let (settled, parked) = flood(f);
        assert!(settled, "no progress: {f:?}");
        assert!(parked.iter().all(|p| *p > 0), "both sides parked input: {parked:?}");
    }
}
