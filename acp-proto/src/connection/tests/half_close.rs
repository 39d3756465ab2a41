//! End of input is a half-close (module `half_close`): one test per rule.

use super::output_bound::fill;
use super::*;
use crate::connection::{AnyConnection as Connection, AnyEvent as Event, AnyOutcome as Outcome};
use crate::protocol::V1;

fn prompt_line(id: i64, session: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"session/prompt","params":{"sessionId":session,"prompt":[]}}).to_string()
}

fn closed_by_eof(evs: &[Event]) -> bool {
    matches!(evs.last(), Some(Event::Closed { reason: CloseReason::PeerEof }))
}

// ---- rule 1 and 3: the last line, and what was received before is answered -----------------

#[test]
fn a_request_right_before_eof_is_answered_then_the_connection_closes() {
    let mut a = ready_agent();
    // The last line has no `\n`.
    let _ = a.handle_input(T0, new_session_line(1).as_bytes());
    a.handle_eof(T0);
    let evs = events(&mut a);
    let [Event::Request { id, .. }, Event::Cancelled { id: told, reason: CancelReason::InputEnded }] = evs[..] else {
        panic!("{evs:?}")
    };
    assert_eq!(told, id, "its handler is told, as by a `$/cancel_request`");
    assert!(a.input_ended() && !a.is_closed(), "half-closed while an answer is owed");
    assert!(!a.wants_input());
    assert_eq!(a.respond::<V1>(ms(1), id, Ok(NewSessionResponse::new("s").into())), Ok(Completion::Sent));
    assert!(a.is_closed());
    let frames = sent(&mut a);
    assert_eq!((frames.len(), &frames[0]["id"], &frames[0]["result"]["sessionId"]), (1, &json!(1), &json!("s")));
    assert_eq!(events(&mut a), [Event::Closed { reason: CloseReason::PeerEof }]);
    assert_eq!(a.poll_timeout(), None, "the grace is disarmed by the answer");
}

#[test]
fn initialize_and_the_requests_held_behind_it_are_answered_after_eof() {
    let mut a = Connection::agent(T0);
    feed(&mut a, T0, &[&init_line("0", json!({})), &new_session_line(1)]);
    a.handle_eof(T0);
    let [Event::Request { id: init, .. }, Event::Cancelled { .. }] = events(&mut a)[..] else {
        panic!("only initialize is dispatched")
    };
    a.respond::<V1>(T0, init, Ok(InitializeResponse::new(ProtocolVersion::V1).into())).unwrap();
    assert!(!a.is_closed(), "session/new, held behind initialize, is owed");
    let evs = events(&mut a);
    let [Event::HandshakeCompleted(_), Event::Request { id: new, .. }, Event::Cancelled { id: told, .. }] = evs[..]
    else {
        panic!("{evs:?}")
    };
    assert_eq!(told, new, "told at once: the end of input came before it was dispatched");
    a.respond::<V1>(T0, new, Ok(NewSessionResponse::new("s").into())).unwrap();
    let ids: Vec<Value> = sent(&mut a).iter().map(|f| f["id"].clone()).collect();
    assert_eq!(ids, [json!(0), json!(1)]);
    assert!(closed_by_eof(&events(&mut a)));
}

#[test]
fn a_request_deferred_behind_a_full_output_at_eof_is_answered_at_once() {
    let config = Config::default().with_outbound_budget(2000);
    let mut a = ready_agent_with(config, json!({}), AgentCapabilities::default());
    feed(&mut a, T0, &[&new_session_line(1)]);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!() };
    a.respond::<V1>(T0, id, Ok(NewSessionResponse::new("s").into())).unwrap();
    fill(&mut a);
    feed(&mut a, T0, &[&new_session_line(2)]);
    assert_eq!(a.deferred_requests(), 1);
    a.handle_eof(T0);
    // Never seen by the application: answered as a `$/cancel_request` would have it.
    assert_eq!((a.deferred_requests(), a.inbound_in_flight()), (0, 0));
    let frames = sent(&mut a);
    let last = frames.last().unwrap();
    assert_eq!((&last["id"], error_code(last)), (&json!(2), -32800));
    assert_eq!(events(&mut a), [Event::Closed { reason: CloseReason::PeerEof }]);
}

