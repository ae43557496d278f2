//! The front kernels of `sweeper_score::front` on numpy arrays.
//!
//! A C-contiguous float64 `(n, d)` array is read in place (a read-only borrow of its
//! buffer); any other layout or numeric dtype (int, bool, float32, a Fortran-ordered or
//! strided view, a list of lists) is converted once to a C-contiguous float64 array, and a
//! non-numeric dtype is rejected. The GIL is released while a kernel runs, so other Python
//! threads go on; as with any buffer shared with Rust, they must not write into the array
//! meanwhile.

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use sweeper_goal::Direction;
use sweeper_score::{ScoreError, front};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pareto_front, m)?)?;
    m.add_function(wrap_pyfunction!(nondominated_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(hypervolume, m)?)?;
    m.add_function(wrap_pyfunction!(merge_fronts, m)?)?;
    Ok(())
}

/// A matrix as the kernels read it: the caller's buffer, or the one converted copy.
struct Matrix<'py> {
    array: PyReadonlyArray2<'py, f64>,
}

impl Matrix<'_> {
    fn values(&self) -> &[f64] {
        // `read` made the array C-contiguous, so the slice is always there.
        self.array.as_slice().unwrap_or(&[])
    }
    fn cols(&self) -> usize {
        self.array.shape()[1]
    }
}

/// Reads `obj` as an `(n, d)` float64 matrix (see the module docs).
fn read<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Matrix<'py>> {
    if let Ok(a) = obj.cast::<PyArray2<f64>>()
        && a.is_c_contiguous()
    {
        return Ok(Matrix {
            array: a.readonly(),
        });
    }
    let np = py.import("numpy")?;
    let is_array = obj.is_instance(&np.getattr("ndarray")?)?;
    let converted = if is_array {
        let ndim: usize = obj.getattr("ndim")?.extract()?;
        if ndim != 2 {
            return Err(PyValueError::new_err(format!(
                "{name} must be a 2-D array of shape (n, d), one row per point; got shape {}{}",
                obj.getattr("shape")?.repr()?,
                if ndim == 1 {
                    " (for one objective, pass x.reshape(-1, 1))"
                } else {
                    ""
                }
            )));
        }
        let kind: String = obj.getattr("dtype")?.getattr("kind")?.extract()?;
        if !matches!(kind.as_str(), "b" | "i" | "u" | "f") {
            return Err(PyTypeError::new_err(format!(
                "{name} has dtype {}; the front functions need real numbers (float64 is read without a copy; bool, int and other float dtypes are converted)",
                obj.getattr("dtype")?.str()?
            )));
        }
        np.call_method1("ascontiguousarray", (obj, np.getattr("float64")?))?
    } else {
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("dtype", np.getattr("float64")?)?;
        let a = np
            .call_method("asarray", (obj,), Some(&kwargs))
            .map_err(|e| {
                PyTypeError::new_err(format!(
                    "{name} cannot be read as a float64 array of shape (n, d): {}",
                    e.value(py)
                ))
            })?;
        let ndim: usize = a.getattr("ndim")?.extract()?;
        if ndim != 2 {
            return Err(PyValueError::new_err(format!(
                "{name} must be 2-D, one row per point: a numpy array of shape (n, d) or a list of rows; got shape {}",
                a.getattr("shape")?.repr()?
            )));
        }
        np.call_method1("ascontiguousarray", (a,))?
    };
    let a = converted
        .cast_into::<PyArray2<f64>>()
        .map_err(|e| PyTypeError::new_err(format!("{name}: conversion to float64 failed: {e}")))?;
    Ok(Matrix {
        array: a.readonly(),
    })
}

