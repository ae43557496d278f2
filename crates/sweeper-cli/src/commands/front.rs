//! `sweeper front`.

use super::{CliError, CliResult};

/// Arguments of `sweeper front`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args) -> CliResult {
    Err(CliError::io("`sweeper front` is not built yet"))
}
