//! The simulation's actions besides moving bytes: completing handlers, cancelling, injecting
//! faults, and settling at the end of a run.

use acp_proto::{CloseReason, Method, OutboundId, Side};
use serde_json::Value;

use super::{Chooser, Sim, label_of};

impl<C: Chooser> Sim<'_, C> {
    pub(super) fn complete_some_handler(&mut self) {
        let now = self.now;
        let ready: Vec<(Side, usize)> = [Side::Agent, Side::Client]
            .into_iter()
            .flat_map(|s| {
                let p = match s {
                    Side::Agent => &self.agent,
                    Side::Client => &self.client,
                };
                // An adapter holds a finished handler's answer while the output is full.
                let room = p.conn.can_send() || p.conn.is_closed();
                p.handlers
                    .iter()
                    .enumerate()
                    .filter(move |(_, h)| room && h.ready_at <= now)
                    .map(move |(i, _)| (s, i))
                    .collect::<Vec<_>>()
            })
            .collect();
        if ready.is_empty() {
            return;
        }
        let (side, i) = *self.c.pick(&ready);
        let pending = self.peer(side).handlers.remove(i);
        #[cfg(feature = "unstable_protocol_v2")]
        if let super::Req::V2(request) = &pending.request {
            let request = request.clone();
            return match side {
                Side::Agent => self.agent_complete_v2(pending, request),
                Side::Client => self.client_complete_v2(pending, request),
            };
        }
        match side {
            Side::Agent => self.agent_complete(pending),
            Side::Client => self.client_complete(pending),
        }
    }

    pub(super) fn cancel_something(&mut self) {
        match self.c.below(3) {
            0 => self.client_cancel_turn(),
            1 => self.cancel_outstanding(Side::Client),
            _ => self.cancel_outstanding(Side::Agent),
        }
    }

    /// Requests the application never gives up on (v2: the client's closes and deletes, see
    /// `v2_client`).
    fn never_cancelled(&self, side: Side, id: OutboundId) -> bool {
        #[cfg(feature = "unstable_protocol_v2")]
        if side == Side::Client {
            return super::v2_client::never_given_up(self.v2.client_sent.get(&id).and_then(|(m, _)| *m));
        }
        let _ = (side, id);
        false
    }

    pub(super) fn cancel_outstanding(&mut self, side: Side) {
        // Cancelling the handshake itself is rare: most runs should get past it.
        let peer = if side == Side::Client { &self.client } else { &self.agent };
        let ids: Vec<OutboundId> = peer
            .outstanding
            .iter()
            .filter(|(id, o)| o.method != Some(Method::Initialize) && !self.never_cancelled(side, **id))
            .map(|(id, _)| *id)
            .collect();
        if ids.is_empty() {
            return;
        }
        let id = *self.c.pick(&ids);
        let now = self.now;
        let peer = self.peer(side);
        let cancelled = peer.conn.cancel_request(now, id);
        assert!(cancelled, "{side:?}: cancel_request({id}) refused for an outstanding request");
        if let Some(out) = peer.outstanding.get_mut(&id) {
            out.locally_cancelled = true;
        }
        self.log(format!("{side:?} cancel_request {id}"));
    }

    pub(super) fn fault(&mut self) {
        let pipe = self.c.below(2);
        if self.pipes[pipe].writer_closed {
            return;
        }
        let line: Vec<u8> = match self.c.below(6) {
            0 => b"this is not json".to_vec(),
            1 => {
                let mut l = b"{\"jsonrpc\":\"2.0\",\"method\":\"_x\",\"params\":\"".to_vec();
                l.resize(self.config.max_frame_len + 100, b'z');
                l
            }
            2 if pipe == 0 && !self.recent_requests.is_empty() => {
                let i = self.c.below(self.recent_requests.len());
                let frame = self.recent_requests[i].clone();
                if let Ok(v) = serde_json::from_slice::<Value>(&frame)
                    && let Some(l) = label_of(&v["params"])
                {
                    self.model.duplicated.insert(l);
                }
                frame
            }
            3 => {
                let n = self.label();
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":\"raw-{n}\",\"method\":\"_sim/raw\",\"params\":{{\"label\":{n}}}}}"
                )
                .into_bytes()
            }
            4 => b"[1,2,3]".to_vec(),
            _ if self.c.chance(1, 12) => {
                // The client (or the agent) goes away: its output ends.
                let side = if pipe == 0 { Side::Client } else { Side::Agent };
                self.log(format!("fault: {side:?} closes its output"));
                self.pipes[pipe].writer_closed = true;
                return;
            }
            _ => b"{\"jsonrpc\":\"2.0\",\"id\":7.5,\"method\":\"x\"}".to_vec(),
        };
        self.log(format!("fault: {} bytes into pipe {pipe}", line.len()));
        self.pipes[pipe].bytes.extend(line);
        self.pipes[pipe].bytes.push_back(b'\n');
    }

    /// Stops making new work, then delivers everything, completes every handler and fires
    /// every deadline until nothing is left; then checks the final accounting.
    pub(super) fn settle(&mut self) {
        self.stalled = [false, false];
        for round in 0.. {
            assert!(round < 10_000, "the run did not settle");
            let delivering = self.deliverable(0) || self.deliverable(1);
            if delivering {
                // Both readers read: one that cannot take input now (its own answers wait in a
                // full pipe) must not starve the other.
                for pipe in [0, 1] {
                    if self.deliverable(pipe) {
                        self.deliver(pipe);
                        self.drain();
                    }
                }
            }
            if !self.agent.handlers.is_empty() || !self.client.handlers.is_empty() {
                // Handlers finish too: a side whose input paused on requests in flight waits
                // for its application's answers, not for the peer.
                for h in self.agent.handlers.iter_mut().chain(self.client.handlers.iter_mut()) {
                    h.ready_at = h.ready_at.min(self.now);
                }
                self.complete_some_handler();
            } else if !delivering && !self.finish_work() {
                if self.agent.conn.poll_timeout().is_some() || self.client.conn.poll_timeout().is_some() {
                    self.advance_time();
                } else {
                    break;
                }
            }
            self.drain();
            self.check_step();
        }
        for side in [Side::Agent, Side::Client] {
            let peer = self.peer(side);
            let stats = peer.conn.stats();
            assert_eq!(peer.conn.inbound_in_flight(), 0, "{side:?}: requests left in flight after settling");
            let unsupported = matches!(peer.close_reason, Some(CloseReason::UnsupportedProtocolVersion { .. }));
            if peer.eof_while_open && !unsupported {
                peer.wire.settle_after_eof(stats.duplicate_ids);
            } else {
                peer.wire.settle(stats.duplicate_ids, 0, peer.conn.is_closed());
            }
            assert!(peer.outstanding.is_empty(), "{side:?}: requests without an outcome: {:?}", peer.outstanding);
        }
        self.check_turn_counts();
        #[cfg(feature = "unstable_protocol_v2")]
        self.check_v2_settled();
    }

    /// Settling: the agent application ends the work it still has (v2: an idle `state_update`
    /// for each working session). Whether it sent something.
    pub(super) fn finish_work(&mut self) -> bool {
        #[cfg(feature = "unstable_protocol_v2")]
        return self.agent_finish_work_v2();
        #[cfg(not(feature = "unstable_protocol_v2"))]
        false
    }

    pub(super) fn check_turn_counts(&self) {
        for (label, received) in &self.model.turn_received {
            let sent = self.model.turn_updates.get(label).copied().unwrap_or(0);
            assert!(*received <= sent, "turn r{label}: received {received} updates, the agent sent {sent}");
        }
    }
}
