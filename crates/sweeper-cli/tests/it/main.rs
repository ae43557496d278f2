//! The integration tests of `sweeper-cli`: one binary, one module per area.

mod builtin;
mod cli_run;
mod evaluator;
mod plot;
mod run;
mod validate;
