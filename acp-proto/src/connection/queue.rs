//! The event queue, typed by the version the connection speaks: [`Events`].
//!
//! The engine serves both versions (an agent before the client's `initialize` chose one), but
//! a connection speaks one for its whole life, and [`Connection<R, P>`](super::Connection) hands
//! out [`Event<P>`]. The queue holds events of that one version, so an event is built once,
//! in the type the application receives, and `poll_event` only pops it: no per-poll
//! conversion of an engine-wide event (events are several hundred bytes; each conversion was
//! a whole copy, see bench/RESULTS.md, "core-direct after issue 29's engine").
//!
//! Rules:
//! 1. A queue starts as the version the configuration prefers: v2 when
//!    [`Config::supported_versions`](super::Config::supported_versions) is `[2]`, else v1.
//! 2. The queue turns v2 where the handshake settles on 2 (either side), and on a message
//!    event of the other version (an agent's v2 `initialize`); the events already queued
//!    carry no message and move over unchanged, in order.
//! 3. Popping as a version the queue is not gives nothing (a `debug_assert!`): a
//!    `Connection<R, P>` speaks `P` only.

use std::collections::VecDeque;

use super::{AnyEvent, Event};
use crate::protocol::{Protocol, V1};

/// The engine's event queue (see the module docs). Hidden: named by the sealed
/// [`Protocol`]'s hooks; not part of the API.
#[doc(hidden)]
#[derive(Debug)]
pub enum Events {
    /// Events of a v1 connection.
    V1(VecDeque<Event<V1>>),
    /// Events of a v2 connection.
    #[cfg(feature = "unstable_protocol_v2")]
    V2(VecDeque<Event<crate::protocol::V2>>),
}

impl Events {
    /// An empty queue of the version a connection with `supported` versions speaks first (rule 1).
    pub(super) fn new(supported: &[crate::types::ProtocolVersion]) -> Events {
        #[cfg(feature = "unstable_protocol_v2")]
        if supported == [crate::types::ProtocolVersion::V2] {
            return Events::V2(VecDeque::new());
        }
        let _ = supported;
        Events::V1(VecDeque::new())
    }

    /// The number of queued events.
    pub(super) fn len(&self) -> usize {
        match self {
            Events::V1(q) => q.len(),
            #[cfg(feature = "unstable_protocol_v2")]
            Events::V2(q) => q.len(),
        }
    }

    /// Whether no event is queued.
    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queues an event built as the engine's own (rule 2 for a message of the other version).
    #[inline]
    pub(super) fn push(&mut self, event: AnyEvent) {
        match self {
            Events::V1(q) => match V1::event(event) {
                Ok(event) => q.push_back(event),
                #[cfg(feature = "unstable_protocol_v2")]
                Err(event) => self.switch::<crate::protocol::V2>(event),
                #[cfg(not(feature = "unstable_protocol_v2"))]
                Err(_) => debug_assert!(false, "a v1 queue takes every event without v2"),
            },
            #[cfg(feature = "unstable_protocol_v2")]
            Events::V2(q) => match crate::protocol::V2::event(event) {
                Ok(event) => q.push_back(event),
                // A v2 queue is a connection that settled on 2, or speaks only 2.
                Err(_) => debug_assert!(false, "a v1 message on a v2 connection"),
            },
        }
    }

    /// Queues the event `make` builds, of version `P` (the message paths build it so). The
    /// event is built where the queue keeps it: no copy through the engine's own event type.
    #[inline]
    pub(super) fn push_typed<P: Protocol>(&mut self, make: impl FnOnce() -> Event<P>) {
        match P::queue(self) {
            Some(queue) => queue.push_back(make()),
            None => self.push(P::into_any(make())),
        }
    }

    /// The next event, as version `P` (rule 3).
    #[inline]
    pub(super) fn pop<P: Protocol>(&mut self) -> Option<Event<P>> {
        match P::queue(self) {
            Some(q) => q.pop_front(),
            None => {
                debug_assert!(self.is_empty(), "events of the other protocol version");
                None
            }
        }
    }

    /// The next event whatever the version, as the engine's own (the engine's unit tests).
    #[cfg(test)]
    pub(super) fn pop_any(&mut self) -> Option<AnyEvent> {
        match self {
            Events::V1(q) => q.pop_front().map(V1::into_any),
            #[cfg(feature = "unstable_protocol_v2")]
            Events::V2(q) => q.pop_front().map(crate::protocol::V2::into_any),
        }
    }

