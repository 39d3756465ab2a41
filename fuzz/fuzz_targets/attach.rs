//! Fuzz target `attach`: see `proptests::fuzzing::attach`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| proptests::fuzzing::attach(data));
