//! The driver's v2 paths (feature `unstable_protocol_v2`): v2 sends, answers and events, beside
//! the v1 ones of the parent module. A submodule of `driver`, so it reaches the driver's state.

use std::task::Context;

use acp_proto::v2::{self, AgentNotificationParams};
use acp_proto::{Instant, OutboundId, Refused, SendError, compat::AnyEvent as Event};
use tokio::sync::oneshot;

use super::{Driver, Handlers, Held};
use crate::Error;
use crate::context::HandlerContext;
use crate::io::{ReadBytes, WriteBytes};
use crate::runtime::Runtime;
use crate::sync::{CancellationToken, QueueSender};
use crate::v2::{CommandV2, DoneV2, HeldV2, InboundV2, OpenTurnV2, PendingV2, RequestV2Command, TurnItemV2};

impl<Rt: Runtime, H: Handlers, Rd: ReadBytes, Wr: WriteBytes> Driver<Rt, H, Rd, Wr> {
    pub(crate) fn apply_v2(&mut self, command: CommandV2, now: Instant) {
        match command {
            CommandV2::Request(request) => {
                let deadline = request.timeout.map(|t| now + t);
                self.send_or_hold(now, Held::V2(HeldV2::Request(request, deadline)));
            }
            CommandV2::Notify { notification, ack } => {
                self.send_or_hold(now, Held::V2(HeldV2::Notify(notification, ack)));
            }
            CommandV2::Complete { id, result } => {
                self.inbound.remove(&id);
                self.send_or_hold(now, Held::V2(HeldV2::Complete(id, result)));
            }
            CommandV2::AbandonTurn { session } => {
                // The core keeps the turn open until the agent's idle; a new prompt of the
                // session is refused until then (see `send_request_v2`).
                if self.v2.turns.remove(&session).is_some() {
                    let _ = self.conn.cancel_turn(now, &session);
                }
            }
        }
    }

    /// [`try_send`](Self::try_send) for a v2 send: gives it back when the core has no room.
    pub(crate) fn try_send_v2(&mut self, now: Instant, send: HeldV2) -> Option<HeldV2> {
        match send {
            HeldV2::Complete(id, result) => {
                if !self.admits_sends() {
                    return Some(HeldV2::Complete(id, result));
                }
                // A result that does not fit its request is answered by the core itself.
                let _ = self.conn.respond_v2(now, id, *result);
            }
            HeldV2::Notify(notification, ack) => match self.conn.send_notification_v2(now, *notification) {
                Err(Refused { error: SendError::Backpressure { .. }, message }) => {
                    return Some(HeldV2::Notify(Box::new(message), ack));
                }
                result => {
                    let result = result.map(|_| ()).map_err(Error::from);
                    self.acked |= result.is_ok();
                    let _ = ack.send(result);
                }
            },
            HeldV2::Request(command, deadline) => return self.send_request_v2(now, *command, deadline),
        }
        None
    }

    fn send_request_v2(
        &mut self,
        now: Instant,
        command: RequestV2Command,
        deadline: Option<Instant>,
    ) -> Option<HeldV2> {
        let RequestV2Command { token, request, timeout, reply, turn } = command;
        if let Some(t) = &turn
            && (self.v2.turns.contains_key(&t.session) || self.conn.open_turn_v2(&t.session).is_some())
        {
            // This client reads that session's open turn already (one stream per turn), or the
            // core has one open that no stream reads (dropped, or opened by a plain `request`):
            // the prompt would join it, and its stream would miss the turn's start.
            let error = SendError::TurnAlreadyRunning(t.session.clone());
            let _ = reply.send(Err(Error::from(error.clone())));
            if let Some(t) = turn {
                let _ = t.accepted.send(Err(Error::from(error)));
            }
            return None;
        }
        match self.conn.send_request_v2(now, request, deadline) {
            Ok(id) => {
                if let Some(t) = turn {
                    let _ = t.accepted.send(Ok(()));
                    // No turn was open (checked above), so this prompt opened one: the core
                    // names it by the prompt's id.
                    debug_assert_eq!(self.conn.open_turn_v2(&t.session), Some(id));
                    self.v2.turns.insert(t.session, OpenTurnV2 { turn: id, items: t.updates });
                }
                self.tokens.insert(token, id);
                self.v2.pending.insert(id, PendingV2 { token, reply });
            }
            Err(Refused { error: SendError::Backpressure { .. }, message }) => {
                let command = RequestV2Command { token, request: message, timeout, reply, turn };
                return Some(HeldV2::Request(Box::new(command), deadline));
            }
            Err(refused) => {
                if let Some(t) = turn {
                    let _ = t.accepted.send(Err(Error::from(refused.error.clone())));
                }
                let _ = reply.send(Err(Error::from(refused.error)));
            }
        }
        None
    }

