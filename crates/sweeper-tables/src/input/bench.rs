//! Readers of serving benchmarks' own result files, so that `sweeper score` reads them as
//! they were written:
//!
//! - `vllm bench serve --save-result` (one JSON object; `--append-result` writes one per
//!   line): the keys of `vllm/benchmarks/serve.py` (vllm-project/vllm, commit
//!   `009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1`: `result_json` and `benchmark()`'s `result`);
//! - SGLang's `python -m sglang.bench_serving --output-file` (JSON Lines, one object per
//!   run): the keys of `python/sglang/bench_serving.py` (sgl-project/sglang, commit
//!   `0033168f0f58b2bc05aa0273bd475d9c01bafb1c`: the `result` dict). Python writes an
//!   unbounded request rate as the bare token `Infinity`, which is read as `inf`;
//! - NVIDIA genai-perf's `profile_export_genai_perf.json` (one indented JSON object): one
//!   object `{unit, avg, p25, p50, p75, p90, p95, p99, min, max, std}` per metric and the
//!   run's arguments under `input_config` (triton-inference-server/perf_analyzer,
//!   `genai-perf/genai_perf/metrics/statistics.py` and `export_data/json_exporter.py`,
//!   commit `4cc7650c23bc80d16a27c1049950d87f399c9b7a`).
//!
//! Each result becomes one row: the run's settings (backend, model, request rate, maximum
//! concurrency, `--metadata` labels ...) are its config, its numbers its report, under the
//! report keys the scorer reads where the meaning is the same (`output_throughput` →
//! `output_throughput_tok_s`, `duration` in s → `duration_ms`, ...). The GPU count is in
//! none of these files: [`super::ReadOptions::gpus`] gives it (see [`super::adjust`]).

use super::adjust::{InputFormat, MapSeen, ReadOptions, derive};
use super::row::{ReportRow, at, checked_row, config_value};
use super::stream::rewind;
use super::{InputError, Place, TableFormat};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Seek};
use std::path::Path;
use sweeper_score::Report;

/// The largest benchmark file read (they are read whole; a vLLM result saved with
/// `--save-detailed` carries per-request lists and can be large).
pub(super) const MAX_BENCH_BYTES: u64 = 256 << 20;

/// Keys only `vllm bench serve` writes (`result_json`'s setup keys, `benchmark()`'s peak
/// metrics and its `e2el` name for the end-to-end latency).
const VLLM_MARKS: [&str; 6] = [
    "endpoint_type",
    "tokenizer_id",
    "burstiness",
    "max_concurrent_requests",
    "max_output_tokens_per_s",
    "mean_e2el_ms",
];

/// Keys only SGLang's `bench_serving` writes.
const SGLANG_MARKS: [&str; 5] = [
    "total_output_tokens_retokenized",
    "dataset_name",
    "random_range_ratio",
    "accept_length",
    "sharegpt_output_len",
];

/// The run settings of a vLLM result (`result_json`'s setup and traffic keys): config.
const VLLM_SETTINGS: [&str; 13] = [
    "date",
    "endpoint_type",
    "backend",
    "label",
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "ramp_up_strategy",
    "ramp_up_start_rps",
    "ramp_up_end_rps",
];

/// The run settings of an SGLang result (the `# Arguments` part of its `result`): config.
const SGLANG_SETTINGS: [&str; 9] = [
    "backend",
    "dataset_name",
    "request_rate",
    "max_concurrency",
    "sharegpt_output_len",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "tag",
];

/// What the first object of an input says about its writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Detected {
    /// One of the benchmarks' formats.
    Bench(InputFormat),
    /// sweeper's reports (or nothing recognised: read as reports, which say what is wrong).
    Reports,
    /// The keys of a benchmark result that vLLM and SGLang both write, and none that tells
    /// them apart.
    Ambiguous,
}

