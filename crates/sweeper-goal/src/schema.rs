//! A JSON Schema of the sweep config (feature `schema`), for editors' completion and
//! checks as you type; [`crate::parse`] stays the judge of what is valid.
//!
//! The types here describe the document a user writes and nothing else: they are never
//! deserialized into. A test compares every block's keys with the keys the parser
//! accepts, so that the two cannot drift apart.

#![allow(dead_code)] // the fields exist to be described, not read

use schemars::JsonSchema;
use std::collections::BTreeMap;

/// The JSON Schema (draft 2020-12) of a sweep config, as JSON.
pub fn config_schema() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(SweepConfigDocument))
        .unwrap_or(serde_json::Value::Null);
    if let Some(map) = schema.as_object_mut() {
        map.insert(
            "$id".into(),
            "https://github.com/sweeper/sweeper/config.schema.json".into(),
        );
    }
    schema
}

/// A sweeper sweep config: the goal, the workload, the search space, the evaluator and the
/// sweep's budget. Every block is optional; `sweeper validate FILE` checks the whole.
#[derive(JsonSchema)]
#[schemars(title = "sweeper sweep config", deny_unknown_fields)]
struct SweepConfigDocument {
    goal: Option<GoalDoc>,
    workload: Option<WorkloadDoc>,
    search_space: Option<SearchSpaceDoc>,
    evaluator: Option<EvaluatorDoc>,
    sweep: Option<SweepDoc>,
    export: Option<ExportDoc>,
    /// Extra or replacement model cards for `search_space.topology`, name → card (the
    /// fields of `sweeper presets`' models: layers, hidden, heads, ..., `moe`, `mla`).
    models: Option<BTreeMap<String, serde_json::Value>>,
    /// Extra or replacement GPU cards for `search_space.topology`, name → card.
    gpus: Option<BTreeMap<String, serde_json::Value>>,
}

/// What `sweeper export` writes into a deployment; its options override these.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct ExportDoc {
    /// The model the workers serve (a Hugging Face id or a path).
    model: Option<String>,
    /// The container image of every component.
    image: Option<String>,
    /// The Kubernetes namespace.
    namespace: Option<String>,
    /// The backend of candidates without a `backend` key; default vllm.
    backend: Option<ExportBackendDoc>,
    /// GPUs a node has; a worker with more spans whole nodes. Default 8.
    #[schemars(range(min = 1, max = 4096))]
    gpus_per_node: Option<u64>,
    /// The DynamoGraphDeployment API version; default v1beta1.
    api: Option<ExportApiDoc>,
}

/// A serving engine.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ExportBackendDoc {
    Vllm,
    Sglang,
    Trtllm,
}

/// A DynamoGraphDeployment API version.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ExportApiDoc {
    V1beta1,
    V1alpha1,
}

/// What is optimized: one objective ranked, or a Pareto front.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct GoalDoc {
    /// `pareto` for a front, or one objective to rank by; default `throughput`.
    target: Option<TargetDoc>,
    /// Service-level bounds in ms. The goodput targets and `min_gpus` count only the
    /// requests that meet them; only `strict_sla` drops candidates over them.
    sla: Option<SlaDoc>,
    /// The front's objectives (with `target: pareto`), two or more; default
    /// `[throughput_per_gpu, throughput_per_user]`.
    #[schemars(length(min = 2))]
    pareto_objectives: Option<Vec<ObjectiveDoc>>,
    /// The goodput floor of `target: min_gpus`: requests per second that meet the SLA,
    /// > 0 (legal only with that target).
    #[schemars(range(min = 0.0))]
    min_goodput_rps: Option<f64>,
    /// Dollars per GPU-hour for `cost_per_mtok`: one price, or a map from GPU name
    /// (the candidate's `gpu` parameter or the built-in evaluator's `gpu:`) to price.
    price_per_gpu_hour: Option<PriceDoc>,
    /// `true` (or `{percentile: N}`): candidates whose mean (or N-th percentile) TTFT,
    /// ITL or end-to-end latency exceeds a bound of `sla` leave the ranking and the front.
    /// Default false: the SLA then lives inside the goodput targets only.
    strict_sla: Option<StrictSlaDoc>,
}

/// A price per GPU-hour: one for all, or one per GPU name.
#[derive(JsonSchema)]
#[serde(untagged)]
enum PriceDoc {
    /// Dollars per GPU-hour, > 0.
    Flat(f64),
    /// GPU name to dollars per GPU-hour.
    PerGpu(BTreeMap<String, f64>),
}