#[test]
fn notifications_still_go_out_while_answers_are_owed() {
    let mut a = ready_agent();
    feed(&mut a, T0, &[&new_session_line(1)]);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!() };
    a.respond::<V1>(T0, id, Ok(NewSessionResponse::new("s").into())).unwrap();
    feed(&mut a, T0, &[&prompt_line(2, "s")]);
    a.handle_eof(T0);
    let [Event::Request { id, .. }, Event::Cancelled { .. }] = events(&mut a)[..] else { panic!("the prompt") };
    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new("done")));
    a.send_notification::<V1>(T0, SessionNotification::new("s", SessionUpdate::AgentMessageChunk(chunk))).unwrap();
    a.respond::<V1>(T0, id, Ok(PromptResponse::new(StopReason::EndTurn).into())).unwrap();
    let frames = sent(&mut a);
    assert_eq!(frames[1]["method"], "session/update");
    assert_eq!(frames[2]["result"]["stopReason"], "end_turn", "the update precedes the answer");
    assert!(closed_by_eof(&events(&mut a)));
}

#[test]
fn input_after_eof_is_consumed_and_ignored() {
    let mut a = ready_agent();
    feed(&mut a, T0, &[&new_session_line(1)]);
    a.handle_eof(T0);
    let line = format!("{}\n", new_session_line(2));
    assert_eq!(a.handle_input(T0, line.as_bytes()), line.len());
    a.handle_eof(T0);
    assert_eq!(events(&mut a).len(), 2, "only request 1, and its cancellation");
    assert_eq!(a.inbound_in_flight(), 1);
}

// ---- rule 2: nothing more can be answered to us ----------------------------------------------

