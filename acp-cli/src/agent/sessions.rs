//! The reference agent's open sessions: at most a fixed number, freed by `session/close`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use acp_blocking::CancelToken;
use acp_blocking::acp_proto::types::SessionId;
use acp_blocking::acp_proto::{ErrorCode, RpcError};
use serde_json::json;

/// The reason given when `session/new` is refused at the limit.
pub const TOO_MANY_SESSIONS: &str = "too many open sessions; close one with session/close";

/// A session's signals to its running turns: set when the session is closed (the turn
/// stops), and the texts `_session/steering` added to a turn while it waits.
#[derive(Debug, Default)]
pub(super) struct Closed {
    flag: AtomicBool,
    /// Turns of the session waiting in [`Closed::wait`] now: only they take steering (changed
    /// under the `steered` lock).
    waiting: AtomicUsize,
    /// Steering texts not yet taken by a turn.
    steered: Mutex<Vec<String>>,
}

/// The most steering texts waiting for a turn of one session.
const MAX_STEERED: usize = 64;

impl Closed {
    pub(super) fn is_set(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Adds `text` to a turn waiting in [`Closed::wait`]: `injected`, or `failed` when none
    /// waits (or too many texts do).
    pub(super) fn steer(&self, text: String) -> &'static str {
        let mut steered = self.steered.lock().unwrap_or_else(PoisonError::into_inner);
        if self.waiting.load(Ordering::Acquire) == 0 || steered.len() >= MAX_STEERED {
            return "failed";
        }
        steered.push(text);
        "injected"
    }

    /// The steering texts taken, and whether this was the last waiting turn leaving (then no
    /// text is taken after these).
    fn take_steered(&self, leaving: bool) -> Vec<String> {
        let mut steered = self.steered.lock().unwrap_or_else(PoisonError::into_inner);
        if leaving {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
        }
        std::mem::take(&mut *steered)
    }

    /// Waits `delay` unless the turn is cancelled or the session closed first; returns
    /// whether it was. Sleeps in short slices to notice a close, handing each steering text
    /// to `steered` as it comes; every text accepted meanwhile is handed over before it
    /// returns.
    pub(super) fn wait(&self, cancel: &CancelToken, delay: Duration, steered: &mut dyn FnMut(String)) -> bool {
        const SLICE: Duration = Duration::from_millis(20);
        let end = Instant::now() + delay;
        {
            let _steered = self.steered.lock().unwrap_or_else(PoisonError::into_inner);
            self.waiting.fetch_add(1, Ordering::AcqRel);
        }
        let stopped = loop {
            self.take_steered(false).into_iter().for_each(&mut *steered);
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break false;
            }
            if cancel.wait_timeout(left.min(SLICE)) || self.is_set() {
                break true;
            }
        };
        self.take_steered(true).into_iter().for_each(&mut *steered);
        stopped
    }
}

/// An open session: its close signal and the text of its `systemPrompt`, if it has one.
#[derive(Debug, Default)]
struct Open {
    closed: Arc<Closed>,
    system_prompt: Option<Arc<str>>,
}

/// The open sessions (at most `limit`) and the counter naming new ones.
#[derive(Debug)]
pub(super) struct Sessions {
    open: Mutex<HashMap<SessionId, Open>>,
    limit: usize,
    next: AtomicU64,
    /// What new session ids start with (`sess-`).
    prefix: String,
}

impl Sessions {
    pub(super) fn new(limit: usize) -> Sessions {
        Sessions::with_prefix(limit, "sess-".to_owned())
    }

    /// Sessions whose ids start with `prefix`.
    pub(super) fn with_prefix(limit: usize, prefix: String) -> Sessions {
        Sessions { open: Mutex::new(HashMap::new()), limit, next: AtomicU64::new(0), prefix }
    }

    /// Opens the remembered session `id` again (`session/load`, `session/resume`); one open
    /// already stays as it is. Refused at the limit like [`Sessions::open`].
    pub(super) fn reopen(&self, id: &SessionId) -> Result<(), RpcError> {
        let mut open = self.lock();
        if open.contains_key(id) {
            return Ok(());
        }
        if open.len() >= self.limit {
            return Err(RpcError::new(ErrorCode::INTERNAL_ERROR, TOO_MANY_SESSIONS)
                .with_data(json!({ "reason": TOO_MANY_SESSIONS, "limit": self.limit })));
        }
        open.insert(id.clone(), Open::default());
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<SessionId, Open>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A fresh session (`sess-1`, `sess-2`, …), or `-32603` with `data: {reason, limit}` when
    /// `limit` sessions are open. `system_prompt` is kept for [`Sessions::system_prompt`].
    pub(super) fn open(&self, system_prompt: Option<String>) -> Result<SessionId, RpcError> {
        let mut open = self.lock();
        if open.len() >= self.limit {
            return Err(RpcError::new(ErrorCode::INTERNAL_ERROR, TOO_MANY_SESSIONS)
                .with_data(json!({ "reason": TOO_MANY_SESSIONS, "limit": self.limit })));
        }
        let id = SessionId::from(format!("{}{}", self.prefix, self.next.fetch_add(1, Ordering::Relaxed) + 1));
        open.insert(id.clone(), Open { closed: Arc::default(), system_prompt: system_prompt.map(Arc::from) });
        Ok(id)
    }

    /// The session's close signal, or the unknown-session error ([`unknown`]).
    pub(super) fn get(&self, id: &SessionId) -> Result<Arc<Closed>, RpcError> {
        self.lock().get(id).map(|o| o.closed.clone()).ok_or_else(|| unknown(id))
    }

    /// The text of the session's `systemPrompt`, if it was given one.
    pub(super) fn system_prompt(&self, id: &SessionId) -> Option<Arc<str>> {
        self.lock().get(id).and_then(|o| o.system_prompt.clone())
    }

    /// Forgets the session and stops its running turn, or the unknown-session error.
    pub(super) fn close(&self, id: &SessionId) -> Result<(), RpcError> {
        let closed = self.lock().remove(id).ok_or_else(|| unknown(id))?;
        closed.closed.flag.store(true, Ordering::Release);
        Ok(())
    }
}

/// `-32002` for a session that was never opened or is closed.
fn unknown(id: &SessionId) -> RpcError {
    RpcError::resource_not_found(format!("unknown session `{id}`"))
        .with_data(json!({ "reason": "unknown session", "sessionId": id }))
}
