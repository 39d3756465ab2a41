//! What the resuming clients share (feature `unstable_resumable_transport`): how they retry
//! ([`Reconnect`], a jittered doubling backoff) and what they report ([`LinkEvent`]). The
//! WebSocket's link is `ws_reconnect.rs`; the Streamable HTTP streams', `http_run.rs`.

use std::time::Duration;

use tokio::sync::mpsc;

/// How a remote client resumes a lost stream: a WebSocket (`WsClientOptions::reconnect`) or
/// a Streamable HTTP stream (`HttpClientOptions::reconnect`).
///
/// ```no_run
/// # async fn run() -> Result<(), acp_tokio::Error> {
/// use acp_tokio::remote::{LinkEvent, Reconnect, WsClientOptions, connect_ws};
///
/// struct Editor;
/// impl acp_tokio::Client for Editor {}
///
/// let (events, mut reported) = tokio::sync::mpsc::channel(16);
/// let reconnect = Reconnect { events: Some(events), ..Reconnect::default() };
/// let options = WsClientOptions { reconnect: Some(reconnect), ..WsClientOptions::default() };
/// let (conn, _) = connect_ws(Editor, "ws://127.0.0.1:8765/acp", options).await?;
/// tokio::spawn(async move {
///     while let Some(event) = reported.recv().await {
///         if let LinkEvent::Resumed { cursor, .. } = event {
///             eprintln!("resumed after {cursor:?}");
///         }
///     }
/// });
/// # drop(conn);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Reconnect {
    /// Tries in a row before the link gives up. Default 8.
    pub attempts: u32,
    /// The delay before the first try (each try waits a random half to all of its delay).
    /// Default 100 ms.
    pub first_backoff: Duration,
    /// The delay doubles up to this. Default 5 s.
    pub max_backoff: Duration,
    /// A socket from which nothing came for this long is lost (the server pings every 15 s when
    /// it has nothing to say; the draft's five intervals). Default 75 s.
    pub silent_after: Duration,
    /// How many bytes of the frames sent last are kept to send again after a resume. Default
    /// 4 MiB.
    pub kept_bytes: usize,
    /// Where losses, resumes and failures are reported.
    pub events: Option<mpsc::Sender<LinkEvent>>,
}

impl Default for Reconnect {
    fn default() -> Self {
        Reconnect {
            attempts: 8,
            first_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            silent_after: Duration::from_secs(75),
            kept_bytes: 4 << 20,
            events: None,
        }
    }
}

/// What happened to a resuming link ([`Reconnect::events`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkEvent {
    /// The socket was lost (why, in the socket library's words); a resume begins.
    Lost {
        /// Why the socket counts as lost.
        reason: String,
    },
    /// The connection goes on over a new socket (a stream, over Streamable HTTP), from after
    /// `cursor`.
    Resumed {
        /// The last cursor the client had seen.
        cursor: String,
        /// How many of the client's frames were sent again (the lost socket had lost them).
        resent: usize,
        /// The turn of each session as the server saw it then (`_meta["acp/turnState"]` of a
        /// WebSocket resume's answer, the `acp/turnState` event of an SSE one), by session id;
        /// empty when the server said nothing.
        turns: Vec<ResumedTurn>,
    },
    /// The connection could not be resumed: the link ends. `reason` may hold the server's
    /// words: escape it before it reaches a terminal.
    Failed {
        /// Why.
        reason: String,
    },
}

/// A session's turn when its stream resumed ([`LinkEvent::Resumed`]), as
/// `acp_proto::resume` reads it. The strings are the server's: escape them before they reach
/// a terminal.
pub use acp_proto::resume::ResumedTurn;

impl Reconnect {
    /// Reports `event` without waiting (a full channel drops it).
    pub(crate) fn report(&self, event: LinkEvent) {
        if let Some(events) = &self.events {
            let _ = events.try_send(event);
        }
    }
}

/// Why a try to resume failed.
#[cfg(feature = "ws")]
pub(crate) enum Try {
    /// Worth another try (the network, a timeout, a busy server).
    Again(String),
    /// Final.
    Never(String),
}

/// The waits between tries: a random half to all of a delay that doubles from
/// [`Reconnect::first_backoff`] to [`Reconnect::max_backoff`], [`Reconnect::attempts`] times.
pub(crate) struct Backoff {
    delay: Duration,
    max: Duration,
    left: u32,
    attempts: u32,
    last: String,
}

impl Backoff {
    pub(crate) fn new(reconnect: &Reconnect) -> Backoff {
        Backoff {
            delay: reconnect.first_backoff,
            max: reconnect.max_backoff,
            left: reconnect.attempts,
            attempts: reconnect.attempts,
            last: String::from("no try was made"),
        }
    }

    /// Waits before the next try; `false` once the tries are spent.
    pub(crate) async fn wait(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        tokio::time::sleep(jittered(self.delay)).await;
        self.delay = (self.delay * 2).min(self.max);
        true
    }

    /// A try failed, worth another one.
    pub(crate) fn failed(&mut self, why: String) {
        self.last = why;
    }

    /// Why the link gives up once the tries are spent.
    pub(crate) fn spent(self) -> String {
        format!("{} tries to resume failed; the last: {}", self.attempts, self.last)
    }
}

/// A random half to all of `delay`.
fn jittered(delay: Duration) -> Duration {
    let random = getrandom::u32().unwrap_or(u32::MAX);
    delay / 2 + (delay / 2).mul_f64(f64::from(random) / f64::from(u32::MAX))
}

/// A status refusing a resume for good (the connection is gone, or the caller is not its
/// owner); any other is worth another try.
pub(crate) fn refused_for_good(status: u16) -> bool {
    matches!(status, 401 | 403 | 404 | 409 | 410)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jittered_delay_is_half_to_all_of_it() {
        for _ in 0..100 {
            let delay = jittered(Duration::from_millis(200));
            assert!((Duration::from_millis(100)..=Duration::from_millis(200)).contains(&delay), "{delay:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_backoff_doubles_up_to_its_bound_and_stops_after_its_tries() {
        let reconnect = Reconnect {
            attempts: 4,
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(3),
            ..Reconnect::default()
        };
        let mut backoff = Backoff::new(&reconnect);
        let mut waits = Vec::new();
        loop {
            let before = tokio::time::Instant::now();
            if !backoff.wait().await {
                break;
            }
            waits.push(before.elapsed());
        }
        assert_eq!(waits.len(), 4);
        let bounds = [(500, 1000), (1000, 2000), (1500, 3000), (1500, 3000)];
        for (wait, (low, high)) in waits.iter().zip(bounds) {
            assert!((Duration::from_millis(low)..=Duration::from_millis(high)).contains(wait), "{waits:?}");
        }
        assert!(backoff.spent().starts_with("4 tries to resume failed"));
    }
}
