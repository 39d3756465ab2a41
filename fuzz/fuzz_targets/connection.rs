//! Fuzz target `connection`: see `acp_proto::fuzzing::connection`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| acp_proto::fuzzing::connection(data));
