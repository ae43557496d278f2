//! The `evaluator.slurm:` block: run each evaluation of a command evaluator as one Slurm
//! batch job. What it means at run time (the job script, polling, resume) is the cli
//! crate's; here it is only checked.

use crate::error::ConfigError;
use crate::raw::{self, RawSlurm, RawValue};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// How a job asks for its GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GpuFlag {
    /// `--gpus=N` (the job's total; Slurm spreads it over the job's nodes).
    #[default]
    Gpus,
    /// `--gres=gpu:M`, `M` per node (for clusters configured for GRES only).
    Gres,
}

impl GpuFlag {
    /// The name used in configs (`gpus`, `gres`).
    pub fn name(self) -> &'static str {
        match self {
            GpuFlag::Gpus => "gpus",
            GpuFlag::Gres => "gres",
        }
    }
}

/// The default of [`SlurmConfig::poll_seconds`]: one `squeue` call every 5 s for all the
/// jobs of a sweep.
pub const DEFAULT_POLL_SECONDS: f64 = 5.0;

/// The validated `evaluator.slurm:` block.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmConfig {
    /// `--partition`.
    pub partition: Option<String>,
    /// `--account`.
    pub account: Option<String>,
    /// The job's time limit in seconds (`--time`); `None`: derived from `max_eval_seconds`.
    pub time_limit: Option<u64>,
    /// `--job-name` [default: `sweeper`].
    pub job_name: Option<String>,
    /// GPUs per node: a candidate of `N` GPUs asks for `⌈N / gpus_per_node⌉` nodes; `None`
    /// asks for no node count.
    pub gpus_per_node: Option<u64>,
    /// `--gpus` or `--gres=gpu:`.
    pub gpu_flag: GpuFlag,
    /// A GPU type (`h100`): `--gpus=h100:N`, `--gres=gpu:h100:M`.
    pub gpu_type: Option<String>,
    /// More `sbatch` arguments, passed as written (no shell).
    pub sbatch_args: Vec<String>,
    /// Seconds between two polls of the queue; `> 0`, default [`DEFAULT_POLL_SECONDS`].
    pub poll_seconds: f64,
}

impl Default for SlurmConfig {
    fn default() -> SlurmConfig {
        SlurmConfig {
            partition: None,
            account: None,
            time_limit: None,
            job_name: None,
            gpus_per_node: None,
            gpu_flag: GpuFlag::Gpus,
            gpu_type: None,
            sbatch_args: Vec::new(),
            poll_seconds: DEFAULT_POLL_SECONDS,
        }
    }
}

impl Serialize for SlurmConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(p) = &self.partition {
            m.serialize_entry("partition", p)?;
        }
        if let Some(a) = &self.account {
            m.serialize_entry("account", a)?;
        }
        if let Some(t) = self.time_limit {
            m.serialize_entry("time_limit", &format_time_limit(t))?;
        }
        if let Some(j) = &self.job_name {
            m.serialize_entry("job_name", j)?;
        }
        if let Some(g) = self.gpus_per_node {
            m.serialize_entry("gpus_per_node", &g)?;
        }
        m.serialize_entry("gpu_flag", self.gpu_flag.name())?;
        if let Some(t) = &self.gpu_type {
            m.serialize_entry("gpu_type", t)?;
        }
        m.serialize_entry("sbatch_args", &self.sbatch_args)?;
        m.serialize_entry("poll_seconds", &self.poll_seconds)?;
        m.end()
    }
}

/// The longest time limit accepted: a year.
const MAX_TIME_LIMIT: u64 = 365 * 24 * 3600;

const TIME_FORMS: &str = "a Slurm time greater than zero: minutes (90), \"MM:SS\", \"HH:MM:SS\", \"D-HH\", \"D-HH:MM\" or \"D-HH:MM:SS\" (e.g. \"1-12:00:00\"), at most a year";

/// Seconds of a Slurm time as `--time` reads it: `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`,
/// `D-H:M:S`. `None` for anything else.
pub fn parse_time_limit(text: &str) -> Option<u64> {
    let num = |s: &str| -> Option<u64> {
        if s.is_empty() || s.len() > 9 || !s.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            s.parse().ok()
        }
    };
    let (days, rest) = match text.split_once('-') {
        Some((d, rest)) => (Some(num(d)?), rest),
        None => (None, text),
    };
    let parts: Vec<u64> = rest.split(':').map(num).collect::<Option<_>>()?;
    let seconds = match (days, parts.as_slice()) {
        (None, [m]) => m * 60,
        (None, [m, s]) => m * 60 + s,
        (None, [h, m, s]) => h * 3600 + m * 60 + s,
        (Some(d), [h]) => d * 86_400 + h * 3600,
        (Some(d), [h, m]) => d * 86_400 + h * 3600 + m * 60,
        (Some(d), [h, m, s]) => d * 86_400 + h * 3600 + m * 60 + s,
        _ => return None,
    };
    Some(seconds)
}

