//! The rows of the conformance table (`conformance.rs` runs them): one per rule of SPEC 2, 5
//! and 6 and the schema around them, a config and either "valid" or the rule that must fire
//! with the key path it must name.

/// What a row expects of its config.
pub(crate) enum Want {
    Valid,
    Invalid {
        rule: &'static str,
        path: &'static str,
    },
}

use Want::{Invalid, Valid};

const fn bad(rule: &'static str, path: &'static str) -> Want {
    Invalid { rule, path }
}

// A scalar synthetic workload prefix, for search-space and sweep rows.
const W: &str = "workload: {isl: 100, osl: 100, num_request_ratio: 1, concurrency: 4}\n";

#[allow(clippy::too_many_lines)]
pub(crate) fn table() -> Vec<(&'static str, String, Want)> {
    let s = |x: &str| x.to_owned();
    vec![
        // ---- SPEC 2: the goal block ------------------------------------------------------
        ("empty document is all defaults", s(""), Valid),
        ("comment-only document", s("# nothing\n"), Valid),
        ("goal absent", s("sweep: {seed: 1}"), Valid),
        ("goal null", s("goal:\n"), Valid),
        ("goal empty mapping", s("goal: {}"), Valid),
        (
            "every scalar target: throughput",
            s("goal: {target: throughput}"),
            Valid,
        ),
        (
            "throughput_per_gpu",
            s("goal: {target: throughput_per_gpu}"),
            Valid,
        ),
        (
            "throughput_per_user",
            s("goal: {target: throughput_per_user}"),
            Valid,
        ),
        ("e2e_latency", s("goal: {target: e2e_latency}"), Valid),
        (
            "goodput with e2e sla",
            s("goal: {target: goodput, sla: {e2e_ms: 20000}}"),
            Valid,
        ),
        (
            "goodput_per_gpu with ttft+itl",
            s("goal: {target: goodput_per_gpu, sla: {ttft_ms: 500, itl_ms: 40}}"),
            Valid,
        ),
        (
            "pareto default objectives",
            s("goal: {target: pareto}"),
            Valid,
        ),
        (
            "pareto null objectives is the default",
            s("goal: {target: pareto, pareto_objectives: null}"),
            Valid,
        ),
        (
            "pareto three objectives",
            s(
                "goal: {target: pareto, pareto_objectives: [throughput, e2e_latency, throughput_per_user]}",
            ),
            Valid,
        ),
        (
            "sla under a throughput goal is allowed",
            s("goal: {sla: {ttft_ms: 100}}"),
            Valid,
        ),
        (
            "unknown target",
            s("goal: {target: speed}"),
            bad("unknown_target", "goal.target"),
        ),
        (
            "target not a string",
            s("goal: {target: 3}"),
            bad("wrong_type", "goal.target"),
        ),
        (
            "unknown goal key",
            s("goal: {target: throughput, objective: x}"),
            bad("unknown_key", "goal.objective"),
        ),
        (
            "unknown sla key",
            s("goal: {sla: {p99_ms: 5}}"),
            bad("unknown_key", "goal.sla.p99_ms"),
        ),
        ("goal is a number", s("goal: 5"), bad("structure", "goal")),
        (
            "sla is a list",
            s("goal: {sla: [1]}"),
            bad("structure", "goal.sla"),
        ),
        (
            "rule 1: pareto_objectives under a scalar target",
            s("goal: {target: throughput, pareto_objectives: [throughput, e2e_latency]}"),
            bad(
                "pareto_objectives_need_pareto_target",
                "goal.pareto_objectives",
            ),
        ),
        (
            "rule 1: pareto_objectives without a target",
            s("goal: {pareto_objectives: [throughput, e2e_latency]}"),
            bad(
                "pareto_objectives_need_pareto_target",
                "goal.pareto_objectives",
            ),
        ),
        (
            "rule 2: one objective",
            s("goal: {target: pareto, pareto_objectives: [throughput]}"),
            bad("too_few_pareto_objectives", "goal.pareto_objectives"),
        ),
        (
            "rule 2: empty list is kept and rejected",
            s("goal: {target: pareto, pareto_objectives: []}"),
            bad("too_few_pareto_objectives", "goal.pareto_objectives"),
        ),
        (
            "rule 2: duplicates",
            s("goal: {target: pareto, pareto_objectives: [throughput, throughput]}"),
            bad("duplicate_pareto_objective", "goal.pareto_objectives[1]"),
        ),
        (
            "rule 2: pareto among objectives",
            s("goal: {target: pareto, pareto_objectives: [throughput, pareto]}"),
            bad("pareto_in_pareto_objectives", "goal.pareto_objectives[1]"),
        ),
        (
            "rule 2: unknown objective",
            s("goal: {target: pareto, pareto_objectives: [throughput, tps]}"),
            bad("unknown_target", "goal.pareto_objectives[1]"),
        ),
        (
            "rule 2: objectives not a list",
            s("goal: {target: pareto, pareto_objectives: throughput}"),
            bad("wrong_type", "goal.pareto_objectives"),
        ),
        (
            "rule 3: goodput without sla",
            s("goal: {target: goodput}"),
            bad("sla_missing", "goal.sla"),
        ),
        (
            "rule 3: goodput_per_gpu without sla",
            s("goal: {target: goodput_per_gpu}"),
            bad("sla_missing", "goal.sla"),
        ),
        (
            "rule 3: pareto with a goodput objective needs sla",
            s("goal: {target: pareto, pareto_objectives: [goodput, throughput_per_user]}"),
            bad("sla_missing", "goal.sla"),
        ),
        (
            "rule 3: pareto without goodput needs none",
            s("goal: {target: pareto, pareto_objectives: [throughput, throughput_per_user]}"),
            Valid,
        ),
        (
            "rule 4: ttft alone is not enough",
            s("goal: {target: goodput, sla: {ttft_ms: 500}}"),
            bad("sla_incomplete", "goal.sla"),
        ),
        (
            "rule 4: itl alone is not enough",
            s("goal: {target: goodput, sla: {itl_ms: 40}}"),
            bad("sla_incomplete", "goal.sla"),
        ),
        (
            "rule 4: empty sla is not enough",
            s("goal: {target: goodput, sla: {}}"),
            bad("sla_incomplete", "goal.sla"),
        ),
        (
            "rule 4: e2e with a half pair is enough",
            s("goal: {target: goodput, sla: {ttft_ms: 500, e2e_ms: 9000}}"),
            Valid,
        ),
        (
            "sla zero",
            s("goal: {sla: {e2e_ms: 0}}"),
            bad("out_of_range", "goal.sla.e2e_ms"),
        ),
        (
            "sla negative",
            s("goal: {sla: {ttft_ms: -5}}"),
            bad("out_of_range", "goal.sla.ttft_ms"),
        ),
        (
            "sla nan",
            s("goal: {sla: {itl_ms: .nan}}"),
            bad("not_finite", "goal.sla.itl_ms"),
        ),
        (
            "sla inf",
            s("goal: {sla: {e2e_ms: .inf}}"),
            bad("not_finite", "goal.sla.e2e_ms"),
        ),
        (
            "sla string",
            s("goal: {sla: {e2e_ms: \"20s\"}}"),
            bad("wrong_type", "goal.sla.e2e_ms"),
        ),
        // ---- top level -----------------------------------------------------------------
        (
            "unknown top-level key",
            s("goals: {}"),
            bad("unknown_key", "goals"),
        ),
        (
            "duplicate key",
            s("goal:\n  target: throughput\n  target: goodput\n"),
            bad("duplicate_key", "goal.target"),
        ),
        (
            "yaml syntax error",
            s("goal: [unclosed\n"),
            bad("syntax", ""),
        ),
        ("document is a list", s("- 1\n- 2\n"), bad("structure", "")),
        // ---- SPEC 5: workload ----------------------------------------------------------
        (
            "trace workload",
            s("workload: {trace_path: t.jsonl}"),
            Valid,
        ),
        (
            "trace with cap",
            s("workload: {trace_path: t.jsonl, replay_concurrency: 8}"),
            Valid,
        ),
        (
            "trace cap zero",
            s("workload: {trace_path: t.jsonl, replay_concurrency: 0}"),
            bad("out_of_range", "workload.replay_concurrency"),
        ),
        (
            "trace mixed with synthetic",
            s("workload: {trace_path: t.jsonl, isl: 100}"),
            bad("workload_mixed", "workload"),
        ),
        (
            "replay_concurrency without trace",
            s("workload: {replay_concurrency: 4}"),
            bad("missing_field", "workload.trace_path"),
        ),
        (
            "empty workload",
            s("workload: {}"),
            bad("workload_shape_missing", "workload"),
        ),
        (
            "unknown workload key",
            s("workload: {isl: 1, rate: 2}"),
            bad("unknown_key", "workload.rate"),
        ),
        (
            "synthetic request_rate",
            s("workload: {isl: 100, osl: 10, num_request_ratio: 2, request_rate: 1.5}"),
            Valid,
        ),
        (
            "synthetic concurrency",
            s("workload: {isl: 100, osl: 10, num_request_ratio: 2, concurrency: 8}"),
            Valid,
        ),
        (
            "synthetic scalar ratio",
            s("workload: {isl: 100, osl: 10, num_request_ratio: 2, kv_load_ratio: 0.5}"),
            Valid,
        ),
        (
            "oversubscribed ratio",
            s("workload: {isl: 100, osl: 10, num_request_ratio: 2, kv_load_ratio: 1.5}"),
            Valid,
        ),
        (
            "zero ratio",
            s("workload: {isl: 100, osl: 10, num_request_ratio: 2, kv_load_ratio: 0}"),
            Valid,
        ),
        (
            "missing isl",
            s("workload: {osl: 10, num_request_ratio: 2, concurrency: 8}"),
            bad("missing_field", "workload.isl"),
        ),
        (
            "missing osl",
            s("workload: {isl: 10, num_request_ratio: 2, concurrency: 8}"),
            bad("missing_field", "workload.osl"),
        ),
        (
            "missing num_request_ratio",
            s("workload: {isl: 10, osl: 10, concurrency: 8}"),
            bad("missing_field", "workload.num_request_ratio"),
        ),
        (
            "isl zero",
            s("workload: {isl: 0, osl: 10, num_request_ratio: 2, concurrency: 8}"),
            bad("out_of_range", "workload.isl"),
        ),
        (
            "osl fractional",
            s("workload: {isl: 10, osl: 2.5, num_request_ratio: 2, concurrency: 8}"),
            bad("wrong_type", "workload.osl"),
        ),
        (
            "num_request_ratio zero",
            s("workload: {isl: 10, osl: 10, num_request_ratio: 0, concurrency: 8}"),
            bad("out_of_range", "workload.num_request_ratio"),
        ),
        (
            "num_request_ratio nan",
            s("workload: {isl: 10, osl: 10, num_request_ratio: .nan, concurrency: 8}"),
            bad("not_finite", "workload.num_request_ratio"),
        ),
        (
            "two loads",
            s(
                "workload: {isl: 10, osl: 10, num_request_ratio: 1, concurrency: 8, request_rate: 2}",
            ),
            bad("multiple_loads", "workload"),
        ),
        (
            "no load under a scalar goal",
            s("workload: {isl: 10, osl: 10, num_request_ratio: 1}"),
            bad("load_missing", "workload"),
        ),
        (
            "no load under pareto defaults the range",
            s("goal: {target: pareto}\nworkload: {isl: 10, osl: 10, num_request_ratio: 1}"),
            Valid,
        ),
        (
            "concurrency 1.9",
            s("workload: {isl: 10, osl: 10, num_request_ratio: 1, concurrency: 1.9}"),
            bad("wrong_type", "workload.concurrency"),
        ),
        (
            "concurrency 0",
            s("workload: {isl: 10, osl: 10, num_request_ratio: 1, concurrency: 0}"),
            bad("out_of_range", "workload.concurrency"),
        ),
        (
            "concurrency list",
            s("workload: {isl: 10, osl: 10, num_request_ratio: 1, concurrency: [1, 2]}"),
            bad("wrong_type", "workload.concurrency"),
        ),
        (
            "request_rate zero",
            s("workload: {isl: 10, osl: 10, num_request_ratio: 1, request_rate: 0}"),
            bad("out_of_range", "workload.request_rate"),
        ),
        (
            "request_rate inf",
            s("workload: {isl: 10, osl: 10, num_request_ratio: 1, request_rate: .inf}"),
            bad("not_finite", "workload.request_rate"),
        ),
        (
            "negative ratio",
            s("workload: {isl: 10, osl: 10, num_request_ratio: 1, kv_load_ratio: -0.1}"),
            bad("out_of_range", "workload.kv_load_ratio"),
        ),
        (
            "range under pareto",
            s(
                "goal: {target: pareto}\nworkload: {isl: 10, osl: 10, num_request_ratio: 1, kv_load_ratio: [0.05, 1.0]}",
            ),
            Valid,
        ),
        (
            "range above one under pareto",
            s(
                "goal: {target: pareto}\nworkload: {isl: 10, osl: 10, num_request_ratio: 1, kv_load_ratio: [0.5, 2]}",
            ),
            Valid,
        ),
        (
            "range under a scalar goal",
            s("workload: {isl: 10, osl: 10, num_request_ratio: 1, kv_load_ratio: [0.05, 1.0]}"),
            bad("kv_range_needs_pareto", "workload.kv_load_ratio"),
        ),
        (
            "range of three",
            s(
                "goal: {target: pareto}\nworkload: {isl: 10, osl: 10, num_request_ratio: 1, kv_load_ratio: [0.1, 0.5, 1]}",
            ),
            bad("kv_range_length", "workload.kv_load_ratio"),
        ),
        (
            "range of one",
            s(
                "goal: {target: pareto}\nworkload: {isl: 10, osl: 10, num_request_ratio: 1, kv_load_ratio: [0.5]}",
            ),
            bad("kv_range_length", "workload.kv_load_ratio"),
        ),
        (
            "range min == max",
            s(
                "goal: {target: pareto}\nworkload: {isl: 10, osl: 10, num_request_ratio: 1, kv_load_ratio: [0.5, 0.5]}",
            ),
            bad("kv_range_order", "workload.kv_load_ratio"),
        ),
        (
            "range reversed",
            s(
                "goal: {target: pareto}\nworkload: {isl: 10, osl: 10, num_request_ratio: 1, kv_load_ratio: [1.0, 0.5]}",
            ),
            bad("kv_range_order", "workload.kv_load_ratio"),
        ),
        (
            "range with nan",
            s(
                "goal: {target: pareto}\nworkload: {isl: 10, osl: 10, num_request_ratio: 1, kv_load_ratio: [0.1, .nan]}",
            ),
            bad("not_finite", "workload.kv_load_ratio[1]"),
        ),
        (
            "range with negative",
            s(
                "goal: {target: pareto}\nworkload: {isl: 10, osl: 10, num_request_ratio: 1, kv_load_ratio: [-1, 0.5]}",
            ),
            bad("out_of_range", "workload.kv_load_ratio[0]"),
        ),
        (
            "ratio as string",
            s("workload: {isl: 10, osl: 10, num_request_ratio: 1, kv_load_ratio: half}"),
            bad("wrong_type", "workload.kv_load_ratio"),
        ),
        // ---- search space --------------------------------------------------------------
        (
            "full search space",
            format!(
                "{W}search_space:\n  gpu_budget: 16\n  used_gpus: [tp, replicas]\n  parameters:\n    tp: {{values: [1, 2, 4, 8]}}\n    replicas: {{int: [1, 8]}}\n    mbs: {{values: [16, 32, 64], log: true}}\n    router: {{choices: [round_robin, kv_aware]}}\n    temperature: {{float: [0.0, 1.0]}}\n    backend: {{choices: [trtllm]}}\n"
            ),
            Valid,
        ),
        (
            "gpu_budget zero",
            s("search_space: {gpu_budget: 0}"),
            bad("out_of_range", "search_space.gpu_budget"),
        ),
        (
            "gpu_budget fractional",
            s("search_space: {gpu_budget: 1.5}"),
            bad("wrong_type", "search_space.gpu_budget"),
        ),
        (
            "fixed used_gpus",
            s("search_space: {gpu_budget: 8, used_gpus: 8}"),
            Valid,
        ),
        (
            "fixed used_gpus over budget",
            s("search_space: {gpu_budget: 8, used_gpus: 9}"),
            bad("used_gpus_over_budget", "search_space.used_gpus"),
        ),
        (
            "used_gpus unknown parameter",
            s("search_space: {used_gpus: [tp], parameters: {replicas: {int: [1, 2]}}}"),
            bad("used_gpus_unknown_parameter", "search_space.used_gpus[0]"),
        ),
        (
            "used_gpus float parameter",
            s("search_space: {used_gpus: [t], parameters: {t: {float: [1, 2]}}}"),
            bad("used_gpus_not_integer", "search_space.used_gpus[0]"),
        ),
        (
            "used_gpus non-integer values",
            s("search_space: {used_gpus: [t], parameters: {t: {values: [1, 1.5]}}}"),
            bad("used_gpus_not_integer", "search_space.used_gpus[0]"),
        ),
        (
            "used_gpus parameter reaching zero",
            s("search_space: {used_gpus: [t], parameters: {t: {int: [0, 4]}}}"),
            bad("used_gpus_not_integer", "search_space.used_gpus[0]"),
        ),
        (
            "used_gpus smallest product over budget",
            s(
                "search_space: {gpu_budget: 4, used_gpus: [a, b], parameters: {a: {values: [4, 8]}, b: {int: [2, 3]}}}",
            ),
            bad("used_gpus_over_budget", "search_space.used_gpus"),
        ),
        (
            "used_gpus repeated",
            s("search_space: {used_gpus: [a, a], parameters: {a: {int: [1, 2]}}}"),
            bad("duplicate_value", "search_space.used_gpus[1]"),
        ),
        (
            "used_gpus empty",
            s("search_space: {used_gpus: []}"),
            bad("empty_list", "search_space.used_gpus"),
        ),
        (
            "used_gpus string",
            s("search_space: {used_gpus: tp}"),
            bad("wrong_type", "search_space.used_gpus"),
        ),
        (
            "parameter with two kinds",
            s("search_space: {parameters: {tp: {values: [1], int: [1, 2]}}}"),
            bad("parameter_kind", "search_space.parameters.tp"),
        ),
        (
            "parameter with no kind",
            s("search_space: {parameters: {tp: {log: true}}}"),
            bad("parameter_kind", "search_space.parameters.tp"),
        ),
        (
            "parameter unknown key",
            s("search_space: {parameters: {tp: {range: [1, 2]}}}"),
            bad("unknown_key", "search_space.parameters.tp.range"),
        ),
        (
            "duplicate parameter",
            s("search_space:\n  parameters:\n    tp: {int: [1, 2]}\n    tp: {int: [1, 4]}\n"),
            bad("duplicate_key", "search_space.parameters.tp"),
        ),
        (
            "values empty",
            s("search_space: {parameters: {tp: {values: []}}}"),
            bad("empty_list", "search_space.parameters.tp.values"),
        ),
        (
            "values duplicated",
            s("search_space: {parameters: {tp: {values: [1, 2, 1]}}}"),
            bad("duplicate_value", "search_space.parameters.tp.values[2]"),
        ),
        (
            "values nan",
            s("search_space: {parameters: {tp: {values: [1, .nan]}}}"),
            bad("not_finite", "search_space.parameters.tp.values[1]"),
        ),
        (
            "values log with zero",
            s("search_space: {parameters: {tp: {values: [0, 1], log: true}}}"),
            bad("log_scale", "search_space.parameters.tp.values[0]"),
        ),
        (
            "values of strings",
            s("search_space: {parameters: {tp: {values: [a, b]}}}"),
            bad("wrong_type", "search_space.parameters.tp.values[0]"),
        ),
        (
            "int reversed",
            s("search_space: {parameters: {r: {int: [8, 1]}}}"),
            bad("range_bounds", "search_space.parameters.r.int"),
        ),
        (
            "int of three",
            s("search_space: {parameters: {r: {int: [1, 2, 3]}}}"),
            bad("range_length", "search_space.parameters.r.int"),
        ),
        (
            "int fractional bound",
            s("search_space: {parameters: {r: {int: [1, 2.5]}}}"),
            bad("wrong_type", "search_space.parameters.r.int[1]"),
        ),
        (
            "int log from zero",
            s("search_space: {parameters: {r: {int: [0, 8], log: true}}}"),
            bad("log_scale", "search_space.parameters.r.int[0]"),
        ),
        (
            "int constant",
            s("search_space: {parameters: {r: {int: [4, 4]}}}"),
            Valid,
        ),
        (
            "float inf bound",
            s("search_space: {parameters: {t: {float: [0, .inf]}}}"),
            bad("not_finite", "search_space.parameters.t.float[1]"),
        ),
        (
            "float reversed",
            s("search_space: {parameters: {t: {float: [1.0, 0.5]}}}"),
            bad("range_bounds", "search_space.parameters.t.float"),
        ),
        (
            "float log from zero",
            s("search_space: {parameters: {t: {float: [0.0, 1.0], log: true}}}"),
            bad("log_scale", "search_space.parameters.t.float[0]"),
        ),
        (
            "float log",
            s("search_space: {parameters: {t: {float: [0.001, 1.0], log: true}}}"),
            Valid,
        ),
        (
            "log not a bool",
            s("search_space: {parameters: {t: {float: [0.1, 1.0], log: yes}}}"),
            bad("wrong_type", "search_space.parameters.t.log"),
        ),
        (
            "choices empty",
            s("search_space: {parameters: {r: {choices: []}}}"),
            bad("empty_list", "search_space.parameters.r.choices"),
        ),
        (
            "choices duplicated",
            s("search_space: {parameters: {r: {choices: [a, b, a]}}}"),
            bad("duplicate_value", "search_space.parameters.r.choices[2]"),
        ),
        (
            "choices of numbers",
            s("search_space: {parameters: {r: {choices: [1, 2]}}}"),
            bad("wrong_type", "search_space.parameters.r.choices[0]"),
        ),
        (
            "choices with log",
            s("search_space: {parameters: {r: {choices: [a, b], log: true}}}"),
            bad("log_not_applicable", "search_space.parameters.r.log"),
        ),
        (
            "reserved parameter name",
            s("search_space: {parameters: {kv_load_ratio: {float: [0, 1]}}}"),
            bad(
                "reserved_parameter",
                "search_space.parameters.kv_load_ratio",
            ),
        ),
        (
            "unknown search_space key",
            s("search_space: {budget: 4}"),
            bad("unknown_key", "search_space.budget"),
        ),
        // ---- evaluator -----------------------------------------------------------------
        (
            "command evaluator",
            s(
                "evaluator: {command: [python3, eval.py], persistent: true, env: {A: b, N: 1}, cwd: /tmp}",
            ),
            Valid,
        ),
        (
            "builtin evaluator",
            s("evaluator: {builtin: {model: qwen3-32b-fp8, gpu: h200}}"),
            Valid,
        ),
        (
            "evaluator with neither",
            s("evaluator: {env: {A: b}}"),
            bad("evaluator_kind", "evaluator"),
        ),
        (
            "evaluator with both",
            s("evaluator: {command: [x], builtin: {}}"),
            bad("evaluator_kind", "evaluator"),
        ),
        (
            "command empty",
            s("evaluator: {command: []}"),
            bad("empty_list", "evaluator.command"),
        ),
        (
            "command as a string",
            s("evaluator: {command: python3 eval.py}"),
            bad("wrong_type", "evaluator.command"),
        ),
        (
            "persistent on builtin",
            s("evaluator: {builtin: {}, persistent: true}"),
            bad("persistent_without_command", "evaluator.persistent"),
        ),
        (
            "persistent not a bool",
            s("evaluator: {command: [x], persistent: 1}"),
            bad("wrong_type", "evaluator.persistent"),
        ),
        (
            "builtin not a mapping",
            s("evaluator: {builtin: qwen}"),
            bad("wrong_type", "evaluator.builtin"),
        ),
        (
            "builtin with nan",
            s("evaluator: {builtin: {mem: .nan}}"),
            bad("not_finite", "evaluator.builtin.mem"),
        ),
        (
            "env with bad name",
            s("evaluator: {command: [x], env: {\"A=B\": c}}"),
            bad("out_of_range", "evaluator.env.A=B"),
        ),
        (
            "unknown evaluator key",
            s("evaluator: {command: [x], shell: true}"),
            bad("unknown_key", "evaluator.shell"),
        ),
        // ---- evaluator.slurm (an extension) --------------------------------------------
        (
            "slurm block",
            s(
                "evaluator: {command: [./eval.sh], slurm: {partition: gpu, account: proj, time_limit: \"1-02:00:00\", job_name: sw, gpus_per_node: 8, gpu_flag: gres, gpu_type: h100, sbatch_args: [--exclusive, --constraint=h100, --nodes=2], poll_seconds: 0.5}}",
            ),
            Invalid {
                rule: "slurm_reserved_arg",
                path: "evaluator.slurm.sbatch_args[2]",
            },
        ),
        (
            "slurm block without nodes",
            s(
                "evaluator: {command: [./eval.sh], slurm: {partition: gpu, account: proj, time_limit: \"1-02:00:00\", job_name: sw, gpus_per_node: 8, gpu_flag: gres, gpu_type: h100, sbatch_args: [--exclusive, --constraint=h100], poll_seconds: 0.5}}",
            ),
            Valid,
        ),
        (
            "slurm empty block",
            s("evaluator: {command: [x], slurm: {}}"),
            Valid,
        ),
        (
            "slurm time limit in minutes",
            s("evaluator: {command: [x], slurm: {time_limit: 90}}"),
            Valid,
        ),
        (
            "slurm unknown key",
            s("evaluator: {command: [x], slurm: {queue: gpu}}"),
            bad("unknown_key", "evaluator.slurm.queue"),
        ),
        (
            "slurm bad time limit",
            s("evaluator: {command: [x], slurm: {time_limit: 2h}}"),
            bad("out_of_range", "evaluator.slurm.time_limit"),
        ),
        (
            "slurm zero time limit",
            s("evaluator: {command: [x], slurm: {time_limit: \"0:00\"}}"),
            bad("out_of_range", "evaluator.slurm.time_limit"),
        ),
        (
            "slurm negative time limit",
            s("evaluator: {command: [x], slurm: {time_limit: -5}}"),
            bad("out_of_range", "evaluator.slurm.time_limit"),
        ),
        (
            "slurm gpus_per_node zero",
            s("evaluator: {command: [x], slurm: {gpus_per_node: 0}}"),
            bad("out_of_range", "evaluator.slurm.gpus_per_node"),
        ),
        (
            "slurm gpus_per_node fractional",
            s("evaluator: {command: [x], slurm: {gpus_per_node: 1.5}}"),
            bad("wrong_type", "evaluator.slurm.gpus_per_node"),
        ),
        (
            "slurm unknown gpu_flag",
            s("evaluator: {command: [x], slurm: {gpu_flag: gpu}}"),
            bad("out_of_range", "evaluator.slurm.gpu_flag"),
        ),
        (
            "slurm sbatch_args as a string",
            s("evaluator: {command: [x], slurm: {sbatch_args: --exclusive --constraint=a}}"),
            bad("wrong_type", "evaluator.slurm.sbatch_args"),
        ),
        (
            "slurm sbatch_args sets the output",
            s("evaluator: {command: [x], slurm: {sbatch_args: [--exclusive, -o, x.out]}}"),
            bad("slurm_reserved_arg", "evaluator.slurm.sbatch_args[1]"),
        ),
        (
            "slurm sbatch_args sets the time",
            s("evaluator: {command: [x], slurm: {sbatch_args: [\"--time=10\"]}}"),
            bad("slurm_reserved_arg", "evaluator.slurm.sbatch_args[0]"),
        ),
        (
            "slurm empty partition",
            s("evaluator: {command: [x], slurm: {partition: \"\"}}"),
            bad("out_of_range", "evaluator.slurm.partition"),
        ),
        (
            "slurm poll too fast",
            s("evaluator: {command: [x], slurm: {poll_seconds: 0.01}}"),
            bad("out_of_range", "evaluator.slurm.poll_seconds"),
        ),
        (
            "slurm poll nan",
            s("evaluator: {command: [x], slurm: {poll_seconds: .nan}}"),
            bad("not_finite", "evaluator.slurm.poll_seconds"),
        ),
        (
            "slurm with builtin",
            s("evaluator: {builtin: {model: m}, slurm: {}}"),
            bad("slurm_conflict", "evaluator.slurm"),
        ),
        (
            "slurm with persistent",
            s("evaluator: {command: [x], persistent: true, slurm: {}}"),
            bad("slurm_conflict", "evaluator.persistent"),
        ),
        // ---- SPEC 6: sweep -------------------------------------------------------------
        (
            "full sweep block",
            format!(
                "{W}sweep: {{max_rounds: 5, candidates_per_round: 4, parallel_evals: 2, max_eval_seconds: 30.5, max_trials: 100, max_consecutive_failures: 3, seed: 7, algorithm: random}}"
            ),
            Valid,
        ),
        (
            "quasi_random algorithm",
            s("sweep: {algorithm: quasi_random}"),
            Valid,
        ),
        ("grid algorithm", s("sweep: {algorithm: grid}"), Valid),
        (
            "max_rounds zero",
            s("sweep: {max_rounds: 0}"),
            bad("out_of_range", "sweep.max_rounds"),
        ),
        (
            "max_rounds negative",
            s("sweep: {max_rounds: -1}"),
            bad("out_of_range", "sweep.max_rounds"),
        ),
        (
            "max_rounds huge",
            s("sweep: {max_rounds: 99999999999}"),
            bad("out_of_range", "sweep.max_rounds"),
        ),
        (
            "candidates_per_round zero",
            s("sweep: {candidates_per_round: 0}"),
            bad("out_of_range", "sweep.candidates_per_round"),
        ),
        (
            "parallel_evals fractional",
            s("sweep: {parallel_evals: 2.5}"),
            bad("wrong_type", "sweep.parallel_evals"),
        ),
        (
            "max_eval_seconds zero",
            s("sweep: {max_eval_seconds: 0}"),
            bad("out_of_range", "sweep.max_eval_seconds"),
        ),
        (
            "max_eval_seconds inf",
            s("sweep: {max_eval_seconds: .inf}"),
            bad("not_finite", "sweep.max_eval_seconds"),
        ),
        (
            "max_trials zero",
            s("sweep: {max_trials: 0}"),
            bad("out_of_range", "sweep.max_trials"),
        ),
        (
            "max_consecutive_failures one",
            s("sweep: {max_consecutive_failures: 1}"),
            Valid,
        ),
        (
            "max_consecutive_failures whole float",
            s("sweep: {max_consecutive_failures: 4.0}"),
            Valid,
        ),
        (
            "max_consecutive_failures null is the default",
            s("sweep: {max_consecutive_failures: null}"),
            Valid,
        ),
        (
            "max_consecutive_failures zero",
            s("sweep: {max_consecutive_failures: 0}"),
            bad("out_of_range", "sweep.max_consecutive_failures"),
        ),
        (
            "max_consecutive_failures negative",
            s("sweep: {max_consecutive_failures: -3}"),
            bad("out_of_range", "sweep.max_consecutive_failures"),
        ),
        (
            "max_consecutive_failures huge",
            s("sweep: {max_consecutive_failures: 4294967296}"),
            bad("out_of_range", "sweep.max_consecutive_failures"),
        ),
        (
            "max_consecutive_failures fractional",
            s("sweep: {max_consecutive_failures: 1.9}"),
            bad("wrong_type", "sweep.max_consecutive_failures"),
        ),
        (
            "max_consecutive_failures string",
            s("sweep: {max_consecutive_failures: \"10\"}"),
            bad("wrong_type", "sweep.max_consecutive_failures"),
        ),
        (
            "max_consecutive_failures inf",
            s("sweep: {max_consecutive_failures: .inf}"),
            bad("wrong_type", "sweep.max_consecutive_failures"),
        ),
        (
            "max_consecutive_failures misspelt",
            s("sweep: {max_consecutive_failure: 3}"),
            bad("unknown_key", "sweep.max_consecutive_failure"),
        ),
        (
            "seed negative",
            s("sweep: {seed: -1}"),
            bad("out_of_range", "sweep.seed"),
        ),
        (
            "seed string",
            s("sweep: {seed: abc}"),
            bad("wrong_type", "sweep.seed"),
        ),
        (
            "unknown algorithm",
            s("sweep: {algorithm: tpe}"),
            bad("unknown_algorithm", "sweep.algorithm"),
        ),
        ("rounds schedule", s("sweep: {schedule: rounds}"), Valid),
        (
            "async schedule with max_trials",
            s("sweep: {schedule: async, max_trials: 40, parallel_evals: 4}"),
            Valid,
        ),
        (
            "unknown schedule",
            s("sweep: {schedule: asynchronous}"),
            bad("unknown_schedule", "sweep.schedule"),
        ),
        (
            "schedule not a string",
            s("sweep: {schedule: 1}"),
            bad("wrong_type", "sweep.schedule"),
        ),
        (
            "unknown sweep key",
            s("sweep: {rounds: 3}"),
            bad("unknown_key", "sweep.rounds"),
        ),
        // ---- JSON ----------------------------------------------------------------------
        (
            "json config",
            s(
                r#"{"goal": {"target": "goodput", "sla": {"e2e_ms": 2e4}}, "workload": {"isl": 10, "osl": 10, "num_request_ratio": 1, "concurrency": 4}}"#,
            ),
            Valid,
        ),
        (
            "json unknown key",
            s(r#"{"goal": {"target": "throughput", "extra": 1}}"#),
            bad("unknown_key", "goal.extra"),
        ),
    ]
}