/// Which tool wrote this object, from its keys.
pub(super) fn classify(object: &Map<String, Value>) -> Detected {
    if object.contains_key("config") || object.contains_key("report") {
        return Detected::Reports;
    }
    let has_metric_object = [
        "time_to_first_token",
        "request_latency",
        "request_throughput",
    ]
    .iter()
    .any(|k| object.get(*k).and_then(|v| v.get("avg")).is_some());
    if object.contains_key("input_config") && has_metric_object {
        return Detected::Bench(InputFormat::GenaiPerf);
    }
    let vllm = VLLM_MARKS.iter().any(|k| object.contains_key(*k));
    let sglang = SGLANG_MARKS.iter().any(|k| object.contains_key(*k));
    match (vllm, sglang) {
        (true, false) => Detected::Bench(InputFormat::Vllm),
        (false, true) => Detected::Bench(InputFormat::Sglang),
        (true, true) => Detected::Ambiguous,
        (false, false)
            if object.contains_key("output_throughput") && object.contains_key("duration") =>
        {
            Detected::Ambiguous
        }
        (false, false) => Detected::Reports,
    }
}

/// Parses JSON written by Python, whose bare `Infinity`, `-Infinity` and `NaN` are read
/// as the strings `"inf"`, `"-inf"` and `"nan"`
/// ([`sweeper_score::json_f64::quote_python_tokens`]), refusing a key named twice.
pub(super) fn parse_python_json(text: &str) -> serde_json::Result<Value> {
    super::json::unique_from_str(&sweeper_score::json_f64::quote_python_tokens(text, ""))
}

/// What an input of JSON text is, from its first object: the first line that is not blank
/// and not a `#` comment, parsed alone; when it does not parse alone (an indented object,
/// as genai-perf writes), the whole input parsed as one value. `None` when the input is
/// not a JSON object at its start (an array, or text that does not parse: read as reports,
/// whose reader says what is wrong).
pub(super) fn detect_json<R: Read>(input: R) -> std::io::Result<Option<Detected>> {
    peek_json(input).map(|(found, _)| found)
}

/// A stream read again from its start: the bytes already read, then the rest.
pub(super) type Again<R> = std::io::Chain<std::io::Cursor<Vec<u8>>, R>;

/// [`detect_json`] of a stream, which cannot be read twice: what it found, and a reader of
/// the whole input again (the bytes read to decide, then the rest).
pub(super) fn peek_json<R: Read>(mut input: R) -> std::io::Result<(Option<Detected>, Again<R>)> {
    let mut seen = Vec::new();
    let found = {
        let mut reader = BufReader::new((&mut input).take(MAX_BENCH_BYTES));
        let found = peek_objects(&mut reader, &mut seen)?;
        seen.extend_from_slice(reader.buffer());
        found
    };
    Ok((found, std::io::Cursor::new(seen).chain(input)))
}

/// The reading of [`peek_json`]: every byte it takes from `reader` is appended to `seen`.
fn peek_objects<R: BufRead>(
    reader: &mut R,
    seen: &mut Vec<u8>,
) -> std::io::Result<Option<Detected>> {
    loop {
        let start = seen.len();
        if reader.read_until(b'\n', seen)? == 0 {
            return Ok(None);
        }
        let Ok(line) = std::str::from_utf8(&seen[start..]) else {
            return Ok(None);
        };
        let line = line.trim().trim_start_matches('\u{feff}');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if !line.starts_with('{') {
            return Ok(None);
        }
        if let Ok(Value::Object(object)) = parse_python_json(line) {
            return Ok(Some(classify(&object)));
        }
        break;
    }
    reader.read_to_end(seen)?;
    let Ok(text) = std::str::from_utf8(seen) else {
        return Ok(None);
    };
    Ok(
        match parse_python_json(text.trim_start_matches('\u{feff}')) {
            Ok(Value::Object(object)) => Some(classify(&object)),
            _ => None,
        },
    )
}

