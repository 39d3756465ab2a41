//! A deterministic simulation of both peers.
//!
//! [`Sim`] wires an agent-side and a client-side [`Connection`](acp_proto::Connection) through two byte pipes, with a
//! virtual clock and a [`Chooser`] that makes every nondeterministic decision. Each step picks
//! one enabled action:
//!
//! * deliver 1..=k bytes of a pipe (any chunking: splits inside frames and UTF-8 characters);
//! * complete any ready handler of either application (completions are reordered), with a
//!   result, an error, or a "panic" turned into `-32603`;
//! * start a request or notification (prompts, permission asks, fs and terminal requests,
//!   extension calls, `session/new`, updates, form and URL elicitations, `elicitation/complete`,
//!   and with the `unstable` feature every unstable client → agent request of the table, see
//!   `unstable`) with a random deadline;
//! * cancel (`session/cancel`, a local cancel that sends `$/cancel_request`);
//! * advance time to the earliest deadline or handler ready time, only when no byte is
//!   deliverable;
//! * stall or resume the reader of a pipe (its writer then stops taking output once the pipe
//!   holds [`SimConfig::pipe_capacity`] bytes);
//! * inject a fault: a garbage line, an oversize line, a copy of a request still in flight
//!   (duplicate id), a raw request with a string id, or EOF on one side.
//!
//! With feature `unstable_protocol_v2`, [`SimConfig::protocol`] runs ACP v2 sessions or the
//! mixed negotiation (a v1 client, an agent speaking both through an `Acceptor`); the v2 applications and their
//! invariants are described in the `v2` module.
//!
//! After every step both machines are drained (a bounded loop) and the invariants are checked
//! (see [`invariants`](self#invariants)); the applications compare every outcome with a
//! reference model of what it should be.
//!
//! # Invariants
//! 1. Exactly one outcome per outbound request, and it is the one the model predicts (the
//!    peer application's reply, `cancelled` after a `session/cancel`, `-32800` after a
//!    `$/cancel_request` grace, `TimedOut` exactly at its deadline, `Cancelled` only after a
//!    local cancel or the agent's cascade, `ConnectionClosed` only on close or after the end
//!    of input, `-32800` also for a request its receiver read before the end of its input).
//! 2. Per request id, never more responses than requests read; once settled, exactly one
//!    response per request read, except duplicates dropped and requests cut off by a close
//!    (never by the end of input: invariant 12).
//! 3. Every frame on both pipes is valid NDJSON and a valid JSON-RPC 2.0 message.
//! 4. Every `session/update` of a turn precedes its prompt response: the client sees all of
//!    the turn's updates, stamped with the turn and ordinals 0, 1, 2…, before its outcome.
//! 5. No `session/update` for a session the agent has not announced.
//! 6. No `fs/*` or `terminal/*` request to a client that did not advertise it (and sends
//!    refused locally are refused exactly when the capability is missing). The same for the
//!    opt-ins of the newest schema: the client advertises each of `plan`, `subagents`,
//!    `session.notices`, `session.compaction`, `elicitation.form`, `elicitation.url` at random;
//!    an opt-in update kind, an `elicitation/create` of a mode or an `elicitation/complete` is
//!    refused locally (and comes back untouched) exactly when its capability is missing, and
//!    the client never receives one it did not advertise (the table is the simulation's own,
//!    in `opt_in`). Every elicitation the client application answers (accept, decline or
//!    cancel at random) gets exactly one outcome at the agent, the answer given (invariant 1).
//!    The same for the unstable requests (feature `unstable`): the agent advertises each row's
//!    gate at random, the client's send is accepted exactly when it did, and the agent never
//!    receives one it did not advertise.
//! 7. After `session/cancel` reaches a running turn, the turn ends `cancelled`.
//! 8. No event after `Closed`; `Closed` at most once.
//! 9. After `handle_timeout(now)` and a drain, `poll_timeout()` is `None` or later than `now`.
//! 10. Each machine's memory estimate stays under a fixed bound.
//! 11. Queued output stays within the output bound: the applications send and answer only
//!     while `can_send()` (as the adapters do) and the readers of both pipes stall at random,
//!     so outputs fill often; each machine's queue never exceeds twice (the bound + one frame)
//!     (the application's share and the machine's own answers) plus one small frame per
//!     request in flight, and after the readers resume everything is answered (settling).
//! 13. The core's two readers of the wire agree: each peer's [`acp_proto::observer::Observer`]
//!     (fed both directions of its wire) has open exactly the requests its wire checker has,
//!     and (v1) its turns wait on exactly the prompts open (see `wire`).
//! 12. End of input is a half-close: every inbound request a machine read before the end of
//!     its input gets exactly one response (the machine's pipes never report a failed write
//!     to it, so the exception, an output that failed, never applies here). The runs close a
//!     peer's output at random while it still reads (a fault), so the other side answers
//!     into a pipe that is read; the check is made on what each machine emits.

