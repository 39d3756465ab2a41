//! What a turn's reader does with the ordering gates in its queue, for v1's and v2's turns
//! alike: an agent request of the turn's session waits on a gate placed behind the updates
//! that came before it, and the reader opens it once it took (and handled) those updates.

use std::sync::mpsc::SyncSender;

use crate::driver::Version;
use crate::link::Link;
use crate::sync::InboxReceiver;

/// An item of a turn's queue that may be a gate.
pub(crate) trait GateItem: Sized {
    /// The gate's opener, or the item back when it is not a gate.
    fn into_gate(self) -> Result<SyncSender<()>, Self>;

    /// Whether the item is a gate.
    fn is_gate(&self) -> bool;
}

/// The next item that is not a gate (the gates before it are opened), leading the connection
/// while it waits (`Link::until`); `None` once the queue ended.
pub(crate) fn next_item<P: Version, T: GateItem>(link: &Link<P>, items: &InboxReceiver<T>) -> Option<T> {
    loop {
        let following = link.until(&mut || items.ready());
        let item = items.recv();
        drop(following);
        match item?.into_gate() {
            Ok(open) => {
                let _ = open.send(());
            }
            Err(item) => return Some(item),
        }
    }
}

/// Runs `handle` with an update just taken, the reader counted as busy meanwhile (a gate placed
/// now waits for it), then opens the gates right behind that update.
pub(crate) fn handle_then_open<T: GateItem, U, R>(
    items: &InboxReceiver<T>,
    update: U,
    handle: impl FnOnce(U) -> R,
) -> R {
    items.set_busy(true);
    let result = handle(update);
    items.set_busy(false);
    while let Some(item) = items.take_if(T::is_gate) {
        if let Ok(open) = item.into_gate() {
            let _ = open.send(());
        }
    }
    result
}
