//! The integration tests of sweeper-cli, in one binary.

mod evaluator;
