//! Empty: Cargo resolves a crate's build-dependencies only when it has a build script, and
//! this crate's one build-dependency (syn's features for the host) is all it is for.

fn main() {}
