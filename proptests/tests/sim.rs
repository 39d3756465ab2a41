//! The deterministic two-peer simulation, run over many seeds.
//!
//! * `ACP_SIM_RUNS=N` sets the number of seeds (default 2000), `ACP_SIM_START=n` the first seed
//!   (default 0), `ACP_SIM_STEPS=N` the steps per seed (default 200).
//! * `ACP_SIM_SEED=n` runs only seed `n` and prints its trace.
//! * A failing seed prints `ACP_SIM_SEED=<n>` and its action trace.

use std::time::Instant;

use proptests::sim::{OptInCounts, SimConfig, Summary, UnstableCounts, run_seed};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn config() -> SimConfig {
    SimConfig { steps: env_u64("ACP_SIM_STEPS", 200) as usize, ..SimConfig::default() }
}

fn run_or_report(seed: u64) -> Summary {
    run_or_report_with(seed, config())
}

fn run_or_report_with(seed: u64, config: SimConfig) -> Summary {
    match run_seed(seed, config.clone()) {
        Ok(summary) => summary,
        Err((message, trace)) => {
            let tail = trace.len().saturating_sub(200);
            eprintln!("---- trace of seed {seed} (last {} of {} actions) ----", trace.len() - tail, trace.len());
            for line in &trace[tail..] {
                eprintln!("{line}");
            }
            panic!("simulation failed: {message}\nreplay with ACP_SIM_SEED={seed} (protocol {:?})", config.protocol);
        }
    }
}

fn add_opt_in(total: &mut OptInCounts, s: &OptInCounts) {
    total.updates_sent += s.updates_sent;
    total.updates_refused += s.updates_refused;
    total.updates_received += s.updates_received;
    total.elicitations_sent += s.elicitations_sent;
    total.elicitations_refused += s.elicitations_refused;
    total.elicitations_answered += s.elicitations_answered;
    total.elicitation_outcomes += s.elicitation_outcomes;
    total.completes_sent += s.completes_sent;
    total.completes_refused += s.completes_refused;
    total.completes_received += s.completes_received;
}

