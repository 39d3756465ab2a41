//! Leader/follower on the client side: a caller thread waiting for its reply drives the
//! connection itself while no other thread does, so that its reply wakes no one else.
//!
//! The [`Driver`]'s state is the **token**: whoever holds it drives (polls and reads the
//! transport, feeds the core, writes, dispatches), and exactly one thread holds it at a time
//! (a `debug_assert!` checks it at every hand-off). It lives in [`Lead`]'s slot (under its
//! mutex) while nobody drives, else in the driving thread's hands.
//!
//! * **A caller** that must wait for its reply ([`Lead::until`]) takes the token when it is
//!   in the slot and *leads*: it runs the driver's passes and waits as the driver thread
//!   would (in `poll(2)` on the input, the output while a batch is partly out and the wake-up
//!   descriptor, or on the channel), until its reply is in; then it puts the token back.
//!   Events for other threads (their replies, agent requests for the client's handlers,
//!   updates, commands sent to the mailbox) are handled by it as by the driver thread.
//!   When another caller leads, or the driver thread drives while other callers wait
//!   already (many callers at once), the caller *follows*: it counts itself ([`Following`])
//!   and blocks on its reply as before. When the driver thread drives for no one waiting,
//!   the caller becomes a *candidate*: it wakes the driver thread and waits until that one
//!   parked, then leads.
//! * **The driver thread** ([`Driver::run`]) drives while no caller leads. After a pass
//!   with candidates waiting it *parks*: it puts the token in the slot, hands it to them
//!   and waits on a condition variable. It takes the token back (*resumes*) when kicked, or
//!   when a park period ([`PARK`]) passed with the token in the slot and no lead begun
//!   meanwhile. So input that arrives while no caller waits (an agent request or
//!   notification between turns) is read at most about two park periods late, and none is
//!   lost; timers that fall due between leads fire as late.
//! * **Kicks** (the driver thread resumes at once): a leader leaves while followers block
//!   (their replies need a driver), or leaves work that needs the driver thread (input not
//!   fed, frames queued or a batch partly out, held requests, a linger, a timer within a
//!   park period, the connection closing); or an input is sent to the mailbox while the
//!   driver thread is parked ([`Lead::poke`], from
//!   [`Mailbox::send`](crate::wake::Mailbox::send)).
//!
//! No wake-up is lost at the hand-offs: every change of who drives is made under the slot's
//! mutex, and the driver thread parks only after a last look at its channel, made after it
//! announced that it parks (`parked`); a sender looks at `parked` after its send (both with
//! sequentially consistent fences), so either the driver thread sees the input or the sender
//! kicks it. A leader that unwinds puts the token back as it leaves. When the driver thread
//! ends, candidates stop waiting for it ([`EndOnDrop`]).
//!
//! Only clients lead ([`Lead::new`]`(false)` on the agent side: the driver thread always
//! drives, as before). The agent's handler pool stays: handlers may block, so a handler's
//! thread does not drive.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant as StdInstant};

use acp_proto::role::Role;

use super::{Driver, Input, Version};
use crate::sync::lock;
use crate::wake::Mailbox;

/// How long the parked driver thread waits before it looks whether callers still lead.
pub(crate) const PARK: Duration = Duration::from_millis(1);

/// Who drives the connection (see the [module docs](self)).
pub(crate) struct Lead<P: Version, R: Role> {
    slot: Mutex<Slot<P, R>>,
    /// The parked driver thread waits here.
    resume: Condvar,
    /// The driver thread is parked (or about to park): a mailbox send must kick it.
    parked: AtomicBool,
    /// Callers waiting for the driving driver thread to park (a copy of the slot's count,
    /// read by the driver thread after each pass without locking the slot).
    candidates: AtomicUsize,
    /// The candidates wait here.
    handed: Condvar,
    /// The invariant: at most one thread holds the driver.
    #[cfg(debug_assertions)]
    driving: AtomicBool,
    /// Callers may lead (client side).
    enabled: bool,
}