mod actions;
mod agent_app;
pub mod chooser;
mod client_app;
mod opt_in;
mod protocol;
mod stepping;
pub(crate) mod unstable;
#[cfg(feature = "unstable_protocol_v2")]
mod v2;
#[cfg(feature = "unstable_protocol_v2")]
mod v2_agent;
#[cfg(feature = "unstable_protocol_v2")]
mod v2_client;
#[cfg(feature = "unstable_protocol_v2")]
mod v2_elicit;
#[cfg(feature = "unstable_protocol_v2")]
mod v2_lifecycle;
mod wire;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use crate::link::{Event, Link};
use acp_proto::types::ProtocolVersion;
use acp_proto::{CloseReason, Config, InboundId, Instant, Method, OutboundId, Side};
use serde_json::Value;

pub use chooser::{Bytes, Chooser, Seeded};
pub use opt_in::OptInCounts;
use protocol::protocol_of;
pub use protocol::{Protocol, V2Counts};
pub use unstable::UnstableCounts;
use wire::WireCheck;

/// Knobs of a run.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Steps before the run settles.
    pub steps: usize,
    /// Frame limit of both machines (small, so oversize faults are cheap).
    pub max_frame_len: usize,
    /// Bound on each machine's memory estimate.
    pub memory_bound: usize,
    /// Bytes a pipe holds before the writing side stops taking its machine's output (an
    /// adapter writes one batch at a time into a full pipe and waits).
    pub pipe_capacity: usize,
    /// The ACP versions the peers speak.
    pub protocol: Protocol,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            steps: 200,
            max_frame_len: 8 * 1024,
            memory_bound: 4 << 20,
            pipe_capacity: 512,
            protocol: Protocol::V1,
        }
    }
}

/// What a finished run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// The most output bytes either machine held queued after a step.
    pub peak_queued: usize,
    /// Times either machine deferred new work because its output was full.
    pub output_pauses: u64,
    /// Requests a machine had read and not yet answered when its input ended: each then owed
    /// its one answer (invariant 12).
    pub owed_at_eof: u64,
    /// Frames either machine parked while its own answers filled its output.
    pub input_parked: u64,
    /// Steps taken.
    pub steps: usize,
    /// Frames emitted by both sides.
    pub frames: u64,
    /// Outcomes checked against the model.
    pub outcomes: u64,
    /// Invariant checks run.
    pub checks: u64,
    /// Cross-checks of the observer against the wire checkers (both peers; see `wire`).
    pub observer_checks: u64,
    /// A hash of the trace, for the determinism test.
    pub trace_hash: u64,
    /// The opt-in content of the newest schema exercised (updates, elicitations).
    pub opt_in: OptInCounts,
    /// The unstable methods exercised (feature `unstable`; see `unstable`).
    pub unstable: UnstableCounts,
    /// The v2 sessions exercised (feature `unstable_protocol_v2`; see `v2`).
    pub v2: V2Counts,
}

/// Each machine's output bound (`Config::outbound_budget`): small, so that stalled readers fill
/// it often.
const OUTPUT_BOUND: usize = 2048;

/// Padding of the big `fs/read_text_file` answers of the client application.
const BIG_ANSWER: usize = 3000;

/// A byte pipe from one process to the other.
#[derive(Debug, Default)]
struct Pipe {
    bytes: VecDeque<u8>,
    /// The writer closed its end: after the bytes, the reader sees EOF.
    writer_closed: bool,
    eof_delivered: bool,
}

/// A request the application will answer when its handler is ready.
#[derive(Debug, Clone)]
struct Pending {
    id: InboundId,
    label: Option<u64>,
    method: Option<Method>,
    request: Req,
    ready_at: Instant,
    cancelled: bool,
}

/// A request an application received: v1, or v2 (on a connection that negotiated it).
#[derive(Debug, Clone)]
enum Req {
    V1(acp_proto::Request),
    #[cfg(feature = "unstable_protocol_v2")]
    V2(acp_proto::v2::Request),
}

impl Req {
    /// The v1 request, if this is one.
    fn v1(&self) -> Option<&acp_proto::Request> {
        match self {
            Req::V1(r) => Some(r),
            #[cfg(feature = "unstable_protocol_v2")]
            Req::V2(_) => None,
        }
    }
}

/// A request the application sent and awaits.
#[derive(Debug, Clone)]
struct Out {
    label: u64,
    method: Option<Method>,
    deadline: Option<Instant>,
    session: Option<String>,
    locally_cancelled: bool,
}

