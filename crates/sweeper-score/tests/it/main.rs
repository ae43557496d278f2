//! The one integration test binary of `sweeper-score` (one link instead of one per file).

mod scoring;
