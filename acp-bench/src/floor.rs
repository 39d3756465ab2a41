//! W0's pipe phases: the end-to-end floor for W1 over stdio on this machine.
//!
//! The binary re-executes itself (`acp-bench floor-child`) as a child that writes the W1 line
//! `messages` times to its stdout, with one `write(2)` per line (`pipe_unbuffered`) or through
//! a 64 KiB `BufWriter` (`pipe_buffered`); the parent reads with a 64 KiB `BufReader`, splits
//! the lines and parses each into a `serde_json::Value`. Process spawn included.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::metrics::Metric;
use crate::wire::UPDATE_LINE;

/// The child: writes the lines to stdout.
pub fn child(messages: usize, buffered: bool) -> Result<(), String> {
    let mut line = UPDATE_LINE.as_bytes().to_vec();
    line.push(b'\n');
    let stdout = std::io::stdout().lock();
    let result = if buffered {
        let mut w = BufWriter::with_capacity(64 * 1024, stdout);
        (0..messages).try_for_each(|_| w.write_all(&line)).and_then(|()| w.flush())
    } else {
        let mut w = stdout;
        // `Stdout` is line-buffered: each line is one `write(2)`.
        (0..messages).try_for_each(|_| w.write_all(&line).and_then(|()| w.flush()))
    };
    result.map_err(|e| e.to_string())
}

fn one(messages: usize, buffered: bool) -> Result<Duration, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let mut child = Command::new(exe)
        .args(["floor-child", "--messages", &messages.to_string()])
        .arg(if buffered { "--buffered" } else { "--unbuffered" })
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::with_capacity(512);
    let mut parsed = 0;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(|e| e.to_string())? == 0 {
            break;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let v: Value = serde_json::from_slice(text).map_err(|e| e.to_string())?;
        std::hint::black_box(v);
        parsed += 1;
    }
    let elapsed = t0.elapsed();
    child.wait().map_err(|e| e.to_string())?;
    if parsed != messages {
        return Err(format!("parsed {parsed} lines, expected {messages}"));
    }
    Ok(elapsed)
}

/// `acp-bench floor`: both pipe phases, median of 5 after a warm-up.
pub fn run(messages: usize) -> Result<Vec<Metric>, String> {
    let mut metrics = Vec::new();
    for (name, buffered) in [("pipe_unbuffered", false), ("pipe_buffered", true)] {
        one(messages, buffered)?;
        let mut times = (0..5).map(|_| one(messages, buffered)).collect::<Result<Vec<_>, _>>()?;
        times.sort_unstable();
        let secs = times[2].as_secs_f64();
        metrics.push(Metric::float(format!("w0_{name}_seconds"), secs, 4, "s"));
        metrics.push(Metric::float(format!("w0_{name}_msgs_per_s"), messages as f64 / secs, 0, "1/s"));
        metrics.push(Metric::float(format!("w0_{name}_ns_per_msg"), secs * 1e9 / messages as f64, 1, "ns"));
    }
    Ok(metrics)
}
