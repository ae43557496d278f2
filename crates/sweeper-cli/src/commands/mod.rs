//! One module per subcommand; shared exit-code and output plumbing here.
//!
//! Exit codes: 0 ok; 1 the input was checked and found wanting (invalid config, bad data,
//! no feasible candidate); 2 usage or I/O error. A closed stdout (broken pipe) exits 0.

use std::io::{self, Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

pub(crate) mod evaluate;
pub(crate) mod export;
pub(crate) mod front;
pub(crate) mod init;
pub(crate) mod missing_keys;
pub(crate) mod output;
pub(crate) mod plot;
pub(crate) mod presets;
pub(crate) mod read_args;
pub(crate) mod recommend;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod score;
pub(crate) mod style;
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

/// The exit code of an engine error: 2 for the environment's (files, locks, a full disk),
/// 1 for the input's.
pub(crate) fn run_error(e: &sweeper_engine::RunError) -> CliError {
    if e.is_io() {
        CliError::io(e.to_string())
    } else {
        CliError::invalid(e.to_string())
    }
}

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

/// How much goes to stderr: `-q` leaves warnings and errors, `-v` adds detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Verbosity {
    Quiet,
    Normal,
    Verbose,
}

static VERBOSITY: AtomicU8 = AtomicU8::new(1);

/// Sets the process's verbosity (once, from the global flags).
pub(crate) fn set_verbosity(v: Verbosity) {
    VERBOSITY.store(v as u8, Ordering::Relaxed);
}

pub(crate) fn verbosity() -> Verbosity {
    match VERBOSITY.load(Ordering::Relaxed) {
        0 => Verbosity::Quiet,
        1 => Verbosity::Normal,
        _ => Verbosity::Verbose,
    }
}

/// The one prefix of every diagnostic line sweeper prints.
const PREFIX: &str = "sweeper: ";

/// Writes diagnostics to stderr (never fails: a closed stderr loses only diagnostics).
///
/// Every message starts with one `sweeper: ` (added when the text lacks it; its
/// continuation lines are left as they are, indented detail of the same diagnostic). With
/// `-q` only warnings and errors are written. Control characters other than line breaks
/// and tabs are escaped: diagnostics quote evaluators' stderr, config values and report
/// labels, which must not be able to move the cursor, clear the screen or set a window
/// title.
pub(crate) fn print_stderr(text: &str) {
    let body = text.trim_start_matches('\n');
    let lead = &text[..text.len() - body.len()];
    let bare = body.strip_prefix(PREFIX).unwrap_or(body);
    if verbosity() == Verbosity::Quiet && !is_alarm(bare) {
        return;
    }
    let text = sweeper_engine::text::escape_for_terminal(&format!("{lead}{PREFIX}{bare}"));
    let mut err = io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Whether a diagnostic is a warning or an error (what `-q` keeps).
fn is_alarm(text: &str) -> bool {
    text.starts_with("error:") || text.starts_with("warning:")
}

/// The argument that names standard input.
pub(crate) fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// How diagnostics name an input argument.
pub(crate) fn input_name(path: &Path) -> String {
    if is_stdin(path) {
        "standard input".to_owned()
    } else {
        path.display().to_string()
    }
}

static STDIN_TAKEN: AtomicBool = AtomicBool::new(false);

/// Claims standard input for one argument: a second `-` is a usage error.
pub(crate) fn claim_stdin() -> Result<(), CliError> {
    if STDIN_TAKEN.swap(true, Ordering::Relaxed) {
        return Err(CliError::io(
            "standard input (`-`) can be given once; write the other input to a file",
        ));
    }
    Ok(())
}

/// The whole text of a config argument, or of standard input for `-`.
pub(crate) fn read_config_text(path: &Path) -> Result<String, CliError> {
    read_text(path).map_err(|e| CliError {
        message: e.message.replacen("cannot read ", "cannot read config ", 1),
        ..e
    })
}

/// The whole text of a file argument, or of standard input for `-`.
pub(crate) fn read_text(path: &Path) -> Result<String, CliError> {
    let read = if is_stdin(path) {
        claim_stdin()?;
        let mut text = String::new();
        io::stdin().lock().read_to_string(&mut text).map(|_| text)
    } else {
        std::fs::read_to_string(path)
    };
    read.map_err(|e| CliError::io(format!("cannot read {}: {e}", input_name(path))))
}

/// A name for what a config argument sweeps (output directories, titles): its file stem,
/// `stdin` for standard input.
pub(crate) fn config_stem(path: &Path) -> String {
    if is_stdin(path) {
        return "stdin".to_owned();
    }
    path.file_stem()
        .map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned())
}

