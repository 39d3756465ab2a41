//! W0 micro-benchmark: one W1 update line through plain `serde_json` and through the core, in
//! the same run. `cargo bench -p acp-bench --bench w0`.
//!
//! Compare `core_roundtrip` (decode + dispatch + encode through `acp-proto`) with
//! `serde_typed_roundtrip` (plain structs decoded and encoded again).

use acp_bench::w0::{Core, parse_tagged, parse_typed, parse_value, typed_roundtrip};
use acp_bench::wire::UPDATE_LINE;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

#[divan::bench]
fn serde_value_parse() -> serde_json::Value {
    parse_value(black_box(UPDATE_LINE.as_bytes()))
}

#[divan::bench]
fn serde_typed_parse() -> acp_bench::w0::PlainLine {
    parse_typed(black_box(UPDATE_LINE.as_bytes()))
}

#[divan::bench]
fn serde_tagged_parse() -> acp_bench::w0::TaggedLine {
    parse_tagged(black_box(UPDATE_LINE.as_bytes()))
}

#[divan::bench]
fn serde_typed_roundtrip(bencher: Bencher<'_, '_>) {
    let mut out = Vec::with_capacity(4096);
    bencher.bench_local(|| {
        out.clear();
        typed_roundtrip(black_box(UPDATE_LINE.as_bytes()), &mut out);
    });
}

#[divan::bench]
fn core_decode(bencher: Bencher<'_, '_>) {
    let mut core = Core::new();
    bencher.bench_local(|| core.decode());
}

#[divan::bench]
fn core_encode(bencher: Bencher<'_, '_>) {
    let mut core = Core::new();
    let update = match core.decode() {
        acp_proto::Event::Notification {
            notification: acp_proto::Notification::Agent(acp_proto::AgentNotification::SessionUpdate(n)),
            ..
        } => n,
        other => panic!("unexpected {other:?}"),
    };
    bencher.with_inputs(|| update.clone()).bench_local_values(|n| core.encode(n));
}

#[divan::bench]
fn core_roundtrip(bencher: Bencher<'_, '_>) {
    let mut core = Core::new();
    bencher.bench_local(|| core.roundtrip());
}

#[divan::bench]
fn core_decode_general(bencher: Bencher<'_, '_>) {
    let mut core = Core::new();
    bencher.bench_local(|| core.decode_general());
}
