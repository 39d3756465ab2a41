//! A two-machine harness: an agent-role and a client-role `Connection` wired back to back
//! through byte buffers, with a virtual clock and a log of every frame.
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use acp_proto::role::{Agent, Client, Role};
use acp_proto::types::*;
use acp_proto::{AgentCall, ClientCall, Config, Connection, Event, Instant, OutboundId, Outcome, Side};
use serde_json::Value;

/// The client's request an agent's event carries, with the responder that answers it.
pub fn client_call(event: Option<Event>) -> ClientCall {
    match event {
        Some(Event::Request(request)) => request.into_call().into_client().expect("a client's request"),
        other => panic!("not a request: {other:?}"),
    }
}

/// The agent's request a client's event carries, with the responder that answers it.
pub fn agent_call(event: Option<Event>) -> AgentCall {
    match event {
        Some(Event::Request(request)) => request.into_call().into_agent().expect("an agent's request"),
        other => panic!("not a request: {other:?}"),
    }
}

/// One frame that crossed the wire.
#[derive(Debug, Clone)]
pub struct Frame {
    pub at: Instant,
    pub from: Side,
    pub json: Value,
}

pub struct Pair {
    pub now: Instant,
    pub agent: Connection<Agent>,
    pub client: Connection<Client>,
    /// Every frame in the order it crossed, both directions.
    pub wire: Vec<Frame>,
    buf: Vec<u8>,
    /// Events drained early because a receiver's queue was full.
    agent_backlog: Vec<Event>,
    client_backlog: Vec<Event>,
}

impl Pair {
    pub fn new() -> Pair {
        Pair::with_configs(Config::default(), Config::default())
    }

    pub fn with_configs(agent: Config, client: Config) -> Pair {
        let now = Instant::ZERO;
        Pair {
            now,
            agent: Connection::new(agent, now),
            client: Connection::new(client, now),
            wire: Vec::new(),
            buf: Vec::new(),
            agent_backlog: Vec::new(),
            client_backlog: Vec::new(),
        }
    }

    /// Moves all queued bytes from `from` to the other side (feeding in chunks of `chunk`).
    fn transfer(&mut self, from: Side, chunk: usize) -> bool {
        let (now, wire, buf) = (self.now, &mut self.wire, &mut self.buf);
        match from {
            Side::Agent => carry(&mut self.agent, &mut self.client, &mut self.client_backlog, (now, wire, buf), chunk),
            Side::Client => carry(&mut self.client, &mut self.agent, &mut self.agent_backlog, (now, wire, buf), chunk),
        }
    }

    /// Delivers bytes both ways until nothing is queued.
    pub fn pump(&mut self) {
        self.pump_chunked(usize::MAX);
    }

    pub fn pump_chunked(&mut self, chunk: usize) {
        for _ in 0..1000 {
            let a = self.transfer(Side::Client, chunk);
            let b = self.transfer(Side::Agent, chunk);
            if !a && !b {
                return;
            }
        }
        panic!("pump did not settle");
    }

    pub fn agent_events(&mut self) -> Vec<Event> {
        let mut events = std::mem::take(&mut self.agent_backlog);
        events.extend(std::iter::from_fn(|| self.agent.poll_event()));
        events
    }

    pub fn client_events(&mut self) -> Vec<Event> {
        let mut events = std::mem::take(&mut self.client_backlog);
        events.extend(std::iter::from_fn(|| self.client.poll_event()));
        events
    }

    /// The earliest deadline of either side.
    pub fn next_timeout(&self) -> Option<Instant> {
        self.agent.poll_timeout().into_iter().chain(self.client.poll_timeout()).min()
    }

    /// Advances virtual time exactly to the earliest deadline and fires it on both sides.
    pub fn advance_to_next_timeout(&mut self) -> Instant {
        let at = self.next_timeout().expect("a deadline is armed");
        self.now = at;
        self.agent.handle_timeout(at);
        self.client.handle_timeout(at);
        at
    }

    pub fn advance(&mut self, d: Duration) {
        self.now += d;
        self.agent.handle_timeout(self.now);
        self.client.handle_timeout(self.now);
    }

