//! Fuzz target `envelope`: see `proptests::fuzzing::envelope`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| proptests::fuzzing::envelope(data));
