//! The `sweeper` command: score configuration sweeps and find the best configurations.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod commands;

/// Score configuration sweeps against an optimization goal, trace Pareto fronts, and
/// propose the next candidates to evaluate.
#[derive(Debug, Parser)]
#[command(
    name = "sweeper",
    version,
    propagate_version = true,
    after_help = "Quick start:
  sweeper validate examples/quickstart.yaml      # check a config, see the resolved goal
  sweeper run examples/quickstart.yaml           # sweep with the built-in serving model
  sweeper score --config GOAL.yaml reports.csv   # rank or front reports you already have
  sweeper front data.npy -o 0:max -o 1:max       # the Pareto front of numeric columns

Run `sweeper <command> --help` for each command's options and examples."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check a sweep config and print the resolved goal.
    Validate(commands::validate::Args),
    /// Score evaluated reports against a config's goal: a ranking or a Pareto front.
    Score(commands::score::Args),
    /// The Pareto front (or ranks, or hypervolume) of numeric columns of a table.
    Front(commands::front::Args),
    /// Run a sweep: propose, evaluate, score, and report the front or ranking.
    Run(commands::run::Args),
    /// Evaluate one candidate exactly as a run would, and print its report.
    Evaluate(commands::evaluate::Args),
    /// Draw the plot of a sweep (finished or running), of score/front output or of a table: SVG or PNG.
    Plot(commands::plot::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Validate(args) => commands::validate::run(&args),
        Command::Score(args) => commands::score::run(&args),
        Command::Front(args) => commands::front::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Evaluate(args) => commands::evaluate::run(&args),
        Command::Plot(args) => commands::plot::run(&args),
    };
    commands::finish(result)
}
