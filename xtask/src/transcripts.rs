//! README transcripts that stay true: `cargo xtask transcripts [--check]`.
//!
//! A transcript is a fenced block of a markdown file with an HTML comment on the line
//! before its fence:
//!
//! ```text
//! <!-- transcript: NAME
//! run: COMMAND          (optional, repeatable: what runs instead of the block's `$ ` lines)
//! setup: COMMAND        (optional, repeatable: run first, output not shown)
//! needs: MODULE         (optional: a Python module the block's `python3` must import)
//! venv: adapters        (optional: the adapters' venv `bin` goes on PATH, after sweeper)
//! stderr: "PREFIX"      (optional: stdout first, then each stderr line behind PREFIX;
//!                        without it stdout and stderr share one pipe, in the order a
//!                        terminal shows them)
//! status: wall          (optional: an `exit N, wall T s` line after each command)
//! drop: TEXT            (optional, repeatable: output lines containing TEXT are left out,
//!                        e.g. progress lines, whose number depends on the machine's speed)
//! attempts: N WHY        (optional: the block runs up to N times and matches when one run
//!                        does; for a tool that is not deterministic, WHY says how)
//! -->
//! ```
//!
//! Without `run:` lines the block's own `$ COMMAND` lines (with `\` continuation lines)
//! are the commands, and the output below each is rewritten; with them, the block holds
//! only output (its commands are shown in the prose or a block above). A leading
//! `cargo run --release -p sweeper-cli -- ` runs the `sweeper` on PATH instead (the
//! caller puts a built binary there). Commands go through `bash -c` in a scratch
//! directory that mirrors the repository root with symlinks (so `examples/...` resolves
//! and `sweeper-out/` starts empty), one shell per block, in order.
//!
//! Before comparing, both sides are normalised (`normalise`): durations (a number
//! followed by `s`, `ms` or `µs`, as in "0.85 s", "in 458 ms", "after 5 s", "wall 0.67 s"),
//! the JSON timing keys `load_ms`, `kernel_ms`, `wall_ms`, `elapsed_ms` and
//! `wall_time_s`, and temporary paths (`/tmp/.tmpXXXXXX`, `/tmp/sweeper-transcript-...`)
//! become placeholders. The file keeps the real values of the last regeneration.
//!
//! The module uses the standard library only: the sweeper-cli integration test includes
//! it by path, to check the same blocks with the debug binary.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The markdown files that hold transcripts, relative to the repository root.
pub(crate) const FILES: &[&str] = &["README.md", "examples/evaluators/README.md"];

/// The adapters' virtual environment: `$SWEEPER_ADAPTERS_VENV`, else `.venv-adapters` at
/// the repository root, where the adapters' README installs it.
pub(crate) fn adapters_venv(root: &Path) -> PathBuf {
    std::env::var_os("SWEEPER_ADAPTERS_VENV")
        .map_or_else(|| root.join(".venv-adapters"), PathBuf::from)
}

/// One marked block: where its body sits in the file and what its comment says.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub(crate) name: String,
    /// Line index of the first body line (after the opening fence).
    pub(crate) body_start: usize,
    /// Line index of the closing fence.
    pub(crate) body_end: usize,
    pub(crate) body: Vec<String>,
    pub(crate) run: Vec<String>,
    pub(crate) setup: Vec<String>,
    pub(crate) needs: Vec<String>,
    pub(crate) venv: bool,
    pub(crate) stderr_prefix: Option<String>,
    pub(crate) status: bool,
    pub(crate) drop: Vec<String>,
    /// Runs before the block counts as drifted (`attempts:`; 1 without it).
    pub(crate) attempts: usize,
}

