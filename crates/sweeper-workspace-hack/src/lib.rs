//! Feature unification for the sweeper workspace: no code, only dependencies.
//!
//! The `sweeper` binary (`sweeper-cli`) and the Python package (`sweeper-py`) share most of
//! their crates, and both build with the release profile into the workspace's `target/`. Cargo
//! compiles a crate once per set of features, so when the two builds ask for different
//! features of a shared dependency (`syn`, `rustix`, `once_cell`), the second build recompiles that
//! dependency and every crate above it — here, nearly all of them. Both depend on this crate,
//! whose manifest asks for the union, so each build's crates are the other's.
//!
//! **Invariant:** every package in both `cargo tree -e features -p sweeper-cli` and
//! `cargo tree -e features -p sweeper-py --features extension-module` has the same features
//! in both. `cargo xtask shared-features` checks it (CI runs it) and names what to add to
//! this crate's `Cargo.toml` when a dependency change breaks it.
//!
//! There is nothing to call; a crate that wants the same reuse depends on it:
//!
//! ```toml
//! [dependencies]
//! sweeper-workspace-hack.workspace = true
//! ```
//!
//! The idea is cargo-hakari's "workspace-hack" crate, written by hand because the list is
//! four features long.