#[test]
fn outbound_requests_end_at_eof_and_later_ones_resolve_at_once() {
    let mut c = ready_client();
    let prompt = c.send_request::<V1>(T0, PromptRequest::new("s", vec![]), Some(ms(50))).unwrap();
    sent(&mut c);
    let ask = json!({"jsonrpc":"2.0","id":"p","method":"session/request_permission","params":
        {"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"y","name":"Y","kind":"allow_once"}]}});
    feed(&mut c, T0, &[&ask.to_string()]);
    c.handle_eof(ms(1));
    let evs = events(&mut c);
    let [
        Event::Request { id: asked, .. },
        Event::Outcome { id, outcome: Outcome::ConnectionClosed },
        Event::Cancelled { id: told, reason: CancelReason::InputEnded },
    ] = evs[..]
    else {
        panic!("{evs:?}")
    };
    assert_eq!((id, told), (prompt, asked));
    assert!(!c.is_closed(), "open: the permission ask is owed");
    // A request sent now resolves at once, with no frame.
    let late = c.send_request::<V1>(ms(2), NewSessionRequest::new("/", vec![]), None).unwrap();
    assert_eq!(events(&mut c), [Event::Outcome { id: late, outcome: Outcome::ConnectionClosed }]);
    assert!(sent(&mut c).is_empty());
    c.answer_permission(ms(3), asked, PermissionAnswer::Selected(PermissionOptionId::from("y"))).unwrap();
    assert_eq!(sent(&mut c)[0]["result"]["outcome"]["optionId"], "y");
    assert!(closed_by_eof(&events(&mut c)));
}

#[test]
fn cancelling_a_turn_after_eof_can_answer_the_last_request_owed() {
    let mut c = ready_client();
    c.send_request::<V1>(T0, PromptRequest::new("s", vec![]), None).unwrap();
    let ask = json!({"jsonrpc":"2.0","id":"p","method":"session/request_permission","params":
        {"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"y","name":"Y","kind":"allow_once"}]}});
    feed(&mut c, T0, &[&ask.to_string()]);
    c.handle_eof(T0);
    let _ = events(&mut c);
    assert_eq!(c.cancel_turn(T0, &SessionId::from("s")), Ok(1));
    let frames = sent(&mut c);
    assert_eq!(frames.last().unwrap()["result"]["outcome"]["outcome"], "cancelled");
    let evs = events(&mut c);
    assert!(matches!(evs[0], Event::Cancelled { reason: CancelReason::TurnCancelled, .. }), "{evs:?}");
    assert!(closed_by_eof(&evs));
}

#[test]
fn eof_with_nothing_owed_closes_at_once() {
    let mut c = ready_client();
    let id = c.send_request::<V1>(T0, NewSessionRequest::new("/", vec![]), None).unwrap();
    c.handle_eof(T0);
    assert_eq!(
        events(&mut c),
        [Event::Outcome { id, outcome: Outcome::ConnectionClosed }, Event::Closed { reason: CloseReason::PeerEof }]
    );
    assert!(c.is_closed() && c.input_ended());
}

// ---- rule 4: the bound -----------------------------------------------------------------------

#[test]
fn the_grace_answers_what_is_still_owed_and_closes() {
    let grace = Duration::from_millis(100);
    let config = Config::default().with_cancel_grace(grace).with_turn_cancel_grace(grace);
    let mut a = ready_agent_with(config, json!({}), AgentCapabilities::default());
    feed(&mut a, T0, &[&new_session_line(1)]);
    let Some(Event::Request { id: new, .. }) = a.poll_any() else { panic!() };
    a.respond::<V1>(T0, new, Ok(NewSessionResponse::new("s").into())).unwrap();
    // A prompt whose turn the client cancelled, and a request whose handler never finishes.
    feed(&mut a, T0, &[&prompt_line(2, "s"), &new_session_line(3)]);
    let cancel = json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}});
    feed(&mut a, T0, &[&cancel.to_string()]);
    a.handle_eof(ms(10));
    let evs = events(&mut a);
    let [
        Event::Request { id: prompt, .. },
        Event::Request { id: stuck, .. },
        Event::Cancelled { reason: CancelReason::SessionCancelled, .. },
        Event::Cancelled { id: told, reason: CancelReason::InputEnded },
    ] = evs[..]
    else {
        panic!("{evs:?}")
    };
    assert_eq!(told, stuck, "the prompt's own cancellation stands");
    sent(&mut a);
    a.handle_timeout(ms(100));
    let frames = sent(&mut a);
    assert_eq!((&frames[0]["id"], &frames[0]["result"]["stopReason"]), (&json!(2), &json!("cancelled")));
    assert!(!a.is_closed());
    assert_eq!(a.poll_timeout(), Some(ms(110)), "cancel_grace after the end of input");
    a.handle_timeout(ms(110));
    let frames = sent(&mut a);
    assert_eq!((&frames[0]["id"], error_code(&frames[0])), (&json!(3), -32800));
    assert!(closed_by_eof(&events(&mut a)));
    for id in [prompt, stuck] {
        assert_eq!(a.respond::<V1>(ms(120), id, Err(RpcError::internal_error("late"))), Ok(Completion::Discarded));
    }
    assert!(sent(&mut a).is_empty(), "exactly one answer each");
}

#[test]
fn the_grace_answers_initialize_and_what_is_held_behind_it() {
    let mut a = Connection::agent(T0);
    feed(&mut a, T0, &[&init_line("0", json!({})), &new_session_line(1)]);
    a.handle_eof(T0);
    let [Event::Request { .. }, Event::Cancelled { .. }] = events(&mut a)[..] else { panic!() };
    a.handle_timeout(T0 + Config::default().cancel_grace);
    let frames = sent(&mut a);
    assert_eq!((&frames[0]["id"], error_code(&frames[0])), (&json!(0), -32800));
    assert_eq!((&frames[1]["id"], error_code(&frames[1])), (&json!(1), -32600), "initialize failed");
    assert!(closed_by_eof(&events(&mut a)));
}

#[test]
fn a_local_close_while_half_closed_ends_it_at_once() {
    let mut a = ready_agent();
    feed(&mut a, T0, &[&new_session_line(1)]);
    a.handle_eof(T0);
    let [Event::Request { id, .. }, Event::Cancelled { .. }] = events(&mut a)[..] else { panic!() };
    // The adapter's output failed: it closes; nothing is answered any more.
    a.close(T0);
    assert_eq!(
        events(&mut a),
        [Event::Cancelled { id, reason: CancelReason::ConnectionClosed }, Event::Closed { reason: CloseReason::Local },]
    );
    assert_eq!(a.respond::<V1>(T0, id, Ok(NewSessionResponse::new("s").into())), Ok(Completion::Discarded));
    assert!(sent(&mut a).is_empty());
    assert_eq!(a.poll_timeout(), None);
}

// ---- v2 ---------------------------------------------------------------------------------------

#[cfg(feature = "unstable_protocol_v2")]
mod v2 {
    use super::super::v2::{pair_with_session, pipe, request_v2};
    use super::super::v2_turns::{ack, ask, prompt, prompted};
    use super::*;
    use crate::TurnEndReason;
    use crate::protocol::V2;

    #[test]
    fn client_eof_ends_open_v2_turns_at_once() {
        let (mut c, mut a, turn) = prompted(true);
        // The agent asks, then its output ends: the turn cannot get its idle any more.
        a.send_request::<V2>(T0, ask(), None).unwrap();
        pipe(&mut a, &mut c, T0);
        let (asked, _) = request_v2(events(&mut c));
        c.handle_eof(T0);
        let evs = events(&mut c);
        assert!(
            matches!(&evs[..], [
                Event::TurnEnded { turn: t, reason: TurnEndReason::ConnectionClosed, .. },
                Event::Cancelled { id, reason: CancelReason::InputEnded },
            ] if *t == turn && *id == asked),
            "{evs:?}"
        );
        assert!(!c.is_closed(), "the ask is owed");
        let cancelled: crate::v2::RequestPermissionResponse =
            super::super::v2::from(json!({"outcome": {"outcome": "cancelled"}}));
        c.respond::<V2>(T0, asked, Ok(cancelled.into())).unwrap();
        assert!(closed_by_eof(&events(&mut c)));
        assert_eq!(sent(&mut c)[0]["result"]["outcome"]["outcome"], "cancelled");
    }

    #[test]
    fn client_eof_before_the_ack_ends_the_turn_connection_closed_as_close_does() {
        let (mut c, _, turn) = prompted(false);
        c.handle_eof(T0);
        let evs = events(&mut c);
        assert_eq!(evs[0], Event::Outcome { id: turn, outcome: Outcome::ConnectionClosed });
        assert!(matches!(&evs[1], Event::TurnEnded { reason: TurnEndReason::ConnectionClosed, .. }), "{evs:?}");
        assert!(closed_by_eof(&evs));
    }

    #[test]
    fn agent_answers_a_v2_prompt_received_before_eof() {
        let (mut c, mut a) = pair_with_session();
        c.send_request::<V2>(T0, prompt(), None).unwrap();
        pipe(&mut c, &mut a, T0);
        a.handle_eof(T0);
        let evs = events(&mut a);
        assert!(matches!(evs.last(), Some(Event::Cancelled { reason: CancelReason::InputEnded, .. })));
        let (id, _) = request_v2(evs);
        assert!(!a.is_closed(), "the prompt's acknowledgement is owed");
        a.respond::<V2>(T0, id, Ok(ack())).unwrap();
        assert_eq!(sent(&mut a)[0]["result"]["messageId"], "u1");
        assert!(closed_by_eof(&events(&mut a)));
    }
}
