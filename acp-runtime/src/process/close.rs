//! The close sequence of an agent process, as a sans-IO state machine: the caller says what
//! time it is and whether the process has exited, and is told what to do next.
//!
//! Rules (each has a test below):
//! 1. The process gets `grace` to exit by itself (its stdin is closed by then): wait.
//! 2. Still running after `grace`: `SIGTERM` to its process group, then `term_grace` more.
//! 3. Still running after that: `SIGKILL` to the group, then wait for the exit (it cannot
//!    ignore `SIGKILL`), and reap it.
//! 4. Once it has exited, the sequence is done, whatever stage it was in.

use std::time::{Duration, Instant};

/// What the supervisor does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseStep {
    /// Wait for the process to exit, until the instant if one is given, then ask again.
    Wait(Option<Instant>),
    /// Send `SIGTERM` to the process group, then ask again.
    Terminate,
    /// Send `SIGKILL` to the process group (or kill the process), then ask again.
    Kill,
    /// The process has exited: reap it.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Grace(Instant),
    Terminated(Instant),
    Killed,
}

/// The close sequence of one process, sans-IO: the caller says what time it is and whether
/// the process has exited, and is told what to do next.
///
/// 1. The process gets `grace` to exit by itself (its stdin is closed by then): wait.
/// 2. Still running after `grace`: `SIGTERM` to its process group, then `term_grace` more.
/// 3. Still running after that: `SIGKILL` to the group, then wait for the exit, and reap it.
/// 4. Once it has exited, the sequence is done, whatever stage it was in.
///
/// ```
/// use std::time::{Duration, Instant};
/// use acp_runtime::process::{CloseSequence, CloseStep};
///
/// let start = Instant::now();
/// let second = Duration::from_secs(1);
/// let mut close = CloseSequence::new(start, second, second);
/// assert_eq!(close.next(start, false), CloseStep::Wait(Some(start + second)));
/// assert_eq!(close.next(start + second, false), CloseStep::Terminate);
/// assert_eq!(close.next(start + second, true), CloseStep::Done);
/// ```
#[derive(Debug, Clone)]
pub struct CloseSequence {
    stage: Stage,
    term_grace: Duration,
}

impl CloseSequence {
    /// A sequence starting at `now` (the process's stdin was just closed): `grace` to exit by
    /// itself, then `term_grace` after `SIGTERM`.
    pub fn new(now: Instant, grace: Duration, term_grace: Duration) -> CloseSequence {
        CloseSequence { stage: Stage::Grace(now + grace), term_grace }
    }

    /// The next step at `now`, given whether the process has exited.
    pub fn next(&mut self, now: Instant, exited: bool) -> CloseStep {
        if exited {
            return CloseStep::Done;
        }
        match self.stage {
            Stage::Grace(until) | Stage::Terminated(until) if now < until => CloseStep::Wait(Some(until)),
            Stage::Grace(_) => {
                self.stage = Stage::Terminated(now + self.term_grace);
                CloseStep::Terminate
            }
            Stage::Terminated(_) => {
                self.stage = Stage::Killed;
                CloseStep::Kill
            }
            Stage::Killed => CloseStep::Wait(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn rule_1_the_process_gets_its_grace_first() {
        let t = Instant::now();
        let mut close = CloseSequence::new(t, S, S);
        assert_eq!(close.next(t, false), CloseStep::Wait(Some(t + S)));
        assert_eq!(close.next(t + S / 2, false), CloseStep::Wait(Some(t + S)));
    }

    #[test]
    fn rule_2_then_sigterm_and_the_term_grace() {
        let t = Instant::now();
        let mut close = CloseSequence::new(t, S, 2 * S);
        assert_eq!(close.next(t + S, false), CloseStep::Terminate);
        assert_eq!(close.next(t + S, false), CloseStep::Wait(Some(t + 3 * S)));
    }

    #[test]
    fn rule_3_then_sigkill_and_a_wait_without_deadline() {
        let t = Instant::now();
        let mut close = CloseSequence::new(t, S, S);
        assert_eq!(close.next(t + S, false), CloseStep::Terminate);
        assert_eq!(close.next(t + 2 * S, false), CloseStep::Kill);
        assert_eq!(close.next(t + 3 * S, false), CloseStep::Wait(None));
        assert_eq!(close.next(t + 9 * S, false), CloseStep::Wait(None));
    }

    #[test]
    fn rule_4_an_exit_ends_the_sequence_at_any_stage() {
        let t = Instant::now();
        for steps in 0..4 {
            let mut close = CloseSequence::new(t, S, S);
            for i in 0..steps {
                close.next(t + i * S, false);
            }
            assert_eq!(close.next(t + steps * S, true), CloseStep::Done, "after {steps} steps");
        }
    }
}
