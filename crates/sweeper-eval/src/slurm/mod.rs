//! The Slurm executor: each evaluation of a command evaluator is one batch job.
//!
//! The protocol is the one-shot protocol of [`CommandEvaluator`](super::CommandEvaluator),
//! carried by files instead of pipes; see [`SlurmEvaluator`].

mod queue;
mod script;

use super::process::{MAX_STDOUT_BYTES, REASON_LINES, STDERR_KEEP_BYTES, last_lines};
use super::spec::{EXIT_INFEASIBLE, EXIT_UNSUPPORTED, EvaluatorError, answer_outcome};
use super::{EvalContext, EvalOutcome, EvalRequest, Evaluator};
use queue::{Counters, Exit, JobEnd, Queue};
use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;
use sweeper_goal::SlurmConfig;

/// The prefix of the handles this evaluator gives the journal: `slurm:<job id>`.
const HANDLE_PREFIX: &str = "slurm:";

/// How a Slurm evaluator runs: the command, and the `slurm:` block of its config.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmSpec {
    /// The program and its arguments, run by the job script (never through a shell of
    /// sweeper's: each word is quoted into the script).
    pub argv: Vec<String>,
    /// Variables the job script exports (names of letters, digits and `_`).
    pub env: BTreeMap<String, String>,
    /// The job's working directory (`sbatch --chdir`), else the directory sweeper runs in.
    pub cwd: Option<PathBuf>,
    /// Where each trial's files go, `JOBS_DIR/<trial>/`; on a filesystem the compute nodes
    /// share. `sweeper run` uses `OUT/jobs`.
    pub jobs_dir: PathBuf,
    /// The `evaluator.slurm` block.
    pub slurm: SlurmConfig,
    /// `max_eval_seconds`: a job that has *run* longer (time pending in the queue does not
    /// count) is cancelled and its candidate timed out.
    pub timeout: Duration,
}

impl SlurmSpec {
    /// A spec for `argv` with jobs in `jobs_dir`, the default `slurm:` block and a 600 s
    /// limit.
    pub fn new(argv: Vec<String>, jobs_dir: impl Into<PathBuf>) -> SlurmSpec {
        SlurmSpec {
            argv,
            env: BTreeMap::new(),
            cwd: None,
            jobs_dir: jobs_dir.into(),
            slurm: SlurmConfig::default(),
            timeout: Duration::from_mins(10),
        }
    }

    /// The job's time limit in seconds: `slurm.time_limit`, else `max_eval_seconds` plus a
    /// minute, rounded up to whole minutes (so that sweeper's own cancel, which says why,
    /// normally comes first, and Slurm's limit still ends a job whose driver died); none
    /// past a year.
    pub fn time_limit(&self) -> Option<u64> {
        self.slurm.time_limit.or_else(|| {
            let whole = self
                .timeout
                .as_secs()
                .checked_add(u64::from(self.timeout.subsec_nanos() > 0))?;
            let seconds = whole.checked_add(60)?;
            let minutes = seconds.div_ceil(60);
            (minutes <= 365 * 24 * 60).then_some(minutes * 60)
        })
    }
}

/// The files of one trial's job, all in `JOBS_DIR/<trial>/`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JobFiles {
    /// The trial's directory.
    pub(crate) dir: PathBuf,
    /// The candidate's JSON (the job's stdin).
    pub(crate) candidate: PathBuf,
    /// The generated job script.
    pub(crate) script: PathBuf,
    /// The job's stdout: the report.
    pub(crate) stdout: PathBuf,
    /// The job's stderr.
    pub(crate) stderr: PathBuf,
    /// The exit code, written by the script when the command ends.
    pub(crate) exit_code: PathBuf,
    /// The job id, for people.
    pub(crate) job_id: PathBuf,
    /// Present when a Ctrl-C of sweeper cancelled the job: `--resume` submits it again.
    pub(crate) interrupted: PathBuf,
}

