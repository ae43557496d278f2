//! `sweeper score`.

use super::{CliError, CliResult};

/// Arguments of `sweeper score`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args) -> CliResult {
    Err(CliError::io("`sweeper score` is not built yet"))
}
