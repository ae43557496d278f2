//! `sweeper plot`.

use super::{CliError, CliResult};

/// Arguments of `sweeper plot`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args) -> CliResult {
    Err(CliError::io("`sweeper plot` is not built yet"))
}
