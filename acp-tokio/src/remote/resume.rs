//! Resumable SSE streams on the server (feature `unstable_resumable_transport`, see
//! [`Resumable`](super::Resumable)): the retention of the options, its advertisement in the
//! answer to `initialize`, and the eviction of retained messages across a connection's
//! streams. The ring itself is in `streams.rs`.

use axum::http::HeaderMap;

use super::server::WsServerOptions;
use super::streams::{Retention, Stream};

/// The header a resuming `GET` names its cursor in.
pub(crate) const LAST_EVENT_ID: &str = "last-event-id";

/// What each stream retains, when the server resumes streams.
#[cfg(feature = "unstable_resumable_transport")]
pub(crate) fn retention(options: &WsServerOptions) -> Option<Retention> {
    options.resumable.map(|r| Retention { messages: r.retention_messages, max_age: r.retention })
}

/// What each stream retains: nothing without the feature.
#[cfg(not(feature = "unstable_resumable_transport"))]
pub(crate) fn retention(_: &WsServerOptions) -> Option<Retention> {
    None
}

/// How long a connection may stay without a reader of its connection-scoped stream.
#[cfg(feature = "unstable_resumable_transport")]
pub(crate) fn grace(options: &WsServerOptions) -> Option<std::time::Duration> {
    options.resumable.map(|r| r.grace)
}

/// No grace period without the feature: today's idle timeout alone.
#[cfg(not(feature = "unstable_resumable_transport"))]
pub(crate) fn grace(_: &WsServerOptions) -> Option<std::time::Duration> {
    None
}

/// The answer to `initialize` with the retention advertised (`acp_proto::resume::advertise`);
/// as it came when the streams are not resumable or the answer is no successful one.
pub(crate) fn advertise(retention: Option<Retention>, answer: String) -> String {
    #[cfg(feature = "unstable_resumable_transport")]
    if let Some(retention) = retention {
        let seconds = retention.max_age.as_secs();
        return acp_proto::resume::advertise(&answer, retention.messages, seconds).unwrap_or(answer);
    }
    let _ = retention;
    answer
}

/// The first event of a resumed SSE stream: the turn state of its session (of every session
/// of the connection on the connection's stream), as an event of the type `acp/turnState`
/// (no `id:`, so that it moves no client's cursor; a client that reads only `message` events
/// skips it):
///
/// ```text
/// event: acp/turnState
/// data: {"sess-1":{"state":"running","promptRequestId":3}}
/// ```
#[cfg(feature = "unstable_resumable_transport")]
pub(crate) fn turn_state_event(turns: &super::inflight::InFlight, session: Option<&str>) -> Option<String> {
    let mut states = turns.turn_states();
    if let Some(session) = session {
        states.retain(|turn| turn.session == session);
    }
    Some(format!("event: acp/turnState\ndata: {}\n\n", acp_proto::resume::turn_state_json(&states)))
}

/// No turn state without the feature (no stream resumes).
#[cfg(not(feature = "unstable_resumable_transport"))]
pub(crate) fn turn_state_event(_: &super::inflight::InFlight, _: Option<&str>) -> Option<String> {
    None
}

/// The cursor a `GET` resumes after (`Last-Event-ID`), if it names one.
pub(crate) fn last_event_id(headers: &HeaderMap) -> Option<&str> {
    headers.get(LAST_EVENT_ID).and_then(|v| v.to_str().ok())
}

/// Drops the message retained longest among `streams`; `false` when none retains any.
pub(crate) fn evict_oldest<'a>(streams: impl IntoIterator<Item = &'a Stream>) -> bool {
    let oldest = streams.into_iter().filter_map(|s| Some((s.oldest_retained()?, s))).min_by_key(|(at, _)| *at);
    oldest.is_some_and(|(_, s)| s.evict_oldest().is_some())
}
