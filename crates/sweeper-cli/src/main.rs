//! The `sweeper` command: score configuration sweeps and find the best configurations.

use clap::{CommandFactory, Parser, Subcommand};
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
  sweeper init --builtin llama3-70b-fp8 --gpu h100 my-sweep.yaml  # a config to edit
  sweeper validate examples/quickstart.yaml  # check a config, see the resolved goal
  sweeper run examples/quickstart.yaml       # sweep with the built-in serving model
  sweeper presets                            # the built-in model's models and GPUs
  sweeper score --config examples/serving/pareto.yaml \\
      examples/serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv  # front of real reports

Every file argument takes `-` for standard input. Run `sweeper <command> --help` for
each command's options and examples."
)]
struct Cli {
    /// Print only warnings and errors on stderr (no progress, no summary).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Print more on stderr: every trial of a run as it ends, timings.
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check a sweep config and print the resolved goal.
    Validate(commands::validate::Args),
    /// Score evaluated reports against a config's goal: a ranking or a Pareto front.
    Score(commands::score::Args),
    /// The fewest-GPU configuration serving a request rate under the SLA, from a sweep or reports.
    Recommend(commands::recommend::Args),
    /// The Pareto front (or ranks, or hypervolume) of numeric columns of a table.
    Front(commands::front::Args),
    /// Run a sweep: propose, evaluate, score, and report the front or ranking.
    Run(commands::run::Args),
    /// Evaluate one candidate exactly as a run would, and print its report.
    Evaluate(commands::evaluate::Args),
    /// Write deployments of picked trials: a Dynamo DynamoGraphDeployment, launch commands, the candidate.
    Export(commands::export::Args),
    /// Draw the plot of a sweep (finished or running), of score/front output or of a table: SVG or PNG.
    Plot(commands::plot::Args),
    /// Write a commented sweep config to start from.
    Init(commands::init::Args),
    /// List the built-in serving model's presets: models, GPUs and their key figures.
    Presets(commands::presets::Args),
    /// Print a JSON Schema of the sweep config, for editor completion and checks.
    Schema(commands::schema::Args),
    /// Print a shell completion script.
    Completions(Completions),
    /// Write the man pages (used by `cargo xtask man`).
    #[command(hide = true)]
    Man(Man),
}

/// Arguments of `sweeper completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  sweeper completions bash > ~/.local/share/bash-completion/completions/sweeper
  sweeper completions zsh > ~/.zfunc/_sweeper      # with fpath+=~/.zfunc in .zshrc
  sweeper completions fish > ~/.config/fish/completions/sweeper.fish")]
struct Completions {
    /// The shell.
    shell: clap_complete::Shell,
}

/// Arguments of the hidden `sweeper man`.
#[derive(Debug, clap::Args)]
struct Man {
    /// The directory to write `sweeper.1` and one page per command into.
    dir: std::path::PathBuf,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return commands::usage_error(&e, &Cli::command()),
    };
    commands::set_verbosity(if cli.quiet {
        commands::Verbosity::Quiet
    } else if cli.verbose {
        commands::Verbosity::Verbose
    } else {
        commands::Verbosity::Normal
    });
    let result = match cli.command {
        Command::Validate(args) => commands::validate::run(&args),
        Command::Score(args) => commands::score::run(&args),
        Command::Recommend(args) => commands::recommend::run(&args),
        Command::Front(args) => commands::front::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Evaluate(args) => commands::evaluate::run(&args),
        Command::Plot(args) => commands::plot::run(&args),
        Command::Export(args) => commands::export::run(&args),
        Command::Init(args) => commands::init::run(&args),
        Command::Presets(args) => commands::presets::run(&args),
        Command::Schema(args) => commands::schema::run(&args),
        Command::Completions(args) => {
            let mut cmd = Cli::command();
            let mut out = Vec::new();
            clap_complete::generate(args.shell, &mut cmd, "sweeper", &mut out);
            commands::print_stdout(&String::from_utf8_lossy(&out))
        }
        Command::Man(args) => commands::write_man_pages(Cli::command(), &args.dir),
    };
    commands::finish(result)
}
