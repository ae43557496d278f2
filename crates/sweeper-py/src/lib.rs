//! `sweeper-py`: the Python bindings of sweeper, the extension module `sweeper._sweeper`.
//!
//! **Layer**: beside the command line, on top of every library crate: `sweeper-goal`
//! (configs and their errors), `sweeper-score` (scoring and the front kernels),
//! `sweeper-sampler` (the study) and `sweeper-engine`, `sweeper-eval` and `sweeper-tables`
//! (the run loop, the evaluators a config names, the result files), and `sweeper-export`
//! (a trial as a deployment). It adds no
//! behaviour of its own: every rule stays in the crate that owns it, and this crate only
//! converts between Python objects and those crates' types.
//!
//! **Invariant**: what Python sees is what the command line does. `load_config` makes the
//! checks of `sweeper validate` with its messages; `score` ranks or fronts as `sweeper
//! score` does; `run` is the engine of `sweeper run` (journal, resume, result files), with
//! a Python callable as its evaluator; the front functions are the Rust kernels, reading a
//! C-contiguous float64 array without a copy and releasing the GIL while they run.
//!
//! The Python package (`python/sweeper/__init__.py`, the stubs `__init__.pyi`) re-exports
//! everything defined here; its docstrings are the API documentation. Build it with
//! maturin (`pyproject.toml`), which turns on the `extension-module` feature:
//!
//! ```sh
//! pip install maturin && maturin develop --release -m crates/sweeper-py/Cargo.toml
//! python -c "import sweeper, numpy as np; print(sweeper.pareto_front(np.eye(2), ['max', 'max']))"
//! ```

// The `#[pyfunction]`/`#[pyclass]` macros generate public glue and take arguments by value
// (a `Vec`, a `PyRef`); the pedantic lints about both do not apply to a Python signature.
#![allow(clippy::needless_pass_by_value)]

mod config;
mod convert;
mod export;
mod fronts;
mod plot;
mod recommend;
mod reports;
mod schema;
mod score;
mod study;
mod sweep;

use pyo3::prelude::*;

pyo3::create_exception!(
    _sweeper,
    ConfigError,
    pyo3::exceptions::PyValueError,
    "A sweep config that `sweeper validate` rejects. Attributes: `path` (the key path, e.g. \
     'goal.sla', or None), `rule` (a stable rule name, e.g. 'sla_missing'), `line` and \
     `column` (1-based, or None), and `errors` (one dict per failing block)."
);

pyo3::create_exception!(
    _sweeper,
    Infeasible,
    pyo3::exceptions::PyException,
    "Raised by an evaluator given to `sweeper.run` when the candidate cannot run as asked \
     (e.g. its KV cache holds less than one request): the trial is counted infeasible and \
     the sampler steers away from it. The message is the reason."
);

pyo3::create_exception!(
    _sweeper,
    Unsupported,
    pyo3::exceptions::PyException,
    "Raised by an evaluator given to `sweeper.run` when it does not support the \
     candidate's configuration: the trial is counted unsupported. The message is the reason."
);

/// The extension module `sweeper._sweeper`.
#[pymodule]
fn _sweeper(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("Infeasible", py.get_type::<Infeasible>())?;
    m.add("Unsupported", py.get_type::<Unsupported>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    fronts::register(m)?;
    config::register(m)?;
    study::register(m)?;
    score::register(m)?;
    recommend::register(m)?;
    reports::register(m)?;
    sweep::register(m)?;
    export::register(m)?;
    schema::register(m)?;
    plot::register(m)?;
    Ok(())
}
