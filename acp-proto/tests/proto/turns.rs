//! Prompt-turn scenarios: both sides' obligations checked on the wire.

use crate::common;

use acp_proto::types::*;
use acp_proto::{
    AgentResponse, CancelReason, ClientCall, Completion, Event, Notification, OutboundId, Outcome, PermissionAnswer,
    Responder, Response, RpcError, SendError, Side, TurnStamp,
};
use common::*;
use serde_json::{Value, json};

fn ready() -> Pair {
    let mut p = Pair::new();
    let mut caps = ClientCapabilities::default();
    caps.fs.read_text_file = true;
    caps.terminal = true;
    p.handshake(caps, AgentCapabilities::default());
    p
}

/// Client sends a prompt; returns its outbound id and the agent's inbound handle.
fn start_turn(p: &mut Pair, s: &SessionId, text: &str) -> (OutboundId, Responder<PromptResponse>) {
    let out = p.client.send_request(p.now, prompt(s, text), None).unwrap();
    p.pump();
    match client_call(p.agent.poll_event()) {
        ClientCall::Prompt(r, responder) => {
            assert_eq!(&r.session_id, s);
            (out, responder)
        }
        other => panic!("{other:?}"),
    }
}

fn update(p: &mut Pair, s: &SessionId, u: SessionUpdate) {
    p.agent.send_notification(p.now, SessionNotification::new(s.clone(), u)).unwrap();
}

fn permission(s: &SessionId) -> RequestPermissionRequest {
    RequestPermissionRequest::new(
        s.clone(),
        ToolCallUpdate::new("call-1"),
        vec![
            PermissionOption::new("allow", "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new("reject", "Reject once", PermissionOptionKind::RejectOnce),
        ],
    )
}

fn stop_reason(outcome: Option<&Outcome>) -> StopReason {
    match outcome {
        Some(Outcome::Result(Response::Agent(AgentResponse::Prompt(r)))) => r.stop_reason.clone(),
        other => panic!("not a prompt result: {other:?}"),
    }
}

/// The client's view of a turn: updates with stamps, then the outcome.
fn client_turn(events: &[Event]) -> (Vec<(Option<TurnStamp>, String)>, usize) {
    let mut updates = Vec::new();
    let mut outcome_at = usize::MAX;
    for (i, e) in events.iter().enumerate() {
        match e {
            Event::Notification {
                notification: Notification::Agent(acp_proto::AgentNotification::SessionUpdate(n)),
                turn,
            } => {
                let kind = serde_json::to_value(&n.update).unwrap()["sessionUpdate"].as_str().unwrap().to_owned();
                updates.push((*turn, kind));
            }
            Event::Outcome { .. } => outcome_at = i,
            _ => {}
        }
    }
    (updates, outcome_at)
}

fn run_tool_turn(p: &mut Pair, s: &SessionId, answer: PermissionAnswer) -> (Vec<Event>, StopReason) {
    let (out, inbound) = start_turn(p, s, "read /etc/hosts");
    update(p, s, SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new("echo")))));
    update(p, s, SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::Text(TextContent::new("hmm")))));
    let plan = Plan::new(vec![PlanEntry::new("read it", PlanEntryPriority::High, PlanEntryStatus::Pending)]);
    update(p, s, SessionUpdate::Plan(plan));
    let mut call = ToolCall::new("call-1", "Read /etc/hosts");
    call.kind = Some(ToolKind::Read);
    call.status = Some(ToolCallStatus::Pending);
    update(p, s, SessionUpdate::ToolCall(call));
    let ask = p.agent.send_request(p.now, permission(s), None).unwrap();
    p.pump();
    let mut client_events = p.client_events();
    let asked = client_events
        .iter()
        .find_map(|e| match e {
            Event::Request(request) => match request.clone().into_call() {
                acp_proto::Call::Agent(acp_proto::AgentCall::RequestPermission(_, asked)) => Some(asked),
                _ => None,
            },
            _ => None,
        })
        .expect("permission asked");
    assert_eq!(p.client.answer_permission(p.now, asked, answer.clone()), Ok(Completion::Sent));
    p.pump();
    let selected = match outcome_of(&p.agent_events(), ask) {
        Some(Outcome::Result(Response::Client(acp_proto::ClientResponse::RequestPermission(r)))) => r.outcome.clone(),
        other => panic!("{other:?}"),
    };
    let stop = match selected {
        RequestPermissionOutcome::Selected(sel) if sel.option_id.as_str() == "allow" => {
            let mut u = ToolCallUpdate::new("call-1");
            u.status = Some(ToolCallStatus::InProgress);
            update(p, s, SessionUpdate::ToolCallUpdate(u));
            let mut u = ToolCallUpdate::new("call-1");
            u.status = Some(ToolCallStatus::Completed);
            update(p, s, SessionUpdate::ToolCallUpdate(u));
            StopReason::EndTurn
        }
        _ => {
            let mut u = ToolCallUpdate::new("call-1");
            u.status = Some(ToolCallStatus::Failed);
            update(p, s, SessionUpdate::ToolCallUpdate(u));
            StopReason::EndTurn
        }
    };
    update(p, s, SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new("done")))));
    p.agent.respond(p.now, inbound.answer(Ok(PromptResponse::new(stop)))).unwrap();
    p.pump();
    client_events.extend(p.client_events());
    let reason = stop_reason(outcome_of(&client_events, out));
    (client_events, reason)
}