/// One side: its machine, its application model and its wire checker.
#[derive(Debug)]
struct Peer {
    conn: Link,
    wire: WireCheck,
    closed: bool,
    handlers: Vec<Pending>,
    outstanding: BTreeMap<OutboundId, Out>,
    /// Client: sessions it knows; agent: sessions it announced.
    sessions: Vec<String>,
    /// The peer's advertised capabilities after the handshake.
    peer_caps: Option<Value>,
    /// Bytes the application queued (sends and answers) since its output was last taken.
    app_queued: usize,
    /// Its input ended while it was open: it owes an answer to every request it read
    /// (invariant 12), unless the last line closed it (an unsupported protocol version).
    /// The simulation's own record, not the machine's.
    eof_while_open: bool,
    /// Why it closed, once it did.
    close_reason: Option<CloseReason>,
}

impl Peer {
    fn new(side: Side, config: &SimConfig, now: Instant) -> Peer {
        let (client_versions, agent_versions) = config.protocol.versions();
        let versions = if side == Side::Client { client_versions } else { agent_versions };
        let c = Config::default()
            .with_max_frame_len(config.max_frame_len)
            .with_max_inbound(16)
            .with_max_pending_outbound(32)
            .with_outbound_budget(OUTPUT_BOUND)
            .with_max_events(64)
            .with_max_held_bytes(16 * 1024)
            .with_cancel_grace(Duration::from_millis(300))
            .with_turn_cancel_grace(Duration::from_millis(400));
        let name = match side {
            Side::Agent => "agent",
            Side::Client => "client",
        };
        let wire = WireCheck::new(name, config.max_frame_len);
        Peer {
            conn: Link::new(side, c, &versions, now),
            wire,
            closed: false,
            handlers: Vec::new(),
            outstanding: BTreeMap::new(),
            sessions: Vec::new(),
            peer_caps: None,
            app_queued: 0,
            eof_while_open: false,
            close_reason: None,
        }
    }

    /// Counts what an application call queued (`before`: the bytes queued before it).
    fn note_app_output(&mut self, before: usize) {
        self.app_queued += self.conn.bytes_queued().saturating_sub(before);
    }
}

/// The reference model: what each request's receiving application decided, keyed by label.
#[derive(Debug, Default)]
struct Model {
    /// The reply the receiving application completed with: a result (with the prompt's stop
    /// reason, if any) or an error code.
    replies: BTreeMap<u64, Vec<Result<Option<String>, i64>>>,
    /// Labels the receiving application saw dispatched.
    dispatched: BTreeSet<u64>,
    /// Labels whose receiver got `$/cancel_request`.
    cancel_requested: BTreeSet<u64>,
    /// Prompt labels whose agent got `session/cancel` while the turn ran.
    session_cancelled: BTreeSet<u64>,
    /// Agent: updates sent for each turn (by prompt label) while its handler ran.
    turn_updates: BTreeMap<u64, u64>,
    /// Client: updates received stamped into each turn (by prompt label).
    turn_received: BTreeMap<u64, u64>,
    /// Labels of requests whose frame the duplicate-id fault copied (a copy may be dispatched
    /// while the original was refused, or the other way round).
    duplicated: BTreeSet<u64>,
}

/// The simulation. See the [module docs](self).
pub struct Sim<'t, C: Chooser> {
    c: C,
    config: SimConfig,
    now: Instant,
    agent: Peer,
    client: Peer,
    /// `pipes[0]`: client → agent; `pipes[1]`: agent → client.
    pipes: [Pipe; 2],
    /// The reader of each pipe has stopped reading for a while (a stalled peer).
    stalled: [bool; 2],
    model: Model,
    next_label: u64,
    /// Recent request frames of the client (prompts excepted), for duplicate-id faults.
    recent_requests: VecDeque<Vec<u8>>,
    /// Client: the open prompt turn per session.
    client_turns: BTreeMap<String, client_app::OpenTurn>,
    /// Client: prompt labels whose turn ended without an answer (timed out, cancelled).
    client_abandoned: BTreeSet<u64>,
    /// Agent: the running turn per session.
    agent_turns: BTreeMap<String, agent_app::AgentTurn>,
    /// Agent: sessions that received a `session/cancel` for a running turn.
    agent_cancelled_sessions: BTreeSet<String>,
    /// Client: sessions whose turn the client application cancelled.
    client_cancelled_sessions: BTreeSet<String>,
    /// The v2 applications' state (see `v2`).
    #[cfg(feature = "unstable_protocol_v2")]
    v2: v2::V2Sim,
    trace: &'t mut Vec<String>,
    summary: Summary,
}

/// Extracts the label the simulation embeds in request params (`r<N>` in a text field).
pub(crate) fn label_of(params: &Value) -> Option<u64> {
    let candidates = [
        &params["cwd"],
        &params["prompt"][0]["text"],
        &params["toolCall"]["toolCallId"],
        &params["path"],
        &params["command"],
        &params["terminalId"],
        &params["label"],
        &params["message"],
        &params["_meta"]["label"],
    ];
    candidates.iter().find_map(|v| match v {
        Value::String(s) => s.trim_start_matches('/').strip_prefix('r')?.parse().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    })
}

