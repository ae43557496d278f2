//! `sweeper.run`: the engine of `sweeper run` with a Python callable as its evaluator.
//!
//! The callable gets the candidate object of the command protocol (a dict: `id`,
//! `parameters`, `used_gpus`, `concurrency`, `kv_load_ratio`, `workload`, `sla`,
//! `planner_target`) and returns a report dict (metric name → number; strings are kept as
//! labels). Raising `sweeper.Infeasible` or `sweeper.Unsupported` gives those outcomes,
//! any other exception a failed evaluation with the exception as its reason. The engine
//! calls it from `parallel_evals` worker threads, each taking the GIL for the call: Python
//! code runs one call at a time, so evaluations overlap only where the callable releases
//! the GIL (a subprocess, I/O, numpy).

use crate::config::{self, Config};
use crate::score::candidate_dict;
use crate::{Infeasible, Unsupported, convert};
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;
use sweeper_engine::provider::ServingPlanner;
use sweeper_engine::{EvalOutcome, EvalRequest, Evaluator, RawReport};
use sweeper_engine::{FileJournal, RunError, RunResult, Sweeper};
use sweeper_eval::{evaluator_for, evaluator_in};
use sweeper_tables::{write_file_atomic, write_outputs};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    Ok(())
}

/// An evaluator around a Python callable.
struct PyEvaluator {
    callable: Py<PyAny>,
}

/// The exception as a reason: its message, or its type when it has none.
fn reason(py: Python<'_>, e: &PyErr) -> String {
    let message = e
        .value(py)
        .str()
        .map_or_else(|_| String::new(), |s| s.to_string());
    if message.is_empty() {
        e.get_type(py)
            .name()
            .map_or_else(|_| "exception".to_owned(), |n| n.to_string())
    } else {
        message
    }
}

impl Evaluator for PyEvaluator {
    fn evaluate(&self, _worker: usize, request: &EvalRequest) -> EvalOutcome {
        Python::attach(|py| {
            let candidate = match convert::to_py(py, &request.to_json()) {
                Ok(c) => c,
                Err(e) => return EvalOutcome::Failed(format!("cannot build the candidate: {e}")),
            };
            match self.callable.call1(py, (candidate,)) {
                Ok(report) => report_of(report.bind(py)),
                Err(e) if e.is_instance_of::<Infeasible>(py) => {
                    EvalOutcome::Infeasible(reason(py, &e))
                }
                Err(e) if e.is_instance_of::<Unsupported>(py) => {
                    EvalOutcome::Unsupported(reason(py, &e))
                }
                Err(e) => {
                    let kind = e
                        .get_type(py)
                        .name()
                        .map_or_else(|_| "an exception".to_owned(), |n| n.to_string());
                    EvalOutcome::Failed(format!("the evaluator raised {kind}: {}", reason(py, &e)))
                }
            }
        })
    }
}

/// A returned report: a dict of numbers (metrics) and strings (labels), read with the
/// journal's own reader, so a NaN or a nested value fails the evaluation as it would for
/// a command's report.
fn report_of(obj: &Bound<'_, PyAny>) -> EvalOutcome {
    let Ok(d) = obj.cast::<PyDict>() else {
        let kind = obj
            .get_type()
            .name()
            .map_or_else(|_| "?".to_owned(), |n| n.to_string());
        return EvalOutcome::Failed(format!(
            "the evaluator returned {kind}; return a dict of metric name -> number, e.g. {{\"output_throughput_tok_s\": 1250.0}}"
        ));
    };
    let value = match convert::dict_to_json(d, "report") {
        Ok(v) => serde_json::Value::Object(v),
        Err(e) => return EvalOutcome::Failed(format!("malformed report: {e}")),
    };
    match serde_json::from_value::<RawReport>(value) {
        Ok(report) => EvalOutcome::Report(report),
        Err(e) => EvalOutcome::Failed(format!("malformed report: {e}")),
    }
}