#[test]
fn a_full_turn_with_permission_allowed_and_rejected() {
    let mut p = ready();
    let s = p.open_session("s1");
    for (answer, last_status) in [
        (PermissionAnswer::Selected("allow".into()), "completed"),
        (PermissionAnswer::Selected("reject".into()), "failed"),
    ] {
        let (events, stop) = run_tool_turn(&mut p, &s, answer);
        assert_eq!(stop, StopReason::EndTurn);
        let (updates, outcome_at) = client_turn(&events);
        let kinds: Vec<&str> = updates.iter().map(|(_, k)| k.as_str()).collect();
        let mut want = vec!["agent_message_chunk", "agent_thought_chunk", "plan", "tool_call"];
        if last_status == "completed" {
            want.extend(["tool_call_update", "tool_call_update"]);
        } else {
            want.push("tool_call_update");
        }
        want.push("agent_message_chunk");
        assert_eq!(kinds, want);
        // Stamped with the turn, ordinals contiguous from 0, all before the outcome.
        let turn = updates[0].0.unwrap().turn;
        for (i, (stamp, _)) in updates.iter().enumerate() {
            assert_eq!(*stamp, Some(TurnStamp { turn, ordinal: i as u64 }));
        }
        let last_update = events.iter().rposition(|e| matches!(e, Event::Notification { .. })).unwrap();
        assert!(last_update < outcome_at);
        let statuses: Vec<Value> = p
            .frames_from(Side::Agent)
            .iter()
            .filter(|f| f["params"]["update"]["sessionUpdate"] == "tool_call_update")
            .map(|f| f["params"]["update"]["status"].clone())
            .collect();
        assert_eq!(statuses.last().unwrap(), last_status);
    }
}

#[test]
fn cancel_during_a_pending_permission_ask() {
    let mut p = ready();
    let s = p.open_session("s1");
    let (out, inbound) = start_turn(&mut p, &s, "go");
    let ask = p.agent.send_request(p.now, permission(&s), None).unwrap();
    let read = p.agent.send_request(p.now, ReadTextFileRequest::new(s.clone(), "/x"), None).unwrap();
    p.pump();
    let perm_in = match p.client.poll_event() {
        Some(Event::Request(request)) => request.id(),
        other => panic!("{other:?}"),
    };
    let _read_in = p.client.poll_event();
    // The user cancels the turn.
    let wire_before = p.wire.len();
    assert_eq!(p.client.cancel_turn(p.now, &s), Ok(1));
    assert_eq!(p.client_events(), [Event::Cancelled { id: perm_in, reason: CancelReason::TurnCancelled }]);
    p.pump();
    // Client obligations: session/cancel, then the permission answered `cancelled`.
    let client_frames: Vec<&Value> =
        p.wire[wire_before..].iter().filter(|f| f.from == Side::Client).map(|f| &f.json).collect();
    assert_eq!(client_frames[0]["method"], "session/cancel");
    assert_eq!(client_frames[1]["id"], json!(ask.wire()));
    assert_eq!(client_frames[1]["result"], json!({"outcome":{"outcome":"cancelled"}}));
    // Agent obligations: the handler is told; outstanding requests get $/cancel_request and
    // resolve cancelled.
    let agent_events = p.agent_events();
    assert_eq!(agent_events[0], Event::Cancelled { id: inbound.id(), reason: CancelReason::SessionCancelled });
    assert_eq!(outcome_of(&agent_events, ask), Some(&Outcome::Cancelled));
    assert_eq!(outcome_of(&agent_events, read), Some(&Outcome::Cancelled));
    let cancels: Vec<Value> = p
        .frames_from(Side::Agent)
        .iter()
        .filter(|f| f["method"] == "$/cancel_request")
        .map(|f| f["params"]["requestId"].clone())
        .collect();
    assert_eq!(cancels, [json!(ask.wire()), json!(read.wire())]);
    // A new permission ask during cancelling resolves at once, without a frame.
    let before = p.wire.len();
    let late_ask = p.agent.send_request(p.now, permission(&s), None).unwrap();
    assert_eq!(p.agent_events(), [Event::Outcome { id: late_ask, outcome: Outcome::Cancelled }]);
    // The handler finishes with end_turn: the machine answers cancelled.
    p.agent.respond(p.now, inbound.answer(Ok(PromptResponse::new(StopReason::EndTurn)))).unwrap();
    p.pump();
    assert!(p.wire[before..].iter().all(|f| f.json["method"] != "session/request_permission"));
    assert_eq!(stop_reason(outcome_of(&p.client_events(), out)), StopReason::Cancelled);
}

