//! The protocol version as the adapter sees it: [`Version`], implemented by
//! [`V1`](acp_proto::protocol::V1) and (feature `unstable_protocol_v2`)
//! [`V2`](acp_proto::protocol::V2). The driver, the handles, [`ClientConnection<P>`] and
//! [`PromptTurn<P>`] are written once over it; only the handler traits and their dispatch are
//! per version (modules `v1` and `v2`).
//!
//! [`ClientConnection<P>`]: crate::versioned::ClientConnection
//! [`PromptTurn<P>`]: crate::versioned::PromptTurn

use acp_proto::protocol::{Protocol, V1};
use acp_proto::role;
use acp_proto::types::SessionId;
use acp_proto::{Connection, Event, methods};
use tokio::sync::oneshot;

pub(crate) mod sealed {
    use super::*;

    /// A protocol version this adapter runs: what its driver needs to know of the version's
    /// messages (a client turn's updates, the session of a request), hidden from the docs
    /// but [`Item`](Version::Item), what a turn's stream yields. Sealed (its supertrait is):
    /// implemented by `V1` and `V2` only.
    pub trait Version:
        Protocol<
            Request: Send + Unpin + 'static + acp_runtime::trace::Traced,
            Notification: Send + Unpin + 'static + acp_runtime::trace::Traced,
            Response: Send + Unpin + 'static,
        > + Unpin
    {
        #[doc(hidden)]
        /// A `session/update` notification as a client's turn queues it.
        type TurnUpdate: Send + Unpin + 'static;
        /// What a turn's stream yields for one update.
        type Item;
        #[doc(hidden)]
        /// Whether the outcome of the prompt ends its turn (v1); in v2 the prompt is only
        /// acknowledged and the core reports the turn's end (`Event::TurnEnded`).
        const OUTCOME_ENDS_TURN: bool;

        #[doc(hidden)]
        /// The notification as a turn's update, or back when it is none.
        fn turn_update(notification: Self::Notification) -> Result<Self::TurnUpdate, Self::Notification>;
        #[doc(hidden)]
        /// The update as the notification it came in.
        fn from_turn_update(update: Self::TurnUpdate) -> Self::Notification;
        #[doc(hidden)]
        /// The session of an update.
        fn update_session(update: &Self::TurnUpdate) -> &SessionId;
        #[doc(hidden)]
        /// What the turn's stream yields for an update.
        fn into_item(update: Self::TurnUpdate) -> Self::Item;
        #[doc(hidden)]
        /// The wire name of a request's method.
        fn request_method(request: &Self::Request) -> &str;
        #[doc(hidden)]
        /// The session whose turn an agent request belongs to (its updates come first).
        fn request_turn_session(request: &Self::Request) -> Option<&SessionId>;
        #[doc(hidden)]
        /// Client side: whether the core has a turn of `session` open (v2: one no stream reads
        /// would make a new prompt join it). v1: never (the core refuses the prompt itself).
        fn turn_open(conn: &Connection<role::Client, Self>, session: &SessionId) -> bool;
    }
}

pub use sealed::Version;

impl Version for V1 {
    type TurnUpdate = acp_proto::types::SessionNotification;
    type Item = acp_proto::types::SessionUpdate;
    const OUTCOME_ENDS_TURN: bool = true;

    fn turn_update(notification: methods::Notification) -> Result<Self::TurnUpdate, methods::Notification> {
        match notification {
            methods::Notification::Agent(methods::AgentNotification::SessionUpdate(update)) => Ok(update),
            other => Err(other),
        }
    }

    fn from_turn_update(update: Self::TurnUpdate) -> methods::Notification {
        methods::Notification::Agent(methods::AgentNotification::SessionUpdate(update))
    }

    fn update_session(update: &Self::TurnUpdate) -> &SessionId {
        &update.session_id
    }

    fn into_item(update: Self::TurnUpdate) -> Self::Item {
        update.update
    }

    fn request_method(request: &methods::Request) -> &str {
        request.wire()
    }

    fn request_turn_session(request: &methods::Request) -> Option<&SessionId> {
        request.session_id()
    }

    fn turn_open(_: &Connection<role::Client, V1>, _: &SessionId) -> bool {
        false
    }
}

#[cfg(feature = "unstable_protocol_v2")]
impl Version for acp_proto::protocol::V2 {
    type TurnUpdate = acp_proto::v2::UpdateSessionNotification;
    type Item = acp_proto::v2::UpdateSessionNotification;
    const OUTCOME_ENDS_TURN: bool = false;

    fn turn_update(notification: acp_proto::v2::Notification) -> Result<Self::TurnUpdate, acp_proto::v2::Notification> {
        use acp_proto::v2::{AgentNotification, Notification};
        match notification {
            Notification::Agent(AgentNotification::SessionUpdate(update)) => Ok(update),
            other => Err(other),
        }
    }

    fn from_turn_update(update: Self::TurnUpdate) -> acp_proto::v2::Notification {
        acp_proto::v2::Notification::Agent(acp_proto::v2::AgentNotification::SessionUpdate(update))
    }

    fn update_session(update: &Self::TurnUpdate) -> &SessionId {
        &update.session_id
    }

    fn into_item(update: Self::TurnUpdate) -> Self::Item {
        update
    }

    fn request_method(request: &acp_proto::v2::Request) -> &str {
        request.wire()
    }

    fn request_turn_session(request: &acp_proto::v2::Request) -> Option<&SessionId> {
        request.turn_session()
    }

    fn turn_open(conn: &Connection<role::Client, Self>, session: &SessionId) -> bool {
        conn.open_turn(session).is_some()
    }
}

/// One item of a client's turn.
pub(crate) enum TurnItem<P: Version> {
    /// A `session/update` of the turn.
    Update(P::TurnUpdate),
    /// An agent request of the turn's session arrived here on the wire: its handler waits until
    /// the turn's reader has taken every update before it (and, with `next_update_then`,
    /// handled it), or dropped the turn, so that the application sees the turn's updates and
    /// requests in wire order, by construction. It never waits for the reader to ask for more,
    /// so a reader may wait for the handler without a deadlock.
    Gate(oneshot::Sender<()>),
    /// v2: the turn ended (after every update of it).
    #[cfg(feature = "unstable_protocol_v2")]
    End(acp_proto::TurnEndReason),
}

/// What a handler trait's notification task gets, in wire order.
pub(crate) enum Inbound<P: Version> {
    /// A notification.
    Notification(P::Notification),
    /// Agent side, v2: the core ended a cancelled session's work by its grace idle
    /// (`Event::CancelGraceExpired`).
    #[cfg(feature = "unstable_protocol_v2")]
    CancelGraceExpired(SessionId),
}

/// Traces an event of the core in acp-runtime's vocabulary (feature `tracing`).
// acp-runtime's tracer takes the transitional engine's event: each event is converted (cloned)
// only when the feature is on, until the tracer takes `Event<P>`.
#[cfg(feature = "tracing")]
pub(crate) fn trace<P: Version>(tracer: &acp_runtime::trace::Tracer, event: &Event<P>) {
    tracer.event(event);
}

/// Without the feature `tracing`, nothing.
#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub(crate) fn trace<P: Version>(_: &acp_runtime::trace::Tracer, _: &Event<P>) {}

impl<P: Version> Inbound<P> {
    /// The notification, if this is one.
    pub(crate) fn notification(self) -> Option<P::Notification> {
        match self {
            Inbound::Notification(notification) => Some(notification),
            #[cfg(feature = "unstable_protocol_v2")]
            Inbound::CancelGraceExpired(_) => None,
        }
    }
}