impl JobFiles {
    pub(crate) fn in_dir(dir: &Path) -> JobFiles {
        JobFiles {
            dir: dir.to_owned(),
            candidate: dir.join("candidate.json"),
            script: dir.join("job.sh"),
            stdout: dir.join("stdout"),
            stderr: dir.join("stderr"),
            exit_code: dir.join("exit_code"),
            job_id: dir.join("job_id"),
            interrupted: dir.join("interrupted"),
        }
    }

    fn exit_code_tmp(&self) -> PathBuf {
        self.dir.join("exit_code.tmp")
    }
}

/// Counts of what a [`SlurmEvaluator`] did, for overhead figures and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlurmStats {
    /// Jobs submitted (`sbatch` calls).
    pub submitted: u64,
    /// Jobs of an earlier run re-attached on `--resume`, not submitted again.
    pub reattached: u64,
    /// Polls of the queue.
    pub polls: u64,
    /// `squeue` calls: one per poll, for all the jobs watched.
    pub squeue_calls: u64,
    /// `scancel` calls (for jobs over `max_eval_seconds`, one per poll at most).
    pub scancel_calls: u64,
    /// `sacct` calls (only for jobs `squeue` no longer lists).
    pub sacct_calls: u64,
}

/// An [`Evaluator`] that runs each candidate as one Slurm batch job.
///
/// # What a job is
///
/// For trial `T` the evaluator writes, in `JOBS_DIR/T/`, `candidate.json` (the request, as
/// a one-shot command reads it on stdin) and `job.sh`, a few lines of POSIX sh generated
/// with every word single-quoted: it exports `env`, runs the command, writes the command's
/// exit code to `exit_code` and exits with it. It submits
/// `sbatch --parsable --job-name=... --input=candidate.json --output=stdout --error=stderr
/// [--chdir] [--partition] [--account] [--time] [GPUs] [sbatch_args...] job.sh`, arguments
/// as a vector, no shell. The candidate's `used_gpus` `N` become `--gpus=N` (or
/// `--gres=gpu:M` per node), with `--nodes=⌈N / gpus_per_node⌉` when `gpus_per_node` is
/// set; a candidate without GPUs asks for none.
///
/// # How it ends
///
/// The job's stdout file is the answer, judged as a one-shot command's: exit code 0 and a
/// report (or a status answer), [`EXIT_UNSUPPORTED`] (3) unsupported,
/// [`EXIT_INFEASIBLE`] (4) infeasible, any other code a failure quoting the last stderr
/// lines. A job that Slurm ended (`CANCELLED` by someone, `NODE_FAIL`, `OUT_OF_MEMORY`,
/// `PREEMPTED`, `BOOT_FAIL`, `DEADLINE`) is a failure with Slurm's state and reason; one that
/// hit its Slurm time limit (`TIMEOUT`) is timed out, as is one that has *run* longer than
/// `max_eval_seconds`, which sweeper cancels (`scancel`). Reasons carry no job id, so that
/// the summary counts alike failures as one; `JOBS_DIR/T/job_id` has it.
///
/// # Polling
///
/// Each evaluation blocks its worker thread; one poller thread per evaluator asks `squeue`
/// about all the jobs being waited for in **one** call per `poll_seconds`, and reads the
/// exit code file, then `sacct` (one call), only for jobs `squeue` no longer lists (after
/// the cluster's `MinJobAge`). A cluster without accounting works: the exit code file
/// stands in.
///
/// # Resume and interrupts
///
/// The job id reaches the journal through [`EvalContext::started`] (`slurm:<id>`). Under
/// `--resume`, a trial whose journal has a job id and no outcome is re-attached: a job still
/// pending or running is waited for, one that finished while sweeper was down is
/// collected; neither is submitted again. [`cancel_slurm_jobs`] (what a Ctrl-C or SIGTERM
/// handler calls) cancels every job this process is waiting for and marks it
/// `interrupted`, so that `--resume` submits those again instead of collecting a
/// cancellation. A driver killed in the instant between `sbatch`'s answer and the journal
/// line leaves that one job unknown to `--resume`, which submits its trial again.
pub struct SlurmEvaluator {
    spec: SlurmSpec,
    time_limit: Option<u64>,
    queue: Queue,
    counters: Arc<Counters>,
    submitted: AtomicU64,
    reattached: AtomicU64,
}