/// Whether (and on which statistic) the SLA drops candidates.
#[derive(JsonSchema)]
#[serde(untagged)]
enum StrictSlaDoc {
    /// On (the mean latencies) or off.
    On(bool),
    /// On, on a percentile of the latencies.
    Percentile(StrictPercentileDoc),
}

/// `{percentile: N}`: the report keys read are `pN_ttft_ms`, `pN_itl_ms`,
/// `pN_e2e_latency_ms`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct StrictPercentileDoc {
    /// 1 to 99.
    #[schemars(range(min = 1, max = 99))]
    percentile: u8,
}

/// A goal's target.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
enum TargetDoc {
    /// The Pareto front of `pareto_objectives`.
    Pareto,
    /// Output tokens per second, maximized.
    Throughput,
    /// Output tokens per second per GPU, maximized.
    ThroughputPerGpu,
    /// Output tokens per second per user, maximized.
    ThroughputPerUser,
    /// End-to-end latency (ms), minimized.
    E2eLatency,
    /// Tokens per second of requests that meet the SLA, maximized.
    Goodput,
    /// Goodput per GPU, maximized.
    GoodputPerGpu,
    /// Mean time to first token (ms), minimized.
    Ttft,
    /// Fewest GPUs whose goodput (requests/s) reaches `min_goodput_rps`.
    MinGpus,
    /// Dollars per million output tokens, minimized (needs `price_per_gpu_hour`).
    CostPerMtok,
}

/// One objective of a front.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ObjectiveDoc {
    /// Output tokens per second, maximized.
    Throughput,
    /// Output tokens per second per GPU, maximized.
    ThroughputPerGpu,
    /// Output tokens per second per user, maximized.
    ThroughputPerUser,
    /// End-to-end latency (ms), minimized.
    E2eLatency,
    /// Tokens per second of requests that meet the SLA, maximized.
    Goodput,
    /// Goodput per GPU, maximized.
    GoodputPerGpu,
    /// Mean time to first token (ms), minimized.
    Ttft,
    /// Dollars per million output tokens, minimized (needs `price_per_gpu_hour`).
    CostPerMtok,
}

/// Service-level bounds, in milliseconds: `e2e_ms`, or `ttft_ms` with `itl_ms`.
#[allow(clippy::struct_field_names)] // the SPEC's key names
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct SlaDoc {
    /// Time to first token bound (ms), > 0.
    #[schemars(range(min = 0.0))]
    ttft_ms: Option<f64>,
    /// Inter-token latency bound (ms), > 0; 50 ms is 20 tok/s/user.
    #[schemars(range(min = 0.0))]
    itl_ms: Option<f64>,
    /// End-to-end latency bound (ms), > 0.
    #[schemars(range(min = 0.0))]
    e2e_ms: Option<f64>,
}

/// The traffic: a trace to replay, or synthetic lengths and one load.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct WorkloadDoc {
    /// A request trace (JSON Lines) to replay instead of synthetic traffic.
    trace_path: Option<String>,
    /// Concurrency of the trace replay (with `trace_path`).
    #[schemars(range(min = 1))]
    replay_concurrency: Option<u64>,
    /// Input sequence length, tokens.
    #[schemars(range(min = 1))]
    isl: Option<u64>,
    /// Output sequence length, tokens.
    #[schemars(range(min = 1))]
    osl: Option<u64>,
    /// Requests sent per unit of concurrency (how long a run lasts).
    num_request_ratio: Option<f64>,
    /// The load as requests per second (one load key only).
    request_rate: Option<f64>,
    /// The load as concurrent users in a closed loop (one load key only).
    #[schemars(range(min = 1))]
    concurrency: Option<u64>,
    /// The load as a fraction of each candidate's KV-cache capacity: a number, or
    /// `[min, max]` to search it (one load key only).
    kv_load_ratio: Option<KvLoadRatioDoc>,
}

/// A KV load ratio: fixed, or a range that is searched.
#[derive(JsonSchema)]
#[serde(untagged)]
enum KvLoadRatioDoc {
    /// A fixed ratio in (0, 1].
    Fixed(f64),
    /// `[min, max]`, searched.
    Range([f64; 2]),
}

/// What is searched.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct SearchSpaceDoc {
    /// Candidates using more GPUs than this are dropped (over the budget).
    #[schemars(range(min = 1))]
    gpu_budget: Option<u64>,
    /// With a topology: shapes using fewer GPUs are not candidates.
    #[schemars(range(min = 1))]
    min_gpu_budget: Option<u64>,
    /// A candidate's GPU count: a number, or the parameters whose product it is (not with
    /// a topology, which derives it).
    used_gpus: Option<UsedGpusDoc>,
    /// Deployment shapes derived from a model and a GPU: aggregated and disaggregated
    /// pools, dense TP or MoE TEP/DEP/TP/DTP, only KV-feasible shapes within the budget.
    topology: Option<TopologyDoc>,
    /// The parameters, by name; the order is kept.
    parameters: Option<BTreeMap<String, ParameterDoc>>,
}