struct Slot<P: Version, R: Role> {
    /// The token, while nobody drives.
    driver: Option<Box<Driver<P, R>>>,
    /// A caller holds the token.
    leader: bool,
    /// Leads begun so far (the parked driver thread resumes after a park period without one).
    leads: u64,
    /// Callers blocked on a reply while another thread drives.
    followers: usize,
    /// Callers waiting for the driving driver thread to park.
    candidates: usize,
    /// The driver thread ended: nobody drives any more.
    ended: bool,
    /// The driver thread must resume at once.
    kick: bool,
}

impl<P: Version, R: Role> std::fmt::Debug for Lead<P, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lead").field("enabled", &self.enabled).finish_non_exhaustive()
    }
}

/// A caller blocked on its reply while another thread drives; counted until dropped.
pub(crate) struct Following<'a, P: Version, R: Role>(&'a Lead<P, R>);

impl<P: Version, R: Role> Drop for Following<'_, P, R> {
    fn drop(&mut self) {
        self.0.slot().followers -= 1;
    }
}

/// The driver thread ended (dropped when its run ends, also by unwinding): callers waiting to
/// lead block on their replies instead (the driver, dropped with the thread's run, drops
/// them: the connection is closed).
pub(super) struct EndOnDrop<'a, P: Version, R: Role>(pub(super) &'a Lead<P, R>);

impl<P: Version, R: Role> Drop for EndOnDrop<'_, P, R> {
    fn drop(&mut self) {
        self.0.slot().ended = true;
        self.0.handed.notify_all();
    }
}

/// Puts the token back when a leader leaves, also by unwinding.
struct Leading<'a, P: Version, R: Role> {
    lead: &'a Lead<P, R>,
    driver: Option<Box<Driver<P, R>>>,
    finished: bool,
}

impl<P: Version, R: Role> Drop for Leading<'_, P, R> {
    fn drop(&mut self) {
        let Some(driver) = self.driver.take() else { return };
        let needed = self.finished || std::thread::panicking() || driver.needs_its_thread();
        let mut slot = self.lead.slot();
        self.lead.give(&mut slot, driver);
        slot.leader = false;
        if needed || slot.followers > 0 || slot.kick {
            slot.kick = true;
            self.lead.resume.notify_one();
        }
    }
}

/// A parked driver thread's kick after a mailbox send, whatever the protocol version of the
/// driver (the mailbox does not know it).
pub(crate) trait Poke: Send + Sync + std::fmt::Debug {
    /// See [`Lead::poke`].
    fn poke(&self);
}

impl<P: Version, R: Role> Poke for Lead<P, R> {
    fn poke(&self) {
        Lead::poke(self);
    }
}

impl<P: Version, R: Role> Lead<P, R> {
    /// `enabled`: callers may lead (the client side).
    pub(crate) fn new(enabled: bool) -> Lead<P, R> {
        Lead {
            slot: Mutex::new(Slot {
                driver: None,
                leader: false,
                leads: 0,
                followers: 0,
                candidates: 0,
                ended: false,
                kick: false,
            }),
            resume: Condvar::new(),
            parked: AtomicBool::new(false),
            candidates: AtomicUsize::new(0),
            handed: Condvar::new(),
            // The driver thread starts out driving.
            #[cfg(debug_assertions)]
            driving: AtomicBool::new(true),
            enabled,
        }
    }

