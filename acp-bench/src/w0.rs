//! W0: what one W1 update line costs in plain `serde_json` and in the core, in the same run.
//!
//! The serde_json phases follow WORKLOADS.md's `floor/` program: `Value`, plain structs with
//! owned `String`s (the cheapest faithful typed shape), and schema-shaped structs with internally
//! tagged enums. (One difference: the floor builds serde_json with `preserve_order`; this
//! workspace does not, so `Value` maps are `BTreeMap`s here. It only affects the `Value` rows.)
//!
//! The core phases put the same bytes through `acp-proto`:
//!
//! * `core_decode`: a client-role [`Connection`](acp_proto::Connection) with a prompt turn open
//!   takes the line (`handle_input`: framing, envelope, typed decode, the turn rules) and yields
//!   the [`Event`] (`poll_event`, with its turn stamp);
//! * `core_encode`: an agent-role connection queues the typed update (`send_notification`: the
//!   direction, gate and session checks, encode) and hands out the bytes (`poll_transmit`);
//! * `core_roundtrip`: both, the decoded notification re-sent: decode + dispatch + encode, to be
//!   compared with `typed_roundtrip` (plain structs decoded and encoded again);
//! * `core_decode_general`: the same update with its `params` keys in another order
//!   (`update` before `sessionId`), which the text-chunk path declines: what any other
//!   notification costs on the general one-pass serde path.

use std::time::{Duration, Instant as StdInstant};

use acp_proto::methods::AgentNotification;
use acp_proto::types::SessionNotification;
use acp_proto::{Event, Notification};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::direct::Direct;
use crate::metrics::Metric;
use crate::wire::UPDATE_LINE;

