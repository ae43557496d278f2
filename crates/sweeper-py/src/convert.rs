//! Python objects to JSON values and back: the one conversion every entry point uses.
//!
//! Non-finite floats cross as the strings `"inf"`, `"-inf"` and `"nan"`, the encoding of
//! `sweeper_score::json_f64` that every reader of the project understands (a report's
//! `"nan"` is then rejected with its candidate and key, as the command line rejects it).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// A float as JSON: a number, or the string spelling of a non-finite value.
pub(crate) fn number(x: f64) -> Value {
    Number::from_f64(x).map_or_else(
        || {
            Value::String(
                if x.is_nan() {
                    "nan"
                } else if x > 0.0 {
                    "inf"
                } else {
                    "-inf"
                }
                .to_owned(),
            )
        },
        Value::Number,
    )
}

/// Converts a Python value (None, bool, int, float, str, dict with str keys, list, tuple,
/// numpy scalars) to JSON; `what` names the value in the error.
pub(crate) fn to_json(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.extract::<bool>()?));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.extract::<String>()?));
    }
    if obj.is_instance_of::<PyInt>()
        || (!obj.is_instance_of::<PyFloat>() && obj.hasattr("__index__")?)
    {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(PyTypeError::new_err(format!(
            "{what}: the integer {obj} does not fit in 64 bits"
        )));
    }
    if let Ok(x) = obj.extract::<f64>() {
        return Ok(number(x));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return dict_to_json(d, what).map(Value::Object);
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            out.push(to_json(&item?, &format!("{what}[{i}]"))?);
        }
        return Ok(Value::Array(out));
    }
    Err(PyTypeError::new_err(format!(
        "{what}: a value of type {} cannot be given here; use None, bool, int, float, str, dict or list",
        obj.get_type().name()?
    )))
}

/// Converts a dict with string keys to a JSON object, keeping its order.
pub(crate) fn dict_to_json(d: &Bound<'_, PyDict>, what: &str) -> PyResult<Map<String, Value>> {
    let mut out = Map::new();
    for (k, v) in d.iter() {
        let key = k.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "{what}: keys must be strings, got the key {}",
                k.repr().map_or_else(|_| "?".to_owned(), |r| r.to_string())
            ))
        })?;
        let key: String = key.extract()?;
        let value = to_json(&v, &format!("{what}[{key:?}]"))?;
        out.insert(key, value);
    }
    Ok(out)
}

/// Converts JSON to Python: objects become dicts (in order), arrays lists, integers ints.
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => map_to_py(py, map)?.into_any(),
    })
}

/// A JSON object as a dict.
pub(crate) fn map_to_py<'py>(
    py: Python<'py>,
    map: &Map<String, Value>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in map {
        d.set_item(k, to_py(py, v)?)?;
    }
    Ok(d)
}
