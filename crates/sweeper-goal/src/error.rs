//! The one error type of the crate: every rule of SPEC 2, 5 and 6 has its own variant.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// An I/O error shared behind an `Arc`, so that [`ConfigError`] stays `Clone` and
/// `PartialEq` (two I/O errors are equal when their kind and text are).
#[derive(Debug, Clone)]
pub struct IoError(Arc<std::io::Error>);

impl IoError {
    /// The kind of the underlying error (`NotFound`, `PermissionDenied`, ...).
    pub fn kind(&self) -> std::io::ErrorKind {
        self.0.kind()
    }
}

impl From<std::io::Error> for IoError {
    fn from(e: std::io::Error) -> Self {
        IoError(Arc::new(e))
    }
}

impl PartialEq for IoError {
    fn eq(&self, other: &Self) -> bool {
        self.0.kind() == other.0.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for IoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// A position in the config text, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

fn at(location: Option<&Location>) -> String {
    location.map_or_else(String::new, |l| {
        format!(" (line {}, column {})", l.line, l.column)
    })
}

fn list(items: &[String]) -> String {
    items.join(", ")
}

/// Why a config was rejected. Every variant but [`ConfigError::Io`] and
/// [`ConfigError::Syntax`] names the key path of the offending value
/// (`goal.sla.e2e_ms`, `workload.kv_load_ratio[1]`); see [`ConfigError::path`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config {}: {source}", path.display())]
    Io {
        /// The file asked for.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: IoError,
    },
    /// The text is not YAML (or JSON) at all; without the `yaml` feature, not JSON.
    #[error("invalid YAML/JSON{}: {message}", at(location.as_ref()))]
    Syntax {
        /// The parser's message.
        message: String,
        /// Where, when the parser knows it.
        location: Option<Location>,
    },
    /// The text nests mappings and lists deeper than [`crate::MAX_NESTING`] levels; found
    /// before the YAML/JSON parser reads it (deep nesting makes that parser quadratic).
    #[error(
        "{}{}: nested deeper than {limit} levels (mappings and lists); a sweep config needs a few, so look there for a bracket left open or a generated value nested too deep",
        if path.is_empty() { "config" } else { path },
        at(Some(location))
    )]
    NestingTooDeep {
        /// Key path of the value that opens one level too many (`""` at the top).
        path: String,
        /// The limit, [`crate::MAX_NESTING`].
        limit: usize,
        /// Where that value opens.
        location: Location,
    },
    /// A block has the wrong shape for the parser (e.g. `goal: 5` where a mapping belongs).
    #[error("{}{}: {message}", if path.is_empty() { "config" } else { path }, at(location.as_ref()))]
    Structure {
        /// Key path of the block.
        path: String,
        /// What is wrong.
        message: String,
        /// Where, when the parser knows it.
        location: Option<Location>,
    },
    /// A key appears twice in one mapping.
    #[error(
        "{path}: duplicate key `{key}` (the parser does not report where the second one is: search the file for `{key}` and keep one)"
    )]
    DuplicateKey {
        /// Path of the duplicated key.
        path: String,
        /// The key.
        key: String,
    },
    /// A key that the schema does not know (unknown keys are rejected at every level).
    #[error(
        "{path}: unknown key `{key}`{}; {}expected {expected}",
        at(location.as_ref()),
        did_you_mean.as_ref().map_or_else(String::new, |k| format!("did you mean `{k}`? "))
    )]
    UnknownKey {
        /// Path of the unknown key, the key included.
        path: String,
        /// The key as written.
        key: String,
        /// The keys accepted at that level.
        expected: String,
        /// The accepted key closest to the one written, when one is close.
        did_you_mean: Option<String>,
        /// Where, when the parser knows it.
        location: Option<Location>,
    },
    /// A value of the wrong type (a string where a number belongs, `1.9` for an integer, a
    /// list for one number).
    #[error("{path}: expected {expected}, found {found}{hint}")]
    WrongType {
        /// Key path.
        path: String,
        /// What is accepted.
        expected: String,
        /// The value found.
        found: String,
        /// How to fix it (empty or starting with `; `).
        hint: String,
    },
    /// A `.nan`, `.inf` or `-.inf` where a finite number is required.
    #[error("{path}: {value} is not a finite number; {expected}")]
    NotFinite {
        /// Key path.
        path: String,
        /// The value found.
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// A number outside its legal range (`e2e_ms: 0`, `max_rounds: 0`, `isl: -5`).
    #[error("{path}: {value} is out of range; {expected}")]
    OutOfRange {
        /// Key path.
        path: String,
        /// The value found.
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// A name that is not a target (in `goal.target` or `goal.pareto_objectives[i]`).
    #[error(
        "{path}: unknown target {value}; {}expected one of {}",
        did_you_mean.as_ref().map_or_else(String::new, |k| format!("did you mean `{k}`? ")),
        list(accepted)
    )]
    UnknownTarget {
        /// Key path.
        path: String,
        /// The value found.
        value: String,
        /// The names accepted there.
        accepted: Vec<String>,
        /// The accepted name closest to the value (a misspelling), if one is close.
        did_you_mean: Option<String>,
    },
    /// SPEC 2 rule 1: `pareto_objectives` is legal only when `target` is `pareto`.
    #[error(
        "{path}: pareto_objectives is legal only with `target: pareto`, but the target is {target}; remove pareto_objectives or set `target: pareto`"
    )]
    ParetoObjectivesNeedParetoTarget {
        /// `goal.pareto_objectives`.
        path: String,
        /// The scalar target written.
        target: String,
    },
    /// SPEC 2 rule 2: an explicit objective list needs at least two entries.
    #[error(
        "{path}: a pareto goal needs at least 2 objectives, found {count}; list two or more distinct scalar targets, or remove the key for the default [throughput_per_gpu, throughput_per_user]"
    )]
    TooFewParetoObjectives {
        /// `goal.pareto_objectives`.
        path: String,
        /// Entries written.
        count: usize,
    },
    /// SPEC 2 rule 2: the objectives must be distinct.
    #[error("{path}: objective {name} is listed twice; each objective may appear once")]
    DuplicateParetoObjective {
        /// Path of the second occurrence.
        path: String,
        /// The repeated objective.
        name: String,
    },
    /// SPEC 2 rule 2: `pareto` is not a scalar objective.
    #[error(
        "{path}: pareto cannot be one of the pareto objectives; list scalar targets only (throughput, throughput_per_gpu, throughput_per_user, e2e_latency, goodput, goodput_per_gpu, ttft, cost_per_mtok)"
    )]
    ParetoInParetoObjectives {
        /// Path of the entry.
        path: String,
    },
    /// SPEC 2 rules 3-4: a goodput objective needs an SLA and there is none.
    #[error(
        "{path}: {} counts only requests that meet an SLA, so the goal needs one; add `sla: {{e2e_ms: ...}}` or `sla: {{ttft_ms: ..., itl_ms: ...}}`",
        list(needed_by)
    )]
    SlaMissing {
        /// `goal.sla`.
        path: String,
        /// The objectives that need it.
        needed_by: Vec<String>,
    },
    /// SPEC 2 rule 4: the SLA has neither `e2e_ms` nor both `ttft_ms` and `itl_ms`.
    #[error(
        "{path}: {} needs an SLA of e2e_ms, or of both ttft_ms and itl_ms; {missing}",
        list(needed_by)
    )]
    SlaIncomplete {
        /// `goal.sla`.
        path: String,
        /// The objectives that need it.
        needed_by: Vec<String>,
        /// What is missing, in words.
        missing: String,
    },
    /// SPEC 9: `min_goodput_rps` is legal only with `target: min_gpus`.
    #[error(
        "{path}: min_goodput_rps is legal only with `target: min_gpus`, but the target is {target}; remove min_goodput_rps or set `target: min_gpus`"
    )]
    MinGoodputNeedsMinGpus {
        /// `goal.min_goodput_rps`.
        path: String,
        /// The target written.
        target: String,
    },
    /// SPEC 9: `target: min_gpus` needs the goodput floor `min_goodput_rps`.
    #[error(
        "{path}: the min_gpus target looks for the fewest GPUs that serve a load, so the goal needs `min_goodput_rps` (requests per second that must meet the SLA); add e.g. `min_goodput_rps: 40`"
    )]
    MinGpusNeedsFloor {
        /// `goal.min_goodput_rps`.
        path: String,
    },
    /// SPEC 9: `min_gpus` needs an SLA that sets at least one bound.
    #[error(
        "{path}: {} counts only requests that meet an SLA, but the SLA sets no bound; add ttft_ms, itl_ms or e2e_ms",
        list(needed_by)
    )]
    SlaEmpty {
        /// `goal.sla`.
        path: String,
        /// The targets that need a bound.
        needed_by: Vec<String>,
    },
    /// SPEC 9: `strict_sla` needs an SLA that sets at least one bound.
    #[error(
        "{path}: strict_sla drops candidates whose latency exceeds an SLA bound, but the goal sets no bound; add `sla: {{ttft_ms: ..., itl_ms: ...}}` (or e2e_ms), or remove strict_sla"
    )]
    StrictSlaNeedsSla {
        /// `goal.strict_sla`.
        path: String,
    },
    /// SPEC 9: `min_gpus` is a floor and a ranking, not a value a front trades off.
    #[error(
        "{path}: {name} cannot be a pareto objective: it is a goodput floor with a ranking, not a value to trade off; use `target: {name}`, or list other objectives"
    )]
    NotAParetoObjective {
        /// Path of the entry.
        path: String,
        /// The objective.
        name: String,
    },
    /// SPEC 9: `cost_per_mtok` needs `price_per_gpu_hour`.
    #[error(
        "{path}: cost_per_mtok needs a price; add `price_per_gpu_hour: 2.5` (dollars per GPU-hour) or a map by GPU such as `price_per_gpu_hour: {{h200: 3.5, b200: 5.0}}`"
    )]
    CostNeedsPrice {
        /// `goal.price_per_gpu_hour`.
        path: String,
    },
    /// SPEC 9: a price map lacks a GPU the search space or the built-in evaluator can use.
    #[error(
        "{path}: no price for GPU `{gpu}` (used by {source_path}); add `{gpu}: <dollars per GPU-hour>` to the map, or give one price for every GPU"
    )]
    PriceMissingGpu {
        /// `goal.price_per_gpu_hour`.
        path: String,
        /// The GPU without a price.
        gpu: String,
        /// Where the GPU comes from (`search_space.parameters.gpu`,
        /// `search_space.topology.gpu`, `evaluator.builtin.gpu`).
        source_path: String,
    },
    /// `workload:` mixes the trace shape and the synthetic shape (SPEC 5).
    #[error(
        "{path}: a trace workload (trace_path) cannot also set {}; keep trace_path (+ replay_concurrency) or the synthetic fields, not both",
        list(keys)
    )]
    WorkloadMixed {
        /// `workload`.
        path: String,
        /// The synthetic keys found beside `trace_path`.
        keys: Vec<String>,
    },
    /// `replay_concurrency` in a synthetic workload: it caps a trace replay only.
    #[error(
        "{path}: replay_concurrency is for trace workloads (it caps how many requests of a trace replay are in flight), but this workload is synthetic ({}); remove replay_concurrency and give the synthetic load as concurrency, request_rate or kv_load_ratio",
        list(keys)
    )]
    ReplayConcurrencyNeedsTrace {
        /// `workload.replay_concurrency`.
        path: String,
        /// The synthetic keys found beside it.
        keys: Vec<String>,
    },
    /// A required workload key is missing.
    #[error("{path}: missing; {hint}")]
    MissingField {
        /// Path of the missing key.
        path: String,
        /// What to write.
        hint: String,
    },
    /// `workload:` is present but sets neither shape.
    #[error(
        "{path}: the workload sets neither trace_path nor the synthetic fields isl, osl, num_request_ratio; set one shape or remove the block"
    )]
    WorkloadShapeMissing {
        /// `workload`.
        path: String,
    },
    /// More than one of `request_rate`, `concurrency`, `kv_load_ratio` (SPEC 5: exactly one).
    #[error(
        "{path}: a synthetic workload takes exactly one load, found {}; keep one",
        list(keys)
    )]
    MultipleLoads {
        /// `workload`.
        path: String,
        /// The load keys written.
        keys: Vec<String>,
    },
    /// A synthetic workload of a scalar goal without a load.
    #[error(
        "{path}: a synthetic workload needs one load: request_rate, concurrency or kv_load_ratio, or a searched `search_space.parameters.concurrency` or `.request_rate` (only a pareto goal defaults to kv_load_ratio [0.0, 1.0])"
    )]
    LoadMissing {
        /// `workload`.
        path: String,
    },
    /// A workload that fixes a load while the search space searches one
    /// (`search_space.parameters.concurrency` or `.request_rate`): the candidate would have two.
    #[error(
        "{path}: the workload fixes the load and search_space.parameters.{parameter} searches it; drop {path} to sweep the {parameter} levels, or drop the parameter to run at one load"
    )]
    LoadFixedAndSearched {
        /// The workload's load key (`workload.concurrency`, `workload.kv_load_ratio`, ...).
        path: String,
        /// The searched load parameter (`concurrency` or `request_rate`).
        parameter: String,
    },
    /// A searched load parameter (`concurrency`, `request_rate`) whose values cannot be a
    /// load, or one the workload cannot take.
    #[error("{path}: a searched {name} is the candidate's load, so {why}")]
    LoadParameter {
        /// `search_space.parameters.<name>`.
        path: String,
        /// `concurrency` or `request_rate`.
        name: String,
        /// What it must be instead.
        why: String,
    },
    /// A `kv_load_ratio` list that is not exactly `[min, max]`.
    #[error(
        "{path}: a kv_load_ratio range is exactly two numbers [min, max], found {len}; e.g. `kv_load_ratio: [0.05, 1.0]`, or one number for a fixed ratio"
    )]
    KvRangeLength {
        /// `workload.kv_load_ratio`.
        path: String,
        /// Entries written.
        len: usize,
    },
    /// A `kv_load_ratio` range with `min >= max`.
    #[error(
        "{path}: range [{min}, {max}] needs min < max; for one fixed ratio write a single number"
    )]
    KvRangeOrder {
        /// `workload.kv_load_ratio`.
        path: String,
        /// The first entry.
        min: f64,
        /// The second entry.
        max: f64,
    },
    /// A `kv_load_ratio` range under a scalar goal (SPEC 5: only pareto searches the load).
    #[error(
        "{path}: a kv_load_ratio range is searched only under `target: pareto`, but the target is {target}; use one number, or a pareto goal"
    )]
    KvRangeNeedsPareto {
        /// `workload.kv_load_ratio`.
        path: String,
        /// The scalar target.
        target: String,
    },
    /// A parameter that sets none, or more than one, of `values`, `int`, `float`, `choices`.
    #[error(
        "{path}: a parameter sets exactly one of values, int, float, choices; found {}",
        if found.is_empty() { "none".to_owned() } else { list(found) }
    )]
    ParameterKind {
        /// Path of the parameter.
        path: String,
        /// The kind keys written.
        found: Vec<String>,
    },
    /// A list that must not be empty is.
    #[error("{path}: the list is empty; {expected}")]
    EmptyList {
        /// Key path.
        path: String,
        /// What is accepted.
        expected: String,
    },
    /// A list entry that must be unique is repeated.
    #[error("{path}: {value} is listed twice; entries must be distinct")]
    DuplicateValue {
        /// Path of the second occurrence.
        path: String,
        /// The repeated value.
        value: String,
    },
    /// A `[lo, hi]` list that is not two entries.
    #[error("{path}: a range is exactly two numbers [lo, hi], found {len} entries")]
    RangeLength {
        /// Key path.
        path: String,
        /// Entries written.
        len: usize,
    },
    /// A `[lo, hi]` range with `lo > hi`.
    #[error("{path}: range [{lo}, {hi}] needs lo <= hi")]
    RangeBounds {
        /// Key path.
        path: String,
        /// The lower bound written.
        lo: String,
        /// The upper bound written.
        hi: String,
    },
    /// `log: true` over values that include zero or negatives.
    #[error("{path}: {value} is not allowed on a log scale; {expected}, or drop `log: true`")]
    LogScale {
        /// Path of the offending value.
        path: String,
        /// The value.
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// `log` on a categorical parameter.
    #[error("{path}: log applies to values, int and float parameters, not to choices; remove it")]
    LogNotApplicable {
        /// `search_space.parameters.<name>.log`.
        path: String,
    },
    /// A parameter name that the run reserves for itself.
    #[error("{path}: the parameter name {name} is reserved ({why}); rename it")]
    ReservedParameter {
        /// Path of the parameter.
        path: String,
        /// The name.
        name: String,
        /// Why it is reserved.
        why: String,
    },
    /// `used_gpus` names a parameter that the search space lacks.
    #[error("{path}: used_gpus names {name}, which is not a parameter; known parameters: {}", if known.is_empty() { "none".to_owned() } else { list(known) })]
    UsedGpusUnknownParameter {
        /// Path of the entry.
        path: String,
        /// The name.
        name: String,
        /// The parameters declared.
        known: Vec<String>,
    },
    /// `used_gpus` names a parameter that is not integer-valued with every value `>= 1`.
    #[error(
        "{path}: used_gpus multiplies GPU counts, so {name} must be an integer parameter with every value >= 1 ({why})"
    )]
    UsedGpusNotInteger {
        /// Path of the entry.
        path: String,
        /// The name.
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// Even the smallest candidate uses more GPUs than the budget: nothing could be feasible.
    #[error(
        "{path}: the smallest candidate uses {min_used} GPUs, over gpu_budget {gpu_budget}, so every candidate would be infeasible; raise gpu_budget or shrink the search space"
    )]
    UsedGpusOverBudget {
        /// `search_space.used_gpus`.
        path: String,
        /// The fewest GPUs any candidate uses.
        min_used: u64,
        /// The budget.
        gpu_budget: u64,
    },
    /// An evaluator block that sets neither or both of `command` and `builtin`.
    #[error(
        "{path}: an evaluator sets exactly one of command, builtin; found {}",
        if found.is_empty() { "none".to_owned() } else { list(found) }
    )]
    EvaluatorKind {
        /// `evaluator`.
        path: String,
        /// The kind keys written.
        found: Vec<String>,
    },
    /// `persistent` on a builtin evaluator.
    #[error("{path}: persistent applies only to a command evaluator; remove it")]
    PersistentWithoutCommand {
        /// `evaluator.persistent`.
        path: String,
    },
    /// `evaluator.slurm` beside what a batch job cannot run (a builtin or persistent
    /// evaluator).
    #[error("{path}: {why}")]
    SlurmConflict {
        /// The key at fault (`evaluator.slurm`, `evaluator.persistent`).
        path: String,
        /// What is wrong and how to fix it.
        why: String,
    },
    /// An `sbatch` option in `evaluator.slurm.sbatch_args` that sweeper sets itself.
    #[error("{path}: sweeper sets {arg} itself ({why}); remove it from sbatch_args")]
    SlurmReservedArg {
        /// `evaluator.slurm.sbatch_args[i]`.
        path: String,
        /// The argument written.
        arg: String,
        /// Why sweeper sets it, or which key to use instead.
        why: String,
    },
    /// An entry of `evaluator.slurm.sbatch_args` that sbatch would not read as an option
    /// of its own: not an option at all (sbatch takes it as the job script), `--`, an
    /// abbreviation, or an option that submits no job.
    #[error("{path}: sbatch argument {arg} is refused: {why}")]
    SlurmBadArg {
        /// `evaluator.slurm.sbatch_args[i]`.
        path: String,
        /// The argument written.
        arg: String,
        /// Why, and what to write instead.
        why: String,
    },
    /// An unknown `sweep.algorithm`.
    #[error(
        "{path}: unknown algorithm {value}; expected one of default, random, quasi_random, grid"
    )]
    UnknownAlgorithm {
        /// `sweep.algorithm`.
        path: String,
        /// The value found.
        value: String,
    },
    /// A `topology:` rule broken (a key, a combination, a pinned shape).
    #[error("{path}: {why}")]
    Topology {
        /// Path of the key at fault, from `search_space.topology` (or `models`, `gpus`).
        path: String,
        /// What is wrong and how to fix it.
        why: String,
    },
    /// An unknown `sweep.schedule`.
    #[error("{path}: unknown schedule {value}; expected rounds (the default) or async")]
    UnknownSchedule {
        /// `sweep.schedule`.
        path: String,
        /// The value found.
        value: String,
    },
}

