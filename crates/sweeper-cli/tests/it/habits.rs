//! The command line's habits (issue 17): one `sweeper:` prefix on every diagnostic,
//! `-q`/`-v`, progress off a terminal, `-` for standard input, suggestions for a mistyped
//! command, completions and man pages, and the starting points (`init`, `presets`,
//! `schema`).

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn sweeper(args: &[&str], cwd: &Path, stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sweeper");
    let mut input = child.stdin.take().unwrap();
    // a sweeper that exits before reading (a usage error) closes the pipe: not a failure
    let _ = input.write_all(stdin.unwrap_or("").as_bytes());
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A small built-in sweep: 3 rounds of 4.
const SMALL: &str = "goal: {target: pareto}
workload: {isl: 1000, osl: 200, num_request_ratio: 2, kv_load_ratio: [0.1, 1.0]}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters:
    tp: {values: [1, 2, 4]}
    replicas: {int: [1, 2]}
evaluator: {builtin: {model: llama3-8b-fp8, gpu: h100}}
sweep: {max_rounds: 3, candidates_per_round: 4, parallel_evals: 2, seed: 3}
";

fn every_line_prefixed(stderr: &str) {
    for line in stderr
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(' '))
    {
        assert!(
            line.starts_with("sweeper: ") && !line.starts_with("sweeper: sweeper: "),
            "one prefix on every diagnostic: {line:?} in\n{stderr}"
        );
    }
}

#[test]
fn a_mistyped_command_gets_a_suggestion_even_with_swapped_letters() {
    let dir = tempfile::tempdir().unwrap();
    for (typed, near) in [("rnu", "run"), ("scroe", "score"), ("fornt", "front")] {
        let out = sweeper(&[typed], dir.path(), None);
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(err.starts_with("sweeper: error: "), "{err}");
        assert!(
            err.contains(&format!("a similar subcommand exists: '{near}'")),
            "{err}"
        );
    }
    let err = text(&sweeper(&["zzzzzz"], dir.path(), None).stderr);
    assert!(!err.contains("similar"), "nothing close: {err}");
}

#[test]
fn help_and_version_go_to_stdout_and_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let out = sweeper(&["--help"], dir.path(), None);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("Quick start"));
    let out = sweeper(&["--version"], dir.path(), None);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("sweeper "));
}

#[test]
fn a_run_off_a_terminal_prints_progress_lines_and_every_line_has_one_prefix() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.yaml"), SMALL).unwrap();
    let out = sweeper(&["run", "s.yaml", "--out", "o"], dir.path(), None);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    every_line_prefixed(&err);
    let progress: Vec<&str> = err
        .lines()
        .filter(|l| l.contains(" trials after "))
        .collect();
    assert!(
        progress.len() >= 2,
        "the first outcome and the last get a line: {err}"
    );
    assert!(
        progress
            .last()
            .unwrap()
            .starts_with("sweeper: 12/12 trials"),
        "{err}"
    );
    assert!(progress[0].contains("feasible "), "{err}");

    // --no-progress: the summary only.
    let out = sweeper(
        &["run", "s.yaml", "--out", "o2", "--no-progress"],
        dir.path(),
        None,
    );
    assert!(!text(&out.stderr).contains(" trials after "));
}

#[test]
fn quiet_keeps_stdout_and_drops_every_diagnostic_but_warnings_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.yaml"), SMALL).unwrap();
    let out = sweeper(
        &["-q", "run", "s.yaml", "--out", "o", "--format", "json"],
        dir.path(),
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr), "", "quiet");
    let front: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!front.as_array().unwrap().is_empty());
    // An error is still said, after the subcommand too (the flag is global).
    let out = sweeper(&["validate", "missing.yaml", "--quiet"], dir.path(), None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("sweeper: error: "));
}

#[test]
fn verbose_prints_a_line_per_trial() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.yaml"), SMALL).unwrap();
    let out = sweeper(&["run", "-v", "s.yaml", "--out", "o"], dir.path(), None);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    every_line_prefixed(&err);
    // a rounds sweep's total may grow (a round replaces a trial that is not feasible): `+`
    // until the end's line gives the real one
    for done in 1..=12 {
        assert!(
            err.contains(&format!("sweeper: {done}/12+ trials · ")),
            "trial {done}: {err}"
        );
    }
    assert!(err.contains("sweeper: 12/12 trials after "), "{err}");
}

