//! One test per rule of the [module docs](super).

use serde_json::{Value, json};

use super::*;

fn frame(value: Value) -> Vec<u8> {
    serde_json::to_vec(&value).unwrap()
}

fn read(frame: &[u8]) -> Value {
    serde_json::from_slice(frame).unwrap()
}

/// A hub whose agent announced `s1` and `s2`.
fn hub() -> Hub {
    let mut hub = Hub::new();
    let mut out = Vec::new();
    for (id, session) in [(1, "s1"), (2, "s2")] {
        hub.from_host(
            &frame(json!({"jsonrpc":"2.0","id":id,"method":"session/new","params":{"cwd":"/","mcpServers":[]}})),
            &mut out,
        );
        hub.from_agent(&frame(json!({"jsonrpc":"2.0","id":id,"result":{"sessionId":session}})), &mut out);
    }
    hub
}

fn join(hub: &mut Hub, guest: GuestId, session: &str, role: Role) -> Vec<Out> {
    let mut out = Vec::new();
    hub.join(guest, &AttachRequest::new(100 + guest as i64, session, role), &mut out);
    out
}

fn ask(id: i64, session: &str) -> Vec<u8> {
    frame(json!({"jsonrpc":"2.0","id":id,"method":"session/request_permission","params":{
        "sessionId":session,"toolCall":{"toolCallId":"t1"},
        "options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}))
}

fn pick(id: Value, option: &str) -> Vec<u8> {
    frame(json!({"jsonrpc":"2.0","id":id,"result":{"outcome":{"outcome":"selected","optionId":option}}}))
}

fn to(out: &[Out]) -> Vec<To> {
    out.iter().map(|o| o.to).collect()
}

#[test]
fn rule_1_only_an_announced_session_is_attached_and_the_answer_lists_its_clients() {
    let mut hub = hub();
    let out = join(&mut hub, 7, "s1", Role::Observer);
    assert_eq!(to(&out), [To::Guest(7)]);
    let answer = AttachAnswer::read(&out[0].frame, &RequestId::Number(107)).unwrap().unwrap();
    assert_eq!(answer.role, Role::Observer);
    let clients: Vec<_> = answer.connected_clients.iter().map(|c| (c.client_id.as_str(), c.role)).collect();
    assert_eq!(clients, [("host", Role::Controller), ("guest-7", Role::Observer)]);

    let out = join(&mut hub, 8, "nope", Role::Controller);
    let error = AttachAnswer::read(&out[0].frame, &RequestId::Number(108)).unwrap().unwrap_err();
    assert_eq!(error.code, SESSION_NOT_FOUND);
    assert_eq!(hub.guests().collect::<Vec<_>>(), [7]);

    // The guest reads its client's request and learns the answer.
    let mut guest = Guest::new();
    let request = frame(json!({"jsonrpc":"2.0","id":"a","method":"session/attach","params":{"sessionId":"s2"}}));
    let Route::Attach(attach) = guest.from_client(&request) else { panic!("not an attach") };
    assert_eq!((&*attach.session, attach.role), ("s2", Role::Controller));
    let mut out = Vec::new();
    hub.join(9, &attach, &mut out);
    guest.from_host("s2", &out[0].frame);
    assert!(guest.is_attached("s2"));
    // A refused one stays unattached.
    let Route::Attach(other) = guest
        .from_client(&frame(json!({"jsonrpc":"2.0","id":"b","method":"session/attach","params":{"sessionId":"x"}})))
    else {
        panic!()
    };
    assert_eq!(read(&guest.refuse(&other))["error"]["code"], -32001);
    assert!(!guest.is_attached("x"));
    assert!(
        is_attach(&request) && !is_attach(&frame(json!({"jsonrpc":"2.0","id":1,"method":"session/load","params":{}})))
    );
    // One it cannot read is answered at once.
    let Route::Answer(bad) = guest.from_client(br#"{"jsonrpc":"2.0","id":3,"method":"session/attach","params":{}}"#)
    else {
        panic!()
    };
    assert_eq!(read(&bad)["error"]["code"], -32602);
}

#[test]
fn rule_2_the_answer_to_initialize_advertises_attach() {
    let mut hub = Hub::new();
    let mut out = Vec::new();
    hub.from_host(
        &frame(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}})),
        &mut out,
    );
    out.clear();
    let answer = json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":{"close":{}}}}});
    hub.from_agent(&frame(answer), &mut out);
    let got = read(&out[0].frame);
    assert_eq!(got["result"]["agentCapabilities"]["sessionCapabilities"]["close"], json!({}));
    assert_eq!(
        got["result"]["agentCapabilities"]["sessionCapabilities"]["attach"]["roles"],
        json!(["controller", "observer"])
    );
    assert_eq!(got["result"]["agentCapabilities"]["sessionCapabilities"]["attach"]["maxClients"], MAX_GUESTS);
}

#[test]
fn rule_3_updates_reach_the_host_and_every_guest_of_their_session() {
    let mut hub = hub();
    join(&mut hub, 7, "s1", Role::Observer);
    join(&mut hub, 8, "s1", Role::Controller);
    join(&mut hub, 9, "s2", Role::Observer);
    let mut out = Vec::new();
    let update = frame(
        json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[]}}}),
    );
    hub.from_agent(&update, &mut out);
    assert_eq!(to(&out), [To::Host, To::Guest(7), To::Guest(8)]);
    assert!(out.iter().all(|o| o.frame == update));
}