/// Parses `directions`: one `"max"` or `"min"` per column.
fn directions(obj: &Bound<'_, PyAny>, cols: usize) -> PyResult<Vec<Direction>> {
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "directions must be a list with one \"max\" or \"min\" per column, e.g. [\"max\", \"min\"]; got a single string",
        ));
    }
    let mut out = Vec::new();
    for (i, item) in obj.try_iter()?.enumerate() {
        let item = item?;
        let text: String = item.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "directions[{i}] must be \"max\" or \"min\", got {}",
                item.repr()
                    .map_or_else(|_| "?".to_owned(), |r| r.to_string())
            ))
        })?;
        out.push(direction(&text).ok_or_else(|| {
            PyValueError::new_err(format!(
                "directions[{i}] must be \"max\" or \"min\", got {text:?}"
            ))
        })?);
    }
    if out.len() != cols {
        return Err(PyValueError::new_err(format!(
            "directions has {} entries for {cols} columns; give one \"max\" or \"min\" per column",
            out.len()
        )));
    }
    Ok(out)
}

/// `"max"` / `"maximize"` or `"min"` / `"minimize"`.
pub(crate) fn direction(text: &str) -> Option<Direction> {
    match text {
        "max" | "maximize" => Some(Direction::Maximize),
        "min" | "minimize" => Some(Direction::Minimize),
        _ => None,
    }
}

fn value_error(name: &str, e: &ScoreError) -> PyErr {
    PyValueError::new_err(format!("{name}: {e}"))
}

fn indices(py: Python<'_>, v: Vec<usize>) -> Bound<'_, PyArray1<i64>> {
    PyArray1::from_vec(py, v.into_iter().map(|i| i as i64).collect())
}

/// Reads `X` and its directions, runs `kernel` on them with the GIL released, and returns
/// its row numbers (indices or ranks) as an int64 array.
fn row_indices<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    directions: &Bound<'py, PyAny>,
    kernel: impl FnOnce(&[f64], usize, &[Direction]) -> Result<Vec<usize>, ScoreError> + Send,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let m = read(py, x, "X")?;
    let dirs = self::directions(directions, m.cols())?;
    let (values, d) = (m.values(), m.cols());
    let rows = py
        .detach(|| kernel(values, d, &dirs))
        .map_err(|e| value_error("X", &e))?;
    Ok(indices(py, rows))
}

/// The indices of the non-dominated rows of `X`, sorted by the last column ascending (ties
/// by row index): SPEC 3's front order, the frontier left to right. Every copy of a
/// duplicate front row is kept; a NaN is an error naming its row and column.
#[pyfunction]
#[pyo3(name = "pareto_front", signature = (x, directions))]
fn pareto_front<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    directions: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    row_indices(py, x, directions, front::pareto_front_sorted)
}

/// Per row of `X` its front number: 0 for the non-dominated rows, 1 for those
/// non-dominated once front 0 is removed, and so on.
#[pyfunction]
#[pyo3(signature = (x, directions))]
fn nondominated_ranks<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    directions: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    row_indices(py, x, directions, front::nondominated_ranks)
}

/// The hypervolume dominated by the rows of `X` up to the reference point `ref`, in raw
/// units (rows not strictly better than `ref` in every column add nothing).
#[pyfunction]
#[pyo3(signature = (x, r#ref, directions))]
fn hypervolume<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    r#ref: Vec<f64>,
    directions: &Bound<'py, PyAny>,
) -> PyResult<f64> {
    let m = read(py, x, "X")?;
    let dirs = self::directions(directions, m.cols())?;
    let (values, d) = (m.values(), m.cols());
    py.detach(|| front::hypervolume(values, d, &dirs, &r#ref))
        .map_err(|e| value_error("X", &e))
}

/// The front of the union of the rows of `A` and `B` (two fronts, e.g. of two shards):
/// indices into the concatenation, `A`'s rows first, ascending.
#[pyfunction]
#[pyo3(signature = (a, b, directions))]
fn merge_fronts<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    directions: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let ma = read(py, a, "A")?;
    let mb = read(py, b, "B")?;
    if ma.cols() != mb.cols() {
        return Err(PyValueError::new_err(format!(
            "A has {} columns and B has {}; merge fronts of the same objectives",
            ma.cols(),
            mb.cols()
        )));
    }
    let dirs = self::directions(directions, ma.cols())?;
    let (va, vb, d) = (ma.values(), mb.values(), ma.cols());
    let merged = py
        .detach(|| front::merge_fronts(va, vb, d, &dirs))
        .map_err(|e| value_error("rows of A then B", &e))?;
    Ok(indices(py, merged))
}
