//! The driver's v2 events (feature `unstable_protocol_v2`): a v2 request runs on the pool as a
//! v1 one does (behind its turn's ordering gate on the client side), a notification on the ordered thread unless it is a turn's update (which goes
//! to the turn's reader), and a turn's end goes to its reader. The service's v2 side
//! ([`ServiceV2`](crate::v2::ServiceV2)) decides where.

use acp_proto::{RpcError, compat::AnyEvent as Event};

use super::Driver;

impl Driver {
    pub(super) fn dispatch_v2(&mut self, event: Event) {
        match event {
            Event::RequestV2 { id, request } => {
                let gate = self.service.v2().and_then(|v2| v2.turn_gate(&request));
                self.spawn_on_pool(id, gate, move |service, link, cancel| match service.v2() {
                    Some(v2) => v2.request(link, id, cancel, request),
                    // A v1-only service (its config never offers 2): never reached; answered.
                    None => crate::v2::answer(link, id, || Err(RpcError::method_not_found(request.wire()))),
                })
            }
            Event::NotificationV2 { notification, turn } => {
                let Some(v2) = self.service.v2() else { return };
                if let Some(notification) = v2.route(notification, turn.is_some()) {
                    self.run_ordered_job(move |service, link| {
                        if let Some(v2) = service.v2() {
                            v2.notification(link, notification);
                        }
                    });
                }
            }
            Event::TurnEnded { session, reason, .. } => {
                if let Some(v2) = self.service.v2() {
                    v2.turn_ended(session, reason);
                }
            }
            _ => {}
        }
    }
}
