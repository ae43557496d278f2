//! `sweeper export` end to end: a finished sweep of every built-in example exports its
//! front with GPU totals equal to each trial's `used_gpus`; the selection options and the
//! refusals.

use crate::common::{example, sweeper};
use serde_json::Value;
use std::path::Path;

/// Runs `name` (with fewer rounds) into `dir/out`; returns the output directory.
fn finished_sweep(name: &str, dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(example(name)).unwrap();
    let short: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("max_rounds:") {
                "  max_rounds: 3".to_owned()
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let config = dir.join(name);
    std::fs::write(&config, short).unwrap();
    let out = dir.join("out");
    let run = sweeper(["run", "-q"].iter().map(std::ffi::OsStr::new).chain([
        config.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]));
    assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    out
}

/// The GPUs a v1beta1 manifest requests, read from its YAML text (replicas x nodeCount x
/// the `nvidia.com/gpu` limit of each component), independently of the exporter's code.
fn gpus_in_yaml(text: &str) -> u64 {
    let mut total = 0;
    let (mut replicas, mut nodes, mut gpus) = (0_u64, 1_u64, 0_u64);
    let mut flush = |r: u64, n: u64, g: u64| total += r * n * g;
    let mut in_limits = false;
    for line in text.lines() {
        let t = line.trim();
        if line.starts_with("  - ") {
            flush(replicas, nodes, gpus);
            (replicas, nodes, gpus) = (0, 1, 0);
        }
        let t = t.trim_start_matches("- ");
        if let Some(v) = t.strip_prefix("replicas: ") {
            replicas = v.parse().unwrap();
        } else if let Some(v) = t.strip_prefix("nodeCount: ") {
            nodes = v.parse().unwrap();
        } else if t == "limits:" {
            in_limits = true;
        } else if let Some(v) = t.strip_prefix("nvidia.com/gpu: ") {
            if in_limits {
                gpus = v.trim_matches('"').parse().unwrap();
            }
            in_limits = false;
        }
    }
    flush(replicas, nodes, gpus);
    total
}

#[test]
fn every_builtin_example_exports_its_front_with_the_gpus_it_used() {
    for name in [
        "quickstart.yaml",
        "goodput-sla.yaml",
        "pareto-kv-range.yaml",
        "pareto-three.yaml",
        "throughput.yaml",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = finished_sweep(name, dir.path());
        let result: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap())
                .unwrap();
        let pick: &[&str] = if result["kind"] == "front" {
            &["--front"]
        } else {
            &["--top", "3"]
        };
        let export = dir.path().join("deploy");
        let run = sweeper(
            [
                "export",
                out.to_str().unwrap(),
                "--out",
                export.to_str().unwrap(),
            ]
            .iter()
            .chain(pick),
        );
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert!(!lines.is_empty(), "{name}");
        for line in lines {
            let id: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            let folder = export.join(format!("trial-{id}"));
            let yaml = std::fs::read_to_string(folder.join("dgd.yaml")).unwrap();
            let candidate: Value = serde_json::from_str(
                &std::fs::read_to_string(folder.join("candidate.json")).unwrap(),
            )
            .unwrap();
            let used = candidate["config"]["used_gpus"].as_u64().unwrap();
            assert_eq!(gpus_in_yaml(&yaml), used, "{name} trial {id}:\n{yaml}");
            let launch = std::fs::read_to_string(folder.join("launch.sh")).unwrap();
            assert!(launch.starts_with("#!/usr/bin/env bash\n"), "{name}");
            if name == "pareto-three.yaml" {
                // Its `backend: trtllm` parameter is the candidate's own.
                assert!(yaml.contains("backendFramework: trtllm"), "{yaml}");
            }
        }
    }
}