#[test]
fn rule_4_a_guest_answering_first_wins_and_everyone_learns_it() {
    let mut hub = hub();
    join(&mut hub, 7, "s1", Role::Observer);
    join(&mut hub, 8, "s1", Role::Controller);
    join(&mut hub, 9, "s1", Role::Controller);
    let mut out = Vec::new();
    hub.from_agent(&ask(50, "s1"), &mut out);
    // The host as it came, each controller under an id of the hub's, no observer.
    assert_eq!(to(&out), [To::Host, To::Guest(8), To::Guest(9)]);
    let ids: Vec<Value> = out[1..].iter().map(|o| read(&o.frame)["id"].clone()).collect();
    assert!(ids.iter().all(|id| id.as_str().is_some_and(|s| s.starts_with(ID_PREFIX))));
    out.clear();

    hub.from_guest(9, &pick(ids[1].clone(), "yes"), &mut out);
    assert_eq!(out[0].to, To::Agent);
    assert_eq!(read(&out[0].frame), read(&pick(json!(50), "yes")));
    assert_eq!(to(&out)[1..], [To::Host, To::Guest(7), To::Guest(8), To::Guest(9), To::Guest(8)]);
    assert_eq!(read(&out[1].frame), json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":50}}));
    let note = read(&out[2].frame);
    assert_eq!(note["params"]["update"]["sessionUpdate"], "permission_resolved");
    assert_eq!(note["params"]["update"]["toolCallId"], "t1");
    assert_eq!(note["params"]["update"]["chosenOptionId"], "yes");
    assert_eq!(note["params"]["update"]["resolvedBy"], "guest-9");
    assert_eq!(read(&out[5].frame)["params"]["requestId"], ids[0]);
    out.clear();

    // Late answers, the host's and the other guest's, are dropped.
    hub.from_host(&pick(json!(50), "no"), &mut out);
    hub.from_guest(8, &pick(ids[0].clone(), "no"), &mut out);
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn rule_4_the_host_answering_first_wins_and_a_late_controller_still_gets_open_asks() {
    let mut hub = hub();
    let mut out = Vec::new();
    hub.from_agent(&ask(51, "s1"), &mut out);
    assert_eq!(to(&out), [To::Host]);
    // Attached while the ask is open: the answer, then the ask.
    let out = join(&mut hub, 8, "s1", Role::Controller);
    assert_eq!(to(&out), [To::Guest(8), To::Guest(8)]);
    let hub_id = read(&out[1].frame)["id"].clone();
    assert_eq!(read(&out[1].frame)["method"], "session/request_permission");

    let mut out = Vec::new();
    hub.from_host(&pick(json!(51), "no"), &mut out);
    assert_eq!(to(&out), [To::Agent, To::Guest(8), To::Guest(8)]);
    assert_eq!(read(&out[1].frame)["params"]["update"]["resolvedBy"], "host");
    assert_eq!(read(&out[2].frame)["params"]["requestId"], hub_id);
    out.clear();
    hub.from_guest(8, &pick(hub_id, "yes"), &mut out);
    assert!(out.is_empty());
}

#[test]
fn rule_4_an_ask_the_agent_withdraws_is_withdrawn_from_the_guests() {
    let mut hub = hub();
    join(&mut hub, 8, "s1", Role::Controller);
    let mut out = Vec::new();
    hub.from_agent(&ask(52, "s1"), &mut out);
    let hub_id = read(&out[1].frame)["id"].clone();
    out.clear();
    hub.from_agent(&frame(json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":52}})), &mut out);
    assert_eq!(to(&out), [To::Host, To::Guest(8)]);
    assert_eq!(read(&out[1].frame)["params"]["requestId"], hub_id);
}

#[test]
fn rule_5_a_controller_prompts_under_an_id_of_the_hubs_and_gets_its_answer_back() {
    let mut hub = hub();
    join(&mut hub, 8, "s1", Role::Controller);
    let mut out = Vec::new();
    let prompt =
        frame(json!({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}));
    hub.from_guest(8, &prompt, &mut out);
    assert_eq!(to(&out), [To::Agent]);
    let hub_id = read(&out[0].frame)["id"].clone();
    assert!(hub_id.as_str().unwrap().starts_with(ID_PREFIX));
    out.clear();
    hub.from_agent(&frame(json!({"jsonrpc":"2.0","id":hub_id,"result":{"stopReason":"end_turn"}})), &mut out);
    assert_eq!(to(&out), [To::Guest(8)]);
    assert_eq!(read(&out[0].frame), json!({"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}));
    out.clear();
    // Cancel reaches the agent; another session is not the guest's.
    let cancel = frame(json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}));
    hub.from_guest(8, &cancel, &mut out);
    assert_eq!(out, [Out { to: To::Agent, frame: cancel }]);
    out.clear();
    hub.from_guest(
        8,
        &frame(json!({"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s2","prompt":[]}})),
        &mut out,
    );
    assert_eq!(read(&out[0].frame)["error"]["code"], -32001);
}

#[test]
fn rule_6_an_observer_cannot_act() {
    let mut hub = hub();
    join(&mut hub, 7, "s1", Role::Observer);
    let mut out = Vec::new();
    hub.from_guest(
        7,
        &frame(json!({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}})),
        &mut out,
    );
    assert_eq!(to(&out), [To::Guest(7)]);
    assert_eq!(read(&out[0].frame)["error"]["code"], -32002);
    out.clear();
    hub.from_guest(7, &frame(json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}})), &mut out);
    hub.from_guest(7, &pick(json!("acp/attach/1"), "yes"), &mut out);
    assert!(out.is_empty());
}