    fn slot(&self) -> MutexGuard<'_, Slot<P, R>> {
        lock(&self.slot)
    }

    /// Takes the token out of the slot (there is one: checked by the caller).
    fn take(&self, slot: &mut Slot<P, R>) -> Option<Box<Driver<P, R>>> {
        let driver = slot.driver.take()?;
        #[cfg(debug_assertions)]
        debug_assert!(!self.driving.swap(true, Ordering::AcqRel), "two threads drive");
        Some(driver)
    }

    fn give(&self, slot: &mut Slot<P, R>, driver: Box<Driver<P, R>>) {
        #[cfg(debug_assertions)]
        debug_assert!(self.driving.swap(false, Ordering::AcqRel), "the token was not held");
        debug_assert!(slot.driver.is_none(), "two tokens");
        slot.driver = Some(driver);
    }

    /// Called by a thread that must wait until `ready()`: leads while the token is free, until
    /// `ready()` (or the connection finished). When the driver thread drives for no one
    /// waiting, the caller waits until it parks (`mailbox`: to wake it for that) and leads
    /// then; else it counts itself as a follower while it blocks on its reply as usual (the
    /// returned guard).
    pub(crate) fn until<'a>(
        &'a self,
        mailbox: &Mailbox,
        ready: &mut dyn FnMut() -> bool,
    ) -> Option<Following<'a, P, R>> {
        if !self.enabled || ready() {
            return None;
        }
        let mut slot = self.slot();
        let driver = loop {
            if let Some(driver) = self.take(&mut slot) {
                break driver;
            }
            if slot.ended {
                return None;
            }
            if slot.leader || slot.followers > 0 {
                // Another caller leads, or the driver thread drives for callers that wait
                // already (many callers at once): a hand-off would only add wake-ups.
                slot.followers += 1;
                return Some(Following(self));
            }
            // The driver thread drives for no one waiting: it parks after its current pass,
            // woken for that.
            slot.candidates += 1;
            self.candidates.store(slot.candidates, Ordering::Release);
            drop(slot);
            let _ = mailbox.send(Input::Wake);
            slot = self.slot();
            while slot.driver.is_none() && !slot.leader && !slot.ended {
                slot = self.handed.wait(slot).unwrap_or_else(PoisonError::into_inner);
            }
            slot.candidates -= 1;
            self.candidates.store(slot.candidates, Ordering::Release);
        };
        slot.leader = true;
        slot.leads += 1;
        drop(slot);
        let mut leading = Leading { lead: self, driver: Some(driver), finished: false };
        if let Some(driver) = leading.driver.as_mut() {
            let scope = driver.tracer().scope();
            leading.finished = scope.in_scope(|| driver.lead(ready));
        }
        None
    }

    /// The driver thread, after a pass: whether to park (callers wait to lead).
    pub(super) fn should_park(&self) -> bool {
        self.candidates.load(Ordering::Acquire) > 0
    }

    /// The driver thread parks: puts the token in the slot and waits until it may take it
    /// back (see the module docs); `next`: its own next deadline (the core's timer, ...).
    pub(super) fn park(&self, mut driver: Box<Driver<P, R>>, next: Option<Duration>) -> Box<Driver<P, R>> {
        self.parked.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        // The last look: an input sent before `parked` was visible is taken here.
        if let Ok(input) = driver.rx.try_recv() {
            self.parked.store(false, Ordering::SeqCst);
            driver.on_input(input);
            return driver;
        }
        let mut slot = self.slot();
        if std::mem::take(&mut slot.kick) {
            self.parked.store(false, Ordering::SeqCst);
            return driver;
        }
        self.give(&mut slot, driver);
        if slot.candidates > 0 {
            self.handed.notify_all();
        }
        let mut seen = slot.leads;
        let mut until = StdInstant::now() + next.map_or(PARK, |n| n.min(PARK));
        loop {
            let left = until.saturating_duration_since(StdInstant::now());
            slot = self.resume.wait_timeout(slot, left).unwrap_or_else(PoisonError::into_inner).0;
            let timed_out = StdInstant::now() >= until;
            if slot.driver.is_some() && (slot.kick || (timed_out && slot.leads == seen)) {
                slot.kick = false;
                self.parked.store(false, Ordering::SeqCst);
                if let Some(driver) = self.take(&mut slot) {
                    return driver;
                }
            }
            if timed_out {
                seen = slot.leads;
                until = StdInstant::now() + PARK;
            }
        }
    }

    /// After an input was sent to the mailbox: kicks the parked driver thread (see the module
    /// docs). A leader sees the input itself; if it is leaving, it kicks on the way out.
    pub(crate) fn poke(&self) {
        fence(Ordering::SeqCst);
        if !self.parked.load(Ordering::SeqCst) {
            return;
        }
        let mut slot = self.slot();
        slot.kick = true;
        if slot.driver.is_some() {
            self.resume.notify_one();
        }
    }
}
