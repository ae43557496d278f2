//! The algorithms a study can run, by name: a module of its own, below the study and the
//! error type that names it.

use serde::{Deserialize, Serialize};

/// The algorithm behind a study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Algorithm {
    /// GP-UCB-PE with hypervolume scalarization and a feasibility model.
    #[default]
    Default,
    /// Seeded uniform random search.
    Random,
    /// Scrambled Halton sequence.
    QuasiRandom,
    /// Every point of a small grid once (floats at 5 levels).
    Grid,
}

impl Algorithm {
    /// All algorithms.
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Default,
        Algorithm::Random,
        Algorithm::QuasiRandom,
        Algorithm::Grid,
    ];

    /// `default`, `random`, `quasi_random` or `grid`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Default => "default",
            Algorithm::Random => "random",
            Algorithm::QuasiRandom => "quasi_random",
            Algorithm::Grid => "grid",
        }
    }

    /// The algorithm of a [`Self::name`].
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }
}
