//! An agent-role and a client-role `Connection` in one thread, wired through byte buffers: a
//! handshake, `session/new` and a prompt turn with updates, a permission ask and a cancelled
//! turn. Every frame is printed with its virtual timestamp and direction.
//!
//! ```text
//! cargo run -p acp-proto --example loopback
//! ```

use std::time::Duration;

use acp_proto::role::{Agent, Client, Role};
use acp_proto::types::*;
use acp_proto::{AgentCall, Call, ClientCall, Connection, Event, Instant, Outcome, PermissionAnswer, Response, Side};

struct Loopback {
    now: Instant,
    agent: Connection<Agent>,
    client: Connection<Client>,
    /// Bytes written by the client, not yet consumed by the agent (the pipe between them).
    to_agent: Vec<u8>,
    /// Bytes written by the agent, not yet consumed by the client.
    to_client: Vec<u8>,
}

impl Loopback {
    /// Moves queued frames both ways, printing each, until nothing moves. A side whose queues
    /// are full consumes less than it is given: the rest stays in the pipe until its events
    /// have been drained, so this never spins.
    fn pump(&mut self) {
        while self.transfer(Side::Client) | self.transfer(Side::Agent) {}
    }

    /// Whether any byte was written or consumed.
    fn transfer(&mut self, from: Side) -> bool {
        match from {
            Side::Client => carry(self.now, &mut self.client, &mut self.agent, &mut self.to_agent, "client -> agent"),
            Side::Agent => carry(self.now, &mut self.agent, &mut self.client, &mut self.to_client, "agent -> client"),
        }
    }

    fn tick(&mut self, ms: u64) {
        self.now += Duration::from_millis(ms);
    }
}

fn main() {
    let now = Instant::ZERO;
    let (agent, client) = (Connection::agent(now), Connection::client(now));
    let mut lb = Loopback { now, agent, client, to_agent: Vec::new(), to_client: Vec::new() };

    // 1. Handshake: the client advertises file reading.
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.fs.read_text_file = true;
    init.client_info = Some(Implementation::new("loopback-client", "0.1.0"));
    lb.client.send_request(lb.now, init, None).expect("initialize");
    lb.pump();
    let Some(Call::Client(ClientCall::Initialize(_, responder))) = call(lb.agent.poll_event()) else {
        unreachable!("initialize dispatched")
    };
    let mut resp = InitializeResponse::new(ProtocolVersion::V1);
    resp.agent_info = Some(Implementation::new("loopback-agent", "0.1.0"));
    lb.agent.respond(lb.now, responder.answer(Ok(resp))).expect("in flight");
    lb.tick(1);
    lb.pump();
    drain(&mut lb.agent, "agent");
    drain(&mut lb.client, "client");

    // 2. A session.
    lb.client.send_request(lb.now, NewSessionRequest::new("/tmp", vec![]), None).expect("session/new");
    lb.pump();
    let Some(Call::Client(ClientCall::NewSession(_, responder))) = call(lb.agent.poll_event()) else { unreachable!() };
    lb.agent.respond(lb.now, responder.answer(Ok(NewSessionResponse::new("sess-0")))).expect("in flight");
    lb.tick(1);
    lb.pump();
    drain(&mut lb.client, "client");
    let session = SessionId::from("sess-0");

    // 3. A prompt turn: updates, a tool call, a permission ask, then end_turn.
    let text = ContentBlock::Text(TextContent::new("read /etc/hostname"));
    let prompt = lb.client.send_request(lb.now, PromptRequest::new(session.clone(), vec![text]), None);
    let prompt = prompt.expect("session/prompt");
    lb.pump();
    let Some(Call::Client(ClientCall::Prompt(_, turn))) = call(lb.agent.poll_event()) else { unreachable!() };
    let say = |s: &str| SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(s))));
    for update in [say("Reading the file. "), SessionUpdate::ToolCall(ToolCall::new("call-1", "Read /etc/hostname"))] {
        lb.agent.send_notification(lb.now, SessionNotification::new(session.clone(), update)).expect("update");
    }
    let options = vec![
        PermissionOption::new("allow", "Allow once", PermissionOptionKind::AllowOnce),
        PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
    ];
    let ask = RequestPermissionRequest::new(session.clone(), ToolCallUpdate::new("call-1"), options);
    let ask = lb.agent.send_request(lb.now, ask, None).expect("permission");
    lb.tick(2);
    lb.pump();
    while let Some(event) = lb.client.poll_event() {
        match event {
            Event::Notification { turn: Some(stamp), .. } => {
                println!("           client: update #{} of {}", stamp.ordinal, stamp.turn)
            }
            Event::Request(request) => {
                let Call::Agent(AgentCall::RequestPermission(_, responder)) = request.into_call() else {
                    unreachable!()
                };
                println!("           client: the user allows the tool call");
                let allow = PermissionAnswer::Selected("allow".into());
                lb.client.answer_permission(lb.now, responder, allow).expect("offered");
            }
            other => println!("           client: {other:?}"),
        }
    }
    lb.tick(3);
    lb.pump();
    while let Some(event) = lb.agent.poll_event() {
        if let Event::Outcome { id, outcome: Outcome::Result(_) } = event {
            assert_eq!(id, ask);
            println!("           agent: permission granted");
        }
    }
    lb.agent.send_notification(lb.now, SessionNotification::new(session.clone(), say("Done."))).expect("update");
    lb.agent.respond(lb.now, turn.answer(Ok(PromptResponse::new(StopReason::EndTurn)))).expect("in flight");
    lb.tick(1);
    lb.pump();
    report_turn(&mut lb.client, prompt);

    // 4. A turn the user cancels: the agent's handler answers end_turn, the machine says cancelled.
    let text = ContentBlock::Text(TextContent::new("slow"));
    let prompt = lb.client.send_request(lb.now, PromptRequest::new(session.clone(), vec![text]), None).expect("prompt");
    lb.pump();
    let Some(Call::Client(ClientCall::Prompt(_, turn))) = call(lb.agent.poll_event()) else { unreachable!() };
    lb.tick(100);
    lb.client.cancel_turn(lb.now, &session).expect("cancel");
    lb.pump();
    drain(&mut lb.agent, "agent");
    lb.tick(5);
    lb.agent.respond(lb.now, turn.answer(Ok(PromptResponse::new(StopReason::EndTurn)))).expect("in flight");
    lb.pump();
    report_turn(&mut lb.client, prompt);
}

