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

/// Long options of `sbatch` that take a value for certain: the next argument is their
/// value, not an option. Every other option is read as taking a value only when attached
/// (`--exclusive=user`), so that the argument after it is checked as an option of its own
/// (an option whose table entry is not known for sure is read this way too).
const VALUE_OPTIONS: &[&str] = &[
    "account",
    "acctg-freq",
    "array",
    "bb",
    "bbf",
    "begin",
    "chdir",
    "clusters",
    "comment",
    "constraint",
    "container",
    "core-spec",
    "cores-per-socket",
    "cpu-freq",
    "cpus-per-gpu",
    "cpus-per-task",
    "deadline",
    "delay-boot",
    "dependency",
    "distribution",
    "error",
    "exclude",
    "export",
    "export-file",
    "extra-node-info",
    "gid",
    "gpu-bind",
    "gpu-freq",
    "gpus",
    "gpus-per-node",
    "gpus-per-socket",
    "gpus-per-task",
    "gres",
    "gres-flags",
    "hint",
    "input",
    "job-name",
    "licenses",
    "mail-type",
    "mail-user",
    "mcs-label",
    "mem",
    "mem-bind",
    "mem-per-cpu",
    "mem-per-gpu",
    "mincpus",
    "network",
    "nodefile",
    "nodelist",
    "nodes",
    "ntasks",
    "ntasks-per-core",
    "ntasks-per-gpu",
    "ntasks-per-node",
    "ntasks-per-socket",
    "open-mode",
    "output",
    "partition",
    "power",
    "prefer",
    "priority",
    "profile",
    "qos",
    "reservation",
    "signal",
    "sockets-per-node",
    "switches",
    "thread-spec",
    "threads-per-core",
    "time",
    "time-min",
    "tmp",
    "tres-per-task",
    "uid",
    "wckey",
    "wrap",
];

/// The other long options of `sbatch` that sweeper knows of, so that an abbreviation of
/// any known option is recognised as one.
const OTHER_OPTIONS: &[&str] = &[
    "batch",
    "cluster-constraint",
    "container-id",
    "contiguous",
    "exclusive",
    "extra",
    "get-user-env",
    "help",
    "hold",
    "ignore-pbs",
    "kill-on-invalid-dep",
    "nice",
    "no-kill",
    "no-requeue",
    "oom-kill-step",
    "overcommit",
    "oversubscribe",
    "parsable",
    "propagate",
    "quiet",
    "reboot",
    "requeue",
    "segment",
    "spread-job",
    "stepmgr",
    "test-only",
    "tres-bind",
    "tres-per-job",
    "tres-per-node",
    "tres-per-socket",
    "usage",
    "use-min-nodes",
    "verbose",
    "version",
    "wait",
    "wait-all-nodes",
];

/// Options that are not sweeper's to set but would still defeat a run, and why.
const REFUSED: [(&str, &str); 5] = [
    ("--test-only", "sbatch then submits no job"),
    ("--help", "sbatch then prints its help and submits no job"),
    ("--usage", "sbatch then prints its usage and submits no job"),
    (
        "--version",
        "sbatch then prints its version and submits no job",
    ),
    (
        "--open-mode",
        "the job's output files are sweeper's, written afresh for each job",
    ),
];

/// Short options of `sbatch`: the letter, its long name, and whether it takes a value.
const SHORT_OPTIONS: &[(char, &str, bool)] = &[
    ('A', "--account", true),
    ('a', "--array", true),
    ('B', "--extra-node-info", true),
    ('b', "--begin", true),
    ('C', "--constraint", true),
    ('c', "--cpus-per-task", true),
    ('D', "--chdir", true),
    ('d', "--dependency", true),
    ('e', "--error", true),
    ('F', "--nodefile", true),
    ('G', "--gpus", true),
    ('H', "--hold", false),
    ('h', "--help", false),
    ('i', "--input", true),
    ('J', "--job-name", true),
    // `-k[VALUE]` takes a value only when attached; read as taking none, the rest of a
    // cluster after it is checked as options (at worst a harmless option is refused)
    ('k', "--no-kill", false),
    ('L', "--licenses", true),
    ('M', "--clusters", true),
    ('m', "--distribution", true),
    ('N', "--nodes", true),
    ('n', "--ntasks", true),
    ('O', "--overcommit", false),
    ('o', "--output", true),
    ('p', "--partition", true),
    ('Q', "--quiet", false),
    ('q', "--qos", true),
    ('S', "--core-spec", true),
    ('s', "--oversubscribe", false),
    ('t', "--time", true),
    ('u', "--usage", false),
    ('V', "--version", false),
    ('v', "--verbose", false),
    ('W', "--wait", false),
    ('w', "--nodelist", true),
    ('x', "--exclude", true),
];

