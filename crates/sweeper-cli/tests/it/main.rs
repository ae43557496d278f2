//! Integration tests of the sweeper-cli crate, one binary.

mod run;
mod cli_run;
