//! The one error type of the crate.

use crate::Backend;

/// Why a trial could not be exported. Every message names the key or the trial at fault
/// and says how to fix the input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// A candidate key the exporter does not know how to map.
    #[error(
        "parameter `{key}` = {value} has no place in a deployment (known keys: {known}); rename it to a known key, or pass --allow-unmapped to record it as a comment in the manifest"
    )]
    Unmapped {
        /// The candidate key.
        key: String,
        /// Its value, as JSON.
        value: String,
        /// The keys the exporter maps.
        known: String,
    },
    /// A known key whose value cannot be used.
    #[error("`{key}` = {value}: {reason}")]
    Invalid {
        /// The candidate key.
        key: String,
        /// Its value, as JSON.
        value: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// A shape the chosen backend has no flags for.
    #[error("`{key}` = {value} cannot be expressed with {backend}: {reason}")]
    Inexpressible {
        /// The backend.
        backend: Backend,
        /// The candidate key.
        key: String,
        /// Its value, as JSON.
        value: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// The manifest's GPUs would not add up to the candidate's `used_gpus`.
    #[error(
        "the deployment would request {computed} GPUs ({detail}) but the candidate's used_gpus is {used}; the search space's `used_gpus` rule must count every worker's tp x pp x attention_dp x replicas"
    )]
    GpuMismatch {
        /// The candidate's `used_gpus`.
        used: u64,
        /// The GPUs the workers request.
        computed: u64,
        /// How `computed` was counted.
        detail: String,
    },
    /// A trial selection that picks nothing usable, or an unknown trial.
    #[error("{0}")]
    Selection(String),
    /// A `--where` expression that cannot be read.
    #[error("--where `{expr}`: {reason}")]
    Where {
        /// The expression as given.
        expr: String,
        /// What is wrong and an example of the form.
        reason: String,
    },
    /// Writing a bundle failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl ExportError {
    /// Whether the error came from the file system (exit 2 in the command) rather than the
    /// input (exit 1).
    pub fn is_io(&self) -> bool {
        matches!(self, ExportError::Io { .. })
    }
}
