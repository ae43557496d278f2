//! `cargo xtask bench-sampler`.

use std::process::ExitCode;

pub(crate) fn main(_args: &[String]) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}
