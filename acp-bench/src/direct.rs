//! `core-direct`: an agent-role and a client-role [`Connection`] in one thread, wired buffer to
//! buffer, the agent's handlers answered inline. No runtime, no thread, no syscall: the cost of
//! the protocol machine alone (framing, decode, the rules, encode), with the same messages,
//! counts and completion rule as the other configurations.

use std::collections::HashMap;
use std::time::Instant as StdInstant;

use acp_proto::methods::{AgentNotification, AgentResponse, ClientRequest};
use acp_proto::role::{Agent, Client};
use acp_proto::types::*;
use acp_proto::{Answer, Call, ClientCall, Connection, Event, Instant, Notification, OutboundId, Outcome, Response};

use crate::metrics::Metric;
use crate::spec::{Measured, Spec, Workload, check_prompt, metrics};
use crate::wire::{chunk_update, expected_stop, is_chunk_notification, session_name};

/// Queued bytes the agent hands to the client at once while a prompt streams (an adapter's
/// write batch); keeps the working set in cache as a real pipe would.
const BATCH: usize = 64 * 1024;

/// Two connected machines and the client's bookkeeping.
pub struct Direct {
    now: Instant,
    /// The agent-role machine.
    pub agent: Connection<Agent>,
    /// The client-role machine.
    pub client: Connection<Client>,
    /// Bytes in flight client → agent and agent → client (reused).
    c2a: Vec<u8>,
    a2c: Vec<u8>,
    /// Agent: updates per prompt and sessions created.
    updates: u64,
    sessions_created: u64,
    /// Client: chunk updates counted per session index, and the session of each open prompt.
    pub counts: Vec<u64>,
    session_index: HashMap<SessionId, usize>,
    open: HashMap<OutboundId, usize>,
    /// Client: outcomes not yet looked at.
    outcomes: Vec<(OutboundId, Outcome)>,
}

impl Direct {
    /// Two fresh machines; the agent streams `updates` per prompt.
    pub fn new(updates: u64) -> Direct {
        let now = Instant::ZERO;
        Direct {
            now,
            agent: Connection::agent(now),
            client: Connection::client(now),
            c2a: Vec::with_capacity(64 * 1024),
            a2c: Vec::with_capacity(64 * 1024),
            updates,
            sessions_created: 0,
            counts: Vec::new(),
            session_index: HashMap::new(),
            open: HashMap::new(),
            outcomes: Vec::new(),
        }
    }

    /// Client sends a request, then everything moves until its outcome arrives.
    fn call(&mut self, request: impl Into<ClientRequest>) -> Result<Response, String> {
        let id = self.client.send_request(self.now, request, None).map_err(|e| e.to_string())?;
        loop {
            self.step();
            if let Some(pos) = self.outcomes.iter().position(|(o, _)| *o == id) {
                let (_, outcome) = self.outcomes.remove(pos);
                return outcome.into_result().ok_or_else(|| "a request failed".to_owned());
            }
        }
    }

    /// The untimed part: `initialize` and `sessions` × `session/new`. Returns the sessions.
    pub fn handshake(&mut self, sessions: u64) -> Result<Vec<SessionId>, String> {
        self.call(InitializeRequest::new(ProtocolVersion::V1))?;
        let mut ids = Vec::new();
        for _ in 0..sessions {
            match self.call(NewSessionRequest::new("/tmp", vec![]))? {
                Response::Agent(AgentResponse::NewSession(r)) => {
                    self.session_index.insert(r.session_id.clone(), ids.len());
                    self.counts.push(0);
                    ids.push(r.session_id);
                }
                _ => return Err("unexpected session/new result".into()),
            }
        }
        Ok(ids)
    }

    /// Client: issues a prompt on session `index`.
    pub fn send_prompt(&mut self, session: &SessionId) -> Result<OutboundId, String> {
        let request = PromptRequest::new(session.clone(), vec![ContentBlock::text("bench")]);
        let id = self.client.send_request(self.now, request, None).map_err(|e| e.to_string())?;
        self.open.insert(id, self.session_index[session]);
        Ok(id)
    }

    /// One round: client → agent, the agent's events, agent → client, the client's events.
    pub fn step(&mut self) {
        self.c2a.clear();
        let _ = self.client.poll_transmit(&mut self.c2a);
        let wire = std::mem::take(&mut self.c2a);
        let mut fed = 0;
        while fed < wire.len() {
            fed += self.agent.handle_input(self.now, &wire[fed..]);
            self.agent_events();
        }
        self.c2a = wire;
        self.agent_events();
        self.agent_to_client();
    }

    /// Moves the agent's queued frames to the client and drains the client's events.
    fn agent_to_client(&mut self) {
        self.a2c.clear();
        let _ = self.agent.poll_transmit(&mut self.a2c);
        let wire = std::mem::take(&mut self.a2c);
        let mut fed = 0;
        while fed < wire.len() {
            fed += self.client.handle_input(self.now, &wire[fed..]);
            self.client_events();
        }
        self.a2c = wire;
        self.client_events();
    }