/// `search_space.topology`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct TopologyDoc {
    /// A model preset (`sweeper presets`) or a card under the top-level `models:`.
    model: String,
    /// A GPU preset or a card under the top-level `gpus:`.
    gpu: String,
    /// `agg`, `disagg` or both (the default).
    deployment_mode: Option<Vec<ModeDoc>>,
    /// `vllm` (the default), `sglang`, `trtllm`, with their shape filters.
    backend: Option<Vec<BackendDoc>>,
    /// Worker sizes (`tp × attention_dp`); default `[1, 2, 4, 8, 16]`, capped at the budget.
    gpus_per_worker: Option<Vec<u64>>,
    /// The sequence one rank's KV cache must hold; default the workload's `isl + osl`.
    #[schemars(range(min = 1))]
    context_length: Option<u64>,
    /// A pinned menu instead of the enumeration (one deployment mode): flat shapes for
    /// `agg`, `{prefill: shape, decode: shape}` for `disagg`.
    parallel_configs: Option<Vec<serde_json::Value>>,
}

/// A deployment mode.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ModeDoc {
    /// Prefill and decode on the same workers.
    Agg,
    /// A prefill pool and a decode pool.
    Disagg,
}

/// A serving backend.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
enum BackendDoc {
    /// vLLM.
    Vllm,
    /// `SGLang`.
    Sglang,
    /// TensorRT-LLM (aggregated only).
    Trtllm,
}

/// How a candidate's GPUs are counted.
#[derive(JsonSchema)]
#[serde(untagged)]
enum UsedGpusDoc {
    /// The same for every candidate.
    Fixed(u64),
    /// The product of these parameters (e.g. `[tp, replicas]`).
    Product(Vec<String>),
}

/// One parameter: exactly one of `values`, `int`, `float`, `choices`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct ParameterDoc {
    /// Numeric values to choose from (e.g. `[1, 2, 4, 8]`).
    #[schemars(length(min = 1))]
    values: Option<Vec<f64>>,
    /// An integer range `[lo, hi]`, both ends included.
    int: Option<[i64; 2]>,
    /// A real range `[lo, hi]`.
    float: Option<[f64; 2]>,
    /// Categories (e.g. `[round_robin, kv_aware]`).
    #[schemars(length(min = 1))]
    choices: Option<Vec<String>>,
    /// Model the parameter on a log scale (positive values only).
    log: Option<bool>,
}

/// Who evaluates a candidate: the built-in serving model, or a command.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct EvaluatorDoc {
    /// The program and its arguments (no shell): a candidate as JSON on stdin, a JSON
    /// report on stdout; exit 3 unsupported, 4 infeasible.
    command: Option<CommandDoc>,
    /// One long-lived process per worker, one JSON line per candidate.
    persistent: Option<bool>,
    /// The built-in analytic serving model (`sweeper presets` lists its presets).
    builtin: Option<BuiltinDoc>,
    /// Environment variables for the command.
    env: Option<BTreeMap<String, String>>,
    /// Working directory of the command.
    cwd: Option<String>,
    /// Run each evaluation as a Slurm batch job (`partition`, `account`, `time_limit`,
    /// `job_name`, `gpus_per_node`, `gpu_flag`, `gpu_type`, `sbatch_args`, `poll_seconds`).
    slurm: Option<serde_json::Value>,
}

/// A command line.
#[derive(JsonSchema)]
#[serde(untagged)]
enum CommandDoc {
    /// Program and arguments.
    Argv(Vec<String>),
    /// A program without arguments.
    Program(String),
}

/// The built-in serving model.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct BuiltinDoc {
    /// A model preset (e.g. `qwen3-32b-fp8`) or one defined under `models`.
    model: Option<String>,
    /// A GPU preset (e.g. `h200`) or one defined under `gpus`.
    gpu: Option<String>,
    /// Model presets added or overridden, by name.
    models: Option<BTreeMap<String, serde_json::Value>>,
    /// GPU presets added or overridden, by name.
    gpus: Option<BTreeMap<String, serde_json::Value>>,
    /// Fraction of HBM the serving engine may use.
    memory_fraction: Option<f64>,
    /// KV-cache block size, tokens.
    block_size: Option<u64>,
    /// Tokens one forward pass may hold.
    max_num_tokens: Option<u64>,
    /// Relative jitter of request lengths.
    length_jitter: Option<f64>,
    /// Seed of the simulated traffic.
    seed: Option<u64>,
    /// Factors from spec-sheet peaks to achieved rates.
    calibration: Option<serde_json::Value>,
}

