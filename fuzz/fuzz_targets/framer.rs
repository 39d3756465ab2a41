//! Fuzz target `framer`: see `acp_proto::fuzzing::framer`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| acp_proto::fuzzing::framer(data));
