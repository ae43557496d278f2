//! Text from outside (an evaluator's stderr, config values) reaches the terminal with its
//! control characters escaped.

use std::path::Path;
use std::process::Command;

#[test]
fn an_evaluators_escape_sequences_are_escaped_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("hostile.py");
    std::fs::write(
        &script,
        "import sys\nsys.stdin.read()\nsys.stderr.write('\\x1b]0;TITLE\\x07\\x1b[2J\\x1b[1A\\x1b[2Kfake: all good\\n')\nsys.exit(1)\n",
    )
    .unwrap();
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        format!(
            "search_space: {{parameters: {{tp: {{values: [1, 2]}}, router: {{choices: [\"\\e[31mred\", plain]}}}}}}
evaluator: {{command: [python3, {}]}}
sweep: {{max_rounds: 1, candidates_per_round: 2, parallel_evals: 1, seed: 1, algorithm: random, max_consecutive_failures: 2}}
",
            script.display()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(["run", cfg.to_str().unwrap(), "--out"])
        .arg(dir.path().join("o"))
        .arg("--no-progress")
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("fake: all good"), "{stderr}");
    for c in ['\u{1b}', '\u{7}', '\r'] {
        assert!(
            !stderr.contains(c),
            "{c:?} reached the terminal: {stderr:?}"
        );
    }
    assert!(stderr.contains("\\e]0;TITLE\\u{7}\\e[2J"), "{stderr}");
}
