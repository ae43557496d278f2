//! `config_schema`: the JSON Schema of a sweep config, as `sweeper schema` prints it.

use pyo3::prelude::*;

/// The JSON Schema (draft 2020-12) of a sweep config, as a JSON string: the document
/// `sweeper schema` prints, for editors and for checking configs with `jsonschema`.
/// `load_config` stays the judge of what is valid (the schema describes keys and types,
/// not the rules between them).
#[pyfunction]
fn config_schema() -> String {
    sweeper_goal::schema::config_schema().to_string()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(config_schema, m)?)
}
