//! Tests of the report inputs: JSON Lines, JSON arrays and CSV rows, sharded tables and
//! re-reading a row from where it sits.

use super::*;
use serde_json::json;

fn write(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn csv_splits_metrics_from_config() {
    let (_d, p) = write(
        "r.csv",
        "# source: test\ntp,used_gpus,offload,output_throughput_tok_s,mean_e2e_latency_ms,note\n\
         4,4,true,100.5,,fast\n8,8,false,inf,20,\n",
    );
    let rows = read_reports(&p).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        Value::Object(rows[0].config.clone()),
        json!({"tp": 4, "used_gpus": 4, "offload": true, "note": "fast"})
    );
    assert_eq!(rows[0].report.get("output_throughput_tok_s"), Some(100.5));
    assert_eq!(rows[0].report.get("mean_e2e_latency_ms"), None);
    assert_eq!(
        rows[1].report.get("output_throughput_tok_s"),
        Some(f64::INFINITY)
    );
    assert_eq!(
        rows[1].place,
        Place {
            line: Some(4),
            row: 1
        }
    );
}

#[test]
fn csv_bad_metric_names_line_and_column() {
    let (_d, p) = write("r.csv", "used_gpus,gpu_hours\n1,2\n1,NaN\n");
    let err = read_reports(&p).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("line 3 (row 1), column `gpu_hours`: value is NaN"),
        "{err}"
    );
    let (_d, p) = write("r.csv", "used_gpus,gpu_hours\nmany,2\n");
    let err = read_reports(&p).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("line 2 (row 0), column `used_gpus`: must be a number"),
        "{err}"
    );
}

#[test]
fn json_lines_and_arrays() {
    let (_d, p) = write(
        "r.jsonl",
        "{\"config\": {\"used_gpus\": 2}, \"report\": {\"output_throughput_tok_s\": 5, \"model\": \"m\"}}\n\n{\"report\": {}}\n",
    );
    let rows = read_reports(&p).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].report.len(), 1);
    assert!(rows[1].config.is_empty());
    assert_eq!(
        rows[1].place,
        Place {
            line: Some(3),
            row: 1
        }
    );
    let (_d, p) = write(
        "r.json",
        "[{\"config\": {}, \"report\": {\"gpu_hours\": 1}}]",
    );
    assert_eq!(read_reports(&p).unwrap().len(), 1);
}

#[test]
fn json_shape_errors_name_the_line() {
    let (_d, p) = write("r.jsonl", "{\"report\": {}, \"extra\": 1}\n");
    let err = read_reports(&p).unwrap_err();
    assert!(
        err.to_string()
            .contains("line 1 (row 0): unknown key `extra`"),
        "{err}"
    );
    let (_d, p) = write("r.jsonl", "{\"config\": {}}\n");
    assert!(
        read_reports(&p)
            .unwrap_err()
            .to_string()
            .contains("missing `report`")
    );
    let (_d, p) = write("r.jsonl", "{\"report\": {\"gpu_hours\": \"2\"}}\n");
    let err = read_reports(&p).unwrap_err();
    assert!(
        err.to_string()
            .contains("column `gpu_hours`: must be a number, got a string"),
        "{err}"
    );
}

#[test]
fn empty_inputs_are_errors() {
    for text in ["", "# nothing\n", "a,b\n", "[]", "\n\n"] {
        let (_d, p) = write("e.txt", text);
        let err = read_reports(&p).unwrap_err();
        assert!(matches!(err, InputError::Empty { .. }), "{text:?}: {err}");
    }
}

#[test]
fn shards_with_wide_headers_are_compared_by_name() {
    let names: Vec<String> = (0..5_000).map(|k| format!("c{k}")).collect();
    let mut reversed = names.clone();
    reversed.reverse();
    let a = format!(
        "{},output_throughput_tok_s\n{},1\n",
        names.join(","),
        "0,".repeat(4_999) + "0"
    );
    let b = format!(
        "output_throughput_tok_s,{}\n2,{}\n",
        reversed.join(","),
        "0,".repeat(4_999) + "0"
    );
    let mut table = ReportTable::new(vec![
        (PathBuf::from("a.csv"), Cursor::new(a.clone())),
        (PathBuf::from("b.csv"), Cursor::new(b)),
    ]);
    let mut seen = Vec::new();
    table
        .scan(|row, _| seen.push(row.report.get("output_throughput_tok_s")))
        .unwrap();
    assert_eq!(seen, [Some(1.0), Some(2.0)]);
    // one column renamed: named as missing and as extra
    let c = a.replacen("c4321,", "d4321,", 1);
    let mut table = ReportTable::new(vec![
        (PathBuf::from("a.csv"), Cursor::new(a)),
        (PathBuf::from("c.csv"), Cursor::new(c)),
    ]);
    let err = table.scan(|_, _| {}).unwrap_err().to_string();
    assert!(
        err.contains("it lacks `c4321`; `d4321` is not in a.csv"),
        "{err}"
    );
}

#[test]
fn a_metric_too_large_for_a_number_is_refused_with_its_row_and_column() {
    let (_d, p) = write("r.csv", "used_gpus,output_throughput_tok_s\n1,5\n1,1e400\n");
    let err = read_reports(&p).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "line 3 (row 1), column `output_throughput_tok_s`: number out of range: `1e400`"
        ),
        "{err}"
    );
    let (_d, p) = write("r.csv", "used_gpus,output_throughput_tok_s\n1,inf\n");
    assert_eq!(
        read_reports(&p).unwrap()[0]
            .report
            .get("output_throughput_tok_s"),
        Some(f64::INFINITY)
    );
}

#[test]
fn a_json_key_named_twice_is_refused_in_config_report_and_row() {
    for text in [
        "{\"config\": {\"used_gpus\": 1}, \"report\": {\"output_throughput_tok_s\": 5, \"output_throughput_tok_s\": 1e12}}\n",
        "{\"config\": {\"tp\": 1, \"tp\": 2}, \"report\": {}}\n",
        "{\"report\": {}, \"report\": {\"gpu_hours\": 1}}\n",
        "[{\"report\": {\"gpu_hours\": 1, \"gpu_hours\": 2}}]",
    ] {
        let (_d, p) = write("r.json", text);
        let err = read_reports(&p).unwrap_err().to_string();
        assert!(err.contains("twice; keep one"), "{text}: {err}");
    }
}

#[test]
fn config_cells_are_typed() {
    assert_eq!(config_value(" 4 "), Some(json!(4)));
    assert_eq!(config_value("2.5"), Some(json!(2.5)));
    assert_eq!(config_value("True"), Some(json!(true)));
    assert_eq!(config_value("hicache"), Some(json!("hicache")));
    assert_eq!(config_value("inf"), Some(json!("inf")));
    assert_eq!(config_value(""), None);
}
