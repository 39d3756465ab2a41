//! Which ACP versions the simulated peers speak, and what the v2 runs did (the v2 applications
//! are in `v2` and `v2_agent`, feature `unstable_protocol_v2`).

use acp_proto::types::ProtocolVersion;

/// The ACP versions the two peers speak (v2 needs the feature `unstable_protocol_v2`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Protocol {
    /// Both peers speak v1 only.
    #[default]
    V1,
    /// The client offers v2 (a `Connection<Client, V2>`), the agent speaks v1 and v2 (an `Acceptor`,
    /// which picks v2 from the client's `initialize`): the session runs v2.
    #[cfg(feature = "unstable_protocol_v2")]
    V2,
    /// The client offers v1 (a `Connection<Client, V1>`), the agent speaks v1 and v2 (an `Acceptor`,
    /// which picks v1): the session runs v1, through the agent's acceptor.
    ///
    /// (Before the typed `Connection<P>`, this was a client speaking both that offered v2 to
    /// a v1-only agent and fell back to v1; a typed client speaks one version, so that
    /// fallback is no longer reachable through the API: acp-proto's unit test
    /// `negotiation_v2_client_with_v1_only_agent` keeps the engine's.)
    #[cfg(feature = "unstable_protocol_v2")]
    Mixed,
}

impl Protocol {
    /// The versions the client and the agent speak (see `Link::new`).
    pub(super) fn versions(self) -> (Vec<ProtocolVersion>, Vec<ProtocolVersion>) {
        match self {
            Protocol::V1 => (vec![ProtocolVersion::V1], vec![ProtocolVersion::V1]),
            #[cfg(feature = "unstable_protocol_v2")]
            Protocol::V2 => {
                (vec![ProtocolVersion::V1, ProtocolVersion::V2], vec![ProtocolVersion::V1, ProtocolVersion::V2])
            }
            #[cfg(feature = "unstable_protocol_v2")]
            Protocol::Mixed => (vec![ProtocolVersion::V1], vec![ProtocolVersion::V1, ProtocolVersion::V2]),
        }
    }
}

/// What the v2 runs did (feature `unstable_protocol_v2`; all zero otherwise).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct V2Counts {
    /// Handshakes that negotiated v2.
    pub negotiated_v2: u64,
    /// v1 `initialize` offers an agent speaking both accepted as v1 (the mixed runs).
    pub accepted_v1: u64,
    /// Prompts the client saw acknowledged.
    pub prompts_acknowledged: u64,
    /// Prompts that joined a turn already open.
    pub prompts_joined: u64,
    /// Client turns opened.
    pub turns_opened: u64,
    /// Client turns ended by an idle `state_update`, by failed prompts, by the connection's
    /// close, by a successful `session/close` / `session/delete`.
    pub turns_ended: [u64; 4],
    /// Updates the client received stamped into a turn.
    pub updates_stamped: u64,
    /// Updates the client received outside any turn.
    pub updates_unstamped: u64,
    /// Idle updates the agent's machine sent itself (cancel grace), as the client saw them.
    pub machine_idles: u64,
    /// The agent application told of its machine's grace idles (`Event::CancelGraceExpired`).
    pub grace_ends: u64,
    /// `session/cancel` sent by the client and received by the agent.
    pub session_cancels: [u64; 2],
    /// Permission asks the agent sent, and those resolved `Cancelled` (cascade).
    pub asks: [u64; 2],
    /// Tool call upserts the agent sent (with `capabilities.cancel`, without).
    pub tool_upserts: [u64; 2],
    /// `tool_call/cancel` accepted and refused (`NotCancellable`) by the client's machine.
    pub tool_cancels: [u64; 2],
    /// Terminal upserts the agent sent (with `capabilities.cancel`, without).
    pub terminal_upserts: [u64; 2],
    /// `terminal/cancel` accepted and refused (`NotCancellable`) by the client's machine.
    pub terminal_cancels: [u64; 2],
    /// `session/resume` answered: resumed (a session the agent knows), refused (`-32002`); and
    /// the history updates the agent replayed before its answers.
    pub resumes: [u64; 3],
    /// `session/close` and `session/delete` answered successfully, as the client saw them.
    pub closes: [u64; 2],
    /// Auth: `auth/login` and `auth/logout` answered successfully; sends refused by the gate
    /// (no `authMethods`, or before the handshake); `session/new` refused `-32000` before a login.
    pub auth: [u64; 4],
    /// Elicitations: form and URL ones sent; refused by the client's gate; answered by the
    /// client; cancelled by the agent (`$/cancel_request` when their session's work was
    /// cancelled or closed); `elicitation/complete` received.
    pub elicitations: [u64; 6],
}

impl V2Counts {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &V2Counts) {
        let pairs = |a: &mut [u64], b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        self.negotiated_v2 += o.negotiated_v2;
        self.accepted_v1 += o.accepted_v1;
        self.prompts_acknowledged += o.prompts_acknowledged;
        self.prompts_joined += o.prompts_joined;
        self.turns_opened += o.turns_opened;
        pairs(&mut self.turns_ended, &o.turns_ended);
        self.updates_stamped += o.updates_stamped;
        self.updates_unstamped += o.updates_unstamped;
        self.machine_idles += o.machine_idles;
        self.grace_ends += o.grace_ends;
        pairs(&mut self.session_cancels, &o.session_cancels);
        pairs(&mut self.asks, &o.asks);
        pairs(&mut self.tool_upserts, &o.tool_upserts);
        pairs(&mut self.tool_cancels, &o.tool_cancels);
        pairs(&mut self.terminal_upserts, &o.terminal_upserts);
        pairs(&mut self.terminal_cancels, &o.terminal_cancels);
        pairs(&mut self.resumes, &o.resumes);
        pairs(&mut self.closes, &o.closes);
        pairs(&mut self.auth, &o.auth);
        pairs(&mut self.elicitations, &o.elicitations);
    }
}

/// The protocol a fuzz input asks for, and the decisions after its tag (see [`run_bytes`](super::run_bytes)).
pub(super) fn protocol_of(data: &[u8]) -> (Protocol, &[u8]) {
    #[cfg(feature = "unstable_protocol_v2")]
    match data.split_first() {
        Some((0xF2, rest)) => return (Protocol::V2, rest),
        Some((0xF1, rest)) => return (Protocol::Mixed, rest),
        _ => {}
    }
    (Protocol::V1, data)
}
