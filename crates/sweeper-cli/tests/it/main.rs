//! The integration tests of `sweeper-cli`: one binary, one module per area.

mod builtin;
mod evaluator;
mod plot;
mod validate;
