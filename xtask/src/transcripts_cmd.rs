//! `cargo xtask transcripts [--check] [NAME...]`: builds the release `sweeper`, re-runs
//! every marked transcript of the READMEs (see `transcripts`) and rewrites its output in
//! place; `--check` rewrites nothing and exits 1 with a diff when a block drifted.
//! Blocks whose tools are missing are skipped, each with a line saying why.
//! `--bin-dir DIR` runs the `sweeper` in DIR instead of building the release one (a debug
//! build prints the same: the model's arithmetic does not depend on the optimisation).

use crate::transcripts::{FILES, Outcome, refresh};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[allow(clippy::print_stdout, clippy::print_stderr)]
pub(crate) fn main(args: &[String]) -> anyhow::Result<ExitCode> {
    let check = args.iter().any(|a| a == "--check");
    let bin_dir = args
        .iter()
        .position(|a| a == "--bin-dir")
        .map(|i| {
            args.get(i + 1)
                .map(PathBuf::from)
                .context("--bin-dir needs a directory that holds a built sweeper")
        })
        .transpose()?;
    let names: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            !a.starts_with("--") && args.get(i.wrapping_sub(1)).is_none_or(|p| p != "--bin-dir")
        })
        .map(|(_, a)| a)
        .collect();
    if let Some(bad) = args
        .iter()
        .find(|a| a.starts_with("--") && *a != "--check" && *a != "--bin-dir")
    {
        anyhow::bail!(
            "unknown option {bad}: usage: cargo xtask transcripts [--check] [--bin-dir DIR] [NAME...]"
        );
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("xtask lives in the workspace")?;
    let sweeper_dir = if let Some(dir) = bin_dir {
        anyhow::ensure!(
            dir.join("sweeper").is_file(),
            "--bin-dir {}: no sweeper there; build one (cargo build -p sweeper-cli) or drop --bin-dir",
            dir.display()
        );
        std::path::absolute(dir)?
    } else {
        let mut build = crate::cargo();
        build.current_dir(root).args([
            "build",
            "--quiet",
            "--release",
            "-p",
            "sweeper-cli",
            "--bin",
            "sweeper",
        ]);
        crate::run(build)?;
        let target =
            std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
        target.join("release")
    };
    let select =
        |b: &crate::transcripts::Block| names.is_empty() || names.iter().any(|n| **n == b.name);
    let mut drifted = 0;
    for file in FILES {
        let (text, outcomes) =
            refresh(root, file, &sweeper_dir, &select).map_err(anyhow::Error::msg)?;
        for (name, outcome) in &outcomes {
            match outcome {
                Outcome::Same => println!("{file}: {name}: unchanged"),
                Outcome::Skipped(why) => println!("{file}: {name}: skipped: {why}"),
                Outcome::Drifted(diff) => {
                    drifted += 1;
                    if check {
                        println!("{file}: {name}: DRIFTED (- README, + now, normalised):\n{diff}");
                    } else {
                        println!("{file}: {name}: rewritten");
                    }
                }
            }
        }
        if !check {
            std::fs::write(root.join(file), text).with_context(|| format!("writing {file}"))?;
        }
    }
    if check && drifted > 0 {
        eprintln!(
            "xtask: {drifted} transcript(s) drifted: run `cargo xtask transcripts` and commit the result"
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
