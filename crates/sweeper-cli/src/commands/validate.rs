//! `sweeper validate`.

use super::{CliError, CliResult};

/// Arguments of `sweeper validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args) -> CliResult {
    Err(CliError::io("`sweeper validate` is not built yet"))
}