#[test]
fn rule_7_file_and_terminal_requests_go_to_the_host_alone() {
    let mut hub = hub();
    join(&mut hub, 8, "s1", Role::Controller);
    let mut out = Vec::new();
    let read_file = frame(
        json!({"jsonrpc":"2.0","id":60,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/etc/passwd"}}),
    );
    hub.from_agent(&read_file, &mut out);
    assert_eq!(to(&out), [To::Host]);
    // And a guest cannot answer it in the host's place.
    out.clear();
    hub.from_guest(8, &frame(json!({"jsonrpc":"2.0","id":60,"result":{"content":"x"}})), &mut out);
    assert!(out.is_empty());
}

#[test]
fn rule_8_a_guest_that_detaches_holds_nothing() {
    let mut hub = hub();
    join(&mut hub, 8, "s1", Role::Controller);
    let mut out = Vec::new();
    hub.from_guest(
        8,
        &frame(json!({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}})),
        &mut out,
    );
    let flight = read(&out[0].frame)["id"].clone();
    out.clear();
    hub.from_agent(&ask(53, "s1"), &mut out);
    let asked = read(&out[1].frame)["id"].clone();
    out.clear();

    let mut guest = Guest::new();
    guest.from_host("s1", &frame(json!({"jsonrpc":"2.0","id":1,"result":{}})));
    let Route::Attach(request) = guest
        .from_client(&frame(json!({"jsonrpc":"2.0","id":1,"method":"session/attach","params":{"sessionId":"s1"}})))
    else {
        panic!()
    };
    let _ = request;
    guest.from_host(
        "s1",
        &frame(json!({"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","role":"controller","connectedClients":[]}})),
    );
    let detach = frame(json!({"jsonrpc":"2.0","id":2,"method":"session/detach","params":{"sessionId":"s1"}}));
    let Route::Detach { id, session } = guest.from_client(&detach) else { panic!() };
    hub.leave(8, &mut out);
    let answer = guest.detached(&session, Some(&id)).unwrap();
    assert_eq!(read(&answer)["result"], json!({"sessionId":"s1","status":"detached"}));
    assert!(!guest.is_attached("s1"));
    assert_eq!(guest.from_client(&detach), Route::Answer(error_frame(&id, &not_found())));

    hub.from_agent(&frame(json!({"jsonrpc":"2.0","id":flight,"result":{"stopReason":"end_turn"}})), &mut out);
    hub.from_guest(8, &pick(asked, "yes"), &mut out);
    assert!(out.is_empty(), "{out:?}");
    // The host still answers its own copy.
    hub.from_host(&pick(json!(53), "yes"), &mut out);
    assert_eq!(to(&out), [To::Agent]);
}

