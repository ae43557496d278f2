//! `sweeper-goal`: the schema and validation of a sweep config (SPEC sections 2, 5 and 6).
//!
//! Layer 1 of sweeper, depending on nothing else of the project. Invariant: a value of a
//! validated type is always legal under the contract; everything that can be wrong in a
//! config is rejected here, with the key path of the offending value.

mod objective;

pub use objective::{Direction, Objective, ParetoHasNoDirection, SamplerMetric, Target};
mod load;

pub use load::{
    KvCapacityTooSmall, KvRole, RatioLoad, concurrency_for_ratio, request_count, round_half_even,
    tokens_per_request,
};