impl std::fmt::Debug for SlurmEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlurmEvaluator")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl SlurmEvaluator {
    /// Checks `spec` (a command, a positive limit, exportable `env` names, a jobs
    /// directory Slurm can name) and starts the poller thread, which sleeps until a job is
    /// submitted. A relative `jobs_dir` or `cwd` is made absolute against the current
    /// directory: the job runs elsewhere.
    pub fn new(mut spec: SlurmSpec) -> Result<SlurmEvaluator, EvaluatorError> {
        if spec.argv.first().is_none_or(String::is_empty) {
            return Err(EvaluatorError::EmptyCommand);
        }
        if spec.timeout.is_zero() {
            return Err(EvaluatorError::ZeroTimeout);
        }
        let slurm_err = |detail: String| EvaluatorError::Slurm { detail };
        if let Some(name) = spec.env.keys().find(|n| !script::is_shell_name(n)) {
            return Err(slurm_err(format!(
                "evaluator.env: {} is not a name a job script can export; use letters, digits and _, not starting with a digit",
                crate::text::quote(name)
            )));
        }
        let here = std::env::current_dir()
            .map_err(|e| slurm_err(format!("cannot read the current directory: {e}")))?;
        if spec.jobs_dir.is_relative() {
            spec.jobs_dir = here.join(&spec.jobs_dir);
        }
        if let Some(cwd) = &spec.cwd
            && cwd.is_relative()
        {
            spec.cwd = Some(here.join(cwd));
        }
        // The job script and sbatch's --input/--output/--error name these paths as text; a
        // lossy conversion would name other files and every trial would fail.
        for (what, path) in [
            ("jobs directory", Some(&spec.jobs_dir)),
            ("evaluator.cwd", spec.cwd.as_ref()),
        ] {
            if let Some(path) = path
                && path.to_str().is_none()
            {
                return Err(slurm_err(format!(
                    "the {what} {} is not valid UTF-8, and a Slurm job names its files as text; run from (and write the sweep's output to) a directory whose path is UTF-8",
                    crate::text::quote(&path.to_string_lossy())
                )));
            }
        }
        // sbatch expands %j, %u, ... in --input/--output/--error
        if spec.jobs_dir.to_string_lossy().contains('%') {
            return Err(slurm_err(format!(
                "the jobs directory {} holds a `%`, which Slurm reads as a file name pattern; choose an output directory without one",
                spec.jobs_dir.display()
            )));
        }
        let counters = Arc::new(Counters::default());
        let interval = Duration::from_secs_f64(spec.slurm.poll_seconds.max(0.01));
        let limit = (spec.timeout < Duration::from_secs(1 << 40)).then_some(spec.timeout);
        let queue = Queue::start(interval, limit, Arc::clone(&counters))
            .map_err(|e| slurm_err(format!("cannot start the thread that polls squeue: {e}")))?;
        Ok(SlurmEvaluator {
            time_limit: spec.time_limit(),
            spec,
            queue,
            counters,
            submitted: AtomicU64::new(0),
            reattached: AtomicU64::new(0),
        })
    }

    /// The spec this evaluator runs (paths made absolute).
    pub fn spec(&self) -> &SlurmSpec {
        &self.spec
    }

    /// What it did so far.
    pub fn stats(&self) -> SlurmStats {
        SlurmStats {
            submitted: self.submitted.load(Ordering::Relaxed),
            reattached: self.reattached.load(Ordering::Relaxed),
            polls: self.counters.polls.load(Ordering::Relaxed),
            squeue_calls: self.counters.squeue.load(Ordering::Relaxed),
            scancel_calls: self.counters.scancel.load(Ordering::Relaxed),
            sacct_calls: self.counters.sacct.load(Ordering::Relaxed),
        }
    }

    /// Writes the trial's files and submits its job: the job id.
    fn submit(&self, request: &EvalRequest, files: &JobFiles) -> Result<u64, String> {
        let io = |what: &str, path: &Path, e: std::io::Error| {
            format!("cannot write {what} {}: {e}", path.display())
        };
        // an earlier attempt's files (a job cancelled by a Ctrl-C) must not be read as this one's
        if files.dir.exists() {
            fs::remove_dir_all(&files.dir).map_err(|e| io("the job directory", &files.dir, e))?;
        }
        fs::create_dir_all(&files.dir).map_err(|e| io("the job directory", &files.dir, e))?;
        let mut candidate =
            serde_json::to_vec(request).map_err(|e| format!("cannot encode the candidate: {e}"))?;
        candidate.push(b'\n');
        fs::write(&files.candidate, candidate)
            .map_err(|e| io("the candidate", &files.candidate, e))?;
        let text = script::job_script(request.id, &self.spec.argv, &self.spec.env, files)?;
        fs::write(&files.script, text).map_err(|e| io("the job script", &files.script, e))?;
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(&files.script, fs::Permissions::from_mode(0o755));
        }
        let args = script::sbatch_args(
            &self.spec.slurm,
            self.time_limit,
            self.spec.cwd.as_deref(),
            request.used_gpus,
            files,
        );
        let id = {
            // A Ctrl-C handler holds the write side while it cancels: a job is either
            // submitted and registered before it looks, or never submitted.
            let _gate = SUBMIT_GATE.read().unwrap_or_else(PoisonError::into_inner);
            if STOPPING.load(Ordering::SeqCst) {
                return Err("sweeper is stopping: the job was not submitted".into());
            }
            self.submitted.fetch_add(1, Ordering::Relaxed);
            let out = queue::run_tool("sbatch", &args)?;
            if !out.status.success() {
                return Err(format!(
                    "sbatch refused the job: {}",
                    queue::tool_error("sbatch", &out)
                ));
            }
            let answer = String::from_utf8_lossy(&out.stdout);
            let id = answer
                .trim()
                .split(';')
                .next()
                .and_then(|id| id.trim().parse::<u64>().ok())
                .ok_or_else(|| {
                    format!(
                        "sbatch --parsable answered {}, not a job id",
                        crate::text::quote(answer.trim())
                    )
                })?;
            register(id, files);
            id
        };
        let _ = fs::write(&files.job_id, format!("{id}\n"));
        Ok(id)
    }

    /// The outcome of a job that ended as `end`.
    fn judge(&self, end: &JobEnd, files: &JobFiles) -> EvalOutcome {
        if end.over_limit.is_some() {
            return EvalOutcome::TimedOut(format!(
                "slurm job ran over the {:?} limit (max_eval_seconds) and was cancelled",
                self.spec.timeout
            ));
        }
        let from_script = queue::read_exit_file(&files.exit_code).map(Exit::Code);
        let why = if end.reason.is_empty() || end.reason == "None" {
            String::new()
        } else {
            format!(" ({})", end.reason)
        };
        // A command that exited 0 finished its work, whatever Slurm did to the job after.
        if from_script == Some(Exit::Code(0)) {
            return judge_exit(Exit::Code(0), &end.state, &why, files);
        }
        // Only a job that ended by itself is judged by its exit code: when Slurm ends a job
        // (a cancel, a time limit, a node failure) the script may still record the code its
        // killed command returned (143), which says nothing Slurm's state does not.
        if matches!(end.state.as_str(), "COMPLETED" | "FAILED")
            && let Some(exit) = from_script.or(end.exit)
        {
            return judge_exit(exit, &end.state, &why, files);
        }
        match end.state.as_str() {
            "TIMEOUT" => EvalOutcome::TimedOut(format!(
                "slurm job TIMEOUT{why}: it ran over its Slurm time limit{}",
                self.time_limit
                    .map(|t| format!(" of {}", sweeper_goal::format_time_limit(t)))
                    .unwrap_or_default()
            )),
            state => EvalOutcome::Failed(format!("slurm job {state}{why}")),
        }
    }
}

