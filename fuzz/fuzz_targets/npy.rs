//! Fuzz target: `sweeper_cli::fuzzing::npy` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sweeper_cli::fuzzing::npy(data));