#[test]
fn a_guest_routes_its_clients_frames_by_session_and_by_the_asks_it_holds() {
    let mut guest = Guest::new();
    let Route::Attach(_) = guest.from_client(&frame(
        json!({"jsonrpc":"2.0","id":1,"method":"session/attach","params":{"sessionId":"s1","role":"controller"}}),
    )) else {
        panic!()
    };
    let prompt =
        frame(json!({"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}));
    assert_eq!(guest.from_client(&prompt), Route::Local, "not attached before the answer");
    guest.from_host(
        "s1",
        &frame(json!({"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","role":"controller","connectedClients":[]}})),
    );
    assert_eq!(guest.from_client(&prompt), Route::Host("s1".into()));
    let own =
        frame(json!({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"mine","prompt":[]}}));
    assert_eq!(guest.from_client(&own), Route::Local);
    guest.from_host("s1", &ask(0, "s1"));
    assert_eq!(guest.from_client(&pick(json!(0), "yes")), Route::Host("s1".into()));
    assert_eq!(guest.from_client(&pick(json!(0), "yes")), Route::Local, "answered once");
    // A cancelled ask is forgotten.
    guest.from_host("s1", &ask(4, "s1"));
    guest.from_host("s1", &frame(json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":4}})));
    assert_eq!(guest.from_client(&pick(json!(4), "yes")), Route::Local);
    // A host gone answers its requests.
    assert_eq!(read(&guest.host_gone("s1", &prompt).unwrap())["error"]["code"], -32001);
    assert_eq!(guest.from_client(&prompt), Route::Local);
}

#[test]
fn rule_9_a_hub_takes_a_bounded_number_of_guests() {
    let mut hub = hub();
    for guest in 0..MAX_GUESTS as u64 {
        assert!(read(&join(&mut hub, guest, "s1", Role::Observer)[0].frame).get("result").is_some());
    }
    let out = join(&mut hub, 99, "s1", Role::Observer);
    assert_eq!(read(&out[0].frame)["error"]["code"], -32603);
    assert_eq!(hub.guests().count(), MAX_GUESTS);
}

#[test]
fn rule_10_cut_and_garbage_frames_go_where_they_would_without_sharing() {
    let mut hub = hub();
    join(&mut hub, 8, "s1", Role::Controller);
    let mut guest = Guest::new();
    let whole = ask(54, "s1");
    for end in 0..whole.len() {
        let cut = &whole[..end];
        let mut out = Vec::new();
        hub.from_agent(cut, &mut out);
        assert_eq!(to(&out), [To::Host]);
        out.clear();
        hub.from_host(cut, &mut out);
        assert_eq!(to(&out), [To::Agent]);
        out.clear();
        hub.from_guest(8, cut, &mut out);
        assert!(out.is_empty());
        assert_eq!(guest.from_client(cut), Route::Local);
        guest.from_host("s1", cut);
    }
}

#[test]
fn a_closed_hub_lets_its_guests_go_and_finds_nothing() {
    let mut hub = hub();
    join(&mut hub, 8, "s1", Role::Controller);
    hub.close();
    assert_eq!(hub.guests().count(), 0);
    assert!(!hub.has_session("s1"));
    let out = join(&mut hub, 9, "s1", Role::Controller);
    assert_eq!(read(&out[0].frame)["error"]["code"], -32001);
    let mut out = Vec::new();
    hub.from_guest(
        8,
        &frame(json!({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}})),
        &mut out,
    );
    assert_eq!(to(&out), [To::Guest(8)]);
    assert_eq!(read(&out[0].frame)["error"]["code"], -32001);
    // A host's request is still answered by the guest's side when the host is busy.
    let guest = Guest::new();
    let busy = guest
        .busy(&frame(json!({"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s1"}})))
        .unwrap();
    assert_eq!(read(&busy)["error"]["code"], -32603);
    assert_eq!(
        guest.busy(&frame(json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}))),
        None
    );
}

