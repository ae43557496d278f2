//! Serialize → parse gives the same config.

use sweeper_goal::parse;

const CONFIGS: &[&str] = &[
    "",
    "goal: {target: e2e_latency, sla: {ttft_ms: 1.5}}",
    "goal: {target: pareto}\nworkload: {isl: 7, osl: 3, num_request_ratio: 0.3}",
    "goal: {target: pareto, pareto_objectives: [goodput_per_gpu, e2e_latency, throughput_per_user], sla: {e2e_ms: 20000}}\nworkload: {isl: 4000, osl: 500, num_request_ratio: 10, kv_load_ratio: [0.05, 1.0]}",
    "workload: {trace_path: traces/a b.jsonl, replay_concurrency: 12}",
    "workload: {isl: 1, osl: 1, num_request_ratio: 1e-3, request_rate: 0.1}",
    "workload: {isl: 1, osl: 1, num_request_ratio: 2, kv_load_ratio: 0}",
    "search_space:\n  gpu_budget: 9\n  used_gpus: [z, a]\n  parameters:\n    z: {values: [3, 1, 2.0]}\n    a: {int: [1, 3], log: true}\n    m: {float: [0.001, 2.5], log: true}\n    c: {choices: [\"1\", \"true\", \"null\", x y, \"\"]}\n    k: {values: [-0.5, 1e-7]}\n",
    "search_space: {used_gpus: 4}",
    "evaluator: {command: [python3, eval.py], persistent: true, env: {X: \"1\", Y: z}, cwd: /tmp/w}",
    "evaluator: {command: [./e], slurm: {partition: gpu, account: a, time_limit: 90, job_name: j, gpus_per_node: 4, gpu_flag: gres, gpu_type: h100, sbatch_args: [--exclusive, --mem, 4096], poll_seconds: 0.25}}",
    "evaluator: {command: [./e], slurm: {time_limit: \"1-00:00:01\"}}",
    "evaluator: {builtin: {model: qwen3-32b-fp8, gpu: h200, nested: {a: [1, 2.5, null, true]}}}",
    "sweep: {max_rounds: 1, candidates_per_round: 3, parallel_evals: 2, max_eval_seconds: 0.25, max_trials: 7, seed: 18446744073709551615, algorithm: quasi_random}",
    "sweep: {max_consecutive_failures: 1}",
    "sweep: {schedule: async, max_trials: 12}",
    "sweep: {max_consecutive_failures: 4294967295.0}",
    "export: {model: Qwen/Qwen3-32B-FP8, image: \"nvcr.io/x:1\", namespace: serving, backend: sglang, gpus_per_node: 4, api: v1alpha1}",
    "export: {}",
];

#[test]
fn yaml_and_json_round_trip() {
    for text in CONFIGS {
        let cfg = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let yaml = cfg.to_yaml();
        assert_eq!(parse(&yaml), Ok(cfg.clone()), "yaml of {text}:\n{yaml}");
        let json = cfg.to_json_string();
        assert_eq!(parse(&json), Ok(cfg.clone()), "json of {text}:\n{json}");
        // the JSON value has the documented top-level shape
        let v = cfg.to_json_value();
        assert!(v["goal"]["target"].is_string(), "{v}");
        assert!(v["sweep"]["seed"].is_u64(), "{v}");
    }
}

#[test]
fn yaml_output_is_the_resolved_config() {
    let cfg =
        parse("goal: {target: pareto}\nworkload: {isl: 7, osl: 3, num_request_ratio: 1}").unwrap();
    let yaml = cfg.to_yaml();
    assert!(yaml.contains("throughput_per_gpu"), "{yaml}");
    assert!(yaml.contains("kv_load_ratio"), "{yaml}");
    assert!(yaml.contains("candidates_per_round: 16"), "{yaml}");
    assert!(yaml.contains("max_consecutive_failures: 10"), "{yaml}");
    let json = cfg.to_json_string();
    assert!(json.contains("\"max_consecutive_failures\": 10"), "{json}");
}

#[test]
fn max_consecutive_failures_is_written_and_read_back() {
    let cfg = parse("sweep: {max_consecutive_failures: 3}").unwrap();
    assert_eq!(cfg.sweep.max_consecutive_failures, 3);
    let yaml = cfg.to_yaml();
    assert!(yaml.contains("max_consecutive_failures: 3"), "{yaml}");
    assert_eq!(parse(&yaml).unwrap().sweep.max_consecutive_failures, 3);
    let json = cfg.to_json_string();
    assert_eq!(parse(&json).unwrap().sweep.max_consecutive_failures, 3);
    assert_eq!(cfg.to_json_value()["sweep"]["max_consecutive_failures"], 3);
}
