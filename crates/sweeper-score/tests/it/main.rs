//! Integration tests of `sweeper-score`: one binary (one link) for every module.

mod front;
mod ranks;
mod scoring;
mod targets;