/// The marked blocks of a markdown text.
pub(crate) fn blocks(text: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(head) = lines[i].trim().strip_prefix("<!-- transcript:") else {
            i += 1;
            continue;
        };
        let at = i + 1;
        let mut opts: Vec<String> = Vec::new();
        let mut name = head.trim().trim_end_matches("-->").trim().to_string();
        if !lines[i].contains("-->") {
            i += 1;
            while i < lines.len() && !lines[i].contains("-->") {
                opts.push(lines[i].trim().to_string());
                i += 1;
            }
            if i == lines.len() {
                return Err(format!(
                    "line {at}: transcript `{name}`: the comment is not closed with `-->`"
                ));
            }
        }
        name = name.trim().to_string();
        i += 1;
        let fence = lines.get(i).map_or("", |l| l.trim());
        if !fence.starts_with("```") {
            return Err(format!(
                "line {at}: transcript `{name}`: the line after the comment must open a fenced block (```)"
            ));
        }
        let body_start = i + 1;
        let Some(end) = (body_start..lines.len()).find(|&j| lines[j].trim() == "```") else {
            return Err(format!(
                "line {at}: transcript `{name}`: the block is not closed with ```"
            ));
        };
        let mut block = Block {
            name,
            body_start,
            body_end: end,
            body: lines[body_start..end]
                .iter()
                .map(|s| (*s).to_string())
                .collect(),
            run: Vec::new(),
            setup: Vec::new(),
            needs: Vec::new(),
            venv: false,
            stderr_prefix: None,
            status: false,
            drop: Vec::new(),
            attempts: 1,
        };
        for opt in opts {
            let Some((key, value)) = opt.split_once(':') else {
                return Err(format!(
                    "line {at}: transcript `{}`: `{opt}` is not `key: value` (keys: run, setup, needs, venv, stderr, status, drop, attempts)",
                    block.name
                ));
            };
            let value = value.trim().to_string();
            // a prefix may end in a space: `stderr: "# stderr: "`
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(&value)
                .to_string();
            match key.trim() {
                "run" => block.run.push(value),
                "setup" => block.setup.push(value),
                "needs" => block.needs.push(value),
                "venv" => block.venv = true,
                "stderr" => block.stderr_prefix = Some(unquoted),
                "status" => block.status = true,
                "drop" => block.drop.push(value),
                "attempts" => {
                    let (n, why) = value.split_once(' ').unwrap_or((value.as_str(), ""));
                    block.attempts = match n.parse::<usize>() {
                        Ok(n) if n >= 1 && !why.trim().is_empty() => n,
                        _ => {
                            return Err(format!(
                                "line {at}: transcript `{}`: `attempts: {value}` is not `attempts: N WHY` (N at least 1, then why the tool's output varies)",
                                block.name
                            ));
                        }
                    };
                }
                other => {
                    return Err(format!(
                        "line {at}: transcript `{}`: unknown key `{other}` (keys: run, setup, needs, venv, stderr, status, drop, attempts)",
                        block.name
                    ));
                }
            }
        }
        out.push(block);
        i = end + 1;
    }
    Ok(out)
}

/// The commands a block runs: its `run:` lines, else its `$ ` lines with their `\`
/// continuation lines (kept as shown, for the rewritten body).
pub(crate) fn commands(block: &Block) -> Vec<String> {
    if !block.run.is_empty() {
        return block.run.clone();
    }
    let mut out = Vec::new();
    let mut lines = block.body.iter();
    while let Some(line) = lines.next() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            let mut cmd = cmd.to_string();
            while cmd.ends_with('\\') {
                match lines.next() {
                    Some(next) => {
                        cmd.push('\n');
                        cmd.push_str(next);
                    }
                    None => break,
                }
            }
            out.push(cmd);
        }
    }
    out
}

/// The shell text that runs a shown command: `cargo run --release -p sweeper-cli -- ` is
/// the `sweeper` on PATH.
fn runnable(cmd: &str) -> String {
    match cmd.strip_prefix("cargo run --release -p sweeper-cli -- ") {
        Some(rest) => format!("sweeper {rest}"),
        None => cmd.to_string(),
    }
}

/// Why a block cannot run here (a `needs:` module that does not import), or `None`.
pub(crate) fn missing(block: &Block, path: &str) -> Option<String> {
    for module in &block.needs {
        let ok = Command::new("python3")
            .args(["-c", &format!("import {module}")])
            .env("PATH", path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Some(format!(
                "python3 on PATH cannot import `{module}` (install the adapters' venv, see examples/evaluators/README.md, or set SWEEPER_ADAPTERS_VENV)"
            ));
        }
    }
    None
}

/// The PATH a block runs with: the directory holding `sweeper`, the adapters' venv when
/// the block asks for it, then the caller's PATH.
pub(crate) fn block_path(block: &Block, root: &Path, sweeper_dir: &Path) -> String {
    let mut parts = vec![sweeper_dir.display().to_string()];
    if block.venv {
        parts.push(adapters_venv(root).join("bin").display().to_string());
    }
    parts.push(std::env::var("PATH").unwrap_or_default());
    parts.join(":")
}

/// A scratch directory mirroring the repository root through symlinks (all but `target`
/// and `sweeper-out`).
fn scratch(root: &Path, name: &str) -> Result<PathBuf, String> {
    let dir =
        std::env::temp_dir().join(format!("sweeper-transcript-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let entries = std::fs::read_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    for entry in entries.flatten() {
        let file = entry.file_name();
        if file == "target" || file == "sweeper-out" || file == ".git" {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), dir.join(&file))
            .map_err(|e| format!("symlink {}: {e}", entry.path().display()))?;
    }
    Ok(dir)
}