/// The results of a benchmark file's text: one object (vLLM's `--save-result`, genai-perf),
/// or one object per line (vLLM's `--append-result`, SGLang), blank and `#` lines skipped;
/// each with where it starts.
pub(super) fn results(path: &Path, text: &str) -> Result<Vec<(Place, Value)>, InputError> {
    let whole = text.trim_start_matches('\u{feff}');
    if let Ok(value) = parse_python_json(whole) {
        let first_line = whole
            .lines()
            .position(|l| !l.trim().is_empty())
            .map_or(1, |k| k as u64 + 1);
        return Ok(vec![(
            Place {
                line: Some(first_line),
                row: 0,
            },
            value,
        )]);
    }
    let mut out = Vec::new();
    for (k, line) in whole.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let place = Place {
            line: Some(k as u64 + 1),
            row: out.len(),
        };
        let value = parse_python_json(t).map_err(|e| InputError::Format {
            path: path.to_owned(),
            detail: format!("{place}: invalid JSON: {e}"),
        })?;
        out.push((place, value));
    }
    Ok(out)
}

/// A benchmark result split: its settings (config) and its numbers (report values).
pub(super) type Parts = (Map<String, Value>, BTreeMap<String, Value>);

/// One benchmark result as a row: its settings (config) and its numbers (report, under
/// sweeper's keys where the meaning is the same). `detail` errors name what is wrong.
pub(super) fn bench_row(format: InputFormat, value: &Value) -> Result<Parts, String> {
    let Value::Object(object) = value else {
        return Err(format!(
            "expected a JSON object of one {} result",
            format.writer()
        ));
    };
    if object.contains_key("config") || object.contains_key("report") {
        return Err(format!(
            "a row of sweeper's reports ({{\"config\", \"report\"}}), not a {} result; read \
             it without --input-format {}",
            format.writer(),
            format.name()
        ));
    }
    match format {
        InputFormat::Vllm => Ok(flat_result(object, &VLLM_SETTINGS, vllm_key)),
        InputFormat::Sglang => Ok(flat_result(object, &SGLANG_SETTINGS, sglang_key)),
        InputFormat::GenaiPerf => genai_perf(object),
        InputFormat::Reports => Err("not a benchmark format".to_owned()),
    }
}

/// The key a benchmark's own `key` is read as, when the reader renames it
/// (`output_throughput` → `output_throughput_tok_s`; genai-perf's metrics by their `avg`).
pub(super) fn read_as(format: InputFormat, key: &str) -> Option<String> {
    match format {
        InputFormat::Vllm => vllm_key(key).map(str::to_owned),
        InputFormat::Sglang => sglang_key(key).map(str::to_owned),
        InputFormat::GenaiPerf => match key {
            "time_to_first_token" => Some("mean_ttft_ms".to_owned()),
            "inter_token_latency" => Some("mean_itl_ms".to_owned()),
            "request_latency" => Some("mean_e2e_latency_ms".to_owned()),
            other => Some(genai_avg_key(other)).filter(|k| k != other),
        },
        InputFormat::Reports => None,
    }
}

/// The report key of a vLLM result key (`benchmark()`'s names).
fn vllm_key(key: &str) -> Option<&'static str> {
    Some(match key {
        "output_throughput" => sweeper_score::OUTPUT_THROUGHPUT,
        "mean_e2el_ms" => sweeper_score::E2E_LATENCY,
        "duration" => sweeper_score::DURATION_MS,
        // requests/s that met every `--goodput` SLO: what `min_gpus` reads
        "request_goodput" => sweeper_score::GOODPUT_RPS,
        _ => return None,
    })
}

/// The report key of an SGLang result key (its `mean_e2e_latency_ms`, `mean_ttft_ms` and
/// `mean_itl_ms` are sweeper's names already).
fn sglang_key(key: &str) -> Option<&'static str> {
    Some(match key {
        "output_throughput" => sweeper_score::OUTPUT_THROUGHPUT,
        "duration" => sweeper_score::DURATION_MS,
        _ => return None,
    })
}

