//! The integration tests of `sweeper-cli`: one binary, one module per area.

mod builtin;
mod plot;
mod validate;