/// The outcome of a job script that ended with `exit`.
fn judge_exit(exit: Exit, state: &str, why: &str, files: &JobFiles) -> EvalOutcome {
    let tail = || read_tail(&files.stderr).and_then(|t| last_lines(&t, REASON_LINES));
    let last = || read_tail(&files.stderr).and_then(|t| last_lines(&t, 1));
    match exit {
        Exit::Code(0) => match read_report(&files.stdout) {
            Ok(bytes) => answer_outcome(&bytes, tail()).0,
            Err(e) => EvalOutcome::Failed(e),
        },
        Exit::Code(EXIT_UNSUPPORTED) => EvalOutcome::Unsupported(last().unwrap_or_else(|| {
            format!("evaluator exited with code {EXIT_UNSUPPORTED} (unsupported) and no reason on stderr")
        })),
        Exit::Code(EXIT_INFEASIBLE) => EvalOutcome::Infeasible(last().unwrap_or_else(|| {
            format!("evaluator exited with code {EXIT_INFEASIBLE} (infeasible) and no reason on stderr")
        })),
        Exit::Code(code) => EvalOutcome::Failed(super::spec::with_tail(
            format!("slurm job {state}{why}: evaluator exited with code {code}"),
            tail(),
        )),
        Exit::Signal(signal) => EvalOutcome::Failed(format!(
            "slurm job {state}{why}: the job script was killed by signal {signal}"
        )),
    }
}

