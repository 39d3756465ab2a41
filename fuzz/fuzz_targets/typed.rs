//! Fuzz target `typed`: see `acp_proto::fuzzing::typed`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| acp_proto::fuzzing::typed(data));