#[test]
fn a_dash_reads_the_config_from_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = sweeper(&["validate", "-"], dir.path(), Some(SMALL));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("valid: standard input"));

    let out = sweeper(
        &["validate", "-"],
        dir.path(),
        Some("goal: {target: nope}\n"),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("sweeper: error: standard input: invalid config: goal.target"),
        "{err}"
    );

    let out = sweeper(
        &["run", "-", "--out", "o", "--format", "csv"],
        dir.path(),
        Some(SMALL),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(dir.path().join("o/config.yaml").is_file());

    let out = sweeper(
        &[
            "evaluate",
            "-",
            "--candidate",
            r#"{"tp": 2, "replicas": 1, "kv_load_ratio": 0.5}"#,
        ],
        dir.path(),
        Some(SMALL),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn completions_for_each_shell_and_man_pages_for_each_command() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, mark) in [
        ("bash", "_sweeper()"),
        ("zsh", "#compdef sweeper"),
        ("fish", "complete -c sweeper"),
    ] {
        let out = sweeper(&["completions", shell], dir.path(), None);
        assert_eq!(out.status.code(), Some(0));
        let script = text(&out.stdout);
        assert!(
            script.contains(mark),
            "{shell}: {}",
            &script[..script.len().min(300)]
        );
        assert!(
            script.contains("validate") && script.contains("resume"),
            "{shell}"
        );
    }
    let out = sweeper(&["completions", "tcsh"], dir.path(), None);
    assert_eq!(out.status.code(), Some(2));

    let out = sweeper(&["man", "pages"], dir.path(), None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for page in [
        "sweeper",
        "sweeper-run",
        "sweeper-score",
        "sweeper-front",
        "sweeper-init",
    ] {
        let roff = std::fs::read_to_string(dir.path().join(format!("pages/{page}.1"))).unwrap();
        assert!(roff.contains(".TH"), "{page}");
    }
    let roff = std::fs::read_to_string(dir.path().join("pages/sweeper-run.1")).unwrap();
    assert!(roff.contains("resume"), "the options are in the page");
    assert!(!dir.path().join("pages/sweeper-man.1").exists(), "hidden");
}

#[test]
fn init_writes_configs_that_validate_for_every_preset_and_target() {
    let dir = tempfile::tempdir().unwrap();
    let presets = sweeper(&["presets", "--format", "json"], dir.path(), None);
    assert_eq!(presets.status.code(), Some(0));
    let presets: serde_json::Value = serde_json::from_slice(&presets.stdout).unwrap();
    let names = |kind: &str| -> Vec<String> {
        presets[kind]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let (models, gpus) = (names("models"), names("gpus"));
    assert!(models.len() >= 6 && gpus.len() >= 3, "{presets}");
    assert!(presets["models"][0]["weights_gb"].as_f64().unwrap() > 0.0);
    let targets = [
        "pareto",
        "throughput",
        "throughput_per_gpu",
        "throughput_per_user",
        "e2e_latency",
        "goodput",
        "goodput_per_gpu",
        "ttft",
        "min_gpus",
        "cost_per_mtok",
    ];
    for (i, target) in targets.iter().enumerate() {
        let model = &models[i % models.len()];
        let gpu = &gpus[i % gpus.len()];
        let out = sweeper(
            &["init", "--target", target, "--builtin", model, "--gpu", gpu],
            dir.path(),
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let config = text(&out.stdout);
        assert!(config.starts_with("# "), "commented");
        let check = sweeper(&["validate", "-"], dir.path(), Some(&config));
        assert_eq!(
            check.status.code(),
            Some(0),
            "{target}: {}\n{config}",
            text(&check.stderr)
        );
        assert!(text(&check.stdout).contains(&format!("target           {target}")));
    }
    // A command evaluator, written to a file that is then not overwritten.
    let out = sweeper(
        &[
            "init",
            "mine.yaml",
            "--command",
            "python3",
            "my eval.py",
            "--flag",
        ],
        dir.path(),
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(dir.path().join("mine.yaml")).unwrap();
    assert!(
        written.contains(r#"command: ["python3", "my eval.py", "--flag"]"#),
        "{written}"
    );
    let again = sweeper(&["init", "mine.yaml"], dir.path(), None);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("mine.yaml exists"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mine.yaml")).unwrap(),
        written
    );

    let out = sweeper(&["init", "--builtin", "gpt-5"], dir.path(), None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("llama3-70b-fp8"),
        "the presets are named"
    );
}

#[test]
fn schema_is_json_schema_of_every_block() {
    let dir = tempfile::tempdir().unwrap();
    let out = sweeper(&["schema"], dir.path(), None);
    assert_eq!(out.status.code(), Some(0));
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        schema["$schema"]
            .as_str()
            .unwrap()
            .contains("json-schema.org")
    );
    let blocks: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    // models and gpus: the cards of a search_space.topology
    assert_eq!(
        blocks,
        [
            "evaluator",
            "export",
            "goal",
            "gpus",
            "models",
            "search_space",
            "sweep",
            "workload"
        ]
    );
    assert_eq!(schema["additionalProperties"], false);
}

#[test]
fn score_reads_its_config_or_its_reports_from_standard_input_not_both() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let rows = "examples/serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv";
    let config = std::fs::read_to_string(root.join("examples/serving/pareto.yaml")).unwrap();
    let from_file = sweeper(
        &[
            "score",
            "--config",
            "examples/serving/pareto.yaml",
            rows,
            "--format",
            "csv",
        ],
        &root,
        None,
    );
    assert_eq!(from_file.status.code(), Some(0));
    let piped = sweeper(
        &["score", "--config", "-", rows, "--format", "csv"],
        &root,
        Some(&config),
    );
    assert_eq!(piped.status.code(), Some(0), "{}", text(&piped.stderr));
    assert_eq!(piped.stdout, from_file.stdout);
    let both = sweeper(&["score", "--config", "-", "-"], &root, Some(&config));
    assert_eq!(both.status.code(), Some(2));
    assert!(text(&both.stderr).contains("can be given once"));
}

/// A new user reads the README from the top (issue 36): the quick start runs sweeper through
/// `cargo run`, and every command after it is written `sweeper ...`. Before the first of
/// those, the README says how to put the binary on PATH.
#[test]
fn the_readme_says_how_to_get_the_sweeper_command_before_its_first_use() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let mut in_shell_block = false;
    let mut first_use = None;
    for (i, line) in readme.lines().enumerate() {
        if line.starts_with("```") {
            in_shell_block = !in_shell_block && line.trim_start_matches('`').trim() == "sh";
            continue;
        }
        if in_shell_block && line.starts_with("sweeper ") {
            first_use = Some(i);
            break;
        }
    }
    let first_use = first_use.expect("the README shows a `sweeper ...` command");
    let before: Vec<&str> = readme.lines().take(first_use).collect();
    let install = before
        .iter()
        .position(|l| l.starts_with("cargo install --locked --path crates/sweeper-cli"))
        .unwrap_or_else(|| {
            panic!(
                "README line {}: `{}` comes before any line saying how to get the command",
                first_use + 1,
                readme.lines().nth(first_use).unwrap()
            )
        });
    assert!(
        before[install..]
            .iter()
            .any(|l| l.starts_with("export PATH=\"$PWD/target/release:$PATH\"")),
        "the README also says how to use the release build without installing it"
    );
}

#[test]
fn presets_show_the_experts_format_and_the_fp4_rate() {
    let dir = tempfile::tempdir().unwrap();
    let table = sweeper(&["presets"], dir.path(), None);
    assert_eq!(table.status.code(), Some(0));
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} row in {table}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    // gpt-oss-120b keeps attention in BF16 and its 128 experts in MXFP4 (65 GB in all)
    assert_eq!(
        row("gpt-oss-120b")[2..5],
        ["bf16", "128", "mxfp4"],
        "{table}"
    );
    assert_eq!(row("llama3-70b-fp8")[2..4], ["fp8", "-"], "{table}");
    assert!(table.contains("FP4 (TFLOPS)"), "{table}");
    assert!(row("b200").contains(&"9000".to_owned()), "{table}");
    assert!(row("h100").contains(&"-".to_owned()), "{table}");
    let json = sweeper(&["presets", "--format", "json"], dir.path(), None);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let model = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "kimi-k2.5-nvfp4")
        .unwrap();
    assert_eq!(model["expert_dtype"], "fp4", "{model}");
    let csv = sweeper(&["presets", "--format", "csv"], dir.path(), None);
    let csv = String::from_utf8_lossy(&csv.stdout).into_owned();
    let columns = csv.lines().next().unwrap().split(',').count();
    assert!(
        csv.lines().all(|l| l.split(',').count() == columns),
        "{csv}"
    );
}