#[test]
fn rule_10_a_client_attaches_once_its_initialize_was_answered_and_keeps_the_answer() {
    let mut attacher = Attacher::new("s1", Role::Observer);
    let init = frame(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}));
    attacher.from_core(&init);
    let early = frame(
        json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"x","update":{"sessionUpdate":"plan","entries":[]}}}),
    );
    assert_eq!(attacher.from_link(&early), Linked::Forward);
    let Linked::ForwardThenSend(request) =
        attacher.from_link(&frame(json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}})))
    else {
        panic!("the attach goes out after the answer to initialize")
    };
    let request = read(&request);
    assert_eq!(request["method"], ATTACH);
    assert_eq!(request["params"], json!({"sessionId":"s1","role":"observer"}));
    let answer = frame(
        json!({"jsonrpc":"2.0","id":request["id"],"result":{"sessionId":"s1","role":"observer","connectedClients":[]}}),
    );
    let Linked::Answered(Ok(answer)) = attacher.from_link(&answer) else { panic!("the answer is the attacher's") };
    assert_eq!(answer.session_id, "s1");
    // Once only: a later frame with that id is the core's business.
    let again = frame(json!({"jsonrpc":"2.0","id":request["id"],"result":{}}));
    assert_eq!(attacher.from_link(&again), Linked::Forward);
}

#[test]
fn a_permission_resolved_update_reads_back() {
    let mut hub = hub();
    join(&mut hub, 8, "s1", Role::Controller);
    let mut out = Vec::new();
    hub.from_agent(&ask(50, "s1"), &mut out);
    out.clear();
    hub.from_host(&pick(json!(50), "yes"), &mut out);
    let note: crate::types::SessionNotification =
        serde_json::from_value(read(&out[1].frame)["params"].clone()).unwrap();
    let resolved = PermissionResolved::read(&note.update).expect("a permission_resolved update");
    assert_eq!(resolved.tool_call_id.as_deref(), Some("t1"));
    assert_eq!(resolved.chosen_option_id.as_deref(), Some("yes"));
    assert_eq!(resolved.resolved_by, "host");
}