/// Waits for the engine's result on `rx` without the GIL, taking it every 50 ms to run
/// Python's signal handlers (the engine runs on another thread, and Python runs handlers
/// only on the main one, in its own code). On the first exception they raise (Ctrl-C's
/// `KeyboardInterrupt`) it sets `stop`, kills the evaluator processes and cancels the
/// Slurm jobs this process runs (as `sweeper run` does on Ctrl-C), and waits on for the
/// engine, which lets a Python callable's running call finish; that exception is returned
/// beside the engine's result.
fn wait_interruptible(
    py: Python<'_>,
    mut rx: mpsc::Receiver<Result<RunResult, RunError>>,
    stop: &AtomicBool,
) -> (Result<RunResult, RunError>, Option<PyErr>) {
    let mut interrupt = None;
    loop {
        let (back, got) = py.detach(move || {
            let got = rx.recv_timeout(Duration::from_millis(50));
            (rx, got)
        });
        rx = back;
        match got {
            Ok(result) => return (result, interrupt),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let lost =
                    RunError::Setup("internal: the sweep's thread ended without a result".into());
                return (Err(lost), interrupt);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if interrupt.is_none()
            && let Err(e) = py.check_signals()
        {
            stop.store(true, Ordering::SeqCst);
            #[cfg(unix)]
            {
                sweeper_eval::kill_running_evaluators();
                let _ = sweeper_eval::cancel_slurm_jobs();
            }
            interrupt = Some(e);
        }
    }
}

fn run_error(e: &RunError, out: Option<&PathBuf>) -> PyErr {
    match e {
        RunError::JournalExists { .. } => {
            let dir = out.map_or_else(|| ".".to_owned(), |p| p.display().to_string());
            PyOSError::new_err(format!(
                "{dir} already holds the journal of a sweep; continue it with run(config, evaluator, out={dir:?}, resume=True), or give another out directory"
            ))
        }
        e if e.is_io() => PyOSError::new_err(e.to_string()),
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

/// Tallies, reasons and trials of a result as Python objects.
fn result_dict<'py>(py: Python<'py>, r: &RunResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let candidates = PyList::empty(py);
    for c in &r.candidates {
        candidates.append(candidate_dict(py, c)?)?;
    }
    d.set_item("candidates", candidates)?;
    let evaluated = PyList::empty(py);
    for c in &r.evaluated {
        evaluated.append(candidate_dict(py, c)?)?;
    }
    d.set_item("evaluated", evaluated)?;
    let trials = PyList::empty(py);
    for t in &r.trials {
        let row = PyDict::new(py);
        row.set_item("trial", t.trial)?;
        row.set_item("config", convert::map_to_py(py, &t.config)?)?;
        row.set_item("status", t.status.as_str())?;
        row.set_item("reason", t.reason.as_deref())?;
        row.set_item("score", t.score)?;
        row.set_item("metrics", t.metrics.clone())?;
        row.set_item("labels", t.labels.clone())?;
        trials.append(row)?;
    }
    d.set_item("trials", trials)?;
    let t = &r.tallies;
    let tallies = PyDict::new(py);
    tallies.set_item("feasible", t.feasible)?;
    tallies.set_item("infeasible", t.infeasible)?;
    tallies.set_item("failed", t.failed)?;
    tallies.set_item("unsupported", t.unsupported)?;
    tallies.set_item("cache_hits", t.cache_hits)?;
    d.set_item("tallies", tallies)?;
    d.set_item("reasons", r.reasons.clone())?;
    d.set_item("pareto", r.pareto)?;
    d.set_item(
        "objectives",
        r.objectives.iter().map(|o| o.name()).collect::<Vec<_>>(),
    )?;
    Ok(d)
}

/// Runs a sweep: rounds of suggest → evaluate → score → observe, exactly as `sweeper run`.
///
/// `config`: a path, YAML/JSON text or a `Config`. `evaluator`: a callable `(candidate:
/// dict) -> report dict`, which raises `sweeper.Infeasible` / `sweeper.Unsupported` for
/// those outcomes; without one the config's own evaluator (built-in model or command)
/// runs. With `out=DIR` every suggestion and outcome is journaled to `DIR/journal.jsonl`
/// and the result files are written (`result.json`, `result.csv`, `trials.csv`,
/// `config.yaml`, the plot), as `sweeper run --out DIR` does; a killed sweep continues
/// with `resume=True` (a new sweep starts when DIR holds no journal yet), evaluating
/// only what did not finish. Ctrl-C stops the sweep: nothing new is suggested or started,
/// evaluator processes and Slurm jobs are killed or cancelled, running Python calls finish,
/// and `KeyboardInterrupt` is raised, saying how to resume. Returns a dict: `candidates` (the front or the ranking),
/// `evaluated`, `trials`, `tallies`, `reasons`, `pareto`, `objectives`.
#[pyfunction]
#[pyo3(signature = (config, evaluator=None, *, out=None, resume=false))]
fn run<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyAny>,
    evaluator: Option<Py<PyAny>>,
    out: Option<PathBuf>,
    resume: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let Config { config, path } = config::load(py, config)?;
    let name = path
        .as_ref()
        .and_then(|p| p.file_stem())
        .map_or_else(|| "sweep".to_owned(), |s| s.to_string_lossy().into_owned());
    let budget = config.search_space.gpu_budget;
    let (boxed, title): (Box<dyn Evaluator>, String) = if let Some(callable) = evaluator {
        if !callable.bind(py).is_callable() {
            return Err(PyTypeError::new_err(
                "evaluator must be a callable (candidate: dict) -> report dict",
            ));
        }
        (
            Box::new(PyEvaluator { callable }),
            format!("{name} · GPU budget {budget} · Python evaluator"),
        )
    } else {
        if config.evaluator.is_none() {
            return Err(PyValueError::new_err(
                "no evaluator: pass evaluator=callable (candidate dict -> report dict), or give the config an `evaluator:` block ({builtin: {model: qwen3-32b-fp8, gpu: h200}} or {command: [prog, args...]})",
            ));
        }
        // With an output directory, the evaluators `sweeper run --out DIR` would build: its
        // Slurm jobs under DIR/jobs (so that a resume in another process finds them) and its
        // processes marked with DIR's run mark (so that a resume ends what a killed run left).
        let setup = match &out {
            Some(dir) => evaluator_in(&config, &name, dir),
            None => evaluator_for(&config, &name),
        }
        .map_err(|e| run_error(&e, out.as_ref()))?;
        (setup.evaluator, setup.title)
    };
    if resume && out.is_none() {
        return Err(PyValueError::new_err(
            "resume=True needs out=DIR, the directory whose journal.jsonl the sweep continues",
        ));
    }
    let mut journal = match &out {
        None => None,
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| PyOSError::new_err(format!("{}: {e}", dir.display())))?;
            let file = dir.join("journal.jsonl");
            let journal = if resume && file.is_file() {
                FileJournal::open(&file, &config)
            } else {
                FileJournal::create_titled(&file, &config, Some(&title))
            };
            let journal = journal.map_err(|e| run_error(&e, out.as_ref()))?;
            // As `sweeper run --resume`: under the journal's lock, end what a killed run of
            // this sweep left running before anything is evaluated again.
            #[cfg(unix)]
            if resume {
                sweeper_eval::end_leftover_evaluators(&sweeper_eval::run_mark(dir))
                    .map_err(|e| PyOSError::new_err(e.to_string()))?;
            }
            Some(journal)
        }
    };
    let title = journal
        .as_ref()
        .and_then(FileJournal::title)
        .unwrap_or(&title)
        .to_owned();
    let evaluator = boxed.as_ref();
    let stop = AtomicBool::new(false);
    let (outcome, interrupt) = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        let (config, journal, stop) = (&config, &mut journal, &stop);
        scope.spawn(move || {
            let mut planner = ServingPlanner::new();
            let builder = Sweeper::builder(config)
                .evaluator(evaluator)
                .provider(&mut planner)
                .cancel(stop);
            let _ = tx.send(match journal.as_mut() {
                Some(j) => builder.journal(j).run(),
                None => builder.run(),
            });
        });
        wait_interruptible(py, rx, stop)
    });
    if let Some(e) = interrupt {
        // the engine has returned: later sweeps of this process may use the cluster
        #[cfg(unix)]
        sweeper_eval::resume_slurm_submissions();
        let how = match &out {
            Some(dir) => format!(
                "the finished evaluations are in {}; continue with run(config, evaluator, out={:?}, resume=True)",
                dir.join("journal.jsonl").display(),
                dir.display().to_string()
            ),
            None => {
                "nothing was kept (give out=DIR to journal a sweep, and resume=True to continue it)"
                    .to_owned()
            }
        };
        let message = format!("sweeper.run interrupted; {how}");
        // the handlers' own exception, when it is not Ctrl-C's, is what the caller sees
        if !e.is_instance_of::<PyKeyboardInterrupt>(py) {
            return Err(e);
        }
        return Err(PyKeyboardInterrupt::new_err(message));
    }
    let result = outcome.map_err(|e| run_error(&e, out.as_ref()))?;
    if let Some(dir) = &out {
        let written = py.detach(|| {
            write_file_atomic(&dir.join("config.yaml"), config.to_yaml().as_bytes())?;
            write_outputs(dir, &config, &result, &title)
        });
        written.map_err(|e| run_error(&e, out.as_ref()))?;
    }
    drop(journal);
    result_dict(py, &result)
}
