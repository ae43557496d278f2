//! Fuzz target: `sweeper_cli::fuzzing::reports` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sweeper_cli::fuzzing::reports(data));
