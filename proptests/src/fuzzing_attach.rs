//! The fuzz target `attach`: sessions shared by several clients (`acp_proto::attach`), a
//! host's hub, two guests and an attaching client fed arbitrary frames in arbitrary order.

use acp_proto::attach::{AttachRequest, Attacher, Guest, Hub, Linked, MAX_GUESTS, Out, Role, Route, To};

/// Fuzz target `attach`: `data` is lines, each a frame whose first byte says who sends it
/// (the host's client, its agent, one of two guest clients, a join or a leave, the attaching
/// client's core or link) and the rest is the frame. Checks: no panic; everything a hub sends
/// is one JSON value (or, for what it passes through unread, the bytes it was given); a guest
/// not attached (before it joined, after it left) hears nothing but error answers; the hub
/// never holds more than `MAX_GUESTS` guests; an attacher's request is JSON.
pub fn attach(data: &[u8]) {
    let mut hub = Hub::new();
    let mut guests = [Guest::new(), Guest::new()];
    let mut joined = [None::<Role>; 2];
    let mut attacher = Attacher::new("s1", Role::Controller);
    let mut out = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        let Some((&who, frame)) = line.split_first() else { continue };
        out.clear();
        match who % 8 {
            0 => hub.from_host(frame, &mut out),
            1 => {
                hub.from_agent(frame, &mut out);
            }
            2 | 3 => {
                let g = usize::from(who % 2);
                if let Route::Attach(request) = guests[g].from_client(frame) {
                    hub.join(g as u64, &request, &mut out);
                } else if joined[g].is_some() {
                    hub.from_guest(g as u64, frame, &mut out);
                }
            }
            4 => {
                let g = usize::from(frame.first().copied().unwrap_or(0) % 2);
                let role = if frame.get(1).copied().unwrap_or(0) % 2 == 0 { Role::Controller } else { Role::Observer };
                let session = String::from_utf8_lossy(frame.get(2..).unwrap_or_default()).into_owned();
                hub.join(g as u64, &AttachRequest::new(7, session, role), &mut out);
            }
            5 => {
                let g = usize::from(frame.first().copied().unwrap_or(0) % 2);
                hub.leave(g as u64, &mut out);
            }
            6 => attacher.from_core(frame),
            _ => {
                if let Linked::ForwardThenSend(request) = attacher.from_link(frame) {
                    assert!(serde_json::from_slice::<serde_json::Value>(&request).is_ok());
                }
            }
        }
        let now: Vec<u64> = hub.guests().collect();
        assert!(now.len() <= MAX_GUESTS);
        for (g, role) in joined.iter_mut().enumerate() {
            *role = if now.contains(&(g as u64)) { role.or(Some(Role::Controller)) } else { None };
        }
        check(&out, frame, &now);
        for Out { to, frame } in &out {
            if let To::Guest(g) = to
                && let Some(guest) = guests.get_mut(*g as usize)
            {
                guest.from_host("s1", frame);
            }
        }
    }
}

/// What one step sent: JSON, or the input passed through; guests only while joined (but the
/// answer to a refused join or to a stranger's request).
fn check(out: &[Out], input: &[u8], guests: &[u64]) {
    for Out { to, frame } in out {
        let json = serde_json::from_slice::<serde_json::Value>(frame).is_ok();
        assert!(json || frame.as_slice() == input, "{to:?} got neither JSON nor the input: {frame:?}");
        if let To::Guest(g) = to
            && !guests.contains(g)
        {
            let error = serde_json::from_slice::<serde_json::Value>(frame).ok().and_then(|v| v.get("error").cloned());
            assert!(error.is_some(), "guest {g} is not attached but got {}", String::from_utf8_lossy(frame));
        }
    }
}