#[test]
fn cancel_racing_the_handlers_completion() {
    // Order 1: the handler completes first; the cancel then finds an idle session.
    let mut p = ready();
    let s = p.open_session("s");
    let (out, inbound) = start_turn(&mut p, &s, "x");
    p.agent.respond(p.now, inbound.answer(Ok(PromptResponse::new(StopReason::EndTurn)))).unwrap();
    p.client.cancel_turn(p.now, &s).unwrap();
    p.pump();
    assert!(p.agent_events().is_empty(), "a cancel for an idle session is a no-op");
    assert_eq!(stop_reason(outcome_of(&p.client_events(), out)), StopReason::EndTurn);

    // Order 2: the cancel arrives first; the handler's end_turn becomes cancelled.
    let (out, inbound) = start_turn(&mut p, &s, "y");
    p.client.cancel_turn(p.now, &s).unwrap();
    p.pump();
    assert_eq!(p.agent_events(), [Event::Cancelled { id: inbound.id(), reason: CancelReason::SessionCancelled }]);
    p.agent.respond(p.now, inbound.answer(Ok(PromptResponse::new(StopReason::EndTurn)))).unwrap();
    p.pump();
    assert_eq!(stop_reason(outcome_of(&p.client_events(), out)), StopReason::Cancelled);
}

#[test]
fn a_handler_error_after_cancel_still_yields_cancelled() {
    let mut p = ready();
    let s = p.open_session("s");
    let (out, inbound) = start_turn(&mut p, &s, "x");
    p.client.cancel_turn(p.now, &s).unwrap();
    p.pump();
    p.agent_events();
    p.agent.respond(p.now, inbound.answer(Err(RpcError::internal_error("aborted")))).unwrap();
    p.pump();
    assert_eq!(stop_reason(outcome_of(&p.client_events(), out)), StopReason::Cancelled);
    assert!(p.frames_from(Side::Agent).iter().all(|f| f.get("error").is_none()));
}

#[test]
fn the_grace_deadline_answers_cancelled_exactly_at_poll_timeout() {
    let mut p = ready();
    let s = p.open_session("s");
    let (out, inbound) = start_turn(&mut p, &s, "x");
    p.advance(ms(100));
    let cancelled_at = p.now;
    p.client.cancel_turn(p.now, &s).unwrap();
    p.pump();
    p.agent_events();
    let grace = p.agent.config().turn_cancel_grace;
    assert_eq!(p.agent.poll_timeout(), Some(cancelled_at + grace));
    p.advance(grace - ms(1));
    p.pump();
    assert!(p.client_events().is_empty(), "not before the deadline");
    let fired = p.advance_to_next_timeout();
    assert_eq!(fired, cancelled_at + grace);
    p.pump();
    assert_eq!(stop_reason(outcome_of(&p.client_events(), out)), StopReason::Cancelled);
    // The handler's late completion is discarded.
    let late = p.agent.respond(p.now, inbound.answer(Ok(PromptResponse::new(StopReason::EndTurn))));
    assert_eq!(late, Ok(Completion::Discarded));
    assert_eq!(p.agent.poll_timeout(), None);
}

