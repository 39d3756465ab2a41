//! Compile-time checks of the method table's structural invariants.

use super::{Direction, Kind, Layer, METHODS, MethodRow};

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn starts_with(s: &str, prefix: &str) -> bool {
    let (s, p) = (s.as_bytes(), prefix.as_bytes());
    if s.len() < p.len() {
        return false;
    }
    let mut i = 0;
    while i < p.len() {
        if s[i] != p[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn directions_overlap(a: Direction, b: Direction) -> bool {
    matches!(
        (a, b),
        (Direction::Both, _)
            | (_, Direction::Both)
            | (Direction::ClientToAgent, Direction::ClientToAgent)
            | (Direction::AgentToClient, Direction::AgentToClient)
    )
}

/// Checks the table's structural invariants; evaluated at compile time below.
const fn table_is_valid(rows: &[MethodRow]) -> bool {
    let mut i = 0;
    while i < rows.len() {
        let r = &rows[i];
        // Rows are in `Method` order, so `Method::row` indexes correctly.
        if r.method as usize != i {
            return false;
        }
        // A notification has no result type; a request has one.
        match (r.kind, r.result) {
            (Kind::Notification, None) | (Kind::Request, Some(_)) => {}
            _ => return false,
        }
        // `_` is reserved for extensions, which are never rows.
        if starts_with(r.wire, "_") {
            return false;
        }
        // `$/` exactly on protocol rows.
        if starts_with(r.wire, "$/") != matches!(r.layer, Layer::Protocol) {
            return false;
        }
        // Protocol and session-control rows are notifications without gates.
        if !matches!(r.layer, Layer::App) && (!matches!(r.kind, Kind::Notification) || !r.gate.is_empty()) {
            return false;
        }
        // App rows have a handler in the adapters' traits; the connection's rows have none.
        if r.handler.is_some() != matches!(r.layer, Layer::App) {
            return false;
        }
        let mut j = i + 1;
        while j < rows.len() {
            let other = &rows[j];
            if directions_overlap(r.direction, other.direction) {
                // Unique wire string per direction and kind (`proxy/successor` is a request and
                // a notification in each direction).
                if str_eq(r.wire, other.wire) && r.kind as u8 == other.kind as u8 {
                    return false;
                }
                // Unique handler name per receiving side (they are methods of one trait).
                if let (Some(a), Some(b)) = (r.handler, other.handler)
                    && str_eq(a, b)
                {
                    return false;
                }
            }
            j += 1;
        }
        i += 1;
    }
    true
}

const _: () = assert!(table_is_valid(METHODS), "the method table breaks an invariant");
