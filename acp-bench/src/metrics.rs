//! `METRIC` lines, percentiles and peak RSS.

use std::fmt;
use std::time::Duration;

/// One `METRIC <name>=<value> <unit>` line.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// e.g. `w1_updates_per_s`.
    pub name: String,
    /// The value, already rounded for printing.
    pub value: String,
    /// e.g. `1/s`, `s`, `us`, `kB`.
    pub unit: &'static str,
}

impl Metric {
    /// A metric printed with `decimals` digits after the point.
    pub fn float(name: impl Into<String>, value: f64, decimals: usize, unit: &'static str) -> Metric {
        Metric { name: name.into(), value: format!("{value:.decimals$}"), unit }
    }

    /// An integer metric.
    pub fn int(name: impl Into<String>, value: u64, unit: &'static str) -> Metric {
        Metric { name: name.into(), value: value.to_string(), unit }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "METRIC {}={} {}", self.name, self.value, self.unit)
    }
}

/// Parses a `METRIC` line (lines not starting with `METRIC ` are ignored: `None`).
pub fn parse_line(line: &str) -> Option<(String, f64)> {
    let rest = line.strip_prefix("METRIC ")?;
    let (name, rest) = rest.split_once('=')?;
    let value = rest.split_whitespace().next()?.parse().ok()?;
    Some((name.to_owned(), value))
}

/// The nearest-rank percentile of WORKLOADS.md: `sorted[ceil(p·R) − 1]`. `samples` must be
/// sorted ascending and non-empty; `p` is in (0, 1].
pub fn nearest_rank(sorted: &[Duration], p: f64) -> Duration {
    assert!(!sorted.is_empty(), "no samples");
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Peak resident set (`VmHWM`) of `/proc/<pid>/status` (`pid` may be `self`), in KiB.
///
/// For a process without children this is what GNU time's `%M` reports (`ru_maxrss` is the
/// same high-water mark the kernel keeps as `VmHWM`), read while the process still lives.
pub fn peak_rss_kb(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Prints the metrics on stdout, one line each.
pub fn print(metrics: &[Metric]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for m in metrics {
        let _ = writeln!(out, "{m}");
    }
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_lines_have_the_workloads_format() {
        assert_eq!(
            Metric::float("w1_updates_per_s", 18830.4, 0, "1/s").to_string(),
            "METRIC w1_updates_per_s=18830 1/s"
        );
        assert_eq!(Metric::int("agent_peak_rss_kb", 4096, "kB").to_string(), "METRIC agent_peak_rss_kb=4096 kB");
        assert_eq!(parse_line("METRIC w2_p99_us=87.5 us"), Some(("w2_p99_us".into(), 87.5)));
        assert_eq!(parse_line("w2_p99_us=87.5 us"), None);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let samples: Vec<Duration> = (1..=20_000).map(Duration::from_micros).collect();
        // ceil(0.5 * 20000) - 1 = 9999 -> 10000 us; ceil(0.99 * 20000) - 1 = 19799 -> 19800 us.
        assert_eq!(nearest_rank(&samples, 0.5), Duration::from_micros(10_000));
        assert_eq!(nearest_rank(&samples, 0.99), Duration::from_micros(19_800));
        let few: Vec<Duration> = (1..=3).map(Duration::from_micros).collect();
        assert_eq!(nearest_rank(&few, 0.5), Duration::from_micros(2));
        assert_eq!(nearest_rank(&few, 0.99), Duration::from_micros(3));
        assert_eq!(nearest_rank(&few[..1], 0.01), Duration::from_micros(1));
    }
}