impl<'t, C: Chooser> Sim<'t, C> {
    /// A simulation drawing its decisions from `chooser` and logging to `trace`.
    pub fn new(chooser: C, config: SimConfig, trace: &'t mut Vec<String>) -> Self {
        let now = Instant::ZERO;
        Sim {
            agent: Peer::new(Side::Agent, &config, now),
            client: Peer::new(Side::Client, &config, now),
            c: chooser,
            config,
            now,
            pipes: [Pipe::default(), Pipe::default()],
            stalled: [false, false],
            model: Model::default(),
            next_label: 1,
            recent_requests: VecDeque::new(),
            client_turns: BTreeMap::new(),
            client_abandoned: BTreeSet::new(),
            agent_turns: BTreeMap::new(),
            agent_cancelled_sessions: BTreeSet::new(),
            client_cancelled_sessions: BTreeSet::new(),
            #[cfg(feature = "unstable_protocol_v2")]
            v2: v2::V2Sim::default(),
            trace,
            summary: Summary::default(),
        }
    }

    fn log(&mut self, line: String) {
        self.trace.push(format!("{} {line}", self.now));
    }

    /// Whether the connection negotiated v2 (the client's view: its handshake completed so).
    fn speaks_v2(&self, side: Side) -> bool {
        let peer = if side == Side::Client { &self.client } else { &self.agent };
        peer.conn.negotiated().is_some_and(|n| n.protocol_version != ProtocolVersion::V1)
    }

    fn label(&mut self) -> u64 {
        self.next_label += 1;
        self.next_label
    }

    fn peer(&mut self, side: Side) -> &mut Peer {
        match side {
            Side::Agent => &mut self.agent,
            Side::Client => &mut self.client,
        }
    }

    /// Runs the configured number of steps, then settles (delivers everything, completes every
    /// handler, fires every deadline) and checks the final accounting. Panics on a violation.
    pub fn run(mut self) -> Summary {
        self.client_start_handshake();
        self.drain();
        while self.summary.steps < self.config.steps && !self.c.exhausted() {
            self.step();
            self.summary.steps += 1;
        }
        self.settle();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for line in self.trace.iter() {
            for b in line.bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
            }
        }
        self.summary.trace_hash = h;
        self.summary.frames = self.agent.wire.frames_emitted + self.client.wire.frames_emitted;
        self.summary.observer_checks = self.agent.wire.observer_checks + self.client.wire.observer_checks;
        self.summary.output_pauses = self.agent.conn.stats().output_pauses + self.client.conn.stats().output_pauses;
        self.summary.input_parked = self.agent.conn.stats().input_parked + self.client.conn.stats().input_parked;
        self.summary.clone()
    }
}

/// A one-line description of an event for the trace.
// Without v2, the arms cover every event: the catch-all is for the v2 ones.
#[cfg_attr(not(feature = "unstable_protocol_v2"), allow(unreachable_patterns))]
fn short(e: &Event) -> String {
    match e {
        Event::Request { id, request } => format!("request {id} {}", request.wire()),
        Event::Notification { notification, turn } => format!("notification {} {turn:?}", notification.wire()),
        Event::Cancelled { id, reason } => format!("cancelled {id} {reason:?}"),
        Event::Outcome { id, outcome } => {
            // The first 60 characters (not bytes: a generated result may hold any text).
            let o: String = format!("{outcome:?}").chars().take(60).collect();
            format!("outcome {id} {o}")
        }
        Event::HandshakeCompleted(_) => "handshake".into(),
        Event::Closed { reason } => format!("closed {reason:?}"),
        other => format!("{other:?}"),
    }
}

/// Runs one seed for `steps` steps; returns the summary, or the panic message and the trace.
pub fn run_seed(seed: u64, config: SimConfig) -> Result<Summary, (String, Vec<String>)> {
    let mut trace = Vec::new();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Sim::new(Seeded::new(seed), config, &mut trace).run()
    }));
    result.map_err(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        (msg, trace)
    })
}

/// Runs the simulation with decisions read from `data` (the fuzz target). Panics on a violation.
/// With feature `unstable_protocol_v2`, a first byte `0xF2` runs `Protocol::V2` and `0xF1`
/// `Protocol::Mixed` on the rest (any other input runs v1, as without the feature).
pub fn run_bytes(data: &[u8]) -> Summary {
    let (protocol, data) = protocol_of(data);
    let mut trace = Vec::new();
    let config = SimConfig { steps: 400, protocol, ..SimConfig::default() };
    Sim::new(Bytes::new(data), config, &mut trace).run()
}
