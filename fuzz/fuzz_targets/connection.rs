//! Fuzz target `connection`: see `proptests::fuzzing::connection`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| proptests::fuzzing::connection(data));
