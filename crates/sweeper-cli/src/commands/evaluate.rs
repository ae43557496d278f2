//! `sweeper evaluate`.

use super::{CliError, CliResult};

/// Arguments of `sweeper evaluate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args) -> CliResult {
    Err(CliError::io("`sweeper evaluate` is not built yet"))
}
