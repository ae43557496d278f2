//! `sweeper schema`: the JSON Schema of the sweep config, for editors.

use super::{CliError, CliResult, print_stdout};

/// Arguments of `sweeper schema`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  sweeper schema > sweeper.schema.json

Then point the YAML language server at it (VS Code's YAML extension, Neovim's
yaml-language-server, Helix...): either a first line in the config,
  # yaml-language-server: $schema=./sweeper.schema.json
or a glob in the editor's settings, e.g. VS Code's settings.json:
  \"yaml.schemas\": {\"./sweeper.schema.json\": [\"sweeps/*.yaml\"]}

The schema gives completion, descriptions and type checks as you type;
`sweeper validate` remains the full check (ranges that depend on each other,
presets, the evaluator's program).")]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args) -> CliResult {
    let schema = sweeper_goal::schema::config_schema();
    let mut text = serde_json::to_string_pretty(&schema)
        .map_err(|e| CliError::io(format!("cannot encode JSON: {e}")))?;
    text.push('\n');
    print_stdout(&text)
}
