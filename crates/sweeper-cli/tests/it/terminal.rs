//! Text from outside (an evaluator's stderr, config values) reaches the terminal with its
//! control characters escaped.

use std::fmt::Write as _;
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

/// The escape sequences a hostile input carries: a window title, a screen clear, a bell, a
/// carriage return, a C1 control sequence introducer and DEL.
const HOSTILE: &str = "\u{1b}]0;PWNED\u{7}\u{1b}[2J\rx\u{9b}1m\u{7f}";

/// Asserts that none of `text`'s characters is a control character but line breaks (and
/// the tabs nothing here writes), and that the hostile text shows escaped.
fn assert_escaped(what: &str, text: &str) {
    let raw: Vec<char> = text
        .chars()
        .filter(|&c| c.is_control() && c != '\n')
        .collect();
    assert!(
        raw.is_empty(),
        "{what}: {raw:?} reached the terminal: {text}"
    );
    assert!(
        text.contains("\\e]0;PWNED\\u{7}\\e[2J\\rx\\u{9b}1m\\u{7f}"),
        "{what}: {text}"
    );
}

/// Runs `sweeper ARGS`: exit code, stdout, stderr (lossy: a raw byte must show up too).
fn run(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

/// `text` as a YAML double-quoted string, every control character as a `\u` escape (YAML
/// allows none of them raw, DEL and C1 included).
fn yaml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if c.is_control() {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out.push('"');
    out
}

fn toy() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/evaluators/toy_serving.py")
}