impl ConfigError {
    /// The key path of the offending value (`"goal.sla.e2e_ms"`,
    /// `"workload.kv_load_ratio[1]"`); `None` for I/O and syntax errors. The top level is
    /// `""`.
    pub fn path(&self) -> Option<&str> {
        match self {
            ConfigError::Io { .. } | ConfigError::Syntax { .. } => None,
            ConfigError::Structure { path, .. }
            | ConfigError::DuplicateKey { path, .. }
            | ConfigError::UnknownKey { path, .. }
            | ConfigError::WrongType { path, .. }
            | ConfigError::NotFinite { path, .. }
            | ConfigError::OutOfRange { path, .. }
            | ConfigError::UnknownTarget { path, .. }
            | ConfigError::ParetoObjectivesNeedParetoTarget { path, .. }
            | ConfigError::TooFewParetoObjectives { path, .. }
            | ConfigError::DuplicateParetoObjective { path, .. }
            | ConfigError::ParetoInParetoObjectives { path }
            | ConfigError::SlaMissing { path, .. }
            | ConfigError::SlaIncomplete { path, .. }
            | ConfigError::MinGoodputNeedsMinGpus { path, .. }
            | ConfigError::MinGpusNeedsFloor { path }
            | ConfigError::SlaEmpty { path, .. }
            | ConfigError::StrictSlaNeedsSla { path }
            | ConfigError::NotAParetoObjective { path, .. }
            | ConfigError::CostNeedsPrice { path }
            | ConfigError::PriceMissingGpu { path, .. }
            | ConfigError::WorkloadMixed { path, .. }
            | ConfigError::ReplayConcurrencyNeedsTrace { path, .. }
            | ConfigError::MissingField { path, .. }
            | ConfigError::WorkloadShapeMissing { path }
            | ConfigError::MultipleLoads { path, .. }
            | ConfigError::LoadMissing { path }
            | ConfigError::LoadFixedAndSearched { path, .. }
            | ConfigError::LoadParameter { path, .. }
            | ConfigError::KvRangeLength { path, .. }
            | ConfigError::KvRangeOrder { path, .. }
            | ConfigError::KvRangeNeedsPareto { path, .. }
            | ConfigError::ParameterKind { path, .. }
            | ConfigError::EmptyList { path, .. }
            | ConfigError::DuplicateValue { path, .. }
            | ConfigError::RangeLength { path, .. }
            | ConfigError::RangeBounds { path, .. }
            | ConfigError::LogScale { path, .. }
            | ConfigError::LogNotApplicable { path }
            | ConfigError::ReservedParameter { path, .. }
            | ConfigError::UsedGpusUnknownParameter { path, .. }
            | ConfigError::UsedGpusNotInteger { path, .. }
            | ConfigError::UsedGpusOverBudget { path, .. }
            | ConfigError::EvaluatorKind { path, .. }
            | ConfigError::PersistentWithoutCommand { path }
            | ConfigError::SlurmConflict { path, .. }
            | ConfigError::SlurmReservedArg { path, .. }
            | ConfigError::SlurmBadArg { path, .. }
            | ConfigError::UnknownAlgorithm { path, .. }
            | ConfigError::UnknownSchedule { path, .. }
            | ConfigError::Topology { path, .. }
            | ConfigError::NestingTooDeep { path, .. } => Some(path),
        }
    }

