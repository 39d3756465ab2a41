//! Fuzz target `sim`: the whole two-peer simulation, every decision read from the fuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = proptests::sim::run_bytes(data);
});