    /// Runs the handshake with the given capabilities; both sides end ready.
    pub fn handshake(&mut self, client_caps: ClientCapabilities, agent_caps: AgentCapabilities) {
        let mut init = InitializeRequest::new(ProtocolVersion::V1);
        init.client_capabilities = client_caps;
        let id = self.client.send_request(self.now, init, None).unwrap();
        self.pump();
        let ClientCall::Initialize(_, responder) = client_call(self.agent.poll_event()) else {
            panic!("initialize not dispatched")
        };
        let mut resp = InitializeResponse::new(ProtocolVersion::V1);
        resp.agent_capabilities = agent_caps;
        self.agent.respond(self.now, responder.answer(Ok(resp))).unwrap();
        self.pump();
        assert!(matches!(self.agent.poll_event(), Some(Event::HandshakeCompleted(_))));
        assert!(matches!(self.client.poll_event(), Some(Event::HandshakeCompleted(_))));
        match self.client.poll_event() {
            Some(Event::Outcome { id: got, outcome: Outcome::Result(_) }) => assert_eq!(got, id),
            other => panic!("{other:?}"),
        }
        assert!(self.agent.is_ready() && self.client.is_ready());
    }

    /// Opens a session named `name` (the agent answers `session/new` with it).
    pub fn open_session(&mut self, name: &str) -> SessionId {
        let id = self.client.send_request(self.now, NewSessionRequest::new("/tmp", vec![]), None).unwrap();
        self.pump();
        let ClientCall::NewSession(_, responder) = client_call(self.agent.poll_event()) else { panic!() };
        self.agent.respond(self.now, responder.answer(Ok(NewSessionResponse::new(name)))).unwrap();
        self.pump();
        match self.client.poll_event() {
            Some(Event::Outcome { id: got, outcome: Outcome::Result(_) }) => assert_eq!(got, id),
            other => panic!("{other:?}"),
        }
        SessionId::from(name)
    }

    /// Frames sent by `from` so far, as JSON.
    pub fn frames_from(&self, from: Side) -> Vec<&Value> {
        self.wire.iter().filter(|f| f.from == from).map(|f| &f.json).collect()
    }
}

/// A text prompt.
pub fn prompt(session: &SessionId, text: &str) -> PromptRequest {
    PromptRequest::new(session.clone(), vec![ContentBlock::Text(TextContent::new(text))])
}

/// An agent message chunk update.
pub fn chunk(session: &SessionId, text: &str) -> SessionNotification {
    SessionNotification::new(
        session.clone(),
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(text)))),
    )
}

/// The outcome of `id` among `events`.
pub fn outcome_of(events: &[Event], id: OutboundId) -> Option<&Outcome> {
    events.iter().find_map(|e| match e {
        Event::Outcome { id: got, outcome } if *got == id => Some(outcome),
        _ => None,
    })
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Moves all bytes `src` has queued into `dst` (in chunks of `chunk`), logging each frame on
/// `wire`; a receiver whose queues fill has its events drained into `backlog`.
fn carry<A: Role, B: Role>(
    src: &mut Connection<A>,
    dst: &mut Connection<B>,
    backlog: &mut Vec<Event>,
    (now, wire, buf): (Instant, &mut Vec<Frame>, &mut Vec<u8>),
    chunk: usize,
) -> bool {
    buf.clear();
    let _ = src.poll_transmit(buf);
    if buf.is_empty() {
        return false;
    }
    for line in buf.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let json = serde_json::from_slice(line).expect("every frame is valid JSON");
        wire.push(Frame { at: now, from: A::SIDE, json });
    }
    let mut fed = 0;
    while fed < buf.len() {
        let end = fed.saturating_add(chunk).min(buf.len());
        let n = dst.handle_input(now, &buf[fed..end]);
        assert!(n > 0 || !dst.wants_input(), "input refused while wanted");
        if n == 0 {
            // The receiver's queues are full: drain its events as an application would.
            backlog.extend(std::iter::from_fn(|| dst.poll_event()));
            assert!(dst.wants_input(), "receiver stalled with drained events");
        }
        fed += n;
    }
    true
}
