//! The one error type of the sampler crate.

/// Everything that can go wrong when building a search space or driving a study.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SamplerError {
    /// Two parameters share a name.
    #[error("parameter `{name}` is defined twice")]
    DuplicateParam {
        /// The repeated name.
        name: String,
    },
    /// A parameter's definition is unusable (empty range, non-finite bound, ...).
    #[error("parameter `{name}`: {reason}")]
    InvalidParam {
        /// The parameter.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A study needs at least one metric, with distinct names.
    #[error("invalid metrics: {reason}")]
    InvalidMetrics {
        /// What is wrong with them.
        reason: String,
    },
    /// The trial id was never handed out by this study.
    #[error("unknown trial id {trial_id}")]
    UnknownTrial {
        /// The id.
        trial_id: u64,
    },
    /// The trial was already completed or marked infeasible.
    #[error("trial {trial_id} is already closed")]
    TrialClosed {
        /// The id.
        trial_id: u64,
    },
    /// Only a trial closed as infeasible can be reopened.
    #[error("trial {trial_id} is not closed as infeasible, so it cannot be reopened")]
    NotInfeasible {
        /// The id.
        trial_id: u64,
    },
    /// A measurement lacks one of the study's metrics.
    #[error("trial {trial_id}: measurement lacks metric `{metric}`")]
    MissingMetric {
        /// The id.
        trial_id: u64,
        /// The missing metric.
        metric: String,
    },
    /// A measurement holds a metric the study does not know.
    #[error("trial {trial_id}: measurement has unknown metric `{metric}`")]
    UnknownMetric {
        /// The id.
        trial_id: u64,
        /// The unexpected metric.
        metric: String,
    },
    /// A measured value is NaN.
    #[error("trial {trial_id}: metric `{metric}` is nan")]
    NanMetric {
        /// The id.
        trial_id: u64,
        /// The metric.
        metric: String,
    },
    /// The grid algorithm needs a space with a bounded number of points.
    #[error("grid search needs at most {limit} points, the space has {points}")]
    GridTooLarge {
        /// Points in the grid.
        points: u128,
        /// The largest grid accepted.
        limit: u128,
    },
    /// `suggest` was asked for more trials than one call hands out
    /// ([`Study::max_suggest`](crate::Study::max_suggest)).
    #[error(
        "cannot suggest {count} trials in one call: the {} algorithm suggests at most {limit} \
         a call; ask for at most {limit} and call suggest again for more",
        algorithm.name()
    )]
    TooManyTrials {
        /// The count asked for (wide enough for any caller's integer, Python's included).
        count: u128,
        /// The most one call suggests.
        limit: usize,
        /// The study's algorithm, which sets the limit.
        algorithm: crate::algorithm::Algorithm,
    },
    /// A saved study could not be read back.
    #[error("cannot restore study: {reason}")]
    Restore {
        /// Why.
        reason: String,
    },
}
