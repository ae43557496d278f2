//! `sweeper-goal`: the schema and validation of a sweep config (SPEC sections 2, 5 and 6).
//!
//! **Layer**: the bottom layer of sweeper (goal ← score ← sampler ← cli); it depends on no
//! other crate of the project, uses no threads, and reads no format but YAML/JSON config
//! text (the YAML crate is confined to one private module).
//!
//! **Invariant**: a value of a validated type ([`SweepConfig`], [`Goal`], [`Workload`], ...)
//! is always legal under the contract. Everything that can be wrong in a config is rejected
//! here by [`parse`] / [`from_path`] with one [`ConfigError`] that names the key path
//! ([`ConfigError::path`]), shows the bad value, and says what would be accepted.
//!
//! **Feature `yaml`** (on by default): [`parse`], [`parse_all`], [`from_path`] and
//! [`from_path_all`] read YAML (and JSON, which is YAML), and `SweepConfig::to_yaml` writes
//! it. Without it no YAML crate is compiled: the same functions read JSON only, with the
//! same rules, key paths and error rules ([`ConfigError::rule`]) and `serde_json`'s line and
//! column as the [`Location`]; [`SweepConfig::to_json_string`] writes the config. The crates
//! above this one (`sweeper-score`, `sweeper-sampler`) depend on it with the feature off;
//! the command line turns it on.
//!
//! ```
//! use sweeper_goal::{Direction, Load, Objective, Workload, parse};
//!
//! // JSON, read with or without the `yaml` feature
//! let cfg = parse(
//!     r#"{"goal": {"target": "pareto"},
//!         "workload": {"isl": 4000, "osl": 500, "num_request_ratio": 10}}"#,
//! )
//! .unwrap();
//! assert_eq!(cfg.goal.objectives(), &[Objective::ThroughputPerGpu, Objective::ThroughputPerUser]);
//! let metrics = cfg.goal.sampler_metrics();
//! assert_eq!(metrics[0].direction, Direction::Maximize);
//! // a synthetic pareto workload without a load searches the ratio over [0, 1]
//! assert_eq!(cfg.workload.unwrap().load(), Some(&Load::KvLoadRange { min: 0.0, max: 1.0 }));
//!
//! let err = parse(r#"{"goal": {"target": "goodput"}}"#).unwrap_err();
//! assert_eq!(err.path(), Some("goal.sla"));
//! assert_eq!(err.rule(), "sla_missing");
//! ```
//!
//! With the `yaml` feature the same config is usually written as YAML:
//!
//! ```
//! # #[cfg(feature = "yaml")] {
//! let cfg = sweeper_goal::parse(
//!     "goal: {target: pareto}\n\
//!      workload: {isl: 4000, osl: 500, num_request_ratio: 10}\n",
//! )
//! .unwrap();
//! assert!(cfg.goal.is_pareto());
//! assert_eq!(sweeper_goal::parse(&cfg.to_yaml()), Ok(cfg));
//! # }
//! ```
//!
//! # Decisions the SPEC leaves open
//!
//! - **Formats**: with the `yaml` feature JSON is read by the YAML parser (JSON is YAML
//!   1.2), so both give the same key paths and line/column; without it `serde_json` reads
//!   the text (a struct only from an object, as in YAML), and a syntax error says that this
//!   build reads JSON only. An empty document (or one of whitespace only) is the
//!   all-default config. A key set to `null` (or left empty in YAML) counts as absent — for
//!   `pareto_objectives` too, which then resolves to the default pair.
//! - **Numbers**: an integer field accepts a whole float (`64.0`) but not `1.9`; numbers
//!   written as strings (`"64"`) are rejected. `.nan`/`.inf` parse as numbers and are then
//!   rejected wherever a finite number is required.
//! - **Errors**: within a block, validation stops at the first failure (in key order of
//!   the schema). [`parse`] returns the first failing block's error in the order goal,
//!   workload, search space, evaluator, sweep; [`parse_all`] returns one error per failing
//!   block, a misspelt key as well as a broken rule (the workload is skipped only when the goal's target itself is unreadable, as
//!   its range rule needs the target).
//! - **SLA**: an SLA is allowed under any goal (it is passed to evaluators) and may set any
//!   subset of its fields; only a goodput objective *requires* `e2e_ms` or the
//!   `ttft_ms`+`itl_ms` pair. `sla: {}` is kept as an empty SLA.
//! - **Workload**: `replay_concurrency` is for trace workloads: alone it is an error that
//!   names the missing `trace_path`; beside synthetic fields, one that says so. A synthetic workload of a scalar goal must set a load; only a
//!   pareto goal defaults to the range `[0.0, 1.0]`. A trace workload under a pareto goal
//!   gets no default range.
//! - **A load searched as a parameter** (an extension; the workload block keeps every rule
//!   of SPEC 5): a `search_space.parameters.concurrency` (whole numbers `> 0`) or
//!   `.request_rate` (numbers `> 0`, open loop) is each candidate's load when the workload
//!   fixes none ([`Load::Searched`], [`SweepConfig::searched_load`]), under any goal, in
//!   place of the pareto default range; the run sends its level as the request's load, not
//!   among the parameters. A workload that fixes a load as well is refused
//!   (`load_fixed_and_searched`, naming both), as are two searched loads, and a searched
//!   `request_rate` under a trace (which replays its own arrival times); a searched
//!   `concurrency` is a trace's replay cap when `replay_concurrency` is not set.
//! - **KV capacity** (SPEC 5): [`concurrency_for_ratio`] sums the capacity over replicas,
//!   as SPEC 5 says. The command line's built-in model departs from it on purpose: a
//!   request cannot span replicas, so it also refuses a candidate whose per-replica KV
//!   cache holds less than one request, and reports the summed capacity as
//!   `kv_capacity_requests` (see the crate docs of `sweeper-model`).
//! - **Request count**: with a fixed load (`request_rate`, `concurrency`), a count
//!   `num_request_ratio * load` that no `u64` holds (`1e300 * 1e300`) is an error at load
//!   time, not a count of 1.
//! - **Search space**: `gpu_budget >= 1`. `used_gpus` is a non-empty list of distinct
//!   integer-valued parameters whose every value is `>= 1`, or one integer `>= 1`; a config
//!   whose *smallest* candidate is already over the budget is rejected (nothing could be
//!   feasible). The parameter name `kv_load_ratio` is reserved (the searched load ratio
//!   uses it). `values` accepts integers and floats, `choices` only strings. A range with
//!   `lo == hi` is a constant, like a one-entry list.
//! - **Topology** (`search_space.topology`, SPEC 8): `model` and `gpu` are required names
//!   (resolved against the cards by `sweeper-topology`, with the top-level `models:` and
//!   `gpus:` cards, which are accepted only beside a topology); `deployment_mode` and
//!   `backend` are one name or a list of distinct names (`agg`/`disagg`;
//!   `vllm`/`sglang`/`trtllm`), default both modes and `[vllm]`; `gpus_per_worker` distinct
//!   integers `>= 1`, default `[1, 2, 4, 8, 16]`; `context_length >= 1`, default `isl +
//!   osl`; `parallel_configs` needs exactly one mode, its entries flat shapes (`tp`
//!   required, the other sizes and `replicas` default 1, `pp` only 1) for `agg` and
//!   `{prefill, decode}` for `disagg`. `used_gpus` beside a topology is an error (the shape
//!   gives it); `min_gpu_budget` is in `[1, gpu_budget]` and only beside a topology; a
//!   parameter may not use a flat candidate key (`tp`, `replicas`, `decode_tp`, ...).
//! - **Evaluator**: exactly one of `command`/`builtin`; `persistent` only with `command`;
//!   numeric command arguments and environment values are kept as their text; the builtin
//!   block must be a mapping and is otherwise opaque (the cli crate checks it).
//! - **Slurm** (`evaluator.slurm`, an extension): only beside a `command` that is not
//!   persistent. `time_limit` is a number of minutes (as `sbatch --time` reads a bare
//!   number) or a Slurm time string (`"MM:SS"`, `"HH:MM:SS"`, `"D-HH"`, `"D-HH:MM"`,
//!   `"D-HH:MM:SS"`), over zero and at most a year, kept in seconds; absent, the cli crate
//!   derives it from `max_eval_seconds`. `gpus_per_node` is an integer `>= 1`; `gpu_flag` is
//!   `gpus` (default) or `gres`; `poll_seconds` is in `[0.1, 3600]`, default 5. Names
//!   (`partition`, `account`, `job_name`, `gpu_type`) are non-empty without control
//!   characters. `sbatch_args` pass through as written, except the options sweeper sets
//!   itself (`--output`, `--error`, `--input`, `--parsable`, `--wrap`, `--chdir`,
//!   `--job-name`, `--partition`, `--account`, `--time`, the `--gpus*` options, a GPU
//!   `--gres` or `--tres-per-*`, `--array`, `--wait`, `--clusters`, and `--nodes` when
//!   `gpus_per_node` is set), which are refused with the key to use instead. The list is
//!   read as sbatch's `getopt_long` reads it: an abbreviation (`--outp`), a cluster of
//!   short options (`-vo/x`) and a value in the next entry (`[-o, x]`) are the options they
//!   stand for. An entry sbatch would take as the job script (a bare word, `--`), an
//!   abbreviation of an option that is not refused (write it in full), `--test-only`,
//!   `--help`, `--usage`, `--version` and `--open-mode` are refused too. A long option that
//!   sweeper does not know (a plugin's, e.g. `--container-image=...`) passes when written
//!   in full, its value after `=`.
//! - **Sweep**: `max_rounds`, `candidates_per_round`, `parallel_evals` fit in `u32`;
//!   `seed` is any `u64`; `algorithm` also accepts `quasi_random` and `grid` (extensions).
//! - **Schedule**: `sweep.schedule` (an extension) is `rounds` (SPEC 7, the default) or
//!   `async`: a freed evaluation slot is filled at once, each outcome is observed when it
//!   arrives, and the budget is [`SweepSettings::trial_budget`] trials (`max_trials`, else
//!   `max_rounds * candidates_per_round`); under `async`, `candidates_per_round` and
//!   `max_rounds` only size that budget.
//! - **Failures**: `sweep.max_consecutive_failures` (an extension: an integer `>= 1` that
//!   fits in `u32`, default 10) stops a sweep, exit 1 with the journal kept for `--resume`,
//!   once the evaluator failed that many trials in a row. SPEC 7 lets no single failing
//!   evaluation abort a sweep, and none does; an evaluator that fails every time is what
//!   this catches. Only failed evaluations (crash, non-zero exit, malformed report, program
//!   not runnable) count, not infeasible or unsupported candidates.
//! - **Serialization**: `SweepConfig::to_yaml` (feature `yaml`) and
//!   [`SweepConfig::to_json_string`] write every default and the resolved goal (pareto
//!   objectives explicit; a defaulted load range written out), so each is the fully
//!   resolved config and parses back to an equal value.