/// A flat result (vLLM, SGLang): the settings and every string or boolean (labels such as
/// vLLM's `--metadata KEY=VALUE`) are config; numbers are report, renamed by `rename`
/// (`duration` is in seconds and becomes milliseconds); `null` values and lists (the
/// per-request lists of `--save-detailed` / `--output-details`) are left out.
fn flat_result(
    object: &Map<String, Value>,
    settings: &[&str],
    rename: fn(&str) -> Option<&'static str>,
) -> Parts {
    let mut config = Map::new();
    let mut report = BTreeMap::new();
    for (key, v) in object {
        if matches!(v, Value::Null | Value::Array(_) | Value::Object(_)) {
            continue;
        }
        let number = v.is_number() || v.as_str().is_some_and(is_non_finite);
        if settings.contains(&key.as_str()) || !number {
            config.insert(key.clone(), typed(v));
            continue;
        }
        match rename(key) {
            Some(k) if k == sweeper_score::DURATION_MS => {
                report.insert(k.to_owned(), scaled(v, 1000.0));
            }
            Some(k) => {
                report.insert(k.to_owned(), v.clone());
            }
            None => {
                report.insert(key.clone(), v.clone());
            }
        }
    }
    (config, report)
}

fn is_non_finite(s: &str) -> bool {
    sweeper_score::json_f64::parse_non_finite(s).is_some()
}

/// A config value: a string that spells a number or a boolean (vLLM's `--metadata tp=4`
/// writes `"4"`) as that number or boolean; `"inf"` stays a string.
fn typed(v: &Value) -> Value {
    match v {
        Value::String(s) => config_value(s).unwrap_or_else(|| v.clone()),
        other => other.clone(),
    }
}

/// A number times `factor` (the infinity strings stay as they are).
fn scaled(v: &Value, factor: f64) -> Value {
    match v
        .as_f64()
        .and_then(|x| serde_json::Number::from_f64(x * factor))
    {
        Some(n) => Value::Number(n),
        None => v.clone(),
    }
}

/// A genai-perf export: per metric, `avg` under sweeper's key (or `mean_…`), every other
/// statistic as `STAT_…` (`p99_ttft_ms`); the scalar arguments of `input_config` are config.
fn genai_perf(object: &Map<String, Value>) -> Result<Parts, String> {
    let mut config = Map::new();
    if let Some(Value::Object(args)) = object.get("input_config") {
        for (key, v) in args {
            match v {
                Value::Null | Value::Object(_) => {}
                // `model` is a list of names: one name is a label
                Value::Array(items) => {
                    if let [Value::String(one)] = items.as_slice() {
                        config.insert(key.clone(), Value::String(one.clone()));
                    }
                }
                other => {
                    config.insert(key.clone(), typed(other));
                }
            }
        }
    }
    let mut report = BTreeMap::new();
    for (metric, stats) in object {
        let Value::Object(stats) = stats else {
            continue;
        };
        if metric == "input_config" || !stats.contains_key("avg") {
            continue;
        }
        // Times are converted to ms from their unit; the unit of other metrics is not read
        // (statistics.py's `_add_units` labels every metric that is not a time
        // "requests/sec" in this version, throughputs included).
        let time = match metric.as_str() {
            "time_to_first_token" => Some("ttft"),
            "inter_token_latency" => Some("itl"),
            "request_latency" => Some("e2e_latency"),
            _ => None,
        };
        let factor = match time {
            Some(_) => {
                let unit = stats.get("unit").and_then(Value::as_str).unwrap_or("ms");
                time_unit_ms(unit).ok_or_else(|| {
                    format!(
                        "`{metric}`: unknown time unit {}; expected ms, us, ns or s",
                        crate::text::quote(unit)
                    )
                })?
            }
            None => 1.0,
        };
        for (stat, v) in stats {
            if stat == "unit" || !(v.is_number() || v.as_str().is_some_and(is_non_finite)) {
                continue;
            }
            let key = match (time, stat.as_str()) {
                (Some(short), "avg") => format!("mean_{short}_ms"),
                (Some(short), s) => format!("{s}_{short}_ms"),
                (None, "avg") => genai_avg_key(metric),
                (None, s) => format!("{s}_{metric}"),
            };
            report.insert(key, scaled(v, factor));
        }
    }
    // Without a per-request output rate (older exports), one user's rate is 1000 / the
    // mean inter-token latency: genai-perf's ITL is a per-request mean over the tokens after
    // the first, as its successor aiperf states it (`(request latency - TTFT) / (output
    // length - 1)`, aiperf `metrics/types/inter_token_latency_metric.py`), which is vLLM's
    // TPOT.
    if !report.contains_key(sweeper_score::THROUGHPUT_PER_USER)
        && let Some(itl) = report
            .get("mean_itl_ms")
            .and_then(Value::as_f64)
            .filter(|x| *x > 0.0)
    {
        report.insert(
            sweeper_score::THROUGHPUT_PER_USER.to_owned(),
            scaled(&Value::from(1000.0 / itl), 1.0),
        );
    }
    Ok((config, report))
}