/// Why the option `long` (full name, with its value when given) may not be passed.
fn refused_option(long: &str, value: Option<&str>, gpus_per_node: bool) -> Option<String> {
    if let Some((_, _, why)) = RESERVED.iter().find(|(name, _, _)| *name == long) {
        return Some((*why).to_owned());
    }
    if let Some((_, why)) = REFUSED.iter().find(|(name, _)| *name == long) {
        return Some((*why).to_owned());
    }
    let gpu_value = value.is_some_and(|v| v.to_ascii_lowercase().contains("gpu"));
    if (long == "--gres" || long.starts_with("--tres-per-")) && gpu_value {
        return Some("a candidate's used_gpus are its job's GPUs".to_owned());
    }
    if long == "--nodes" && gpus_per_node {
        return Some("with gpus_per_node the node count follows from used_gpus".to_owned());
    }
    None
}

/// Every long option name sweeper knows, without the dashes.
fn known_long() -> impl Iterator<Item = &'static str> {
    VALUE_OPTIONS
        .iter()
        .chain(OTHER_OPTIONS)
        .copied()
        .chain(RESERVED.iter().map(|(name, _, _)| &name[2..]))
        .chain(REFUSED.iter().map(|(name, _)| &name[2..]))
}

/// A refused entry of `sbatch_args`: which entry and why, in words that say what to do.
struct Refusal {
    index: usize,
    /// Sweeper sets the option itself (else: it is malformed or unsafe).
    reserved: bool,
    why: String,
}

