//! The workloads' parameters, the client's validation and the metrics it prints.

use std::time::Duration;

use crate::metrics::{Metric, nearest_rank};

/// W1, W2 or W3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Update storm: one prompt, U updates.
    W1,
    /// Sequential round trips: R prompts without updates, one at a time.
    W2,
    /// Concurrency: S sessions, P prompts each back to back, N updates per prompt.
    W3,
}

impl Workload {
    /// `w1`, `w2` or `w3`.
    pub fn parse(s: &str) -> Option<Workload> {
        match s {
            "w1" => Some(Workload::W1),
            "w2" => Some(Workload::W2),
            "w3" => Some(Workload::W3),
            _ => None,
        }
    }
}

/// What one client run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// Which workload.
    pub workload: Workload,
    /// Updates per prompt (the agent's `--updates`): W1 U = 100 000, W2 0, W3 10.
    pub updates: u64,
    /// Prompts per session: W1 1, W2 R = 20 000, W3 P = 200.
    pub prompts: u64,
    /// Sessions: 1, except W3 S = 64.
    pub sessions: u64,
}

impl Spec {
    /// The parameters WORKLOADS.md fixes for `workload`.
    pub fn new(workload: Workload) -> Spec {
        match workload {
            Workload::W1 => Spec { workload, updates: 100_000, prompts: 1, sessions: 1 },
            Workload::W2 => Spec { workload, updates: 0, prompts: 20_000, sessions: 1 },
            Workload::W3 => Spec { workload, updates: 10, prompts: 200, sessions: 64 },
        }
    }

    /// Prompts in the whole run.
    pub fn total_prompts(&self) -> u64 {
        self.prompts * self.sessions
    }

    /// Updates in the whole run.
    pub fn total_updates(&self) -> u64 {
        self.total_prompts() * self.updates
    }
}

/// What a client measured.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// `t1 − t0` of the workload.
    pub elapsed: Duration,
    /// W2: one latency sample per prompt.
    pub samples: Vec<Duration>,
    /// Updates counted over the run.
    pub updates: u64,
}

/// Checks the count of a session after its `k`-th prompt (1-based) completed.
pub fn check_prompt(spec: &Spec, session: usize, k: u64, counted: u64) -> Result<(), String> {
    let expected = spec.updates * k;
    if counted == expected {
        Ok(())
    } else {
        Err(format!("session {session}: {counted} updates counted after prompt {k}, expected {expected}"))
    }
}

/// The workload's metrics from what the client measured (after validation).
pub fn metrics(spec: &Spec, measured: &Measured) -> Result<Vec<Metric>, String> {
    if measured.updates != spec.total_updates() {
        return Err(format!("{} updates counted in total, expected {}", measured.updates, spec.total_updates()));
    }
    let secs = measured.elapsed.as_secs_f64().max(1e-9);
    Ok(match spec.workload {
        Workload::W1 => vec![
            Metric::float("w1_seconds", secs, 4, "s"),
            Metric::float("w1_updates_per_s", spec.total_updates() as f64 / secs, 0, "1/s"),
        ],
        Workload::W2 => {
            let mut sorted = measured.samples.clone();
            if sorted.len() as u64 != spec.total_prompts() {
                return Err(format!("{} latency samples, expected {}", sorted.len(), spec.total_prompts()));
            }
            sorted.sort_unstable();
            let us = |d: Duration| d.as_secs_f64() * 1e6;
            vec![
                Metric::float("w2_seconds", secs, 4, "s"),
                Metric::float("w2_rtt_per_s", spec.total_prompts() as f64 / secs, 0, "1/s"),
                Metric::float("w2_p50_us", us(nearest_rank(&sorted, 0.50)), 1, "us"),
                Metric::float("w2_p99_us", us(nearest_rank(&sorted, 0.99)), 1, "us"),
            ]
        }
        Workload::W3 => {
            let prompts = spec.total_prompts() as f64;
            vec![
                Metric::float("w3_seconds", secs, 4, "s"),
                Metric::float("w3_prompts_per_s", prompts / secs, 0, "1/s"),
                Metric::float("w3_frames_per_s", prompts * (spec.updates as f64 + 2.0) / secs, 0, "1/s"),
            ]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn w3_counts_frames_both_ways() {
        let spec = Spec::new(Workload::W3);
        assert_eq!((spec.total_prompts(), spec.total_updates()), (12_800, 128_000));
        let measured = Measured { elapsed: Duration::from_secs(1), samples: vec![], updates: 128_000 };
        let m = metrics(&spec, &measured).unwrap();
        assert_eq!(m[2].to_string(), "METRIC w3_frames_per_s=153600 1/s");
        let short = Measured { updates: 127_999, ..measured };
        assert!(metrics(&spec, &short).is_err());
        assert!(check_prompt(&spec, 0, 3, 30).is_ok());
        assert!(check_prompt(&spec, 0, 3, 29).is_err());
    }
}