/// The report key of a genai-perf metric's `avg` (other than the times).
fn genai_avg_key(metric: &str) -> String {
    match metric {
        "output_token_throughput" => sweeper_score::OUTPUT_THROUGHPUT.to_owned(),
        // tokens/s of one request: the per-user rate
        "output_token_throughput_per_request" | "output_token_throughput_per_user" => {
            sweeper_score::THROUGHPUT_PER_USER.to_owned()
        }
        "request_goodput" => sweeper_score::GOODPUT_RPS.to_owned(),
        other => other.to_owned(),
    }
}

/// Milliseconds per unit of a genai-perf time metric.
fn time_unit_ms(unit: &str) -> Option<f64> {
    Some(match unit {
        "ms" => 1.0,
        "us" => 1e-3,
        "ns" => 1e-6,
        "s" | "sec" => 1000.0,
        _ => return None,
    })
}

/// What the input is read as: the format asked for, else the one its content shows (a
/// JSON object whose keys only one benchmark writes).
pub(super) fn format_of<R: Read + Seek>(
    path: &Path,
    input: &mut R,
    sniffed: TableFormat,
    forced: Option<InputFormat>,
) -> Result<InputFormat, InputError> {
    if let Some(format) = forced_format(path, sniffed, forced)? {
        return Ok(format);
    }
    rewind(path, input)?;
    let found = detect_json(&mut *input).map_err(|source| InputError::Io {
        path: path.to_owned(),
        source,
    })?;
    format_found(path, found)
}

/// [`format_of`] of a stream (after its byte order mark, as [`super::stream::head`] hands
/// it): the format and a reader of the whole stream again.
pub(super) fn peek_format<R: Read>(
    path: &Path,
    input: R,
    sniffed: TableFormat,
    forced: Option<InputFormat>,
) -> Result<(InputFormat, Again<R>), InputError> {
    if let Some(format) = forced_format(path, sniffed, forced)? {
        return Ok((format, std::io::Cursor::new(Vec::new()).chain(input)));
    }
    let (found, again) = peek_json(input).map_err(|source| InputError::Io {
        path: path.to_owned(),
        source,
    })?;
    Ok((format_found(path, found)?, again))
}

/// The format decided without reading the content: the one asked for (refused when the
/// input is not JSON), or sweeper's reports for an input that is not a JSON object.
fn forced_format(
    path: &Path,
    sniffed: TableFormat,
    forced: Option<InputFormat>,
) -> Result<Option<InputFormat>, InputError> {
    if let Some(format) = forced {
        if format != InputFormat::Reports && sniffed != TableFormat::JsonLines {
            return Err(InputError::Format {
                path: path.to_owned(),
                detail: format!(
                    "--input-format {} reads the JSON that {} writes; this input is not a JSON \
                     object",
                    format.name(),
                    format.writer()
                ),
            });
        }
        return Ok(Some(format));
    }
    Ok((sniffed != TableFormat::JsonLines).then_some(InputFormat::Reports))
}

/// The format of what [`detect_json`] found.
fn format_found(path: &Path, found: Option<Detected>) -> Result<InputFormat, InputError> {
    match found {
        Some(Detected::Bench(format)) => Ok(format),
        Some(Detected::Ambiguous) => Err(InputError::Format {
            path: path.to_owned(),
            detail: "a benchmark result without the keys that tell vLLM's from SGLang's; give \
                     --input-format vllm or --input-format sglang"
                .to_owned(),
        }),
        Some(Detected::Reports) | None => Ok(InputFormat::Reports),
    }
}

