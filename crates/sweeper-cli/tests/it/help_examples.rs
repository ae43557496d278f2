//! Every example in every `--help` runs as written, against the files that ship
//! (`examples/`), and exits 0: help that teaches a command that fails teaches nothing.
//!
//! An example is a line of a help's text after a heading "Examples...:", "Example:" or
//! "Quick start:" that starts with `sweeper ` (indented), with its `\` continuation lines; a trailing
//! `# comment` is dropped, and `> FILE` sends stdout to FILE. The examples of one help
//! run in order, in a fresh directory holding a copy of `examples/`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sweeper")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn help(args: &[&str]) -> String {
    let out = Command::new(bin())
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The example command lines of a help text, continuation lines joined.
fn examples(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_examples = false;
    let mut pending: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(mut cmd) = pending.take() {
            cmd.push(' ');
            cmd.push_str(trimmed.trim_end_matches('\\').trim());
            if trimmed.ends_with('\\') {
                pending = Some(cmd);
            } else {
                out.push(cmd);
            }
            continue;
        }
        if !line.starts_with(' ')
            && trimmed.ends_with(':')
            && (trimmed.starts_with("Example") || trimmed == "Quick start:")
        {
            in_examples = true;
            continue;
        }
        if in_examples && line.starts_with(' ') && trimmed.starts_with("sweeper ") {
            let cmd = trimmed.trim_end_matches('\\').trim().to_owned();
            if trimmed.ends_with('\\') {
                pending = Some(cmd);
            } else {
                out.push(cmd);
            }
        }
    }
    out
}

/// Splits an example into words: single and double quotes group, `#` starts a comment
/// outside quotes.
fn words(cmd: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut has_word = false;
    for c in cmd.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                has_word = true;
            }
            (None, '#') if !has_word => break,
            (None, c) if c.is_whitespace() => {
                if has_word {
                    words.push(std::mem::take(&mut word));
                    has_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                has_word = true;
            }
        }
    }
    if has_word {
        words.push(word);
    }
    words
}

/// A word with one `*` in its last component expands to the matching files, sorted as a
/// shell sorts them (as text); any other word is itself.
fn glob(cwd: &Path, word: String) -> Vec<String> {
    let (dir, pattern) = word.rsplit_once('/').unwrap_or(("", &word));
    let Some((prefix, suffix)) = pattern.split_once('*') else {
        return vec![word];
    };
    let mut found: Vec<String> = std::fs::read_dir(cwd.join(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| {
            name.len() >= prefix.len() + suffix.len()
                && name.starts_with(prefix)
                && name.ends_with(suffix)
        })
        .map(|name| {
            if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            }
        })
        .collect();
    found.sort();
    assert!(!found.is_empty(), "{word} matches nothing");
    found
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs one help's examples in a fresh directory; `setup` runs first (a sweep to plot).
fn run_examples(args: &[&str], setup: &[&[&str]]) {
    let text = help(args);
    let found = examples(&text);
    assert!(
        !found.is_empty(),
        "{args:?}: the help has no examples:\n{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("examples"), &dir.path().join("examples"));
    for pre in setup {
        let out = Command::new(bin())
            .args(*pre)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "setup {pre:?}");
    }
    for example in found {
        let mut argv: Vec<String> = words(&example)
            .into_iter()
            .flat_map(|w| glob(dir.path(), w))
            .collect();
        assert_eq!(argv.remove(0), "sweeper", "{example}");
        let mut redirect = None;
        if let Some(at) = argv.iter().position(|w| w == ">") {
            redirect = argv.get(at + 1).cloned();
            argv.truncate(at);
        }
        let out = Command::new(bin())
            .args(&argv)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "`{example}` from `sweeper {} --help` failed:\n{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        // A redirect into the home directory is the user's; the rest are written.
        if let Some(file) = redirect.filter(|f| !f.starts_with('~')) {
            std::fs::write(dir.path().join(file), &out.stdout).unwrap();
        }
    }
}

#[test]
fn the_examples_parse_as_the_shell_would() {
    let text = "Examples:\n  sweeper a 'b c' \\\n      d  # note\n  sweeper e \"{\\\"x\\\": 1}\" > f.txt\nnot sweeper x\n";
    let found = examples(text);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(words(&found[0]), ["sweeper", "a", "b c", "d"]);
    assert_eq!(words(&found[1])[..2], ["sweeper", "e"]);
    assert_eq!(words(&found[1])[3..], [">", "f.txt"]);
}

#[test]
fn every_subcommand_has_examples_in_its_help() {
    let top = help(&[]);
    let mut commands = Vec::new();
    let mut listing = false;
    for line in top.lines() {
        if line.starts_with("Commands:") {
            listing = true;
            continue;
        }
        if listing {
            let Some(name) = line.split_whitespace().next() else {
                break;
            };
            if !line.starts_with("  ") {
                break;
            }
            // a wrapped description continues further in
            if line.starts_with("   ") {
                continue;
            }
            if name != "help" {
                commands.push(name.to_owned());
            }
        }
    }
    assert!(commands.len() >= 9, "{commands:?}");
    for command in commands {
        let text = help(&[&command]);
        assert!(
            !examples(&text).is_empty(),
            "`sweeper {command} --help` has no runnable example"
        );
    }
}

#[test]
fn top_level_examples_run() {
    run_examples(&[], &[]);
}

#[test]
fn validate_examples_run() {
    run_examples(&["validate"], &[]);
}

#[test]
fn score_examples_run() {
    run_examples(&["score"], &[]);
}

#[test]
fn front_examples_run() {
    run_examples(&["front"], &[]);
}

#[test]
fn run_examples_run() {
    run_examples(&["run"], &[]);
}

#[test]
fn evaluate_examples_run() {
    run_examples(&["evaluate"], &[]);
}

#[test]
fn plot_examples_run() {
    run_examples(
        &["plot"],
        &[
            &["run", "examples/quickstart.yaml", "-q"],
            &["run", "examples/quickstart-sla.yaml", "-q"],
        ],
    );
}

#[test]
fn export_examples_run() {
    run_examples(&["export"], &[&["run", "examples/quickstart.yaml", "-q"]]);
}

#[test]
fn init_presets_schema_completions_examples_run() {
    for command in ["init", "presets", "schema", "completions"] {
        run_examples(&[command], &[]);
    }
}