/// The sweep's budget and sampler.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct SweepDoc {
    /// Rounds of suggest, evaluate, observe; default 20.
    #[schemars(range(min = 1))]
    max_rounds: Option<u64>,
    /// New evaluations a round asks for; default `parallel_evals`.
    #[schemars(range(min = 1))]
    candidates_per_round: Option<u64>,
    /// Evaluations at once; default 1.
    #[schemars(range(min = 1))]
    parallel_evals: Option<u64>,
    /// An evaluation over this many seconds is killed and tallied.
    max_eval_seconds: Option<f64>,
    /// A budget in trials instead of rounds.
    #[schemars(range(min = 1))]
    max_trials: Option<u64>,
    /// Stop after this many failed evaluations in a row; default 10.
    #[schemars(range(min = 1))]
    max_consecutive_failures: Option<u64>,
    /// The sampler's seed: the same seed proposes the same candidates.
    seed: Option<u64>,
    /// The sampler.
    algorithm: Option<AlgorithmDoc>,
    /// `rounds` (the default) or `async`: a freed evaluation slot is filled at once.
    schedule: Option<ScheduleDoc>,
}

/// When new trials are asked for.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ScheduleDoc {
    /// In rounds of `candidates_per_round`, each observed whole.
    Rounds,
    /// A slot that frees is filled at once.
    Async,
}

/// A sampler algorithm.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
enum AlgorithmDoc {
    /// The model-based default.
    Default,
    /// Uniform random.
    Random,
    /// A scrambled low-discrepancy sequence.
    QuasiRandom,
    /// Every point of a finite space.
    Grid,
}

#[cfg(test)]
mod tests {
    use super::config_schema;
    use serde_json::Value;
    use std::collections::BTreeSet;

    /// The keys a block of the schema describes.
    fn schema_keys(schema: &Value, block: Option<&str>) -> BTreeSet<String> {
        let defs = &schema["$defs"];
        let node = match block {
            None => schema,
            Some(name) => {
                let reference = schema_ref(&schema["properties"], name, defs);
                &defs[reference]
            }
        };
        node["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    }

    fn schema_ref(properties: &Value, name: &str, defs: &Value) -> String {
        let prop = &properties[name];
        let text = prop.to_string();
        let start = text.find("#/$defs/").unwrap() + "#/$defs/".len();
        let end = text[start..].find('"').unwrap() + start;
        let def = text[start..end].to_owned();
        assert!(defs.get(&def).is_some(), "{def}");
        def
    }

    /// The keys the parser accepts in a block, read off its unknown-key error
    /// ("...; expected `a`, `b`").
    fn parser_keys(config_with_unknown_key: &str) -> BTreeSet<String> {
        let err = crate::parse(config_with_unknown_key)
            .unwrap_err()
            .to_string();
        let (_, tail) = err
            .split_once("expected ")
            .unwrap_or_else(|| panic!("no key list in: {err}"));
        tail.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn every_block_has_the_keys_the_parser_accepts() {
        let schema = config_schema();
        let cases = [
            (None, "{\"zzz_unknown\": 1}"),
            (Some("goal"), "{\"goal\": {\"zzz_unknown\": 1}}"),
            (Some("workload"), "{\"workload\": {\"zzz_unknown\": 1}}"),
            (
                Some("search_space"),
                "{\"search_space\": {\"zzz_unknown\": 1}}",
            ),
            (Some("evaluator"), "{\"evaluator\": {\"zzz_unknown\": 1}}"),
            (Some("sweep"), "{\"sweep\": {\"zzz_unknown\": 1}}"),
        ];
        for (block, text) in cases {
            let accepted = parser_keys(text);
            assert!(accepted.len() >= 2, "{block:?}: {accepted:?}");
            let described = schema_keys(&schema, block);
            assert_eq!(described, accepted, "block {block:?}");
        }
    }

    #[test]
    fn the_schema_names_the_targets_and_the_algorithms() {
        let text = config_schema().to_string();
        for name in [
            "pareto",
            "throughput_per_gpu",
            "e2e_latency",
            "quasi_random",
            "grid",
        ] {
            assert!(text.contains(&format!("\"{name}\"")), "{name}");
        }
    }
}
