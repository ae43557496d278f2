//! `sweeper run`.

use super::{CliError, CliResult};

/// Arguments of `sweeper run`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args) -> CliResult {
    Err(CliError::io("`sweeper run` is not built yet"))
}
