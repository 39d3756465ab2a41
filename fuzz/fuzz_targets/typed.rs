//! Fuzz target `typed`: see `proptests::fuzzing::typed`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| proptests::fuzzing::typed(data));
