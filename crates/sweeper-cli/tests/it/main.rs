//! Integration tests of `sweeper-cli`: one binary (one link) for every module.

mod common;
mod front;
mod score;