/// The rows of a benchmark's file (read whole; see [`super::bench`]).
pub(super) fn bench_rows<R: Read>(
    path: &Path,
    reader: R,
    format: InputFormat,
    first_row: usize,
    options: &ReadOptions,
    seen: &mut MapSeen,
    nominal: &mut usize,
) -> Result<Vec<ReportRow>, InputError> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_BENCH_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Io {
            path: path.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > MAX_BENCH_BYTES {
        return Err(InputError::Format {
            path: path.to_owned(),
            detail: format!(
                "a {} file over {} MiB; split it (one result per file or line)",
                format.writer(),
                MAX_BENCH_BYTES >> 20
            ),
        });
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| super::stream::not_utf8(path, &super::stream::utf8_detail(&e, 0)))?;
    let mut rows = Vec::new();
    for (mut place, mut value) in results(path, text)? {
        place.row += first_row;
        let shape = |detail: String| InputError::Format {
            path: path.to_owned(),
            detail: format!("{place}: {detail}"),
        };
        if let Value::Object(object) = &mut value {
            options.rename(object, seen).map_err(shape)?;
        }
        let (mut config, report) = bench_row(format, &value).map_err(shape)?;
        let report = Report::from_json(place.row, &Value::Object(report.into_iter().collect()))
            .map_err(|e| at(place, e))?;
        let mut metrics: BTreeMap<String, f64> =
            report.iter().map(|(k, v)| (k.to_owned(), v)).collect();
        let derived = derive(place, options, true, &mut config, &mut metrics)?;
        if derived.nominal_hour {
            *nominal += 1;
        }
        let report = Report::from_map(place.row, metrics).map_err(|e| at(place, e))?;
        rows.push(checked_row(place, config, report)?);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_json_reads_the_bare_tokens_as_strings() {
        let text = r#"{"request_rate": Infinity, "x": -Infinity, "y": NaN, "s": "NaN"}"#;
        let v = parse_python_json(text).unwrap();
        assert_eq!(v["request_rate"], json!("inf"));
        assert_eq!(v["x"], json!("-inf"));
        assert_eq!(v["y"], json!("nan"));
        assert_eq!(v["s"], json!("NaN"));
        let twice = parse_python_json(r#"{"a": NaN, "a": 1}"#).unwrap_err();
        assert!(
            twice.to_string().contains("names the key `a` twice"),
            "{twice}"
        );
    }

    #[test]
    fn the_writer_is_told_from_the_keys() {
        let o = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            classify(&o(
                json!({"output_throughput": 1, "duration": 2, "tokenizer_id": "m"})
            )),
            Detected::Bench(InputFormat::Vllm)
        );
        assert_eq!(
            classify(&o(
                json!({"output_throughput": 1, "duration": 2, "dataset_name": "random"})
            )),
            Detected::Bench(InputFormat::Sglang)
        );
        assert_eq!(
            classify(&o(json!({"output_throughput": 1, "duration": 2}))),
            Detected::Ambiguous
        );
        assert_eq!(
            classify(&o(
                json!({"input_config": {}, "request_latency": {"avg": 1}})
            )),
            Detected::Bench(InputFormat::GenaiPerf)
        );
        assert_eq!(
            classify(&o(json!({"report": {}, "tokenizer_id": "m"}))),
            Detected::Reports
        );
    }

    #[test]
    fn genai_perf_times_are_converted_from_their_unit() {
        let v = json!({
            "time_to_first_token": {"unit": "us", "avg": 2000.0, "p99": 4000.0},
            "output_token_throughput": {"unit": "requests/sec", "avg": 900.0},
            "input_config": {"concurrency": 8, "model": ["m"]}
        });
        let (config, report) = bench_row(InputFormat::GenaiPerf, &v).unwrap();
        assert_eq!(report["mean_ttft_ms"], json!(2.0));
        assert_eq!(report["p99_ttft_ms"], json!(4.0));
        assert_eq!(report["output_throughput_tok_s"], json!(900.0));
        assert_eq!(config["concurrency"], json!(8));
        assert_eq!(config["model"], json!("m"));
        let bad = json!({"request_latency": {"unit": "fortnights", "avg": 1}});
        let err = bench_row(InputFormat::GenaiPerf, &bad).unwrap_err();
        assert!(err.contains("unknown time unit `fortnights`"), "{err}");
    }
}
