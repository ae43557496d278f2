//! The integration tests of `sweeper-cli`: one binary, one module per area.

mod builtin;
mod common;
mod evaluator;
mod front;
mod plot;
mod score;
mod validate;