#[test]
fn init_writes_a_topology_sweep_for_a_mixture_of_experts_preset() {
    let dir = tempfile::tempdir().unwrap();
    for (model, gpu, budget) in [
        ("kimi-k2.5-nvfp4", "b200", "gpu_budget: 32"),
        ("deepseek-r1-fp8", "h100", "gpu_budget: 64"),
        ("qwen3-30b-a3b-fp8", "h200", "gpu_budget: 16"),
    ] {
        let out = sweeper(
            &["init", "--builtin", model, "--gpu", gpu],
            dir.path(),
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let config = text(&out.stdout);
        for needle in [
            "  topology:\n",
            &format!("    model: {model}\n"),
            "deployment_mode: [agg, disagg]",
            "agg_max_batch_size:",
            budget,
        ] {
            assert!(
                config.contains(needle),
                "{model}: no {needle:?} in\n{config}"
            );
        }
        assert!(!config.contains("used_gpus"), "{config}");
        let check = sweeper(&["validate", "-"], dir.path(), Some(&config));
        let stdout = text(&check.stdout);
        assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
        assert!(stdout.contains("pool             agg vllm: "), "{stdout}");
        assert!(
            stdout.contains("pool             disagg vllm: "),
            "{stdout}"
        );
    }
    // a dense preset keeps the flat tp x replicas space
    let out = sweeper(&["init", "--builtin", "llama3-70b-fp8"], dir.path(), None);
    let config = text(&out.stdout);
    assert!(config.contains("used_gpus: [tp, replicas]") && !config.contains("topology"));
}