/// The report in a job's stdout file, at most [`MAX_STDOUT_BYTES`].
fn read_report(path: &Path) -> Result<Vec<u8>, String> {
    let file = fs::File::open(path)
        .map_err(|e| format!("cannot read the job's stdout {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_STDOUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the job's stdout {}: {e}", path.display()))?;
    if bytes.len() > MAX_STDOUT_BYTES {
        return Err(format!(
            "evaluator printed more than {} MiB on stdout",
            MAX_STDOUT_BYTES >> 20
        ));
    }
    Ok(bytes)
}

/// The last bytes of a job's stderr file.
fn read_tail(path: &Path) -> Option<Vec<u8>> {
    let mut file = fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let keep = STDERR_KEEP_BYTES as u64;
    if len > keep {
        file.seek(SeekFrom::Start(len - keep)).ok()?;
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// The job id of a handle this evaluator gave, if it is one.
fn job_of(handle: &str) -> Option<u64> {
    handle.strip_prefix(HANDLE_PREFIX)?.parse().ok()
}

impl Evaluator for SlurmEvaluator {
    fn evaluate(&self, worker: usize, request: &EvalRequest) -> EvalOutcome {
        self.evaluate_with(worker, request, &EvalContext::detached())
    }

    fn evaluate_with(
        &self,
        _worker: usize,
        request: &EvalRequest,
        context: &EvalContext<'_>,
    ) -> EvalOutcome {
        let files = JobFiles::in_dir(&self.spec.jobs_dir.join(request.id.to_string()));
        let earlier = context
            .resumed()
            .and_then(job_of)
            .filter(|_| !files.interrupted.exists());
        let id = if let Some(id) = earlier {
            // registered under the gate too, so that a Ctrl-C now cancels it as well
            let _gate = SUBMIT_GATE.read().unwrap_or_else(PoisonError::into_inner);
            self.reattached.fetch_add(1, Ordering::Relaxed);
            register(id, &files);
            id
        } else {
            match self.submit(request, &files) {
                Ok(id) => {
                    context.started(&format!("{HANDLE_PREFIX}{id}"));
                    id
                }
                Err(reason) => return EvalOutcome::Failed(reason),
            }
        };
        let ended = self.queue.watch(id, files.exit_code.clone()).recv();
        unregister(id);
        match ended {
            Ok(end) => self.judge(&end, &files),
            Err(_) => EvalOutcome::Failed("sweeper stopped watching the slurm job".into()),
        }
    }
}

/// Held for reading while a job is submitted and registered, for writing while
/// [`cancel_slurm_jobs`] cancels.
static SUBMIT_GATE: RwLock<()> = RwLock::new(());

/// Set by [`cancel_slurm_jobs`]: nothing is submitted any more.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// The jobs this process waits for, with their `interrupted` marker files.
static LIVE_JOBS: Mutex<BTreeMap<u64, PathBuf>> = Mutex::new(BTreeMap::new());

fn register(id: u64, files: &JobFiles) {
    LIVE_JOBS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id, files.interrupted.clone());
}

fn unregister(id: u64) {
    LIVE_JOBS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&id);
}

