//! The step loop of the simulation: picking an action, moving bytes through the pipes,
//! draining both machines, the per-step checks and the virtual clock.

use acp_proto::Side;

use super::{BIG_ANSWER, Chooser, OUTPUT_BOUND, Sim, short};

impl<C: Chooser> Sim<'_, C> {
    pub(super) fn deliverable(&self, pipe: usize) -> bool {
        let receiver_closed = if pipe == 0 { self.agent.closed } else { self.client.closed };
        let p = &self.pipes[pipe];
        !receiver_closed && !self.stalled[pipe] && (!p.bytes.is_empty() || (p.writer_closed && !p.eof_delivered))
    }

    pub(super) fn step(&mut self) {
        let deliver = [self.deliverable(0), self.deliverable(1)];
        // Weighted actions: deliver, complete, client start, agent start, cancel, advance, fault,
        // a reader stalls or resumes.
        let mut weights = [(0u8, 0usize), (1, 3), (2, 3), (3, 3), (4, 1), (5, 0), (6, 1), (7, 1)];
        if deliver[0] || deliver[1] {
            weights[0].1 = 9;
        } else {
            weights[5].1 = 3;
        }
        let total: usize = weights.iter().map(|w| w.1).sum();
        let mut pick = self.c.below(total);
        let mut action = 0;
        for (a, w) in weights {
            if pick < w {
                action = a;
                break;
            }
            pick -= w;
        }
        match action {
            0 => {
                let pipe = if deliver[0] && deliver[1] {
                    self.c.below(2)
                } else if deliver[0] {
                    0
                } else {
                    1
                };
                self.deliver(pipe);
            }
            1 => self.complete_some_handler(),
            // The unstable methods, with the feature only (the stable runs draw nothing more).
            2 if self.draws_unstable() && self.c.chance(1, 4) => self.client_unstable_call(),
            2 => self.client_start(),
            3 => self.agent_start(),
            4 => self.cancel_something(),
            5 => self.advance_time(),
            6 => self.fault(),
            _ => self.toggle_stall(),
        }
        self.drain();
        self.check_step();
    }

    /// Whether the client draws the unstable (v1) methods: with feature `unstable`, on runs
    /// that may speak v1 (a v2 run draws exactly as without the feature, so a seed reaches the
    /// same v2 flows with it).
    fn draws_unstable(&self) -> bool {
        #[cfg(feature = "unstable_protocol_v2")]
        if self.config.protocol == super::Protocol::V2 {
            return false;
        }
        cfg!(feature = "unstable")
    }

    /// The reader of a pipe stops reading, or resumes.
    pub(super) fn toggle_stall(&mut self) {
        let pipe = self.c.below(2);
        self.stalled[pipe] = !self.stalled[pipe];
        self.log(format!("pipe {pipe} reader {}", if self.stalled[pipe] { "stalls" } else { "resumes" }));
    }

    /// Delivers a chunk of a pipe (or its EOF) to the receiver.
    pub(super) fn deliver(&mut self, pipe: usize) {
        let to = if pipe == 0 { Side::Agent } else { Side::Client };
        if self.pipes[pipe].bytes.is_empty() {
            self.pipes[pipe].eof_delivered = true;
            self.log(format!("eof -> {to:?}"));
            let now = self.now;
            let peer = self.peer(to);
            peer.eof_while_open = !peer.conn.is_closed();
            let owed = if peer.eof_while_open { peer.conn.inbound_in_flight() as u64 } else { 0 };
            peer.wire.consumed_eof();
            peer.conn.handle_eof(now);
            self.summary.owed_at_eof += owed;
            return;
        }
        let len = self.pipes[pipe].bytes.len();
        let n = if self.c.chance(1, 3) { len } else { self.c.range(1, len.min(512) as u64) as usize };
        let chunk: Vec<u8> = self.pipes[pipe].bytes.iter().take(n).copied().collect();
        let now = self.now;
        let peer = self.peer(to);
        // Input after close or after the end of input is consumed and ignored: not read.
        let ignored = peer.conn.is_closed() || peer.conn.input_ended();
        let consumed = peer.conn.handle_input(now, &chunk);
        assert!(consumed <= chunk.len());
        if !ignored {
            peer.wire.consumed(&chunk[..consumed]);
        }
        self.pipes[pipe].bytes.drain(..consumed);
        self.log(format!("deliver {consumed}/{n} bytes -> {to:?}"));
    }

    /// Moves every queued frame into the pipes and lets both applications react to every
    /// event, until nothing moves.
    pub(super) fn drain(&mut self) {
        for round in 0.. {
            assert!(round < 1000, "drain did not settle: livelock");
            let mut moved = false;
            for side in [Side::Agent, Side::Client] {
                let mut buf = Vec::new();
                let pipe = if side == Side::Client { 0 } else { 1 };
                // Like an adapter: the next batch is taken only once the pipe has room (or can
                // never be read: then writes fail and the output is dropped).
                let receiver_closed = if side == Side::Client { self.agent.closed } else { self.client.closed };
                let p = &self.pipes[pipe];
                let room = p.writer_closed || receiver_closed || p.bytes.len() < self.config.pipe_capacity;
                let peer = self.peer(side);
                if room && peer.conn.poll_transmit(&mut buf) > 0 {
                    peer.app_queued = 0;
                }
                if !buf.is_empty() {
                    moved = true;
                    peer.wire.emitted(&buf, side == Side::Agent);
                    #[cfg(feature = "unstable_protocol_v2")]
                    if side == Side::Agent {
                        self.v2.agent_emitted(&buf);
                    }
                    if side == Side::Client {
                        for f in buf.split(|b| *b == b'\n') {
                            let is_request =
                                f.windows(8).any(|w| w == b"\"method\"") && f.windows(5).any(|w| w == b"\"id\":");
                            // Prompts, and (v2) the requests that change a session's life,
                            // are never copied: a copy dispatched after the original was
                            // answered would start work, or close or resume a session,
                            // behind the client's back.
                            let never_copied = [
                                &b"\"session/prompt\""[..],
                                b"\"session/close\"",
                                b"\"session/delete\"",
                                b"\"session/resume\"",
                            ];
                            let is_prompt = never_copied.iter().any(|m| f.windows(m.len()).any(|w| w == *m));
                            if is_request && !is_prompt {
                                self.recent_requests.push_back(f.to_vec());
                                if self.recent_requests.len() > 8 {
                                    self.recent_requests.pop_front();
                                }
                            }
                        }
                    }
                    if !self.pipes[pipe].writer_closed && !receiver_closed {
                        self.pipes[pipe].bytes.extend(buf);
                    }
                }
                while let Some(event) = self.peer(side).conn.poll_event() {
                    moved = true;
                    self.summary.checks += 1;
                    assert!(!self.peer(side).closed, "{side:?}: event after Closed: {event:?}");
                    self.log(format!("{side:?} event {}", short(&event)));
                    match side {
                        Side::Agent => self.agent_event(event),
                        Side::Client => self.client_event(event),
                    }
                }
            }
            // A closed peer's process exits once its output is written: the other side then
            // sees EOF on that pipe.
            for (side, pipe) in [(Side::Agent, 1), (Side::Client, 0)] {
                if self.peer(side).closed && !self.pipes[pipe].writer_closed {
                    self.pipes[pipe].writer_closed = true;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
    }

    pub(super) fn check_step(&mut self) {
        for side in [Side::Agent, Side::Client] {
            let bound = self.config.memory_bound;
            // The largest frame the applications queue (a big answer) or the machine answers
            // with (an error naming an oversize frame).
            let frame = BIG_ANSWER + 512;
            let peer = self.peer(side);
            let mem = peer.conn.memory_estimate();
            assert!(mem < bound, "{side:?}: memory estimate {mem} over the bound {bound}");
            // Invariant 11: the application sends and answers only while `can_send()`, so its
            // frames exceed the output bound by at most one (plus the answers to requests held
            // behind `initialize`, which its answer releases)...
            let app = peer.app_queued;
            let app_limit = OUTPUT_BOUND + frame;
            assert!(app <= app_limit, "{side:?}: the application queued {app} bytes, over {app_limit}");
            // ...the machine's own answers to peer input stop input once they alone reach it
            // (one frame over, too); the rest of the machine's frames (cancel-request
            // notifications, the answers to cancelled requests) are one per request in flight.
            let queued = peer.conn.bytes_queued();
            let per_request = 128 * (peer.conn.config().max_inbound + peer.conn.config().max_pending_outbound);
            let limit = app_limit + OUTPUT_BOUND + frame + per_request;
            assert!(queued <= limit, "{side:?}: {queued} bytes queued, over {limit}");
            if peer.closed {
                assert!(peer.outstanding.is_empty(), "{side:?}: closed with outcomes missing");
            }
            self.summary.peak_queued = self.summary.peak_queued.max(queued);
        }
        self.summary.checks += 2;
    }

    /// Advances time to the earliest deadline or handler ready time and fires deadlines.
    pub(super) fn advance_time(&mut self) {
        let handler_times =
            self.agent.handlers.iter().chain(self.client.handlers.iter()).map(|h| h.ready_at).filter(|t| *t > self.now);
        let next = self
            .agent
            .conn
            .poll_timeout()
            .into_iter()
            .chain(self.client.conn.poll_timeout())
            .chain(handler_times)
            .min();
        let Some(at) = next else { return };
        assert!(at >= self.now, "a deadline in the past was not fired");
        self.now = at;
        self.log("advance".into());
        self.agent.conn.handle_timeout(at);
        self.client.conn.handle_timeout(at);
        self.drain();
        for side in [Side::Agent, Side::Client] {
            let t = self.peer(side).conn.poll_timeout();
            assert!(t.is_none_or(|t| t > at), "{side:?}: busy loop, poll_timeout {t:?} at {at}");
        }
    }
}
