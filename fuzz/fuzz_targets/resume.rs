//! Fuzz target `resume`: see `proptests::fuzzing::resume`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| proptests::fuzzing::resume(data));