    /// Dispatches a v2 event; hands it back when its consumer is full.
    pub(crate) fn dispatch_v2(&mut self, event: Event, cx: &mut Context<'_>, force: bool) -> Option<Event> {
        match event {
            Event::RequestV2 { id, request } => {
                let gate = self.turn_gate_v2(&request, cx);
                let cancel = CancellationToken::new();
                self.inbound.insert(id, cancel.clone());
                let done = DoneV2 { id, tx: Some(self.handle.tx.clone()) };
                let hcx = HandlerContext { handle: self.handle.clone(), id, cancel };
                self.handlers.spawn_request_v2(&self.rt, request, hcx, done, gate);
                None
            }
            Event::CancelGraceExpired { session } => {
                let worker = self.v2.notifications.as_ref()?;
                worker.push(InboundV2::CancelGraceExpired(session), cx, force).err().map(|item| match item {
                    InboundV2::CancelGraceExpired(session) => Event::CancelGraceExpired { session },
                    InboundV2::Notification(_) => unreachable!("a grace end was pushed"),
                })
            }
            Event::NotificationV2 { notification, turn } => {
                let v2::Notification::Agent(AgentNotificationParams::SessionUpdate(update)) = notification else {
                    return self.deliver_to_worker_v2(notification, turn, cx, force);
                };
                let sink = turn.and_then(|stamp| self.read_turn(&update.session_id, stamp.turn));
                match sink {
                    Some(sink) => sink.push(TurnItemV2::Update(update), cx, force).err().map(|item| {
                        let TurnItemV2::Update(update) = item else { unreachable!("an update was pushed") };
                        let notification = v2::Notification::Agent(AgentNotificationParams::SessionUpdate(update));
                        Event::NotificationV2 { notification, turn }
                    }),
                    // A turn's update whose stream was dropped.
                    None if turn.is_some() => None,
                    None => {
                        let notification = v2::Notification::Agent(AgentNotificationParams::SessionUpdate(update));
                        self.deliver_to_worker_v2(notification, turn, cx, force)
                    }
                }
            }
            Event::TurnEnded { session, turn, reason } => {
                // A turn no stream reads (dropped, or opened by a plain `request`) ends unseen.
                let sink = self.read_turn(&session, turn)?;
                match sink.push(TurnItemV2::End(reason), cx, force) {
                    Ok(()) => {
                        self.v2.turns.remove(&session);
                        None
                    }
                    Err(item) => {
                        let TurnItemV2::End(reason) = item else { unreachable!("an end was pushed") };
                        Some(Event::TurnEnded { session, turn, reason })
                    }
                }
            }
            _ => None,
        }
    }

    fn deliver_to_worker_v2(
        &mut self,
        notification: v2::Notification,
        turn: Option<acp_proto::TurnStamp>,
        cx: &mut Context<'_>,
        force: bool,
    ) -> Option<Event> {
        let worker = self.v2.notifications.as_ref()?;
        worker.push(InboundV2::Notification(notification), cx, force).err().map(|item| match item {
            InboundV2::Notification(notification) => Event::NotificationV2 { notification, turn },
            InboundV2::CancelGraceExpired(_) => unreachable!("a notification was pushed"),
        })
    }

    /// Where the items of `session`'s turn `turn` go, while this client reads that turn.
    fn read_turn(&self, session: &v2::SessionId, turn: OutboundId) -> Option<&QueueSender<TurnItemV2>> {
        self.v2.turns.get(session).filter(|open| open.turn == turn).map(|open| &open.items)
    }

    /// Client side: when `request` belongs to a session whose turn this client reads (a
    /// permission ask, a session-scoped elicitation) and the turn's reader has not yet taken
    /// (or is still handling) every update so far, a gate placed in the turn after them (past
    /// the turn's capacity: one small item per agent request, which the core's `max_inbound`
    /// bounds). As v1's `turn_gate`.
    fn turn_gate_v2(&self, request: &v2::Request, cx: &Context<'_>) -> Option<oneshot::Receiver<()>> {
        let session = request.turn_session()?;
        let items = &self.v2.turns.get(session)?.items;
        if items.settled() {
            return None;
        }
        let (open, gate) = oneshot::channel();
        let _ = items.push(TurnItemV2::Gate(open), cx, true);
        Some(gate)
    }
}