    /// The connection speaks `P` from now on (rule 2; the engine calls it where the handshake
    /// settles on 2): what was queued moves over in order.
    #[cfg(feature = "unstable_protocol_v2")]
    pub(super) fn speak<P: Protocol>(&mut self) {
        if P::queue(self).is_some() {
            return;
        }
        let held: Vec<AnyEvent> = match std::mem::replace(self, Events::new(&[P::VERSION])) {
            Events::V1(old) => old.into_iter().map(V1::into_any).collect(),
            #[cfg(feature = "unstable_protocol_v2")]
            Events::V2(old) => old.into_iter().map(crate::protocol::V2::into_any).collect(),
        };
        if let Some(queue) = P::queue(self) {
            // The events queued before carry no message (rule 2); one that did could not be
            // told to a connection of `P`.
            queue.extend(held.into_iter().filter_map(|event| P::event(event).ok()));
        }
    }

    /// Rule 2 for a message of version `P` on a queue of the other version.
    #[cfg(feature = "unstable_protocol_v2")]
    #[cold]
    fn switch<P: Protocol>(&mut self, event: AnyEvent) {
        self.speak::<P>();
        if let (Some(queue), Ok(event)) = (P::queue(self), P::event(event)) {
            queue.push_back(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::{CancelReason, CloseReason, InboundId, InboundRequest};
    use crate::methods::{ClientRequest, Request};
    use crate::types::{PromptRequest, ProtocolVersion};

    fn cancelled(n: u64) -> AnyEvent {
        AnyEvent::Cancelled { id: InboundId(n), reason: CancelReason::CancelRequest }
    }

    fn v1_request(n: u64) -> AnyEvent {
        let request = Request::Client(ClientRequest::Prompt(PromptRequest::new("s", vec![])));
        AnyEvent::Request { id: InboundId(n), request }
    }

    /// Rule 1: a queue starts as v1 unless the connection speaks 2 only.
    #[test]
    fn a_queue_starts_as_the_version_the_config_prefers() {
        assert!(matches!(Events::new(&[ProtocolVersion::V1]), Events::V1(_)));
        #[cfg(feature = "unstable_protocol_v2")]
        {
            assert!(matches!(Events::new(&[ProtocolVersion::V1, ProtocolVersion::V2]), Events::V1(_)));
            assert!(matches!(Events::new(&[ProtocolVersion::V2]), Events::V2(_)));
        }
    }

    /// Rule 3 (and order): events come out as they went in, as the queue's version; asked as
    /// the other version, an empty queue gives nothing.
    #[test]
    fn events_come_out_in_order_as_the_queues_version() {
        let mut events = Events::new(&[ProtocolVersion::V1]);
        events.push(cancelled(1));
        events.push_typed::<V1>(|| Event::Closed { reason: CloseReason::Local });
        events.push(v1_request(2));
        assert_eq!(events.len(), 3);
        assert!(matches!(events.pop::<V1>(), Some(Event::Cancelled { id: InboundId(1), .. })));
        assert!(matches!(events.pop::<V1>(), Some(Event::Closed { reason: CloseReason::Local })));
        assert!(matches!(events.pop::<V1>(), Some(Event::Request(InboundRequest { id: InboundId(2), .. }))));
        assert!(events.is_empty() && events.pop::<V1>().is_none());
        #[cfg(feature = "unstable_protocol_v2")]
        assert!(events.pop::<crate::protocol::V2>().is_none());
    }

    /// Rule 2: the queue turns v2 where the handshake settles on 2, or on a v2 message, and
    /// what was queued moves over in order.
    #[cfg(feature = "unstable_protocol_v2")]
    #[test]
    fn a_v1_queue_turns_v2_and_keeps_what_it_held() {
        use crate::protocol::V2;
        let mut events = Events::new(&[ProtocolVersion::V1, ProtocolVersion::V2]);
        events.push(cancelled(1));
        let init: crate::v2::InitializeRequest = serde_json::from_value(
            serde_json::json!({"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}),
        )
        .expect("a v2 initialize");
        events.push(AnyEvent::RequestV2 { id: InboundId(2), request: init.into() });
        assert!(matches!(events, Events::V2(_)), "a v2 message turns the queue");
        assert!(matches!(events.pop::<V2>(), Some(Event::Cancelled { id: InboundId(1), .. })));
        assert!(matches!(events.pop::<V2>(), Some(Event::Request(InboundRequest { id: InboundId(2), .. }))));

        let mut events = Events::new(&[ProtocolVersion::V1, ProtocolVersion::V2]);
        events.push(cancelled(3));
        events.speak::<V2>();
        events.speak::<V2>();
        assert!(matches!(events.pop::<V2>(), Some(Event::Cancelled { id: InboundId(3), .. })));
        assert!(events.pop::<V2>().is_none());
    }

    /// The inverse conversion gives back the event it was made from.
    #[test]
    fn into_any_inverts_event() {
        for any in [cancelled(1), v1_request(2), AnyEvent::Closed { reason: CloseReason::PeerEof }] {
            let event = V1::event(any.clone()).expect("a v1 event");
            assert_eq!(V1::into_any(event), any);
        }
    }
}
