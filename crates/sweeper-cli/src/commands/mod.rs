//! One module per subcommand; shared exit-code and output plumbing here.
//!
//! Exit codes: 0 ok; 1 the input was checked and found wanting (invalid config, bad data,
//! no feasible candidate); 2 usage or I/O error. A closed stdout (broken pipe) exits 0.

use std::io::{self, Write};
use std::process::ExitCode;

pub(crate) mod evaluate;
pub(crate) mod front;
pub(crate) mod plot;
pub(crate) mod run;
pub(crate) mod score;
pub(crate) mod table;
pub(crate) mod validate;

/// Output format of data printed on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum Format {
    /// Aligned columns for people.
    #[default]
    Table,
    /// JSON for programs.
    Json,
    /// CSV with a header row.
    Csv,
}

/// A failed command: the exit code and the message printed on stderr.
#[derive(Debug)]
pub(crate) struct CliError {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl CliError {
    /// Exit 1: the input was read and found wanting.
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        CliError {
            code: 1,
            message: message.into(),
        }
    }

    /// Exit 2: a usage or I/O error (missing file, unreadable input).
    pub(crate) fn io(message: impl Into<String>) -> Self {
        CliError {
            code: 2,
            message: message.into(),
        }
    }
}

pub(crate) type CliResult = Result<(), CliError>;

/// Writes data to stdout; a closed pipe is not an error (the reader has what it wanted).
pub(crate) fn print_stdout(text: &str) -> CliResult {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(CliError {
            code: 0,
            message: String::new(),
        }),
        Err(e) => Err(CliError::io(format!("cannot write to stdout: {e}"))),
    }
}

/// Maps a command's result to the process exit code, printing the error on stderr.
pub(crate) fn finish(result: CliResult) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !e.message.is_empty() {
                print_stderr(&format!("error: {}\n", e.message));
            }
            ExitCode::from(e.code)
        }
    }
}

/// Writes diagnostics to stderr (never fails: a closed stderr loses only diagnostics).
/// Control characters other than line breaks and tabs are escaped: diagnostics quote
/// evaluators' stderr, config values and report labels, which must not be able to move the
/// cursor, clear the screen or set a window title.
pub(crate) fn print_stderr(text: &str) {
    let text = sweeper_cli::text::escape_for_terminal(text);
    let mut err = io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Loads and validates a sweep config: exit 2 when the file cannot be read, exit 1 when it
/// is invalid.
pub(crate) fn load_config(path: &std::path::Path) -> Result<sweeper_goal::SweepConfig, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::io(format!("cannot read config {}: {e}", path.display())))?;
    sweeper_goal::parse(&text).map_err(|e| CliError::invalid(format!("{}: {e}", path.display())))
}
