//! Fuzz target `observer`: see `proptests::fuzzing::observer`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| proptests::fuzzing::observer(data));
