//! The requirements judged over every scenario's wire rather than in one scenario: clean
//! stdout, session ids given before their updates, no turn content after a turn's response,
//! permission asks about announced tool calls (see [`super::track`]). A failure shows the
//! transcript of the first scenario where it happened.

use super::super::report::{Finding, Gate, Outcome, Requirement};
use super::Ran;
use super::requirements::{CLEAN_STDOUT, SESSION_ID_FIRST, TOOL_ANNOUNCED, TURN_NO_LATE};
use super::track::{Notes, Tracker};

/// The requirements judged here (v1).
const WIDE: [&Requirement; 4] = [&SESSION_ID_FIRST, &TURN_NO_LATE, &TOOL_ANNOUNCED, &CLEAN_STDOUT];

/// The requirements judged here at `protocol` (v2: only clean stdout; its turns are judged
/// in their scenarios).
pub(super) fn wide(protocol: u8) -> &'static [&'static Requirement] {
    if protocol == 1 { &WIDE } else { &WIDE[3..] }
}

/// One finding per requirement of [`wide`]`(protocol)`.
pub(super) fn judge(ran: &[Ran], gate: Option<&Gate>, protocol: u8) -> Vec<Finding> {
    let stdout = match gate {
        Some(gate @ Gate::NotStarted(_)) => Finding::new(&CLEAN_STDOUT, Outcome::Blocked(gate.reason()), vec![]),
        _ => clean_stdout(ran),
    };
    if protocol != 1 {
        return vec![stdout];
    }
    let sessions = any_session(ran);
    let asks: usize = ran.iter().map(|r| r.track.asks).sum();
    let turns: usize = ran.iter().map(|r| r.track.turns_ended).sum();
    let unreached = |what: &str| match gate {
        Some(gate) => Outcome::Blocked(format!("{} (so {what})", gate.reason())),
        None => Outcome::Skip(format!("no scenario reached it ({what})")),
    };
    vec![
        noted(&SESSION_ID_FIRST, ran, |t| &t.early, sessions, || unreached("no session was opened")),
        noted(&TURN_NO_LATE, ran, |t| &t.late, turns > 0, || unreached("no turn ended")),
        noted(
            &TOOL_ANNOUNCED,
            ran,
            |t| &t.unannounced,
            asks > 0,
            || {
                if gate.is_some() {
                    unreached("no permission was asked")
                } else {
                    Outcome::Skip("the agent asked no permission".into())
                }
            },
        ),
        stdout,
    ]
}

/// Whether any scenario got a session id.
fn any_session(ran: &[Ran]) -> bool {
    ran.iter().any(|r| r.track.has_sessions())
}

/// Fails with the first scenario's notes of `notes`; passes when `reached` and none; else
/// `unreached`.
fn noted(
    req: &'static Requirement,
    ran: &[Ran],
    notes: fn(&Tracker) -> &Notes,
    reached: bool,
    unreached: impl FnOnce() -> Outcome,
) -> Finding {
    let total: usize = ran.iter().map(|r| notes(&r.track).total).sum();
    match ran.iter().find(|r| notes(&r.track).total > 0) {
        Some(first) => {
            let why = format!("{} — {total} in all (the first scenario with one shown)", notes(&first.track).summary());
            Finding::new(req, Outcome::Fail(why), first.transcript.clone())
        }
        None if reached => Finding::new(req, Outcome::Pass, Vec::new()),
        None => Finding::new(req, unreached(), Vec::new()),
    }
}

/// `agent.stdio.clean-stdout`.
fn clean_stdout(ran: &[Ran]) -> Finding {
    match ran.iter().find(|r| r.not_json > 0) {
        None => Finding::new(&CLEAN_STDOUT, Outcome::Pass, Vec::new()),
        Some(first) => {
            let total: usize = ran.iter().map(|r| r.not_json).sum();
            let why = format!("{total} line(s) of stdout were not JSON (the first scenario with one shown)");
            Finding::new(&CLEAN_STDOUT, Outcome::Fail(why), first.transcript.clone())
        }
    }
}