/// A time limit in seconds as `sbatch --time` takes it: `D-HH:MM:SS` (or `HH:MM:SS` under a
/// day), which [`parse_time_limit`] reads back.
pub fn format_time_limit(seconds: u64) -> String {
    let (d, rest) = (seconds / 86_400, seconds % 86_400);
    let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

/// A non-empty text without control characters (it becomes an `sbatch` argument).
fn text(v: &RawValue, path: &str, what: &str) -> Result<String, ConfigError> {
    let s = raw::string(v, path, what)?;
    if s.is_empty() || s.chars().any(char::is_control) {
        return Err(raw::out_of_range(
            path,
            v,
            &format!("{what}: a non-empty name without control characters"),
        ));
    }
    Ok(s.to_owned())
}

/// `sbatch` options that sweeper sets itself, and why; each matches `--long`, `--long=...`
/// and `-s`, `-sVALUE` (the short form).
const RESERVED: [(&str, Option<char>, &str); 17] = [
    (
        "--output",
        Some('o'),
        "the job's stdout is its report, kept in the sweep's output directory",
    ),
    (
        "--error",
        Some('e'),
        "the job's stderr is kept in the sweep's output directory",
    ),
    ("--input", Some('i'), "the job reads its candidate on stdin"),
    (
        "--parsable",
        None,
        "sweeper reads the job id from sbatch's answer",
    ),
    ("--wrap", None, "sweeper writes the job script"),
    ("--chdir", Some('D'), "use evaluator.cwd"),
    ("--job-name", Some('J'), "use evaluator.slurm.job_name"),
    ("--partition", Some('p'), "use evaluator.slurm.partition"),
    ("--account", Some('A'), "use evaluator.slurm.account"),
    ("--time", Some('t'), "use evaluator.slurm.time_limit"),
    (
        "--gpus",
        Some('G'),
        "a candidate's used_gpus are its job's GPUs",
    ),
    (
        "--gpus-per-node",
        None,
        "a candidate's used_gpus are its job's GPUs",
    ),
    (
        "--gpus-per-task",
        None,
        "a candidate's used_gpus are its job's GPUs",
    ),
    (
        "--gpus-per-socket",
        None,
        "a candidate's used_gpus are its job's GPUs",
    ),
    (
        "--array",
        Some('a'),
        "one candidate is one job; see docs/large-sweeps.md for job arrays",
    ),
    ("--wait", Some('W'), "sweeper polls the queue itself"),
    (
        "--clusters",
        Some('M'),
        "sweeper polls the cluster its squeue talks to",
    ),
];

/// Why `arg` may not be in `sbatch_args`, when it may not.
fn reserved(arg: &str, gpus_per_node: bool) -> Option<String> {
    let is_long = |name: &str| arg == name || arg.starts_with(&format!("{name}="));
    for (long, short, why) in RESERVED {
        let short_hit = short.is_some_and(|c| {
            let mut chars = arg.chars();
            chars.next() == Some('-') && chars.next() == Some(c)
        });
        if is_long(long) || short_hit {
            return Some(why.to_owned());
        }
    }
    if is_long("--gres") && arg.contains("gpu") {
        return Some("a candidate's used_gpus are its job's GPUs".to_owned());
    }
    let nodes = is_long("--nodes") || arg.starts_with("-N");
    if gpus_per_node && nodes {
        return Some("with gpus_per_node the node count follows from used_gpus".to_owned());
    }
    None
}

/// Validates a raw `evaluator.slurm:` block.
pub(crate) fn from_raw(r: &RawSlurm) -> Result<SlurmConfig, ConfigError> {
    let p = |key: &str| format!("evaluator.slurm.{key}");
    let opt_text = |v: &Option<RawValue>, key: &str, what: &str| {
        v.as_ref().map(|v| text(v, &p(key), what)).transpose()
    };
    let partition = opt_text(&r.partition, "partition", "the partition to submit to")?;
    let account = opt_text(&r.account, "account", "the account to charge")?;
    let job_name = opt_text(&r.job_name, "job_name", "the name of every job")?;
    let gpu_type = opt_text(&r.gpu_type, "gpu_type", "the GPU type, e.g. h100")?;
    let time_limit = match &r.time_limit {
        None => None,
        Some(v) => {
            let path = p("time_limit");
            let seconds = match v {
                RawValue::Str(s) => parse_time_limit(s.trim()),
                RawValue::Int(_) | RawValue::Float(_) => raw::integer(v, &path, TIME_FORMS)
                    .ok()
                    .and_then(|m| u64::try_from(m).ok())
                    .and_then(|m| m.checked_mul(60)),
                _ => return Err(raw::out_of_range(&path, v, TIME_FORMS)),
            };
            match seconds {
                Some(s) if (1..=MAX_TIME_LIMIT).contains(&s) => Some(s),
                _ => return Err(raw::out_of_range(&path, v, TIME_FORMS)),
            }
        }
    };
    let gpus_per_node = r
        .gpus_per_node
        .as_ref()
        .map(|v| {
            raw::int_in(
                v,
                &p("gpus_per_node"),
                1,
                i128::from(u32::MAX),
                "an integer >= 1: the GPUs of one node, e.g. 8 (remove the key for jobs of one node)",
                "the GPUs of one node, e.g. 8",
            )
        })
        .transpose()?
        .map(|g| g as u64);
    let gpu_flag = match &r.gpu_flag {
        None => GpuFlag::Gpus,
        Some(v) => match raw::string(v, &p("gpu_flag"), "gpus or gres")? {
            "gpus" => GpuFlag::Gpus,
            "gres" => GpuFlag::Gres,
            _ => {
                return Err(raw::out_of_range(
                    &p("gpu_flag"),
                    v,
                    "gpus (`--gpus=N`, the default) or gres (`--gres=gpu:N` per node)",
                ));
            }
        },
    };
    let mut sbatch_args = Vec::new();
    if let Some(v) = &r.sbatch_args {
        let path = p("sbatch_args");
        let items = raw::seq(
            v,
            &path,
            "a list of sbatch arguments",
            "one argument per entry, never through a shell: `sbatch_args: [--exclusive, --constraint=h100]`",
        )?;
        for (i, item) in items.iter().enumerate() {
            let ip = raw::index(&path, i);
            let arg = match item {
                RawValue::Int(_) | RawValue::Float(_) => item.show(),
                _ => raw::string(item, &ip, "each argument is a string")?.to_owned(),
            };
            if arg.is_empty() || arg.contains('\0') {
                return Err(raw::out_of_range(
                    &ip,
                    item,
                    "an sbatch argument is non-empty, without NUL",
                ));
            }
            if let Some(why) = reserved(&arg, gpus_per_node.is_some()) {
                return Err(ConfigError::SlurmReservedArg { path: ip, arg, why });
            }
            sbatch_args.push(arg);
        }
    }
    let poll_seconds = match &r.poll_seconds {
        None => DEFAULT_POLL_SECONDS,
        Some(v) => {
            let path = p("poll_seconds");
            let expected = "seconds between two polls of the queue, at least 0.1 and at most 3600";
            let x = raw::finite(v, &path, expected)?;
            if !(0.1..=3600.0).contains(&x) {
                return Err(raw::out_of_range(&path, v, expected));
            }
            x
        }
    };
    Ok(SlurmConfig {
        partition,
        account,
        time_limit,
        job_name,
        gpus_per_node,
        gpu_flag,
        gpu_type,
        sbatch_args,
        poll_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_times_parse_as_sbatch_reads_them() {
        assert_eq!(parse_time_limit("90"), Some(5400));
        assert_eq!(parse_time_limit("5:30"), Some(330));
        assert_eq!(parse_time_limit("1:00:00"), Some(3600));
        assert_eq!(parse_time_limit("2-0"), Some(2 * 86_400));
        assert_eq!(parse_time_limit("1-2:30"), Some(86_400 + 2 * 3600 + 1800));
        assert_eq!(parse_time_limit("1-00:00:01"), Some(86_401));
        for bad in [
            "", "1h", "1:2:3:4", "-5", "1-", "1--2", " 5", "1-2-3", "1:", "+5",
        ] {
            assert_eq!(parse_time_limit(bad), None, "{bad:?}");
        }
        for s in [
            1,
            59,
            60,
            3599,
            3600,
            86_399,
            86_400,
            90_061,
            MAX_TIME_LIMIT,
        ] {
            assert_eq!(parse_time_limit(&format_time_limit(s)), Some(s), "{s}");
        }
        assert_eq!(format_time_limit(90_061), "1-01:01:01");
    }

    #[test]
    fn options_sweeper_sets_are_refused_in_every_spelling() {
        for arg in [
            "--output=x",
            "-o",
            "-ox.out",
            "--time",
            "-t10",
            "--gres=gpu:2",
            "--gpus-per-node=4",
            "--array=0-9",
        ] {
            assert!(reserved(arg, false).is_some(), "{arg}");
        }
        for arg in [
            "--exclusive",
            "--constraint=h100",
            "--gres=nvme:1",
            "--nodes=2",
            "-N2",
        ] {
            assert!(reserved(arg, false).is_none(), "{arg}");
        }
        assert!(reserved("--nodes=2", true).is_some());
        assert!(reserved("-N2", true).is_some());
    }
}
