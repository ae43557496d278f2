//! `cargo xtask`: project automation. `cargo xtask ci` runs exactly what `.ci/run` runs.

use std::process::{Command, ExitCode};

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn run(mut cmd: Command) -> anyhow::Result<()> {
    let status = cmd.status()?;
    anyhow::ensure!(status.success(), "{cmd:?} failed: {status}");
    Ok(())
}

/// The CI steps, in order: formatting, lints as errors, the whole test suite, and each
/// benchmark once.
fn ci() -> anyhow::Result<()> {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    run(fmt)?;
    let mut clippy = cargo();
    clippy.args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]);
    run(clippy)?;
    let mut test = cargo();
    test.args(["test", "--workspace"]);
    run(test)?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        _ => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("usage: cargo xtask <ci>");
            }
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("xtask: {e:#}");
            }
            ExitCode::FAILURE
        }
    }
}