/// The request an event carries, with the responder that answers it.
fn call(event: Option<Event>) -> Option<Call> {
    match event {
        Some(Event::Request(request)) => Some(request.into_call()),
        _ => None,
    }
}

/// Moves `src`'s queued frames into `pipe`, printing each, and feeds `dst` what it takes.
fn carry<A: Role, B: Role>(
    now: Instant,
    src: &mut Connection<A>,
    dst: &mut Connection<B>,
    pipe: &mut Vec<u8>,
    arrow: &str,
) -> bool {
    let start = pipe.len();
    let written = src.poll_transmit(pipe);
    for line in pipe[start..].split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        println!("{now} {arrow}  {}", String::from_utf8_lossy(line));
    }
    let consumed = dst.handle_input(now, pipe);
    pipe.drain(..consumed);
    written > 0 || consumed > 0
}

fn drain<R: Role>(conn: &mut Connection<R>, name: &str) {
    while let Some(event) = conn.poll_event() {
        match event {
            Event::HandshakeCompleted(n) => {
                println!("           {name}: handshake done, peer capabilities {}", n.peer.json())
            }
            Event::Outcome { id, outcome: Outcome::Result(_) } => println!("           {name}: {id} answered"),
            Event::Cancelled { id, reason } => println!("           {name}: {id} cancelled ({reason:?})"),
            other => println!("           {name}: {other:?}"),
        }
    }
}

fn report_turn(client: &mut Connection<Client>, prompt: acp_proto::OutboundId) {
    while let Some(event) = client.poll_event() {
        match event {
            Event::Notification { turn: Some(stamp), .. } => {
                println!("           client: update #{} of {}", stamp.ordinal, stamp.turn)
            }
            Event::Outcome { id, outcome: Outcome::Result(Response::Agent(acp_proto::AgentResponse::Prompt(r))) }
                if id == prompt =>
            {
                println!("           client: turn {id} ended: {}", r.stop_reason)
            }
            other => println!("           client: {other:?}"),
        }
    }
}
