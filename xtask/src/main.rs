//! `cargo xtask`: project automation. `cargo xtask ci` runs exactly what `.ci/run` runs.
//!
//! Subcommands:
//! - `ci`: formatting, lints as errors, the test suite, each bench once, the Python package.
//! - `check-frontier`: the dominance property suite with a chosen case count, or a check
//!   of another tool's front against its input.
//! - `bench-sampler`: the sampler benchmark problems (ZDT1, DTLZ2, serving).

use std::process::{Command, ExitCode};

mod bench_sampler;
mod check_frontier;

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

/// The CI steps, in order; `.ci/run` runs the same.
fn ci() -> anyhow::Result<()> {
    let steps: [&[&str]; 8] = [
        &["fmt", "--all", "--check"],
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        // the layers without their default features: the engine alone, goal without YAML
        &[
            "clippy",
            "-p",
            "sweeper-cli",
            "--no-default-features",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[
            "clippy",
            "-p",
            "sweeper-cli",
            "--no-default-features",
            "--features",
            "files",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &["test", "--workspace", "--locked"],
        &[
            "test",
            "-p",
            "sweeper-goal",
            "--no-default-features",
            "--locked",
        ],
        &["doc", "--no-deps", "--workspace", "--locked"],
        &["test", "-p", "sweeper-benches", "--benches", "--locked"],
    ];
    for step in steps {
        let mut cmd = cargo();
        cmd.args(step);
        if step[0] == "doc" {
            cmd.env("RUSTDOCFLAGS", "-D warnings");
        }
        run(cmd)?;
    }
    // the Python package: its wheel in a fresh virtual environment, and its pytest suite
    let mut python = Command::new("bash");
    python.arg("ci/python.sh");
    run(python)?;
    Ok(())
}

const USAGE: &str = "usage: cargo xtask <ci | check-frontier [--cases N] | bench-sampler [...]>";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = args.get(1..).unwrap_or_default();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci().map(|()| ExitCode::SUCCESS),
        Some("check-frontier") => check_frontier::main(rest),
        Some("bench-sampler") => bench_sampler::main(rest),
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