mod config;
mod error;
mod evaluator;
mod export;
mod goal;
#[cfg(not(feature = "yaml"))]
mod json;
mod load;
mod nesting;
mod objective;
mod price;
mod raw;
#[cfg(feature = "schema")]
pub mod schema;
mod slurm;
mod space;
mod sweep;
mod topology;
mod workload;
#[cfg(feature = "yaml")]
mod yaml;

pub use config::{
    Block, Partial, SweepConfig, default_gpu, from_path, from_path_all, parse, parse_all,
    parse_partial,
};
pub use error::{ConfigError, IoError, Location};
pub use evaluator::{EvaluatorConfig, EvaluatorKind};
pub use export::{EXPORT_APIS, EXPORT_BACKENDS, ExportSettings};
pub use goal::{DEFAULT_PARETO_OBJECTIVES, Goal, GoalOptions, Price, Sla, StrictSla};
pub use load::{
    KvCapacityTooSmall, KvRole, RatioLoad, concurrency_for_ratio, request_count, round_half_even,
    tokens_per_request,
};
pub use nesting::MAX_NESTING;
pub use objective::{Direction, Objective, ParetoHasNoDirection, SamplerMetric, Target};
pub use price::{GPU_KEY, candidate_gpu};
pub use slurm::{DEFAULT_POLL_SECONDS, GpuFlag, SlurmConfig, format_time_limit, parse_time_limit};
pub use space::{
    DEFAULT_GPU_BUDGET, ParameterSpec, RESERVED_PARAMETER_NAMES, SearchSpaceConfig, UsedGpus,
};
pub use sweep::{
    AlgorithmName, DEFAULT_MAX_CONSECUTIVE_FAILURES, DEFAULT_MAX_EVAL_SECONDS, DEFAULT_MAX_ROUNDS,
    DEFAULT_PARALLEL_EVALS, DEFAULT_SEED, Schedule, SweepSettings,
};
pub use topology::{
    AGG_PREFIX, Backend, DECODE_PREFIX, DEFAULT_GPUS_PER_WORKER, DeploymentMode, PREFILL_PREFIX,
    PinnedConfig, PinnedShape, TOPOLOGY_KEYS, TopologyConfig, pool_key, whole_count,
};
pub use workload::{Load, SearchedLoad, Workload};