/// Loads and validates a sweep config (`-`: standard input): exit 2 when it cannot be
/// read, exit 1 when it is invalid.
pub(crate) fn load_config(path: &Path) -> Result<sweeper_goal::SweepConfig, CliError> {
    let text = read_config_text(path)?;
    sweeper_goal::parse(&text).map_err(|e| CliError::invalid(format!("{}: {e}", input_name(path))))
}

/// Prints a command-line parse error (or the help and version, which clap reports the same
/// way) and gives the exit code: 0 for help and version, 2 for a usage error. A mistyped
/// subcommand that clap finds nothing close to (a swapped pair of letters, say) gets a
/// suggestion from the edit distance.
pub(crate) fn usage_error(e: &clap::Error, cmd: &clap::Command) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = print_stdout(&e.render().to_string());
        return ExitCode::SUCCESS;
    }
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        print_stderr(&e.render().to_string());
        return ExitCode::from(2);
    }
    let mut text = e.render().to_string();
    if e.kind() == ErrorKind::InvalidSubcommand
        && !text.contains("tip: a similar")
        && let Some(ContextValue::String(typed)) = e.get(ContextKind::InvalidSubcommand)
    {
        let names = cmd
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(clap::Command::get_name);
        if let Some(near) = nearest(typed, names) {
            text = text.replacen(
                "\n\n",
                &format!("\n\n  tip: a similar subcommand exists: '{near}'\n\n"),
                1,
            );
        }
    }
    print_stderr(&text);
    ExitCode::from(2)
}

/// The name closest to `typed` within an edit distance of 2 (at most a third of its
/// length, rounded up), swaps of neighbouring letters counting 1.
fn nearest<'a>(typed: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = typed.chars().count().div_ceil(3).min(2);
    names
        .map(|n| (edit_distance(typed, n), n))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

/// The optimal-string-alignment distance: insertions, deletions, substitutions and
/// transpositions of neighbours, each 1.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0_usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// Writes `sweeper.1` and `sweeper-COMMAND.1` for every visible subcommand into `dir`.
pub(crate) fn write_man_pages(cmd: clap::Command, dir: &Path) -> CliResult {
    let io_err = |e: io::Error| CliError::io(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io_err)?;
    let mut cmd = cmd;
    cmd.build();
    let mut pages = vec![("sweeper".to_owned(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = format!("sweeper-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name)));
    }
    for (name, page) in pages {
        let mut roff = Vec::new();
        clap_mangen::Man::new(page)
            .render(&mut roff)
            .map_err(io_err)?;
        std::fs::write(dir.join(format!("{name}.1")), roff).map_err(io_err)?;
    }
    print_stderr(&format!("wrote the man pages into {}\n", dir.display()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{edit_distance, nearest};

    #[test]
    fn swapped_letters_are_one_edit() {
        assert_eq!(edit_distance("rnu", "run"), 1);
        assert_eq!(edit_distance("scroe", "score"), 1);
        assert_eq!(edit_distance("validate", "validate"), 0);
        assert_eq!(edit_distance("", "run"), 3);
    }

    #[test]
    fn nearest_names_only_close_ones() {
        let names = ["run", "score", "front", "validate"];
        assert_eq!(nearest("rnu", names.into_iter()), Some("run"));
        assert_eq!(nearest("fornt", names.into_iter()), Some("front"));
        assert_eq!(nearest("xyz", names.into_iter()), None);
        assert_eq!(nearest("r", names.into_iter()), None);
    }
}
