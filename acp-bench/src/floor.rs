//! W0's pipe phases: the end-to-end floor for W1 over stdio on this machine.
//!
//! The binary re-executes itself (`acp-bench floor-child`) as a child that writes the W1 line
//! `messages` times to its stdout, with one `write(2)` per line (`pipe_unbuffered`) or through
//! a 64 KiB `BufWriter` (`pipe_buffered`); the parent reads with a 64 KiB `BufReader`, splits
//! the lines and parses each into a `serde_json::Value`. Process spawn included.
//!
//! And the floor of W2 over stdio (`client --config floor --workload w2`): the client spawns
//! `acp-bench floor-echo` and ping-pongs one [`PING_BYTES`]-byte line with it over a pair of
//! pipes, one at a time, with blocking `write(2)`/`read(2)` on both sides and no JSON: what any
//! stdio round trip costs on this machine before a protocol does anything. It prints W2's
//! metrics under W2's names, so it sits in W2's column of the same run.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::metrics::Metric;
use crate::spec::{Measured, Spec, Workload};
use crate::wire::UPDATE_LINE;

/// The round-trip floor's line, `\n` included: about a W2 prompt request (its response is
/// shorter; the floor sends the same line both ways).
pub const PING_BYTES: usize = 120;

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

/// `acp-bench floor-echo`: reads lines from stdin and writes each back to stdout at once, with
/// one `write(2)` each, until the end of input.
pub fn echo() -> Result<(), String> {
    let mut input = std::io::stdin().lock();
    // `Stdout` is line-buffered: a whole line is written with one `write(2)`.
    let mut output = std::io::stdout().lock();
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).map_err(|e| e.to_string())? == 0 {
            return Ok(());
        }
        output.write_all(&line).map_err(|e| e.to_string())?;
    }
}

/// The ping line: `PING_BYTES - 1` printable bytes and `\n`.
fn ping_line() -> Vec<u8> {
    let mut line: Vec<u8> = UPDATE_LINE.bytes().cycle().take(PING_BYTES - 1).collect();
    line.push(b'\n');
    line
}

/// Writes `ping` to `to`, reads the echo from `from` and checks it.
fn round_trip(to: &mut impl Write, from: &mut impl BufRead, ping: &[u8], pong: &mut Vec<u8>) -> Result<(), String> {
    to.write_all(ping).map_err(|e| e.to_string())?;
    pong.clear();
    from.read_until(b'\n', pong).map_err(|e| e.to_string())?;
    if pong.as_slice() == ping { Ok(()) } else { Err(format!("the echo sent {} bytes back", pong.len())) }
}

/// `client --config floor --workload w2`: spawns `argv` (default: this binary's `floor-echo`),
/// one untimed round trip (as W2's handshake is), then `spec.prompts` timed ones; W2's metrics.
pub fn client_rtt(spec: Spec, argv: &[String]) -> Result<Vec<Metric>, String> {
    if spec.workload != Workload::W2 {
        return Err("the floor config measures w2 only".into());
    }
    let mut command = match argv.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args);
            c
        }
        None => {
            let mut c = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
            c.arg("floor-echo");
            c
        }
    };
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().map_err(|e| e.to_string())?;
    // `ChildStdin` is unbuffered: one `write(2)` per line.
    let mut to = child.stdin.take().ok_or("no stdin")?;
    let mut from = BufReader::with_capacity(4096, child.stdout.take().ok_or("no stdout")?);
    let (ping, mut pong) = (ping_line(), Vec::with_capacity(256));
    let result = (|| {
        round_trip(&mut to, &mut from, &ping, &mut pong)?;
        let mut measured = Measured { samples: Vec::with_capacity(spec.prompts as usize), ..Measured::default() };
        let t0 = Instant::now();
        for _ in 0..spec.prompts {
            let start = Instant::now();
            round_trip(&mut to, &mut from, &ping, &mut pong)?;
            measured.samples.push(start.elapsed());
        }
        measured.elapsed = t0.elapsed();
        crate::spec::metrics(&Spec { updates: 0, sessions: 1, ..spec }, &measured)
    })();
    drop(to);
    let status = child.wait().map_err(|e| e.to_string())?;
    let metrics = result?;
    if !status.success() {
        return Err(format!("the echo exited with {status}"));
    }
    Ok(metrics)
}
