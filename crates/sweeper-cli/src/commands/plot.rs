//! `sweeper plot`: redraw the plot of a finished (or running) sweep.

use super::{CliError, CliResult};
use std::path::PathBuf;
use sweeper_cli::run::{ResultFile, plot_of};

/// Arguments of `sweeper plot`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  sweeper plot sweeper-out/quickstart                # the output directory
  sweeper plot sweeper-out/quickstart/result.json --out front.svg
  sweeper plot sweeper-out/quickstart/journal.jsonl  # a sweep still running

A pareto result gives the frontier (first objective on y, last on x, every
feasible candidate in grey, the front highlighted; pairwise panels for three or
more objectives); a ranking gives the best score by trial.")]
pub(crate) struct Args {
    /// An output directory, its result.json, or its journal.jsonl.
    input: PathBuf,
    /// Where to write the SVG [default: front.svg or best.svg beside the input].
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub(crate) fn run(args: &Args) -> CliResult {
    let input = &args.input;
    let (dir, file) = if input.is_dir() {
        (input.clone(), input.join("result.json"))
    } else {
        (
            input.parent().map(PathBuf::from).unwrap_or_default(),
            input.clone(),
        )
    };
    let result: ResultFile = if file.extension().is_some_and(|e| e == "jsonl") {
        let config = super::load_config(&dir.join("config.yaml"))?;
        let result = sweeper_cli::run::result_from_journal(&config, &file)
            .map_err(|e| super::run::run_error(&e))?;
        let title = format!("{} (from the journal)", file.display());
        ResultFile::new(&config, &result, &title)
    } else {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| CliError::io(format!("{}: {e}", file.display())))?;
        serde_json::from_str(&text).map_err(|e| {
            CliError::invalid(format!(
                "{}: not a sweeper result.json: {e}",
                file.display()
            ))
        })?
    };
    let (name, svg) = plot_of(&result);
    let out = args.out.clone().unwrap_or_else(|| dir.join(name));
    std::fs::write(&out, svg).map_err(|e| CliError::io(format!("{}: {e}", out.display())))?;
    super::print_stderr(&format!("sweeper: wrote {}\n", out.display()));
    Ok(())
}
