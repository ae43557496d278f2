//! `sweeper-sampler`: the multi-metric ask/tell study and its algorithms (SPEC 4).
//!
//! Layer 3 of sweeper, on top of `sweeper-goal` and `sweeper-score`.
