//! The trial types: a proposed configuration, where it stands, and the two together.
//!
//! A module of their own, below both the study and the algorithms: an algorithm reads the
//! records through [`crate::History`], the study keeps them, and neither imports the other
//! for them.

use std::collections::BTreeMap;

use crate::space::ParamValue;

/// A proposed configuration.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Trial {
    /// The study-wide id, `0, 1, 2, ...` in suggestion order.
    pub id: u64,
    /// Every parameter's value in space order, constants included.
    pub params: Vec<(String, ParamValue)>,
}

impl Trial {
    /// A trial with this id and these values: what a proposer other than a study (a grid, a
    /// replayed list, a user's own sampler) hands to the sweep engine.
    pub fn new(id: u64, params: Vec<(String, ParamValue)>) -> Trial {
        Trial { id, params }
    }
}

/// Where a trial stands.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TrialState {
    /// Suggested, not yet observed.
    Pending,
    /// Observed: every metric's raw value.
    Completed(BTreeMap<String, f64>),
    /// Could not be evaluated, or over budget; the reason given.
    Infeasible(String),
}

/// A trial and its state.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TrialRecord {
    /// The trial.
    pub trial: Trial,
    /// Its state.
    pub state: TrialState,
}