/// Reads `args` as `sbatch`'s `getopt_long` would (unique prefixes of long options, values
/// attached or in the next argument, clusters of short options with the value of the last
/// one attached) and refuses every option that sweeper sets itself, whatever its spelling,
/// every argument that is not an option (sbatch would take it as the job script) and `--`.
/// A long option that sweeper does not know (a SPANK plugin's, such as
/// `--container-image`) passes when written in full; it cannot take the next argument as
/// its value, so a value goes after `=`.
fn check_sbatch_args(args: &[String], gpus_per_node: bool) -> Result<(), Refusal> {
    let refuse = |index: usize, reserved: bool, why: String| Refusal {
        index,
        reserved,
        why,
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            return Err(refuse(
                i,
                false,
                "`--` ends sbatch's options, and it would read the next argument as the job script, which sweeper writes; remove it".to_owned(),
            ));
        }
        if let Some(body) = arg.strip_prefix("--") {
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            let exact = known_long().any(|k| k == name);
            let full = if exact {
                name.to_owned()
            } else {
                let mut expansions: Vec<&str> =
                    known_long().filter(|k| k.starts_with(name)).collect();
                expansions.sort_unstable();
                expansions.dedup();
                if expansions.is_empty() {
                    // not an option sweeper knows: a plugin's, or one sbatch refuses itself
                    i += 1;
                    continue;
                }
                let reserved: Vec<String> = expansions
                    .iter()
                    .map(|k| format!("--{k}"))
                    .filter(|k| refused_option(k, value, gpus_per_node).is_some())
                    .collect();
                if let Some(first) = reserved.first() {
                    let why = refused_option(first, value, gpus_per_node).unwrap_or_default();
                    return Err(refuse(
                        i,
                        true,
                        format!("sbatch reads --{name} as an abbreviation of {first}: {why}"),
                    ));
                }
                let list: Vec<String> = expansions.iter().map(|k| format!("--{k}")).collect();
                return Err(refuse(
                    i,
                    false,
                    format!(
                        "--{name} is an abbreviation (of {}); write the option in full",
                        list.join(" or ")
                    ),
                ));
            };
            let long = format!("--{full}");
            let takes_next = value.is_none() && VALUE_OPTIONS.contains(&full.as_str());
            let value = if takes_next {
                args.get(i + 1).map(String::as_str)
            } else {
                value
            };
            if let Some(why) = refused_option(&long, value, gpus_per_node) {
                let reserved = RESERVED.iter().any(|(n, _, _)| *n == long)
                    || long == "--gres"
                    || long.starts_with("--tres-per-")
                    || long == "--nodes";
                return Err(refuse(i, reserved, why));
            }
            if takes_next && value.is_none() {
                return Err(refuse(
                    i,
                    false,
                    format!("{long} needs a value; write {long}=VALUE"),
                ));
            }
            i += if takes_next { 2 } else { 1 };
            continue;
        }
        let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
            return Err(refuse(
                i,
                false,
                "sbatch takes the first argument that is not an option as the job script, which sweeper writes; attach a value to its option (--constraint=h100) or put it right after it".to_owned(),
            ));
        };
        let mut consumed_next = false;
        for (at, c) in cluster.char_indices() {
            let Some((_, long, takes_value)) = SHORT_OPTIONS.iter().find(|(s, _, _)| *s == c)
            else {
                return Err(refuse(
                    i,
                    false,
                    format!("-{c} is not an sbatch option that sweeper knows; write the long form"),
                ));
            };
            let rest = &cluster[at + c.len_utf8()..];
            let value = match (takes_value, rest.is_empty()) {
                (true, false) => Some(rest),
                (true, true) => {
                    consumed_next = true;
                    args.get(i + 1).map(String::as_str)
                }
                (false, _) => None,
            };
            if let Some(why) = refused_option(long, value, gpus_per_node) {
                let how = if cluster.chars().count() > 1 {
                    format!("sbatch reads -{c} in {arg} as {long}: {why}")
                } else {
                    why
                };
                let reserved = RESERVED.iter().any(|(n, _, _)| n == long) || *long == "--nodes";
                return Err(refuse(i, reserved, how));
            }
            if *takes_value {
                if value.is_none() {
                    return Err(refuse(
                        i,
                        false,
                        format!("-{c} needs a value; write -{c}VALUE"),
                    ));
                }
                break;
            }
        }
        i += if consumed_next { 2 } else { 1 };
    }
    Ok(())
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
            sbatch_args.push(arg);
        }
        if let Err(r) = check_sbatch_args(&sbatch_args, gpus_per_node.is_some()) {
            let path = raw::index(&path, r.index);
            let arg = sbatch_args.swap_remove(r.index);
            return Err(if r.reserved {
                ConfigError::SlurmReservedArg {
                    path,
                    arg,
                    why: r.why,
                }
            } else {
                ConfigError::SlurmBadArg {
                    path,
                    arg,
                    why: r.why,
                }
            });
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

    /// The index and kind of the refused entry, if any.
    fn refused(args: &[&str], gpus_per_node: bool) -> Option<(usize, bool)> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        check_sbatch_args(&args, gpus_per_node)
            .err()
            .map(|r| (r.index, r.reserved))
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
            assert_eq!(refused(&[arg, "v"], false), Some((0, true)), "{arg}");
        }
        for args in [
            &["--exclusive"][..],
            &["--constraint=h100"],
            &["--gres=nvme:1"],
            &["--nodes=2"],
            &["-N2"],
            &["-N", "2"],
            &["--constraint", "h100", "--exclusive"],
            &["-C", "h100"],
            &["-Ch100"],
            &["-vQ"],
            &["--comment", "--output=/x"],
            &["--container-image=/shared/bench.sqsh"],
            &["--no-requeue"],
        ] {
            assert_eq!(refused(args, false), None, "{args:?}");
        }
        assert!(refused(&["--nodes=2"], true).is_some());
        assert!(refused(&["-N2"], true).is_some());
        assert!(refused(&["-N", "2"], true).is_some());
    }

    #[test]
    fn abbreviations_and_clusters_resolve_as_getopt_reads_them() {
        // issue 30, item 8: each of these reached sbatch before
        for (args, at) in [
            (&["--outp=/x"][..], 0),
            (&["--arr=0-99"], 0),
            (&["--chd=/"], 0),
            (&["--wai"], 0),
            (&["-vo/x"], 0),
            (&["-Qa0-99"], 0),
            (&["-v", "-o", "/x"], 1),
            (&["--exclusive", "-Wv"], 1),
            (&["--tres-per-job=gres/gpu:64"], 0),
            (&["--tres-per-task", "gres/gpu:1"], 0),
            (&["--gres", "gpu:8"], 0),
            (&["--gpus-per-n=8"], 0),
        ] {
            assert_eq!(refused(args, false), Some((at, true)), "{args:?}");
        }
    }

    #[test]
    fn words_that_sbatch_would_take_as_the_script_are_refused() {
        for (args, at) in [
            (&["job.sh"][..], 0),
            (&["--exclusive", "h100"], 1),
            (&["--"], 0),
            (&["--", "--exclusive"], 0),
            (&["-"], 0),
            (&["--constraint"], 0),
            (&["-C"], 0),
            (&["--exc"], 0),
            (&["--test-only"], 0),
            (&["-h"], 0),
            (&["-Z"], 0),
        ] {
            assert_eq!(refused(args, false), Some((at, false)), "{args:?}");
        }
    }
}
