//! Shared data generators for the benchmarks of sweeper's kernels.
//!
//! Seeded and dependency-free, so that criterion (in process), the `front-figures` binary
//! and the peer scripts (through `.npy` files) all time the very same numbers.

pub mod front_data;
pub mod npy;