    fn client_events(&mut self) {
        while let Some(event) = self.client.poll_event() {
            match event {
                Event::Notification {
                    notification: Notification::Agent(AgentNotification::SessionUpdate(n)), ..
                } => {
                    if is_chunk_notification(&n)
                        && let Some(&i) = self.session_index.get(&n.session_id)
                    {
                        self.counts[i] += 1;
                    }
                }
                Event::Outcome { id, outcome } => self.outcomes.push((id, outcome)),
                _ => {}
            }
        }
    }

    /// The agent's handlers, answered inline.
    fn agent_events(&mut self) {
        while let Some(event) = self.agent.poll_event() {
            let Event::Request(request) = event else { continue };
            let answer = match request.into_call() {
                Call::Client(ClientCall::Initialize(_, responder)) => {
                    responder.answer(Ok(InitializeResponse::new(ProtocolVersion::V1)))
                }
                Call::Client(ClientCall::NewSession(_, responder)) => {
                    let n = self.sessions_created;
                    self.sessions_created += 1;
                    responder.answer(Ok(NewSessionResponse::new(session_name(n))))
                }
                Call::Client(ClientCall::Prompt(p, responder)) => {
                    for _ in 0..self.updates {
                        if self.agent.bytes_queued() >= BATCH || !self.agent.can_send() {
                            // Hand a batch to the peer, as an adapter writes one to its pipe.
                            self.agent_to_client();
                        }
                        let update = SessionNotification::new(p.session_id.clone(), chunk_update());
                        if let Err(e) = self.agent.send_notification(self.now, update) {
                            panic!("core-direct: the agent's update was refused: {e}");
                        }
                    }
                    responder.answer(Ok(PromptResponse::new(StopReason::EndTurn)))
                }
                other => Answer::error(other.id(), acp_proto::RpcError::method_not_found(other.wire())),
            };
            let _ = self.agent.respond(self.now, answer);
        }
    }

    /// Takes the outcome of prompt `id` if it arrived; checks its stop reason.
    fn take_prompt_outcome(&mut self, id: OutboundId) -> Option<Result<usize, String>> {
        let pos = self.outcomes.iter().position(|(o, _)| *o == id)?;
        let (id, outcome) = self.outcomes.swap_remove(pos);
        Some(self.finish_prompt(id, outcome))
    }

    /// The session index of a finished prompt, once its stop reason is checked.
    fn finish_prompt(&mut self, id: OutboundId, outcome: Outcome) -> Result<usize, String> {
        let session = self.open.remove(&id).ok_or("an outcome for no open prompt")?;
        match outcome {
            Outcome::Result(Response::Agent(AgentResponse::Prompt(r))) if r.stop_reason == expected_stop() => {
                Ok(session)
            }
            other => Err(format!("prompt outcome {other:?}")),
        }
    }
}

/// Runs the workload in one thread.
pub fn run(spec: Spec) -> Result<Measured, String> {
    let mut d = Direct::new(spec.updates);
    let sessions = d.handshake(spec.sessions)?;
    let mut measured = Measured::default();
    match spec.workload {
        Workload::W1 | Workload::W2 => {
            let t0 = StdInstant::now();
            for k in 1..=spec.prompts {
                let start = StdInstant::now();
                let id = d.send_prompt(&sessions[0])?;
                let done = loop {
                    d.step();
                    if let Some(done) = d.take_prompt_outcome(id) {
                        break done;
                    }
                };
                done?;
                if spec.workload == Workload::W2 {
                    measured.samples.push(start.elapsed());
                }
                check_prompt(&spec, 0, k, d.counts[0])?;
            }
            measured.elapsed = t0.elapsed();
        }
        Workload::W3 => {
            let t0 = StdInstant::now();
            let mut issued = vec![1u64; sessions.len()];
            for s in &sessions {
                d.send_prompt(s)?;
            }
            let mut running = sessions.len();
            while running > 0 {
                d.step();
                for (id, outcome) in std::mem::take(&mut d.outcomes) {
                    let i = d.finish_prompt(id, outcome)?;
                    check_prompt(&spec, i, issued[i], d.counts[i])?;
                    if issued[i] < spec.prompts {
                        issued[i] += 1;
                        d.send_prompt(&sessions[i])?;
                    } else {
                        running -= 1;
                    }
                }
            }
            measured.elapsed = t0.elapsed();
        }
    }
    measured.updates = d.counts.iter().sum();
    Ok(measured)
}

/// `core-direct` metrics.
pub fn client(spec: Spec) -> Result<Vec<Metric>, String> {
    let measured = run(spec)?;
    metrics(&spec, &measured)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_validates_at_small_sizes() {
        for (workload, updates, prompts, sessions) in
            [(Workload::W1, 5000, 1, 1), (Workload::W2, 0, 50, 1), (Workload::W3, 10, 5, 8)]
        {
            let spec = Spec { workload, updates, prompts, sessions };
            let m = client(spec).unwrap();
            assert!(!m.is_empty());
        }
    }
}