    /// A short stable name of the rule that fired (`"sla_missing"`, `"kv_range_order"`), for
    /// programs and tests.
    pub fn rule(&self) -> &'static str {
        match self {
            ConfigError::Io { .. } => "io",
            ConfigError::Syntax { .. } => "syntax",
            ConfigError::Structure { .. } => "structure",
            ConfigError::NestingTooDeep { .. } => "nesting_too_deep",
            ConfigError::DuplicateKey { .. } => "duplicate_key",
            ConfigError::UnknownKey { .. } => "unknown_key",
            ConfigError::WrongType { .. } => "wrong_type",
            ConfigError::NotFinite { .. } => "not_finite",
            ConfigError::OutOfRange { .. } => "out_of_range",
            ConfigError::UnknownTarget { .. } => "unknown_target",
            ConfigError::ParetoObjectivesNeedParetoTarget { .. } => {
                "pareto_objectives_need_pareto_target"
            }
            ConfigError::TooFewParetoObjectives { .. } => "too_few_pareto_objectives",
            ConfigError::DuplicateParetoObjective { .. } => "duplicate_pareto_objective",
            ConfigError::ParetoInParetoObjectives { .. } => "pareto_in_pareto_objectives",
            ConfigError::SlaMissing { .. } => "sla_missing",
            ConfigError::SlaIncomplete { .. } => "sla_incomplete",
            ConfigError::MinGoodputNeedsMinGpus { .. } => "min_goodput_needs_min_gpus",
            ConfigError::MinGpusNeedsFloor { .. } => "min_gpus_needs_floor",
            ConfigError::SlaEmpty { .. } => "sla_empty",
            ConfigError::StrictSlaNeedsSla { .. } => "strict_sla_needs_sla",
            ConfigError::NotAParetoObjective { .. } => "not_a_pareto_objective",
            ConfigError::CostNeedsPrice { .. } => "cost_needs_price",
            ConfigError::PriceMissingGpu { .. } => "price_missing_gpu",
            ConfigError::WorkloadMixed { .. } => "workload_mixed",
            ConfigError::ReplayConcurrencyNeedsTrace { .. } => "replay_concurrency_needs_trace",
            ConfigError::MissingField { .. } => "missing_field",
            ConfigError::WorkloadShapeMissing { .. } => "workload_shape_missing",
            ConfigError::MultipleLoads { .. } => "multiple_loads",
            ConfigError::LoadMissing { .. } => "load_missing",
            ConfigError::LoadFixedAndSearched { .. } => "load_fixed_and_searched",
            ConfigError::LoadParameter { .. } => "load_parameter",
            ConfigError::KvRangeLength { .. } => "kv_range_length",
            ConfigError::KvRangeOrder { .. } => "kv_range_order",
            ConfigError::KvRangeNeedsPareto { .. } => "kv_range_needs_pareto",
            ConfigError::ParameterKind { .. } => "parameter_kind",
            ConfigError::EmptyList { .. } => "empty_list",
            ConfigError::DuplicateValue { .. } => "duplicate_value",
            ConfigError::RangeLength { .. } => "range_length",
            ConfigError::RangeBounds { .. } => "range_bounds",
            ConfigError::LogScale { .. } => "log_scale",
            ConfigError::LogNotApplicable { .. } => "log_not_applicable",
            ConfigError::ReservedParameter { .. } => "reserved_parameter",
            ConfigError::UsedGpusUnknownParameter { .. } => "used_gpus_unknown_parameter",
            ConfigError::UsedGpusNotInteger { .. } => "used_gpus_not_integer",
            ConfigError::UsedGpusOverBudget { .. } => "used_gpus_over_budget",
            ConfigError::EvaluatorKind { .. } => "evaluator_kind",
            ConfigError::PersistentWithoutCommand { .. } => "persistent_without_command",
            ConfigError::SlurmConflict { .. } => "slurm_conflict",
            ConfigError::SlurmReservedArg { .. } => "slurm_reserved_arg",
            ConfigError::SlurmBadArg { .. } => "slurm_bad_arg",
            ConfigError::UnknownAlgorithm { .. } => "unknown_algorithm",
            ConfigError::UnknownSchedule { .. } => "unknown_schedule",
            ConfigError::Topology { .. } => "topology",
        }
    }

    /// `(line, column)` of the error, 1-based, when the parser reported it.
    pub fn location(&self) -> Option<(usize, usize)> {
        match self {
            ConfigError::Syntax { location, .. }
            | ConfigError::Structure { location, .. }
            | ConfigError::UnknownKey { location, .. } => location.map(|l| (l.line, l.column)),
            ConfigError::NestingTooDeep { location, .. } => Some((location.line, location.column)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_and_syntax_have_no_path() {
        let io = ConfigError::Io {
            path: PathBuf::from("x.yaml"),
            source: std::io::Error::from(std::io::ErrorKind::NotFound).into(),
        };
        assert_eq!(io.path(), None);
        assert_eq!(io.rule(), "io");
        assert!(std::error::Error::source(&io).is_some());
        assert_eq!(io.clone(), io);
        let syntax = ConfigError::Syntax {
            message: "bad".into(),
            location: Some(Location { line: 2, column: 5 }),
        };
        assert_eq!(syntax.path(), None);
        assert_eq!(syntax.location(), Some((2, 5)));
        assert_eq!(
            syntax.to_string(),
            "invalid YAML/JSON (line 2, column 5): bad"
        );
    }

    #[test]
    fn messages_are_lowercase_without_a_period() {
        let e = ConfigError::KvRangeOrder {
            path: "workload.kv_load_ratio".into(),
            min: 1.0,
            max: 0.5,
        };
        let m = e.to_string();
        assert!(
            m.starts_with("workload.kv_load_ratio: range [1, 0.5]"),
            "{m}"
        );
        assert!(!m.ends_with('.'));
        assert_eq!(e.path(), Some("workload.kv_load_ratio"));
    }
}
