//! A validator of the OpenAPI v3 keywords the CRD subsets use: `type`, `properties`,
//! `additionalProperties`, `required`, `items`, `enum`, `minimum`, `maxItems`,
//! `minLength`, `maxLength`, `anyOf` and `x-kubernetes-preserve-unknown-fields`. A
//! property the schema does not list is an error (the API server would drop it silently,
//! so a misspelt field would be lost). `pattern` is not interpreted; the one pattern the
//! manifests meet (component names) is checked by its own test.

use serde_json::Value;

/// Every violation of `schema` by `value`, each as `PATH: what`.
pub(crate) fn violations(value: &Value, schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(value, schema, "$", &mut out);
    out
}

fn check(value: &Value, schema: &Value, path: &str, out: &mut Vec<String>) {
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array)
        && !any.iter().any(|s| {
            let mut inner = Vec::new();
            check(value, s, path, &mut inner);
            inner.is_empty()
        })
    {
        out.push(format!("{path}: matches none of anyOf"));
    }
    if let Some(ty) = schema.get("type").and_then(Value::as_str) {
        let ok = match ty {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => false,
        };
        if !ok {
            out.push(format!("{path}: expected {ty}, found {value}"));
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        out.push(format!("{path}: {value} is not one of {allowed:?}"));
    }
    if let (Some(min), Some(x)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) && x < min
    {
        out.push(format!("{path}: {x} < minimum {min}"));
    }
    if let Some(s) = value.as_str() {
        let n = s.chars().count() as u64;
        if schema
            .get("minLength")
            .and_then(Value::as_u64)
            .is_some_and(|m| n < m)
        {
            out.push(format!("{path}: shorter than minLength"));
        }
        if schema
            .get("maxLength")
            .and_then(Value::as_u64)
            .is_some_and(|m| n > m)
        {
            out.push(format!("{path}: longer than maxLength"));
        }
    }
    if let Some(items) = value.as_array() {
        if schema
            .get("maxItems")
            .and_then(Value::as_u64)
            .is_some_and(|m| items.len() as u64 > m)
        {
            out.push(format!("{path}: more than maxItems"));
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                check(item, item_schema, &format!("{path}[{i}]"), out);
            }
        }
    }
    if let Some(map) = value.as_object() {
        for key in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(k) = key.as_str()
                && !map.contains_key(k)
            {
                out.push(format!("{path}: missing required `{k}`"));
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        let extra = schema.get("additionalProperties");
        let open = schema
            .get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            == Some(true);
        for (k, v) in map {
            let child = format!("{path}.{k}");
            if let Some(s) = props.and_then(|p| p.get(k)) {
                check(v, s, &child, out);
            } else if let Some(s) = extra.filter(|s| s.is_object()) {
                check(v, s, &child, out);
            } else if !open {
                out.push(format!("{child}: not a property of the schema"));
            }
        }
    }
}