/// The W1 line as plain structs with owned strings.
#[derive(Debug, Serialize, Deserialize)]
pub struct PlainLine {
    jsonrpc: String,
    method: String,
    params: PlainParams,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlainParams {
    session_id: String,
    update: PlainUpdate,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlainUpdate {
    session_update: String,
    content: PlainContent,
}

#[derive(Debug, Serialize, Deserialize)]
struct PlainContent {
    #[serde(rename = "type")]
    kind: String,
    text: String,
}

/// The W1 line as schema-shaped structs: internally tagged enums, as in the SDK's schema crate.
#[derive(Debug, Serialize, Deserialize)]
pub struct TaggedLine {
    jsonrpc: String,
    method: String,
    params: TaggedParams,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaggedParams {
    session_id: String,
    update: TaggedUpdate,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "sessionUpdate", rename_all = "snake_case")]
#[allow(clippy::enum_variant_names)] // the schema's names
enum TaggedUpdate {
    UserMessageChunk { content: TaggedContent },
    AgentMessageChunk { content: TaggedContent },
    AgentThoughtChunk { content: TaggedContent },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum TaggedContent {
    Text {
        text: String,
    },
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

/// Parses the line into a `Value`.
pub fn parse_value(line: &[u8]) -> Value {
    serde_json::from_slice(line).expect("the W1 line")
}

/// Parses the line into plain structs.
pub fn parse_typed(line: &[u8]) -> PlainLine {
    serde_json::from_slice(line).expect("the W1 line")
}

/// Parses the line into tagged structs.
pub fn parse_tagged(line: &[u8]) -> TaggedLine {
    serde_json::from_slice(line).expect("the W1 line")
}

/// Plain structs decoded and encoded again (+ `\n`) into `out`.
pub fn typed_roundtrip(line: &[u8], out: &mut Vec<u8>) {
    let typed = parse_typed(line);
    serde_json::to_writer(&mut *out, &typed).expect("serializes");
    out.push(b'\n');
}

/// The core's two ends, a prompt turn open, for the per-message core phases.
pub struct Core {
    d: Direct,
    line: Vec<u8>,
    general: Vec<u8>,
    out: Vec<u8>,
}

impl Default for Core {
    fn default() -> Self {
        Core::new()
    }
}

impl Core {
    /// Handshake and `sess-0` done; the client's prompt on it is open (its frame never sent),
    /// so every decoded update is stamped with its turn, as in W1.
    pub fn new() -> Core {
        let mut d = Direct::new(0);
        let sessions = d.handshake(1).expect("handshake");
        d.send_prompt(&sessions[0]).expect("prompt");
        let mut sink = Vec::new();
        let _ = d.client.poll_transmit(&mut sink);
        let general = UPDATE_LINE
            .replace(r#""sessionId":"sess-0","update":"#, r#""update":"#)
            .replace(r#"}}}}"#, r#"}},"sessionId":"sess-0"}}"#);
        Core {
            d,
            line: format!("{UPDATE_LINE}\n").into_bytes(),
            general: format!("{general}\n").into_bytes(),
            out: Vec::with_capacity(1 << 16),
        }
    }

    /// The line with its `\n`.
    pub fn line(&self) -> &[u8] {
        &self.line
    }

    /// Client side: frame + decode + turn rules + the event.
    pub fn decode(&mut self) -> Event {
        let n = self.d.client.handle_input(Instant0, &self.line);
        debug_assert_eq!(n, self.line.len());
        self.d.client.poll_event().expect("the update's event")
    }

    /// [`decode`](Self::decode) of the reordered line, on the general path.
    pub fn decode_general(&mut self) -> Event {
        let n = self.d.client.handle_input(Instant0, &self.general);
        debug_assert_eq!(n, self.general.len());
        self.d.client.poll_event().expect("the update's event")
    }

    /// Agent side: checks + encode + the bytes.
    pub fn encode(&mut self, notification: SessionNotification) -> usize {
        self.d.agent.send_notification(Instant0, notification).expect("accepted");
        self.out.clear();
        self.d.agent.poll_transmit(&mut self.out)
    }

    /// Decode + dispatch + encode of one line.
    pub fn roundtrip(&mut self) -> usize {
        match self.decode() {
            Event::Notification { notification: Notification::Agent(AgentNotification::SessionUpdate(n)), .. } => {
                self.encode(n)
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    /// The bytes of the last encode.
    pub fn output(&self) -> &[u8] {
        &self.out
    }
}

/// `acp-bench profile PHASE`: runs one phase `messages` times and nothing else, for
/// `valgrind --tool=callgrind` or `perf record` (instruction counts per message are the total
/// divided by `messages`, minus the setup measured with `--messages 0`).
pub fn profile(phase: &str, messages: usize) -> Result<(), String> {
    let line = UPDATE_LINE.as_bytes();
    let mut out = Vec::with_capacity(1 << 16);
    let mut core = Core::new();
    let update = match core.decode() {
        Event::Notification { notification: Notification::Agent(AgentNotification::SessionUpdate(n)), .. } => n,
        other => return Err(format!("unexpected {other:?}")),
    };
    for _ in 0..messages {
        match phase {
            "parse_value" => drop(std::hint::black_box(parse_value(line))),
            "parse_typed" => drop(std::hint::black_box(parse_typed(line))),
            "typed_roundtrip" => {
                out.clear();
                typed_roundtrip(line, &mut out);
            }
            "core_decode" => drop(std::hint::black_box(core.decode())),
            "core_decode_general" => drop(std::hint::black_box(core.decode_general())),
            "core_encode" => drop(std::hint::black_box(core.encode(update.clone()))),
            "core_roundtrip" => drop(std::hint::black_box(core.roundtrip())),
            other => return Err(format!("unknown phase `{other}`")),
        }
    }
    Ok(())
}

#[allow(non_upper_case_globals)]
const Instant0: acp_proto::Instant = acp_proto::Instant::ZERO;

/// Median of `reps` timed runs of `f` after one warm-up.
fn median(reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = StdInstant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[times.len() / 2]
}

/// `acp-bench w0`: every phase over `messages` copies of the line, median of 5 after a warm-up.
pub fn run(messages: usize) -> Vec<Metric> {
    let line = UPDATE_LINE.as_bytes();
    let mut buffer = Vec::with_capacity(messages * (line.len() + 1));
    for _ in 0..messages {
        buffer.extend_from_slice(line);
        buffer.push(b'\n');
    }
    let lines = || buffer.split(|b| *b == b'\n').filter(|l| !l.is_empty());
    let mut out = Vec::with_capacity(buffer.len());
    let mut phases: Vec<(&str, Duration)> = Vec::new();

    phases.push(("parse_value", median(5, || lines().for_each(|l| drop(std::hint::black_box(parse_value(l)))))));
    phases.push(("parse_typed", median(5, || lines().for_each(|l| drop(std::hint::black_box(parse_typed(l)))))));
    phases.push(("parse_tagged", median(5, || lines().for_each(|l| drop(std::hint::black_box(parse_tagged(l)))))));
    let values: Vec<Value> = lines().map(parse_value).collect();
    phases.push((
        "ser_value",
        median(5, || {
            out.clear();
            for v in &values {
                serde_json::to_writer(&mut out, v).expect("serializes");
                out.push(b'\n');
            }
        }),
    ));
    let typed: Vec<PlainLine> = lines().map(parse_typed).collect();
    phases.push((
        "ser_typed",
        median(5, || {
            out.clear();
            for t in &typed {
                serde_json::to_writer(&mut out, t).expect("serializes");
                out.push(b'\n');
            }
        }),
    ));
    assert_eq!(out, buffer, "typed re-encoding is byte-identical");
    phases.push((
        "typed_roundtrip",
        median(5, || {
            out.clear();
            lines().for_each(|l| typed_roundtrip(l, &mut out));
        }),
    ));
    let mut core = Core::new();
    phases.push((
        "core_decode",
        median(5, || {
            for _ in 0..messages {
                drop(std::hint::black_box(core.decode()));
            }
        }),
    ));
    phases.push((
        "core_decode_general",
        median(5, || {
            for _ in 0..messages {
                drop(std::hint::black_box(core.decode_general()));
            }
        }),
    ));
    let update = match core.decode() {
        Event::Notification { notification: Notification::Agent(AgentNotification::SessionUpdate(n)), .. } => n,
        other => panic!("unexpected {other:?}"),
    };
    phases.push((
        "core_encode",
        median(5, || {
            for _ in 0..messages {
                std::hint::black_box(core.encode(update.clone()));
            }
        }),
    ));
    assert_eq!(core.output(), core.line(), "the core's encoding is byte-identical");
    phases.push((
        "core_roundtrip",
        median(5, || {
            for _ in 0..messages {
                std::hint::black_box(core.roundtrip());
            }
        }),
    ));

    let mut metrics = vec![Metric::int("w0_line_bytes", line.len() as u64, "B")];
    let mut ns = std::collections::BTreeMap::new();
    for (phase, t) in &phases {
        let secs = t.as_secs_f64();
        let per = secs * 1e9 / messages as f64;
        ns.insert(*phase, per);
        metrics.push(Metric::float(format!("w0_{phase}_seconds"), secs, 4, "s"));
        metrics.push(Metric::float(format!("w0_{phase}_msgs_per_s"), messages as f64 / secs, 0, "1/s"));
        metrics.push(Metric::float(format!("w0_{phase}_ns_per_msg"), per, 1, "ns"));
        metrics.push(Metric::float(format!("w0_{phase}_mb_per_s"), buffer.len() as f64 / secs / 1e6, 1, "MB/s"));
    }
    metrics.push(Metric::float("w0_core_vs_typed_ratio", ns["core_roundtrip"] / ns["typed_roundtrip"], 2, "x"));
    metrics
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_phase_handles_the_line_and_the_core_reencodes_it_exactly() {
        let line = UPDATE_LINE.as_bytes();
        assert!(parse_value(line).is_object());
        let _ = (parse_typed(line), parse_tagged(line));
        let mut out = Vec::new();
        typed_roundtrip(line, &mut out);
        assert_eq!(out, format!("{UPDATE_LINE}\n").as_bytes());
        let mut core = Core::new();
        for _ in 0..3 {
            core.roundtrip();
            assert_eq!(core.output(), core.line());
        }
        let (fast, general) = (core.decode(), core.decode_general());
        let strip = |e: Event| match e {
            Event::Notification { notification, .. } => notification,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(strip(fast), strip(general), "both lines carry the same update");
    }
}