#[test]
fn updates_queued_before_completion_precede_the_response() {
    let mut p = ready();
    let s = p.open_session("s");
    let (out, inbound) = start_turn(&mut p, &s, "x");
    for i in 0..500 {
        p.agent.send_notification(p.now, chunk(&s, &format!("{i}"))).unwrap();
        if i % 97 == 0 {
            p.pump();
        }
    }
    p.agent.respond(p.now, inbound.answer(Ok(PromptResponse::new(StopReason::EndTurn)))).unwrap();
    // An update after the response is queued after it and never joins the finished turn.
    p.agent.send_notification(p.now, chunk(&s, "straggler")).unwrap();
    p.pump();
    let frames = p.frames_from(Side::Agent);
    let response_at = frames.iter().position(|f| f["id"] == json!(out.wire())).unwrap();
    let updates_before = frames[..response_at].iter().filter(|f| f["method"] == "session/update").count();
    assert_eq!(updates_before, 500);
    let events = p.client_events();
    let (updates, outcome_at) = client_turn(&events);
    assert_eq!(updates.len(), 501);
    assert!(updates[..500].iter().all(|(stamp, _)| stamp.is_some()));
    assert_eq!(updates[500].0, None, "the straggler is delivered unstamped");
    assert!(outcome_at < events.len() - 1);
}

#[test]
fn no_update_before_the_session_is_announced() {
    let mut p = ready();
    let unknown = SessionId::from("nope");
    assert_eq!(
        p.agent.send_notification(p.now, chunk(&unknown, "x")).map_err(SendError::from),
        Err(SendError::UnknownSession(unknown))
    );
    // During session/new: still unknown until the response is sent.
    p.client.send_request(p.now, NewSessionRequest::new("/", vec![]), None).unwrap();
    p.pump();
    let ClientCall::NewSession(_, responder) = client_call(p.agent.poll_event()) else { panic!() };
    let s = SessionId::from("fresh");
    assert!(p.agent.send_notification(p.now, chunk(&s, "early")).is_err());
    p.agent.respond(p.now, responder.answer(Ok(NewSessionResponse::new(s.clone())))).unwrap();
    p.agent.send_notification(p.now, chunk(&s, "after")).unwrap();
    p.pump();
    let frames = p.frames_from(Side::Agent);
    let new_at = frames.iter().position(|f| f["result"]["sessionId"] == "fresh").unwrap();
    let first_update = frames.iter().position(|f| f["method"] == "session/update").unwrap();
    assert!(new_at < first_update);
}

#[test]
fn history_replay_during_load_precedes_its_response() {
    let mut p = Pair::new();
    let caps = AgentCapabilities { load_session: true, ..Default::default() };
    p.handshake(ClientCapabilities::default(), caps);
    let s = SessionId::from("old");
    let load = p.client.send_request(p.now, LoadSessionRequest::new(s.clone(), "/", vec![]), None).unwrap();
    p.pump();
    let ClientCall::LoadSession(_, responder) = client_call(p.agent.poll_event()) else { panic!() };
    p.agent.send_notification(p.now, chunk(&s, "replayed")).unwrap();
    p.agent.respond(p.now, responder.answer(Ok(LoadSessionResponse::default()))).unwrap();
    p.pump();
    let events = p.client_events();
    assert!(matches!(events[0], Event::Notification { turn: None, .. }));
    assert!(matches!(events[1], Event::Outcome { id, .. } if id == load));
    // Announced now: updates and prompts work.
    p.agent.send_notification(p.now, chunk(&s, "live")).unwrap();
}

#[test]
fn one_turn_at_a_time_per_session() {
    let mut p = ready();
    let s = p.open_session("s");
    let (_out, _inbound) = start_turn(&mut p, &s, "first");
    assert_eq!(
        p.client.send_request(p.now, prompt(&s, "second"), None).map_err(SendError::from),
        Err(SendError::TurnAlreadyRunning(s.clone()))
    );
    // A peer that does not check gets -32600 from the agent machine.
    let raw = json!({"jsonrpc":"2.0","id":"dup","method":"session/prompt","params":{"sessionId":"s","prompt":[]}});
    let _ = p.agent.handle_input(p.now, format!("{raw}\n").as_bytes());
    let mut out = Vec::new();
    let _ = p.agent.poll_transmit(&mut out);
    let answer: Value = serde_json::from_slice(out.trim_ascii_end()).unwrap();
    assert_eq!(answer["error"]["code"], -32600);
    assert!(p.agent.poll_event().is_none());
}

