//! The one error type of `sweeper-score`.

/// Everything that can be wrong with the input of a scoring or front computation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScoreError {
    /// A NaN in a numeric matrix (front kernels).
    #[error("row {row}, column {column}: value is NaN; fronts need comparable numbers")]
    NanValue {
        /// Row index in the input.
        row: usize,
        /// Column index in the input.
        column: usize,
    },
    /// A NaN in a report value.
    #[error(
        "candidate {candidate}: report key `{key}` is NaN; fronts and rankings need comparable numbers"
    )]
    NanReport {
        /// Candidate index in the input.
        candidate: usize,
        /// The report key.
        key: String,
    },
    /// The matrix length is not a multiple of the dimension, or directions do not match.
    #[error("shape mismatch: {detail}")]
    Shape {
        /// What does not fit.
        detail: String,
    },
    /// A reference point that does not fit the data (hypervolume).
    #[error("reference point: {detail}")]
    Reference {
        /// What is wrong with it.
        detail: String,
    },
    /// A report or candidate config value of the wrong kind (a report that is not an
    /// object, a metric the scorer reads or `used_gpus` that is not a number).
    #[error("candidate {candidate}: `{key}` {detail}")]
    Invalid {
        /// Candidate index in the input.
        candidate: usize,
        /// The report key or config key (`report` for the report as a whole).
        key: String,
        /// What is wrong with it.
        detail: String,
    },
}