/// Runs a block and returns its new body.
pub(crate) fn run_block(
    block: &Block,
    root: &Path,
    sweeper_dir: &Path,
) -> Result<Vec<String>, String> {
    let dir = scratch(root, &block.name)?;
    let path = block_path(block, root, sweeper_dir);
    let shell = |script: &str, merged: bool| -> Result<(i32, String, String, f64), String> {
        let mut cmd = Command::new("bash");
        cmd.current_dir(&dir)
            .env("PATH", &path)
            .stdin(Stdio::null());
        if merged {
            cmd.args(["-c", &format!("exec 2>&1\n{script}")]);
        } else {
            cmd.args(["-c", script]);
        }
        let start = Instant::now();
        let out = cmd
            .output()
            .map_err(|e| format!("transcript `{}`: bash: {e}", block.name))?;
        let secs = start.elapsed().as_secs_f64();
        Ok((
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            secs,
        ))
    };
    for step in &block.setup {
        let (code, stdout, stderr, _) = shell(step, false)?;
        if code != 0 {
            return Err(format!(
                "transcript `{}`: setup `{step}` exited {code}: {stdout}{stderr}",
                block.name
            ));
        }
    }
    let venv = block.venv.then(|| adapters_venv(root));
    let mut body = Vec::new();
    let shown = block.run.is_empty();
    for (n, cmd) in commands(block).iter().enumerate() {
        if shown {
            if n > 0 {
                body.push(String::new());
            }
            for (k, line) in cmd.lines().enumerate() {
                body.push(if k == 0 {
                    format!("$ {line}")
                } else {
                    line.to_string()
                });
            }
        }
        let (code, stdout, stderr, secs) = shell(&runnable(cmd), block.stderr_prefix.is_none())?;
        let kept = |l: &&str| !block.drop.iter().any(|d| l.contains(d.as_str()));
        let shown_line = |l: &str| match &venv {
            Some(venv) => venv_as_installed(l.trim_end(), venv),
            None => l.trim_end().to_string(),
        };
        body.extend(stdout.lines().filter(kept).map(shown_line));
        if let Some(prefix) = &block.stderr_prefix {
            body.extend(
                stderr
                    .lines()
                    .filter(kept)
                    .map(|l| format!("{prefix}{}", shown_line(l))),
            );
        }
        if block.status {
            body.push(format!("exit {code}, wall {secs:.2} s"));
        } else if code != 0 {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(format!(
                "transcript `{}`: `{cmd}` exited {code} (add `status: wall` to the comment if that is the point):\n{}",
                block.name,
                body.join("\n")
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(body)
}

/// A line with the adapters' venv written as the README installs it (`.venv-adapters`, at
/// the repository root), whichever venv ran the block: a transcript never shows one
/// machine's absolute path (a tool that prints where it loads files from would).
pub(crate) fn venv_as_installed(line: &str, venv: &Path) -> String {
    let mut out = line.to_string();
    let canonical = venv.canonicalize().ok();
    for path in std::iter::once(venv).chain(canonical.as_deref()) {
        let text = path.display().to_string();
        if !text.is_empty() && text != "/" {
            out = out.replace(text.trim_end_matches('/'), ".venv-adapters");
        }
    }
    out
}

/// Whether `word` (the text just before a number) ends a JSON key whose value is a
/// timing: `"load_ms": `, `"kernel_ms": `...
fn timing_key(before: &str) -> bool {
    const KEYS: &[&str] = &[
        "load_ms",
        "kernel_ms",
        "wall_ms",
        "elapsed_ms",
        "wall_time_s",
    ];
    let t = before.trim_end();
    let Some(t) = t.strip_suffix(':') else {
        return false;
    };
    let t = t.trim_end().trim_end_matches('"');
    KEYS.iter().any(|k| t.ends_with(k))
}

/// `/tmp/.tmpXXXX...` and `/tmp/sweeper-transcript-...` paths replaced by `<TMP>`.
fn temp_paths(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    loop {
        let at = ["/tmp/.tmp", "/tmp/sweeper-transcript-"]
            .iter()
            .filter_map(|p| rest.find(p))
            .min();
        let Some(at) = at else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        out.push_str("<TMP>");
        rest = &rest[at..];
        let len = rest
            .find(|ch: char| ch.is_whitespace() || matches!(ch, '"' | '\'' | ')' | ','))
            .unwrap_or(rest.len());
        rest = &rest[len..];
    }
}

/// One line with durations, timing keys and temporary paths replaced by placeholders.
pub(crate) fn normalise(line: &str) -> String {
    let line = temp_paths(line);
    let mut out = String::with_capacity(line.len());
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_number = c.is_ascii_digit()
            && (i == 0
                || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == '.'));
        if !starts_number {
            out.push(c);
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.' || chars[j] == ',') {
            j += 1;
        }
        // a trailing `.` or `,` ends a sentence or a list, it is not part of the number
        while j > i + 1 && matches!(chars[j - 1], '.' | ',') {
            j -= 1;
        }
        let mut k = j;
        if k < chars.len() && chars[k] == ' ' {
            k += 1;
        }
        let unit_len = ["ms", "µs", "s"].iter().find_map(|u| {
            let u: Vec<char> = u.chars().collect();
            let end = k + u.len();
            let fits = end <= chars.len() && chars[k..end] == u[..];
            let bounded = fits && (end == chars.len() || !chars[end].is_alphanumeric());
            bounded.then_some(end)
        });
        if let Some(end) = unit_len {
            out.push_str("<DURATION>");
            i = end;
        } else if timing_key(&out) {
            out.push_str("<MS>");
            i = j;
        } else {
            out.extend(&chars[i..j]);
            i = j;
        }
    }
    out
}

/// The lines of a block as compared.
pub(crate) fn normalised(body: &[String]) -> Vec<String> {
    body.iter().map(|l| normalise(l)).collect()
}

/// A line diff of two normalised bodies (longest common subsequence; blocks are short).
pub(crate) fn diff(old: &[String], new: &[String]) -> String {
    let (n, m) = (old.len(), new.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for a in (0..n).rev() {
        for b in (0..m).rev() {
            lcs[a][b] = if old[a] == new[b] {
                lcs[a + 1][b + 1] + 1
            } else {
                lcs[a + 1][b].max(lcs[a][b + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut a, mut b) = (0, 0);
    while a < n || b < m {
        if a < n && b < m && old[a] == new[b] {
            a += 1;
            b += 1;
        } else if b < m && (a == n || lcs[a][b + 1] >= lcs[a + 1][b]) {
            let _ = writeln!(out, "+ {}", new[b]);
            b += 1;
        } else {
            let _ = writeln!(out, "- {}", old[a]);
            a += 1;
        }
    }
    out
}

/// What happened to one block.
#[derive(Debug)]
pub(crate) enum Outcome {
    Same,
    Drifted(String),
    Skipped(String),
}

/// Runs every marked block of `file` (relative to `root`) accepted by `select`, and
/// returns the file's new text and each block's outcome.
pub(crate) fn refresh(
    root: &Path,
    file: &str,
    sweeper_dir: &Path,
    select: &dyn Fn(&Block) -> bool,
) -> Result<(String, BTreeMap<String, Outcome>), String> {
    let text = std::fs::read_to_string(root.join(file)).map_err(|e| format!("{file}: {e}"))?;
    let found = blocks(&text).map_err(|e| format!("{file}: {e}"))?;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut outcomes = BTreeMap::new();
    // from the last block up, so that earlier line indices stay valid
    for block in found.iter().rev() {
        if !select(block) {
            continue;
        }
        let path = block_path(block, root, sweeper_dir);
        if let Some(why) = missing(block, &path) {
            outcomes.insert(block.name.clone(), Outcome::Skipped(why));
            continue;
        }
        let old = normalised(&block.body);
        let mut attempt = 0;
        let (body, outcome) = loop {
            attempt += 1;
            let body = run_block(block, root, sweeper_dir).map_err(|e| format!("{file}: {e}"))?;
            let new = normalised(&body);
            if old == new {
                break (body, Outcome::Same);
            }
            if attempt >= block.attempts {
                break (body, Outcome::Drifted(diff(&old, &new)));
            }
        };
        outcomes.insert(block.name.clone(), outcome);
        let _old: Vec<String> = lines
            .splice(block.body_start..block.body_end, body)
            .collect();
    }
    let mut new_text = lines.join("\n");
    if text.ends_with('\n') {
        new_text.push('\n');
    }
    Ok((new_text, outcomes))
}

#[cfg(test)]
mod venv_tests {
    use super::venv_as_installed;
    use std::path::Path;

    #[test]
    fn the_adapters_venv_is_shown_where_the_readme_installs_it() {
        let venv = Path::new("/opt/somewhere/venv-x");
        assert_eq!(
            venv_as_installed(
                "stderr: Loading rows from /opt/somewhere/venv-x/lib/python3.11/site-packages/a.parquet.",
                venv
            ),
            "stderr: Loading rows from .venv-adapters/lib/python3.11/site-packages/a.parquet."
        );
        assert_eq!(venv_as_installed("no path here", venv), "no path here");
        // a trailing slash in the variable changes nothing
        assert_eq!(
            venv_as_installed(
                "/opt/somewhere/venv-x/bin/python3",
                Path::new("/opt/somewhere/venv-x/")
            ),
            ".venv-adapters/bin/python3"
        );
    }
}