#[test]
fn selections_and_refusals_say_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let out = finished_sweep("quickstart.yaml", dir.path());
    let o = out.to_str().unwrap();
    let run = sweeper(["export", o, "--top", "2"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("use --front, or --where"),
        "{}",
        run.stderr
    );
    let run = sweeper(["export", o]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("--trial ID (repeatable), --front, --knee, --top K or --where EXPR"),
        "{}",
        run.stderr
    );
    // --knee picks one front point.
    let knee_out = dir.path().join("knee");
    let run = sweeper(["export", o, "--knee", "--out", knee_out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    let run = sweeper(["export", o, "--trial", "100000"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("the sweep has no trial 100000"),
        "{}",
        run.stderr
    );
    let run = sweeper(["export", o, "--where", "throughput_per_user=>5"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    // --where alone, on the journal of the sweep, in the older API, with the names given.
    let run = sweeper([
        "export",
        &format!("{o}/journal.jsonl"),
        "--where",
        "tp>=2",
        "--api",
        "v1alpha1",
        "--model",
        "Qwen/Qwen3-32B-FP8",
        "--image",
        "img:1",
        "--namespace",
        "ns",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("placeholder"), "{}", run.stderr);
    let first = run.stdout.lines().next().unwrap();
    let folder = first.split_whitespace().last().unwrap();
    let yaml = std::fs::read_to_string(Path::new(folder).join("dgd.yaml")).unwrap();
    assert!(yaml.contains("apiVersion: nvidia.com/v1alpha1") && yaml.contains("namespace: ns"));
    // A parameter the exporter does not know: named, then recorded with --allow-unmapped.
    let text = std::fs::read_to_string(example("quickstart.yaml"))
        .unwrap()
        .replace(
            "    max_batch_size:",
            "    gpu_mem_util: {values: [0.8, 0.9]}\n    max_batch_size:",
        )
        .replace("max_rounds: 15", "max_rounds: 2")
        // the built-in model sweeps a parameter it does not read only when told to
        .replace("gpu: h200}", "gpu: h200, ignore: [gpu_mem_util]}");
    let config = dir.path().join("extra.yaml");
    std::fs::write(&config, text).unwrap();
    let out2 = dir.path().join("extra");
    let run = sweeper([
        "run",
        "-q",
        config.to_str().unwrap(),
        "--out",
        out2.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = sweeper(["export", out2.to_str().unwrap(), "--front"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("parameter `gpu_mem_util` = 0.")
            && run.stderr.contains("--allow-unmapped"),
        "{}",
        run.stderr
    );
    assert!(
        !out2.join("export").exists(),
        "nothing is written when a trial cannot be exported"
    );
    let run = sweeper([
        "export",
        out2.to_str().unwrap(),
        "--front",
        "--allow-unmapped",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn the_configs_export_block_names_the_deployment_unless_an_option_does() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(example("quickstart.yaml"))
        .unwrap()
        .replace("max_rounds: 15", "max_rounds: 2")
        + "export:\n  model: Qwen/Qwen3-32B-FP8\n  image: registry.example/dynamo:1.0.0\n  namespace: serving\n  backend: sglang\n  api: v1alpha1\n";
    let config = dir.path().join("with-export.yaml");
    std::fs::write(&config, text).unwrap();
    let out = dir.path().join("out");
    let run = sweeper([
        "run",
        "-q",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = sweeper([
        "export",
        out.to_str().unwrap(),
        "--front",
        "--out",
        dir.path().join("a").to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("placeholder"), "{}", run.stderr);
    let folder = run
        .stdout
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .last()
        .unwrap()
        .to_owned();
    let yaml = std::fs::read_to_string(Path::new(&folder).join("dgd.yaml")).unwrap();
    for want in [
        "apiVersion: nvidia.com/v1alpha1",
        "namespace: serving",
        "backendFramework: sglang",
        "image: \"registry.example/dynamo:1.0.0\"",
        "- Qwen/Qwen3-32B-FP8",
    ] {
        assert!(yaml.contains(want), "{want}:\n{yaml}");
    }
    // The options win over the block.
    let run = sweeper([
        "export",
        out.to_str().unwrap(),
        "--front",
        "--out",
        dir.path().join("b").to_str().unwrap(),
        "--api",
        "v1beta1",
        "--backend",
        "trtllm",
        "--namespace",
        "other",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let folder = run
        .stdout
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .last()
        .unwrap()
        .to_owned();
    let yaml = std::fs::read_to_string(Path::new(&folder).join("dgd.yaml")).unwrap();
    for want in [
        "apiVersion: nvidia.com/v1beta1",
        "namespace: other",
        "backendFramework: trtllm",
        "- Qwen/Qwen3-32B-FP8",
    ] {
        assert!(yaml.contains(want), "{want}:\n{yaml}");
    }
}
