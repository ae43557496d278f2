//! Integration tests of `sweeper-goal`: the SPEC 2/5/6 conformance table, resolved values,
//! round trips, and the shipped examples.

mod conformance;
mod examples;
mod resolved;
mod roundtrip;
