//! Fuzz target `framer`: see `proptests::fuzzing::framer`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| proptests::fuzzing::framer(data));