#[test]
fn sixty_four_sessions_with_interleaved_turns_never_cross_deliver() {
    let mut p = ready();
    let sessions: Vec<SessionId> = (0..64).map(|i| p.open_session(&format!("sess-{i}"))).collect();
    let mut turns = Vec::new();
    for s in &sessions {
        turns.push(start_turn(&mut p, s, "go"));
    }
    // Interleave updates across sessions in a scrambled but deterministic order.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut counts = [0u64; 64];
    for _ in 0..3000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let i = (seed % 64) as usize;
        p.agent.send_notification(p.now, chunk(&sessions[i], &format!("{i}:{}", counts[i]))).unwrap();
        counts[i] += 1;
        if seed.is_multiple_of(50) {
            p.pump();
        }
    }
    let (outs, inbound): (Vec<_>, Vec<_>) = turns.into_iter().unzip();
    for responder in inbound.into_iter().rev() {
        p.agent.respond(p.now, responder.answer(Ok(PromptResponse::new(StopReason::EndTurn)))).unwrap();
    }
    p.pump();
    let mut seen = [0u64; 64];
    let mut ended = [false; 64];
    for e in p.client_events() {
        match e {
            Event::Notification {
                notification: Notification::Agent(acp_proto::AgentNotification::SessionUpdate(n)),
                turn,
            } => {
                let i: usize = n.session_id.as_str()["sess-".len()..].parse().unwrap();
                let stamp = turn.expect("inside a turn");
                assert_eq!(stamp.turn, outs[i], "update of session {i} stamped with another turn");
                assert_eq!(stamp.ordinal, seen[i]);
                assert!(!ended[i]);
                let SessionUpdate::AgentMessageChunk(c) = &n.update else { panic!() };
                let ContentBlock::Text(t) = &c.content else { panic!() };
                assert_eq!(t.text, format!("{i}:{}", seen[i]));
                seen[i] += 1;
            }
            Event::Outcome { id, .. } => {
                let i = outs.iter().position(|out| *out == id).unwrap();
                assert_eq!(seen[i], counts[i], "all updates of session {i} before its outcome");
                ended[i] = true;
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(ended.iter().all(|e| *e));
}

#[test]
fn a_permission_ask_that_crosses_the_cancel_is_answered_cancelled() {
    let mut p = ready();
    let s = p.open_session("s");
    let (out, inbound) = start_turn(&mut p, &s, "x");
    // The agent asks before it has seen the cancel; the client cancels before it sees the ask.
    let ask = p.agent.send_request(p.now, permission(&s), None).unwrap();
    p.client.cancel_turn(p.now, &s).unwrap();
    p.pump();
    assert!(p.client_events().is_empty(), "the ask is never dispatched to the application");
    let agent_events = p.agent_events();
    assert_eq!(agent_events[0], Event::Cancelled { id: inbound.id(), reason: CancelReason::SessionCancelled });
    // The cascade resolved the ask locally; the client's `cancelled` answer arrives late.
    assert_eq!(outcome_of(&agent_events, ask), Some(&Outcome::Cancelled));
    let answer = p
        .frames_from(Side::Client)
        .into_iter()
        .find(|f| f["id"] == json!(ask.wire()) && f.get("result").is_some())
        .cloned();
    assert_eq!(answer.unwrap()["result"], json!({"outcome":{"outcome":"cancelled"}}));
    p.agent.respond(p.now, inbound.answer(Ok(PromptResponse::new(StopReason::EndTurn)))).unwrap();
    p.pump();
    assert_eq!(stop_reason(outcome_of(&p.client_events(), out)), StopReason::Cancelled);
    // After the turn, permission asks reach the application again.
    let (_out, _inbound) = start_turn(&mut p, &s, "y");
    p.agent.send_request(p.now, permission(&s), None).unwrap();
    p.pump();
    assert!(matches!(p.client.poll_event(), Some(Event::Request(_))));
}
