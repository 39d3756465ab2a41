//! Fuzz target `envelope`: see `acp_proto::fuzzing::envelope`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| acp_proto::fuzzing::envelope(data));