#[test]
fn a_reports_label_is_escaped_in_the_score_table() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("g.yaml");
    std::fs::write(&cfg, "goal: {target: throughput}\n").unwrap();
    // the reproduction: a CSV cell that sets the window title
    let csv = dir.path().join("r.csv");
    std::fs::write(
        &csv,
        format!("output_throughput_tok_s,name\n5,\"{HOSTILE}\"\n"),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&[
        os("score"),
        os("--config"),
        cfg.as_os_str(),
        csv.as_os_str(),
        os("--show"),
        os("name"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_escaped("score table of a CSV", &stdout);
    // a config value of a JSON Lines row, shown as a column of its own
    let jsonl = dir.path().join("r.jsonl");
    let row = serde_json::json!({
        "config": {"router": HOSTILE, "tp": 1},
        "report": {"output_throughput_tok_s": 5},
    });
    std::fs::write(&jsonl, format!("{row}\n")).unwrap();
    let (code, stdout, stderr) = run(&[
        os("score"),
        os("--config"),
        cfg.as_os_str(),
        jsonl.as_os_str(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_escaped("score table of JSON Lines", &stdout);
    // a column name, in `front`'s table and in its diagnostics
    let named = dir.path().join("n.csv");
    std::fs::write(&named, format!("\"{HOSTILE}\",b\n1,2\n3,1\n")).unwrap();
    let (code, stdout, stderr) = run(&[
        os("front"),
        named.as_os_str(),
        os("--objective"),
        os("b:max"),
        os("--objective"),
        os("c:max"),
    ]);
    assert_ne!(code, 0);
    assert!(stdout.is_empty(), "{stdout}");
    assert_escaped("front's error", &stderr);
    let (code, stdout, stderr) = run(&[
        os("front"),
        named.as_os_str(),
        os("--objective"),
        os("b:max"),
        os("--ranks"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains('\u{1b}'), "{stdout}");
    let header = format!("{HOSTILE}:max");
    let (code, stdout, stderr) = run(&[
        os("front"),
        named.as_os_str(),
        os("--objective"),
        os(&header),
        os("--objective"),
        os("b:max"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_escaped("front table header", &stdout);
}

#[test]
fn a_journals_parameters_are_escaped_by_score_and_by_a_resume() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    let choices = format!("[{}, plain]", yaml_string(HOSTILE));
    std::fs::write(
        &cfg,
        format!(
            "goal: {{target: throughput}}
search_space: {{gpu_budget: 8, used_gpus: [tp, replicas], parameters: {{tp: {{values: [1, 2]}}, replicas: {{values: [1]}}, router: {{choices: {choices}}}}}}}
evaluator: {{command: [python3, {}]}}
sweep: {{max_rounds: 1, candidates_per_round: 4, parallel_evals: 2, seed: 1, algorithm: grid}}
",
            toy().display()
        ),
    )
    .unwrap();
    let out = dir.path().join("o");
    let (code, stdout, stderr) = run(&[
        os("run"),
        cfg.as_os_str(),
        os("--out"),
        out.as_os_str(),
        os("--no-progress"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_escaped("run's table", &stdout);
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    let journal = out.join("journal.jsonl");
    let (code, stdout, stderr) = run(&[
        os("score"),
        os("--config"),
        cfg.as_os_str(),
        journal.as_os_str(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_escaped("score table of a journal", &stdout);
    let (code, stdout, stderr) = run(&[
        os("run"),
        os("--resume"),
        out.as_os_str(),
        os("--no-progress"),
        os("-v"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_escaped("the resume's table", &stdout);
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
}

#[test]
fn validate_escapes_the_choices_parameter_names_and_command_words_it_echoes() {
    let dir = tempfile::tempdir().unwrap();
    let choices = format!("[{}, plain]", yaml_string(HOSTILE));
    let words = dir.path().join("v.yaml");
    let hostile = yaml_string(HOSTILE);
    std::fs::write(
        &words,
        format!(
            "search_space: {{parameters: {{tp: {{values: [1, 2]}}, {hostile}: {{choices: {choices}}}}}}}
evaluator: {{command: [python3, {hostile}]}}
"
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&[os("validate"), words.as_os_str()]);
    assert_eq!(code, 0, "{stderr}");
    assert_escaped("validate's table", &stdout);
    for needle in ["parameter", "choices [", "command python3 "] {
        let line = stdout
            .lines()
            .find(|l| l.contains(needle) && l.contains("PWNED"))
            .unwrap_or_default();
        assert!(!line.is_empty(), "{needle}: {stdout}");
    }
}

#[test]
fn csv_keeps_the_data_exact_and_json_escapes_every_control_character() {
    // CSV is data for programs and files: a label is written as it was read, so that a
    // round trip loses nothing. JSON escapes every control character (serde_json leaves
    // DEL and C1 raw; sweeper escapes them too), and reads back to the same label.
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("g.yaml");
    std::fs::write(&cfg, "goal: {target: throughput}\n").unwrap();
    let csv = dir.path().join("r.csv");
    std::fs::write(
        &csv,
        format!("output_throughput_tok_s,name\n5,\"{HOSTILE}\"\n"),
    )
    .unwrap();
    let score = |format: &str| {
        run(&[
            os("score"),
            os("--config"),
            cfg.as_os_str(),
            csv.as_os_str(),
            os("--show"),
            os("name"),
            os("--format"),
            os(format),
        ])
    };
    let (code, stdout, stderr) = score("csv");
    assert_eq!(code, 0, "{stderr}");
    // quoted (it holds a carriage return), byte for byte
    assert!(stdout.contains(&format!(",\"{HOSTILE}\"\n")), "{stdout:?}");
    let (code, stdout, stderr) = score("json");
    assert_eq!(code, 0, "{stderr}");
    let raw: Vec<char> = stdout
        .chars()
        .filter(|&c| c.is_control() && c != '\n')
        .collect();
    assert!(raw.is_empty(), "{raw:?} in {stdout}");
    let list: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(list[0]["config"]["name"], HOSTILE);
    // front's JSON names a column as it was read, escaped the same way
    let named = dir.path().join("n.csv");
    std::fs::write(&named, format!("\"{HOSTILE}\",b\n1,2\n3,1\n")).unwrap();
    let objective = format!("{HOSTILE}:max");
    for extra in [&[][..], &[os("--hypervolume"), os("0,0")][..]] {
        let mut args = vec![
            os("front"),
            named.as_os_str(),
            os("--objective"),
            os(&objective),
        ];
        args.extend([os("--objective"), os("b:max"), os("--format"), os("json")]);
        args.extend(extra);
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            !stdout.chars().any(|c| c.is_control() && c != '\n'),
            "{stdout}"
        );
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let keys = if extra.is_empty() {
            &v[0]["values"]
        } else {
            &v["reference"]
        };
        assert!(keys.get(HOSTILE).is_some(), "{stdout}");
    }
    // run and validate print JSON of the config's values (the choice, a parameter name)
    let cfg_path = dir.path().join("c.yaml");
    std::fs::write(
        &cfg_path,
        format!(
            "goal: {{target: throughput}}
search_space: {{gpu_budget: 8, used_gpus: [tp, replicas], parameters: {{tp: {{values: [1]}}, replicas: {{values: [1]}}, router: {{choices: [{}]}}}}}}
evaluator: {{command: [python3, {}]}}
sweep: {{max_rounds: 1, candidates_per_round: 1, parallel_evals: 1, seed: 1}}
",
            yaml_string(HOSTILE),
            toy().display()
        ),
    )
    .unwrap();
    let out = dir.path().join("o");
    for args in [
        vec![
            os("validate"),
            cfg_path.as_os_str(),
            os("--format"),
            os("json"),
        ],
        vec![
            os("run"),
            cfg_path.as_os_str(),
            os("--out"),
            out.as_os_str(),
            os("--no-progress"),
            os("--format"),
            os("json"),
        ],
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            !stdout.chars().any(|c| c.is_control() && c != '\n'),
            "{stdout}"
        );
        assert!(stdout.contains("\\u009b1m\\u007f"), "{stdout}");
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap();
    }
}
