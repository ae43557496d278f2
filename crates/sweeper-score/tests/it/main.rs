//! Integration tests of `sweeper-score`.

mod front;
