//! Fuzz target: `sweeper_tables::fuzzing::report` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sweeper_tables::fuzzing::report(data));