#[test]
fn simulated_seeds_hold_every_invariant() {
    if let Ok(seed) = std::env::var("ACP_SIM_SEED") {
        let seed: u64 = seed.parse().expect("ACP_SIM_SEED is a number");
        let mut trace = Vec::new();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            proptests::sim::Sim::new(proptests::sim::Seeded::new(seed), config(), &mut trace).run()
        }));
        for line in &trace {
            println!("{line}");
        }
        let summary = result.unwrap_or_else(|_| panic!("seed {seed} failed"));
        println!("seed {seed}: {summary:?}");
        return;
    }
    let runs = env_u64("ACP_SIM_RUNS", 2000);
    let first = env_u64("ACP_SIM_START", 0);
    let start = Instant::now();
    let mut total = Summary::default();
    for seed in first..first + runs {
        let s = run_or_report(seed);
        total.steps += s.steps;
        total.frames += s.frames;
        total.outcomes += s.outcomes;
        total.checks += s.checks;
        total.observer_checks += s.observer_checks;
        total.output_pauses += s.output_pauses;
        total.owed_at_eof += s.owed_at_eof;
        total.input_parked += s.input_parked;
        total.peak_queued = total.peak_queued.max(s.peak_queued);
        add_opt_in(&mut total.opt_in, &s.opt_in);
        total.unstable.add(&s.unstable);
    }
    let o = &total.opt_in;
    let line = format!(
        "sim: {runs} seeds from {first}, {} steps, {} frames, {} outcomes checked against the model, {} invariant checks, {} observer cross-checks, {} output pauses, {} requests owed at the end of input, {} frames parked behind the machines' own answers, peak queued output {} bytes; opt-in updates {} sent / {} refused / {} received, elicitations {} sent / {} refused / {} answered / {} outcomes, elicitation/complete {} sent / {} refused / {} received; unstable requests {} sent / {} refused / {} answered / {} results (per method calls/results {:?}); {:.1}s",
        total.steps,
        total.frames,
        total.outcomes,
        total.checks,
        total.observer_checks,
        total.output_pauses,
        total.owed_at_eof,
        total.input_parked,
        total.peak_queued,
        o.updates_sent,
        o.updates_refused,
        o.updates_received,
        o.elicitations_sent,
        o.elicitations_refused,
        o.elicitations_answered,
        o.elicitation_outcomes,
        o.completes_sent,
        o.completes_refused,
        o.completes_received,
        total.unstable.sent,
        total.unstable.refused,
        total.unstable.answered,
        total.unstable.results,
        total
            .unstable
            .by_method
            .iter()
            .map(|(m, (calls, results))| format!("{m} {calls}/{results}"))
            .collect::<Vec<_>>(),
        start.elapsed().as_secs_f64()
    );
    println!("{line}");
    eprintln!("{line}");
    assert!(total.steps >= runs as usize * config().steps, "every seed runs its steps");
    // The observer was cross-checked (invariant 13): at least the handshake's chunks of each seed.
    assert!(total.observer_checks >= 2 * runs, "the observer was cross-checked too rarely");
    if runs >= 200 {
        // Enough seeds: every opt-in path was taken (sent, refused, received, answered).
        for (what, n) in [
            ("opt-in updates received", o.updates_received),
            ("opt-in updates refused", o.updates_refused),
            ("elicitation outcomes", o.elicitation_outcomes),
            ("elicitations refused", o.elicitations_refused),
            ("elicitation/complete received", o.completes_received),
            ("elicitation/complete refused", o.completes_refused),
            ("requests owed at the end of input (invariant 12)", total.owed_at_eof),
        ] {
            assert!(n > 0, "no {what} in {runs} seeds");
        }
    }
    if first == 0 && runs >= 2000 && !cfg!(feature = "unstable") {
        // The fixed seeds reach the parking of input behind the machines' own answers (9
        // frames in seeds 0 to 1999; rarer than the paths above, so not asked of any window).
        assert!(total.input_parked > 0, "no frame parked in seeds 0 to {}", runs - 1);
    }
    if cfg!(feature = "unstable") && runs >= 100 {
        // With the feature, every unstable path was taken too.
        let u = &total.unstable;
        for (what, n) in [("sent", u.sent), ("refused", u.refused), ("answered", u.answered), ("results", u.results)] {
            assert!(n > 0, "no unstable requests {what} in {runs} seeds");
        }
        // Every unstable row of the table was called (generic: a new row needs no change here).
        for m in UnstableCounts::methods() {
            assert!(u.by_method.get(m).is_some_and(|c| c.0 > 0), "{m} never called in {runs} seeds");
        }
    } else if !cfg!(feature = "unstable") {
        assert_eq!(total.unstable, Default::default(), "no unstable call without the feature");
    }
}

/// Seeds that failed once, each with the depth it failed at; every test run replays them.
/// Issue 34 (fresh seeds at 400 steps): 9102635 never settled (both peers stopped reading
/// on their own answers, pipes full); 9002813 to 9022989 had `cancel_turn` answer asks the
/// application had not been shown (deferred), which the model did not count; 9000846,
/// 9020278 and 9078556 had the client's re-handshake refused for backpressure.
const REGRESSIONS: &[(u64, usize)] = &[
    (9102635, 400),
    (9002813, 400),
    (9003639, 400),
    (9008216, 400),
    (9008577, 400),
    (9010287, 400),
    (9010593, 400),
    (9012158, 400),
    (9012225, 400),
    (9014227, 400),
    (9022989, 400),
    (9000846, 400),
    (9020278, 400),
    (9078556, 400),
];

#[test]
fn regression_seeds_hold_every_invariant() {
    for &(seed, steps) in REGRESSIONS {
        run_or_report_with(seed, SimConfig { steps, ..SimConfig::default() });
    }
    println!("sim: {} regression seeds", REGRESSIONS.len());
}

#[test]
fn every_seed_run_twice_gives_the_same_trace() {
    for seed in 0..env_u64("ACP_SIM_DETERMINISM_RUNS", 200) {
        let a = run_or_report(seed);
        let b = run_or_report(seed);
        assert_eq!(a, b, "seed {seed} is not deterministic");
    }
}