/// Cancels every Slurm job this process is waiting for (one `scancel` call), after marking
/// each `interrupted` so that `--resume` submits it again, and stops further submissions;
/// returns the job ids. A binary's Ctrl-C / SIGTERM handler calls it (beside
/// [`kill_running_evaluators`](super::kill_running_evaluators)) before it exits: batch jobs
/// are not sweeper's children and would run on. Waits for a submission in flight to
/// register its job first, so none escapes.
pub fn cancel_slurm_jobs() -> Result<Vec<u64>, String> {
    let _gate = SUBMIT_GATE.write().unwrap_or_else(PoisonError::into_inner);
    STOPPING.store(true, Ordering::SeqCst);
    let jobs: BTreeMap<u64, PathBuf> = LIVE_JOBS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    for marker in jobs.values() {
        let _ = fs::write(
            marker,
            "cancelled by an interrupted sweeper; --resume submits it again\n",
        );
    }
    let ids: Vec<u64> = jobs.keys().copied().collect();
    queue::scancel(&ids).map(|()| ids)
}

/// Lets this process submit again after [`cancel_slurm_jobs`]: for a process that goes on
/// after an interrupted sweep (a library's caller, the Python bindings), so that its next
/// sweep can use the cluster. Call it only once the interrupted sweep has returned.
pub fn resume_slurm_submissions() {
    let _gate = SUBMIT_GATE.write().unwrap_or_else(PoisonError::into_inner);
    STOPPING.store(false, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evaluator(dir: &Path) -> SlurmEvaluator {
        let spec = SlurmSpec::new(vec!["./eval".into()], dir.join("jobs"));
        SlurmEvaluator::new(spec).unwrap()
    }

    fn end(state: &str, reason: &str, exit: Option<Exit>) -> JobEnd {
        JobEnd {
            state: state.into(),
            reason: reason.into(),
            exit,
            over_limit: None,
        }
    }

    #[test]
    fn every_way_a_job_ends_has_its_outcome() {
        let dir = tempfile::tempdir().unwrap();
        let ev = evaluator(dir.path());
        let files = JobFiles::in_dir(&dir.path().join("jobs/0"));
        fs::create_dir_all(&files.dir).unwrap();
        // Slurm's own limit (max_eval_seconds 600 + a minute)
        assert_eq!(
            ev.judge(&end("TIMEOUT", "TimeLimit", Some(Exit::Signal(15))), &files),
            EvalOutcome::TimedOut(
                "slurm job TIMEOUT (TimeLimit): it ran over its Slurm time limit of 00:11:00"
                    .into()
            )
        );
        assert_eq!(
            ev.judge(&end("OUT_OF_MEMORY", "OutOfMemory", None), &files),
            EvalOutcome::Failed("slurm job OUT_OF_MEMORY (OutOfMemory)".into())
        );
        assert_eq!(
            ev.judge(&end("PREEMPTED", "None", None), &files),
            EvalOutcome::Failed("slurm job PREEMPTED".into())
        );
        let over = JobEnd {
            over_limit: Some(Duration::from_secs(601)),
            ..end("CANCELLED", "None", Some(Exit::Signal(15)))
        };
        assert!(
            matches!(ev.judge(&over, &files), EvalOutcome::TimedOut(r) if r.contains("max_eval_seconds"))
        );
        // a script killed by a signal (a launch failure)
        assert_eq!(
            ev.judge(
                &end("FAILED", "JobLaunchFailure", Some(Exit::Signal(9))),
                &files
            ),
            EvalOutcome::Failed(
                "slurm job FAILED (JobLaunchFailure): the job script was killed by signal 9".into()
            )
        );
        // the exit code file decides over Slurm's word, and the stderr file gives the reason
        fs::write(&files.stderr, "warming up\nno such tp\n").unwrap();
        fs::write(&files.exit_code, "3\n").unwrap();
        assert_eq!(
            ev.judge(
                &end("FAILED", "NonZeroExitCode", Some(Exit::Code(3))),
                &files
            ),
            EvalOutcome::Unsupported("no such tp".into())
        );
        fs::write(&files.exit_code, "0\n").unwrap();
        fs::write(&files.stdout, "{\"output_throughput_tok_s\": 5}\n").unwrap();
        let EvalOutcome::Report(report) = ev.judge(&end("COMPLETED", "None", None), &files) else {
            panic!("a report");
        };
        assert_eq!(report["output_throughput_tok_s"], 5.0);
        fs::write(&files.stdout, "not json").unwrap();
        assert!(matches!(
            ev.judge(&end("COMPLETED", "None", None), &files),
            EvalOutcome::Failed(_)
        ));
        // a job Slurm ended is Slurm's verdict, even if the script saw its command killed...
        fs::write(&files.exit_code, "143\n").unwrap();
        assert_eq!(
            ev.judge(&end("NODE_FAIL", "NodeDown", Some(Exit::Code(143))), &files),
            EvalOutcome::Failed("slurm job NODE_FAIL (NodeDown)".into())
        );
        assert_eq!(
            ev.judge(&end("CANCELLED", "None", Some(Exit::Code(143))), &files),
            EvalOutcome::Failed("slurm job CANCELLED".into())
        );
        // ...unless the command had finished: then its report counts
        fs::write(&files.exit_code, "0\n").unwrap();
        fs::write(&files.stdout, "{\"output_throughput_tok_s\": 6}\n").unwrap();
        assert!(matches!(
            ev.judge(&end("CANCELLED", "None", Some(Exit::Signal(15))), &files),
            EvalOutcome::Report(r) if r["output_throughput_tok_s"] == 6.0
        ));
        fs::remove_file(&files.exit_code).unwrap();
        assert_eq!(
            ev.judge(&end("FAILED", "NonZeroExitCode", Some(Exit::Code(7))), &files),
            EvalOutcome::Failed(
                "slurm job FAILED (NonZeroExitCode): evaluator exited with code 7: warming up | no such tp"
                    .into()
            )
        );
    }

    #[test]
    fn handles_name_their_job() {
        assert_eq!(job_of("slurm:1234"), Some(1234));
        assert_eq!(job_of("slurm:x"), None);
        assert_eq!(job_of("pid:12"), None);
    }

    #[test]
    fn the_default_time_limit_leaves_sweeper_the_first_word() {
        let mut spec = SlurmSpec::new(vec!["x".into()], "/j");
        spec.timeout = Duration::from_mins(10);
        assert_eq!(spec.time_limit(), Some(660));
        spec.timeout = Duration::from_secs_f64(0.5);
        assert_eq!(spec.time_limit(), Some(120));
        spec.timeout = Duration::MAX;
        assert_eq!(spec.time_limit(), None);
        spec.slurm.time_limit = Some(42);
        assert_eq!(spec.time_limit(), Some(42));
    }

    #[test]
    fn a_jobs_directory_slurm_would_misread_is_refused() {
        let err = SlurmEvaluator::new(SlurmSpec::new(vec!["x".into()], "/out%j/jobs"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`%`"), "{err}");
        let mut spec = SlurmSpec::new(vec!["x".into()], "/out/jobs");
        spec.env.insert("NOT-A-NAME".into(), "1".into());
        let err = SlurmEvaluator::new(spec).unwrap_err().to_string();
        assert!(
            err.starts_with("evaluator.slurm: evaluator.env: `NOT-A-NAME`"),
            "{err}"
        );
    }
}
