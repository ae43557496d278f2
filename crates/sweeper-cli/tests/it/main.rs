//! The integration tests of `sweeper-cli`: one binary, one module per area.

mod builtin;
mod cli_run;
mod common;
mod evaluator;
mod evaluator_faults;
mod front;
mod plot;
mod resume;
mod run;
mod score;
mod validate;