/// ACP v2 (feature `unstable_protocol_v2`): the v2 seeds (a v2 client, an agent speaking both
/// through an `Acceptor`) and the mixed ones (a v1 client, the same agent: the session runs v1). `ACP_SIM_V2_RUNS=N` sets
/// the number of seeds of each (default 300), from `ACP_SIM_START` (default 0);
/// `ACP_SIM_SEED=n` with `ACP_SIM_PROTOCOL=v2` or `mixed` runs only seed `n` and prints its
/// trace.
#[cfg(feature = "unstable_protocol_v2")]
mod v2 {
    use super::*;
    use proptests::sim::{Protocol, V2Counts};

    fn config(protocol: Protocol) -> SimConfig {
        SimConfig { protocol, ..super::config() }
    }

    /// Runs the seeds of `protocol`, or the one of `ACP_SIM_SEED`; returns the totals.
    fn run(protocol: Protocol, name: &str) -> Option<(u64, V2Counts, Summary)> {
        if let Ok(seed) = std::env::var("ACP_SIM_SEED") {
            if std::env::var("ACP_SIM_PROTOCOL").ok().as_deref() != Some(name) {
                return None;
            }
            let seed: u64 = seed.parse().expect("ACP_SIM_SEED is a number");
            let mut trace = Vec::new();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                proptests::sim::Sim::new(proptests::sim::Seeded::new(seed), config(protocol), &mut trace).run()
            }));
            for line in &trace {
                println!("{line}");
            }
            let summary = result.unwrap_or_else(|_| panic!("seed {seed} failed"));
            println!("seed {seed}: {summary:?}");
            return None;
        }
        let runs = env_u64("ACP_SIM_V2_RUNS", 300);
        let first = env_u64("ACP_SIM_START", 0);
        let start = Instant::now();
        let mut total = Summary::default();
        for seed in first..first + runs {
            let s = run_or_report_with(seed, config(protocol));
            total.steps += s.steps;
            total.frames += s.frames;
            total.outcomes += s.outcomes;
            total.owed_at_eof += s.owed_at_eof;
            total.v2.add(&s.v2);
        }
        let v = &total.v2;
        let line = format!(
            "sim ({name}): {runs} seeds from {first}, {} steps, {} frames, {} outcomes checked, {} requests owed at the end of input; {} negotiated v2, {} accepted as v1; {} turns opened, ended idle/prompt-failed/closed {:?}, {} prompts joined an open turn, {} acknowledged; updates stamped {} / unstamped {}, {} idles sent by the agent's machine at its cancel grace ({} told to the agent application); session/cancel sent/received {:?}; asks sent/cancelled by the cascade {:?}; tool upserts with/without cancel {:?}; tool_call/cancel accepted/refused {:?}; terminal upserts with/without cancel {:?}, terminal/cancel accepted/refused {:?}; resumes ok/unknown/replayed updates {:?}; closes/deletes {:?}; auth login/logout/refused by the gate/session/new needing a login {:?}; elicitations form/url/refused by the gate/answered/cancelled by the agent/completed {:?}; {:.1}s",
            total.steps,
            total.frames,
            total.outcomes,
            total.owed_at_eof,
            v.negotiated_v2,
            v.accepted_v1,
            v.turns_opened,
            v.turns_ended,
            v.prompts_joined,
            v.prompts_acknowledged,
            v.updates_stamped,
            v.updates_unstamped,
            v.machine_idles,
            v.grace_ends,
            v.session_cancels,
            v.asks,
            v.tool_upserts,
            v.tool_cancels,
            v.terminal_upserts,
            v.terminal_cancels,
            v.resumes,
            v.closes,
            v.auth,
            v.elicitations,
            start.elapsed().as_secs_f64()
        );
        println!("{line}");
        eprintln!("{line}");
        assert!(total.steps >= runs as usize * super::config().steps, "every seed runs its steps");
        Some((runs, total.v2.clone(), total))
    }

    #[test]
    fn v2_seeds_hold_every_invariant() {
        let Some((runs, v, total)) = run(Protocol::V2, "v2") else { return };
        assert_eq!(v.accepted_v1, 0);
        if runs >= 100 {
            // Enough seeds: every v2 path was taken.
            for (what, n) in [
                ("v2 handshakes", v.negotiated_v2),
                ("turns opened", v.turns_opened),
                ("turns ended by an idle", v.turns_ended[0]),
                ("turns ended by failed prompts", v.turns_ended[1]),
                ("turns ended by the close", v.turns_ended[2]),
                ("prompts joining a turn", v.prompts_joined),
                ("stamped updates", v.updates_stamped),
                ("unstamped updates", v.updates_unstamped),
                ("idles of the cancel grace", v.machine_idles),
                ("grace ends told to the agent application", v.grace_ends),
                ("session/cancel received", v.session_cancels[1]),
                ("asks", v.asks[0]),
                ("asks cancelled by the cascade", v.asks[1]),
                ("tool upserts with cancel", v.tool_upserts[0]),
                ("tool upserts without cancel", v.tool_upserts[1]),
                ("tool_call/cancel accepted", v.tool_cancels[0]),
                ("tool_call/cancel refused", v.tool_cancels[1]),
                ("turns ended by their session's close", v.turns_ended[3]),
                ("terminal upserts with cancel", v.terminal_upserts[0]),
                ("terminal upserts without cancel", v.terminal_upserts[1]),
                ("terminal/cancel accepted", v.terminal_cancels[0]),
                ("terminal/cancel refused", v.terminal_cancels[1]),
                ("resumes of a known session", v.resumes[0]),
                ("resumes of an unknown session", v.resumes[1]),
                ("updates replayed by a resume", v.resumes[2]),
                ("session/close answered", v.closes[0]),
                ("session/delete answered", v.closes[1]),
                ("auth/login answered", v.auth[0]),
                ("auth/logout answered", v.auth[1]),
                ("auth sends refused by the gate", v.auth[2]),
                ("session/new needing a login", v.auth[3]),
                ("form elicitations", v.elicitations[0]),
                ("URL elicitations", v.elicitations[1]),
                ("elicitations refused by the gate", v.elicitations[2]),
                ("elicitations answered", v.elicitations[3]),
                ("elicitations cancelled by the agent", v.elicitations[4]),
                ("elicitation/complete", v.elicitations[5]),
                ("requests owed at the end of input (invariant 12)", total.owed_at_eof),
            ] {
                assert!(n > 0, "no {what} in {runs} v2 seeds");
            }
        }
    }

    #[test]
    fn v2_mixed_seeds_run_v1() {
        let Some((runs, v, total)) = run(Protocol::Mixed, "mixed") else { return };
        assert_eq!(v.negotiated_v2, 0, "a v1 client never negotiates v2");
        assert_eq!(v.turns_opened, 0, "no v2 turn on a v1 session");
        if runs >= 100 {
            assert!(v.accepted_v1 > 0, "no v1 offer accepted by an agent speaking both in {runs} seeds");
            assert!(total.outcomes > 0);
        }
    }

    /// v2 and mixed seeds that failed once, each with the depth it failed at (issue 34: v2
    /// 897 never settled, mixed 2539 had `cancel_turn` answer an ask the application had not
    /// been shown); every test run replays them. Since the mixed runs have a v1 client and an
    /// agent speaking both (issue 29), seed 2539 no longer reaches that flow: mixed 9002813
    /// does (found by scanning mixed seeds for a `cancel_turn` answering more asks than the
    /// application held), and 2539 stays.
    const REGRESSIONS_V2: &[(Protocol, u64, usize)] =
        &[(Protocol::V2, 897, 400), (Protocol::Mixed, 2539, 400), (Protocol::Mixed, 9002813, 400)];

    #[test]
    fn v2_regression_seeds_hold_every_invariant() {
        for &(protocol, seed, steps) in REGRESSIONS_V2 {
            run_or_report_with(seed, SimConfig { steps, ..config(protocol) });
        }
        println!("sim (v2): {} regression seeds of v2 and mixed", REGRESSIONS_V2.len());
    }

    #[test]
    fn v2_seeds_run_twice_give_the_same_trace() {
        for protocol in [Protocol::V2, Protocol::Mixed] {
            for seed in 0..env_u64("ACP_SIM_DETERMINISM_RUNS", 200) / 4 {
                let a = run_or_report_with(seed, config(protocol));
                let b = run_or_report_with(seed, config(protocol));
                assert_eq!(a, b, "seed {seed} ({protocol:?}) is not deterministic");
            }
        }
    }
}
