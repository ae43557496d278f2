//! `sweeper front` end to end: CSV (copied real serving rows), JSON Lines and `.npy` inputs.

use crate::common::{KIMI, fixture, sweeper, temp_file};
use serde_json::Value;
use sweeper_goal::Direction;
use sweeper_score::front;
use sweeper_tables::input::encode_npy;

const GPU: &str = "src_output_tput_per_gpu:max";
const USER: &str = "mean_output_token_throughput_per_user:max";

fn front_run(input: &std::path::Path, extra: &[&str]) -> crate::common::Run {
    let mut args: Vec<std::ffi::OsString> = vec!["front".into(), input.as_os_str().to_owned()];
    args.extend(extra.iter().map(Into::into));
    sweeper(args)
}

fn indices(list: &Value) -> Vec<u64> {
    list.as_array()
        .expect("a JSON array")
        .iter()
        .map(|c| c["index"].as_u64().expect("an index"))
        .collect()
}

#[test]
fn front_of_real_rows_as_json() {
    let run = front_run(&fixture(KIMI), &["-o", GPU, "-o", USER, "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let list: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(indices(&list), [7, 2, 0, 19, 18, 17, 16]);
    let first = list[0]["values"].as_object().unwrap();
    assert_eq!(
        first.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "mean_output_token_throughput_per_user",
            "src_output_tput_per_gpu"
        ]
    );
    assert_eq!(first["src_output_tput_per_gpu"], 65.635_727_689_465_81);
}

#[test]
fn front_table_of_real_rows() {
    let run = front_run(&fixture(KIMI), &["-o", GPU, "-o", USER]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!("front_kimi_table", run.stdout);
}

#[test]
fn mixed_directions_sort_by_the_last_objective() {
    // Throughput up, latency down: sorted by latency ascending.
    let run = front_run(
        &fixture(KIMI),
        &[
            "-o",
            "output_throughput_tok_s:max",
            "-o",
            "mean_e2e_latency_ms:min",
            "--format",
            "csv",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut rdr = csv::Reader::from_reader(run.stdout.as_bytes());
    assert_eq!(
        rdr.headers().unwrap().iter().collect::<Vec<_>>(),
        ["index", "output_throughput_tok_s", "mean_e2e_latency_ms"]
    );
    let idx: Vec<String> = rdr.records().map(|r| r.unwrap()[0].to_owned()).collect();
    assert_eq!(idx, ["17", "18", "19", "20", "21"]);
}

#[test]
fn ranks_of_real_rows() {
    let run = front_run(
        &fixture(KIMI),
        &["-o", GPU, "-o", USER, "--ranks", "--format", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let list: Value = serde_json::from_str(&run.stdout).unwrap();
    let ranks: Vec<u64> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ranks,
        [
            0, 1, 0, 1, 2, 2, 1, 0, 3, 4, 5, 4, 4, 4, 4, 5, 0, 0, 0, 0, 3, 3
        ]
    );
    assert_eq!(indices(&list), (0..22).collect::<Vec<_>>());
}

#[test]
fn stats_line_on_stderr() {
    let run = front_run(&fixture(KIMI), &["-o", GPU, "-o", USER, "--stats"]);
    assert_eq!(run.code, 0);
    let line = run.stderr.trim();
    let line = line
        .strip_prefix("sweeper: ")
        .unwrap_or_else(|| panic!("one sweeper: prefix: {line}"));
    let fields: Vec<&str> = line.split(' ').collect();
    assert_eq!(fields.len(), 4, "{line}");
    assert_eq!(fields[0], "rows=22");
    assert_eq!(fields[1], "front=7");
    for (field, key) in fields[2..].iter().zip(["load_ms", "kernel_ms"]) {
        let (k, v) = field.split_once('=').unwrap();
        assert_eq!(k, key);
        assert!(v.parse::<f64>().unwrap() >= 0.0, "{line}");
    }
}

/// A grid with ties, duplicates and infinities.
fn grid(n: usize, d: usize) -> Vec<f64> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    (0..n * d)
        .map(|k| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match state % 11 {
                0 if k % 5 == 0 => f64::INFINITY,
                1 if k % 7 == 0 => f64::NEG_INFINITY,
                v => (v % 5) as f64,
            }
        })
        .collect()
}

#[test]
fn npy_front_matches_brute_force() {
    for d in 1..=4 {
        let n = 200;
        let data = grid(n, d);
        let (_dir, path) = temp_file("m.npy", encode_npy(n, d, &data));
        let mut args = Vec::new();
        let mut directions = Vec::new();
        for j in 0..d {
            let dir = if j % 2 == 0 { "max" } else { "min" };
            args.push("-o".to_owned());
            args.push(format!("{j}:{dir}"));
            directions.push(if j % 2 == 0 {
                Direction::Maximize
            } else {
                Direction::Minimize
            });
        }
        args.extend(["--format".to_owned(), "json".to_owned()]);
        let run = front_run(&path, &args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(run.code, 0, "{}", run.stderr);
        let list: Value = serde_json::from_str(&run.stdout).unwrap();
        let mut got: Vec<u64> = indices(&list);
        let mut want: Vec<u64> = front::nondominated_brute_force(&data, d, &directions)
            .unwrap()
            .into_iter()
            .map(|i| i as u64)
            .collect();
        // Sorted by the last column ascending, ties in input order.
        let last = |i: u64| data[i as usize * d + d - 1];
        assert!(
            got.windows(2)
                .all(|w| last(w[0]) < last(w[1]) || (last(w[0]) == last(w[1]) && w[0] < w[1]))
        );
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "d = {d}");
    }
}

#[test]
fn npy_columns_by_position_and_infinities_in_json() {
    let data = [1.0, f64::INFINITY, 2.0, 0.5];
    let (_dir, path) = temp_file("m.npy", encode_npy(2, 2, &data));
    let run = front_run(&path, &["-o", "1:max", "-o", "0:max", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let list: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(indices(&list), [0, 1]);
    assert_eq!(list[0]["values"]["1"], "inf");
}

#[test]
fn hypervolume_of_a_staircase() {
    // Maximize both from (0, 0): boxes 3x1, 2x2, 1x3 cover 3 + 2 + 1 = 6.
    let (_dir, path) = temp_file(
        "s.jsonl",
        "{\"a\": 3, \"b\": 1}\n{\"a\": 2, \"b\": 2}\n{\"a\": 1, \"b\": 3}\n{\"a\": 1, \"b\": 1}\n",
    );
    let run = front_run(
        &path,
        &["-o", "a:max", "-o", "b:max", "--hypervolume", "0,0"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "6.0\n");
    let run = front_run(
        &path,
        &[
            "-o",
            "a:max",
            "-o",
            "b:max",
            "--hypervolume",
            "0,0",
            "--format",
            "json",
        ],
    );
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["hypervolume"], 6.0);
    assert_eq!(v["rows"], 4);
    // A negative reference is not mistaken for a flag.
    let run = front_run(
        &path,
        &["-o", "a:max", "-o", "b:max", "--hypervolume", "-1,-1"],
    );
    // Shifted to (-1, -1): (4, 2), (3, 3), (2, 4) cover 8 + 3 + 2 = 13.
    assert_eq!(run.stdout, "13.0\n", "{}", run.stderr);
}

fn front_error(name: &str, contents: &[u8], args: &[&str]) -> (i32, String) {
    let (_dir, path) = temp_file(name, contents);
    let run = front_run(&path, args);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    (run.code, run.stderr)
}

#[test]
fn bad_inputs_exit_1_naming_row_and_column() {
    let xy: &[&str] = &["-o", "x:max", "-o", "y:max"];
    let f4 = {
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }\n";
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(header.len() as u16).to_le_bytes());
        b.extend_from_slice(header.as_bytes());
        b.extend_from_slice(&[0; 8]);
        b
    };
    let cases: Vec<(&str, Vec<u8>, &[&str], &str)> = vec![
        (
            "t.csv",
            b"x,y\n1,2\n3,4,5\n".to_vec(),
            xy,
            "line 3 (row 1): 3 fields where the header has 2",
        ),
        (
            "t.csv",
            b"x,z\n1,2\n".to_vec(),
            xy,
            "column `y` not found; the input has: x, z",
        ),
        (
            "t.csv",
            b"# c\nx,y\n1,2\n\n3,NaN\n".to_vec(),
            xy,
            "line 5 (row 1), column `y`: value is NaN",
        ),
        (
            "t.csv",
            b"x,y\n1,\n".to_vec(),
            xy,
            "line 2 (row 0), column `y`: empty cell",
        ),
        ("t.csv", b"x,y\n".to_vec(), xy, "no data rows"),
        ("t.csv", b"".to_vec(), xy, "no data rows"),
        (
            "t.jsonl",
            b"{\"x\": 1, \"y\": 2}\n{\"x\": 1}\n".to_vec(),
            xy,
            "line 2 (row 1): column `y` not found",
        ),
        ("t.npy", f4, &["-o", "0:max"], "dtype `<f4` is not float64"),
        (
            "t.npy",
            encode_npy(2, 2, &[1.0, 2.0, f64::NAN, 0.0]),
            &["-o", "0:max", "-o", "1:max"],
            "row 1, column `0`: value is NaN",
        ),
        (
            "t.npy",
            encode_npy(2, 2, &[1.0, 2.0, 3.0, 0.0]),
            &["-o", "2:max"],
            "column `2` not found",
        ),
    ];
    for (name, contents, args, want) in cases {
        let (code, stderr) = front_error(name, &contents, args);
        assert_eq!(code, 1, "{want}: {stderr}");
        assert!(stderr.contains(want), "want {want:?}, got {stderr}");
    }
}

#[test]
fn usage_errors_exit_2() {
    let (code, stderr) = front_error("t.csv", b"x,y\n1,2\n", &["-o", "x:up"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("expected NAME:max or NAME:min"), "{stderr}");
    let (code, stderr) = front_error(
        "t.csv",
        b"x,y\n1,2\n",
        &["-o", "x:max", "-o", "y:max", "--hypervolume", "0"],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("1 values for 2 objectives"), "{stderr}");
    let run = sweeper(["front", "no/such.csv", "-o", "x:max"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("cannot read no/such.csv"),
        "{}",
        run.stderr
    );
}

#[test]
fn help_teaches_with_examples() {
    let run = sweeper(["front", "--help"]);
    assert_eq!(run.code, 0);
    for want in [
        "Examples (from the repository root",
        "--objective",
        "--hypervolume",
        ".npy",
        "Exit status",
    ] {
        assert!(run.stdout.contains(want), "{want}: {}", run.stdout);
    }
}

#[test]
fn closed_stdout_exits_0() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    // 20,000 rows on an anti-diagonal, every one on the front: hundreds of kB of output, far
    // more than a pipe holds, so the writer must meet the closed pipe whatever the timing.
    let n = 20_000;
    let data: Vec<f64> = (0..n).flat_map(|i| [i as f64, -(i as f64)]).collect();
    let (_dir, path) = temp_file("big.npy", encode_npy(n, 2, &data));
    for format in ["table", "csv", "json"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sweeper"))
            .args(["front".as_ref(), path.as_os_str()])
            .args(["-o", "0:max", "-o", "1:max", "--format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 16];
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn reads_standard_input_as_dash() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args([
            "front", "-", "-o", "x:max", "-o", "y:min", "--format", "csv",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"x\": 1, \"y\": 1}\n{\"x\": 2, \"y\": 2}\n{\"x\": 0, \"y\": 3}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "index,x,y\n0,1.0,1.0\n1,2.0,2.0\n"
    );
}
