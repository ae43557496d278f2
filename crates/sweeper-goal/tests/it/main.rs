//! Integration tests of `sweeper-goal`: the SPEC 2/5/6 conformance table, resolved values,
//! round trips, and the shipped examples (YAML text, so with the `yaml` feature), and JSON
//! configs (in every build; JSON-only behaviour without the feature).

#[cfg(feature = "yaml")]
mod conformance;
#[cfg(feature = "yaml")]
mod conformance_rows;
#[cfg(feature = "yaml")]
mod examples;
#[cfg(feature = "yaml")]
mod export;
mod json;
mod load;
#[cfg(feature = "yaml")]
mod nesting;
#[cfg(feature = "yaml")]
mod resolved;
#[cfg(feature = "yaml")]
mod roundtrip;
mod searched_load;
#[cfg(feature = "yaml")]
mod slurm;
#[cfg(feature = "yaml")]
mod targets;
#[cfg(feature = "yaml")]
mod text;
#[cfg(feature = "yaml")]
mod topology;
