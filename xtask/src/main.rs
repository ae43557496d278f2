//! `cargo xtask`: project automation. `cargo xtask ci` runs exactly what `.ci/run` runs.
//!
//! Subcommands:
//! - `ci`: `.ci/run` (formatting, lints as errors, the test suite, each bench once).
//! - `man`: the man pages, into `target/man` (or a given directory).
//! - `check-frontier`: the dominance property suite with a chosen case count, or a check
//!   of another tool's front against its input.
//! - `bench-sampler`: the sampler benchmark problems (ZDT1, DTLZ2, serving).
//! - `transcripts [--check]`: re-runs the READMEs' marked transcripts with the release
//!   `sweeper` and rewrites their output (`--check`: exit 1 with a diff on drift).
//! - `model-check`: the built-in serving model against aiconfigurator's estimates and
//!   measured runs (`crates/sweeper-model/calibration/`), the comparison table (`--check`:
//!   exit 1 when the checked split falls below its floors; CI runs it).
//! - `shared-features`: the binary and the Python package build the crates they share with
//!   the same features, so the pip build after the release build recompiles none of them
//!   (exit 1 naming each package that differs; CI runs it).

use anyhow::Context;
use std::path::Path;
use std::process::{Command, ExitCode};

mod bench_sampler;
mod check_frontier;
mod model_check;
mod shared_features;
mod transcripts;
mod transcripts_cmd;

/// A `cargo` command, using the cargo that runs this xtask.
pub(crate) fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// Runs a command to completion, failing when it fails.
pub(crate) fn run(mut cmd: Command) -> anyhow::Result<()> {
    let status = cmd.status()?;
    anyhow::ensure!(status.success(), "{cmd:?} failed: {status}");
    Ok(())
}

/// CI: `.ci/run`, the one list of its steps (it also installs and starts what the
/// tests need, so it is the script and this is the shortcut).
fn ci() -> anyhow::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("xtask lives in the workspace")?;
    let mut cmd = Command::new("bash");
    cmd.arg(root.join(".ci/run"));
    run(cmd)
}

const USAGE: &str = "usage: cargo xtask <ci | man [DIR] | check-frontier [--cases N] | bench-sampler [...] | transcripts [--check] | model-check [--split S] [--points FILE] [--table FILE] [--swaps] [--check] | shared-features>";

/// The man pages (`clap_mangen`, through the binary's hidden `man` command, which holds the
/// command-line definition): `sweeper.1` and `sweeper-COMMAND.1` into DIR, default
/// `target/man`.
fn man(args: &[String]) -> anyhow::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("xtask lives in the workspace")?;
    let dir = args
        .first()
        .map_or_else(|| root.join("target/man"), |d| Path::new(d).to_path_buf());
    let mut cmd = cargo();
    cmd.current_dir(root)
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "sweeper-cli",
            "--",
            "man",
        ])
        .arg(&dir);
    run(cmd)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = args.get(1..).unwrap_or_default();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci().map(|()| ExitCode::SUCCESS),
        Some("man") => man(rest).map(|()| ExitCode::SUCCESS),
        Some("check-frontier") => check_frontier::main(rest),
        Some("bench-sampler") => bench_sampler::main(rest),
        Some("transcripts") => transcripts_cmd::main(rest),
        Some("model-check") => model_check::main(rest),
        Some("shared-features") => shared_features::main(rest),
        _ => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("{USAGE}");
            }
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("xtask: {e:#}");
            }
            ExitCode::FAILURE
        }
    }
}
