//! What a turn's reader does with the ordering gates in its queue, for v1's and v2's turns
//! alike: an agent request of the turn's session waits on a gate placed behind the updates
//! that came before it, and the reader opens it once it took (and handled) those updates.

use std::sync::mpsc::SyncSender;

use acp_proto::role::Role;

use crate::driver::Version;
use crate::link::Link;
use crate::sync::InboxReceiver;

/// One item of a client's prompt turn, for either version: an update of the turn (`U`), an
/// ordering gate, or how the turn ended (`E`: v1's prompt outcome, v2's end reason), last.
#[derive(Debug)]
pub(crate) enum TurnItem<U, E> {
    /// A `session/update` of the turn.
    Update(U),
    /// An agent request of the turn's session arrived here on the wire: its handler waits until
    /// the reader has taken every update before it (and, with `next_update_then`, handled it),
    /// or dropped the turn, so that the application sees the turn's updates and requests in
    /// wire order, by construction. It never waits for the reader to ask for more, so a
    /// reader may block on the handler without a deadlock.
    Gate(SyncSender<()>),
    /// How the turn ended; nothing follows.
    End(E),
}

/// The turn's next update (`Ok`) or its end (`Err`), the gates before it opened, leading the
/// connection while it waits (`Link::until`); `None` once the queue ended without an end. An
/// update is taken with the reader counted busy in the same lock hold (the driver, which asks
/// [`settled`](crate::sync::InboxSender::settled) from another thread, never sees the queue
/// empty and the reader idle in between); [`handle_then_open`] ends it.
pub(crate) fn next<P: Version, R: Role, U, E>(
    link: &Link<P, R>,
    items: &InboxReceiver<TurnItem<U, E>>,
) -> Option<Result<U, E>> {
    loop {
        let following = link.until(&mut || items.ready());
        let item = items.recv_holding(|item| matches!(item, TurnItem::Update(_)));
        drop(following);
        match item? {
            TurnItem::Update(update) => return Some(Ok(update)),
            TurnItem::End(end) => return Some(Err(end)),
            TurnItem::Gate(open) => {
                let _ = open.send(());
            }
        }
    }
}

/// Runs `handle` with an update just taken by [`next`], the reader counted as busy meanwhile
/// (since the take: a gate placed now waits for it; also if `handle` panics, until then), then
/// opens the gates right behind that update.
pub(crate) fn handle_then_open<U, E, T, R>(
    items: &InboxReceiver<TurnItem<U, E>>,
    update: T,
    handle: impl FnOnce(T) -> R,
) -> R {
    /// Ends the busy spell however `handle` returns.
    struct Idle<'a, U, E>(&'a InboxReceiver<TurnItem<U, E>>);
    impl<U, E> Drop for Idle<'_, U, E> {
        fn drop(&mut self) {
            self.0.set_busy(false);
        }
    }
    let idle = Idle(items);
    let result = handle(update);
    drop(idle);
    while let Some(item) = items.take_if(|item| matches!(item, TurnItem::Gate(_))) {
        if let TurnItem::Gate(open) = item {
            let _ = open.send(());
        }
    }
    result
}
