"""`sweeper.read_reports` reads result files as `sweeper score` does: scoring its rows with
`sweeper.score` gives what `sweeper score --format json` prints for the same files and flags
(sweeper's own rows, vLLM, SGLang with Python's bare `Infinity`, genai-perf)."""

import math
import warnings

import pytest

import sweeper
from conftest import EXAMPLES, cli_json

PARETO = EXAMPLES / "serving" / "pareto.yaml"
BENCH = EXAMPLES / "bench-results"
VLLM = sorted((BENCH / "vllm").glob("*.json"))
SGLANG = BENCH / "sglang-runs.jsonl"
GENAI = BENCH / "genai-perf" / "c16" / "profile_export_genai_perf.json"
ROWS = BENCH / "rows.csv"


def number(v):
    """A number of `score --format json` output (`"inf"` spells infinity)."""
    return float(v) if isinstance(v, str) else v


def same_candidates(got, want):
    assert [c["index"] for c in got] == [c["index"] for c in want]
    for g, w in zip(got, want):
        assert g["config"] == w["config"]
        assert g["used_gpus"] == w["used_gpus"]
        assert g["score"] == number(w["score"])
        assert g["metrics"] == {k: number(v) for k, v in w["metrics"].items()}
        assert g["objectives"] == {k: number(v) for k, v in w["objectives"].items()}


# (paths, read_reports keywords, the same as command-line flags)
CASES = {
    "vllm": (VLLM, {}, []),
    "sglang": (SGLANG, {"gpus": 2}, ["--gpus", "2"]),
    "genai-perf": (GENAI, {"gpus": 8}, ["--gpus", "8"]),
    "rows": (
        ROWS,
        {"gpus": "used_gpus", "per_user_from_tpot": True, "map": {"conc": "concurrency"}},
        ["--gpus", "used_gpus", "--per-user-from-tpot", "--map", "conc=concurrency"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_scored_rows_equal_sweeper_score_on_the_files(case, cli):
    paths, keywords, flags = CASES[case]
    paths = paths if isinstance(paths, list) else [paths]
    want = cli_json(cli, "score", "--config", PARETO, *paths, *flags)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = sweeper.read_reports(paths if len(paths) > 1 else paths[0], **keywords)
    assert all(set(r) == {"config", "report"} for r in rows)
    same_candidates(sweeper.score(PARETO, rows), want)


def test_an_sglang_file_is_read_with_its_infinity_and_scorer_keys():
    rows = sweeper.read_reports(SGLANG, gpus=2)
    assert len(rows) == 3
    unbounded = rows[2]
    assert unbounded["config"]["request_rate"] == "inf"
    assert unbounded["config"]["backend"] == "sglang"
    report = unbounded["report"]
    # `duration` in seconds became `duration_ms`; 2 GPUs over it are the gpu_hours
    assert report["gpu_hours"] == 2 * report["duration_ms"] / 3_600_000
    assert report["mean_output_token_throughput_per_user"] == 1000 / report["mean_tpot_ms"]
    assert "output_throughput" not in report and report["output_throughput_tok_s"] > 0
    # the same file named as what it is, and through a config's used_gpus rule
    assert sweeper.read_reports(str(SGLANG), input_format="sglang", gpus="2") == rows


def test_the_config_used_gpus_rule_counts_a_benchmark_rows_gpus():
    config = (
        "goal: {target: pareto}\nsearch_space:\n  gpu_budget: 8\n  used_gpus: [tp]\n"
        "  parameters:\n    tp: {values: [1, 2]}\n"
    )
    # vLLM's `--metadata tp=2` with a rule `used_gpus: [tp]` and no used_gpus label
    rows = sweeper.read_reports(VLLM[0], map={"used_gpus": "label_gpus"})
    assert "used_gpus" not in rows[0]["config"] and rows[0]["report"].get("gpu_hours") is None
    rows = sweeper.read_reports(VLLM[0], map={"used_gpus": "label_gpus"}, config=config)
    assert rows[0]["config"]["used_gpus"] == 2
    assert rows[0]["report"]["gpu_hours"] > 0


def test_a_row_without_a_duration_gets_the_nominal_hour_with_a_warning():
    with pytest.warns(UserWarning, match="1 row has no run duration"):
        rows = sweeper.read_reports(GENAI, gpus=8)
    assert rows[0]["report"]["duration_ms"] == 3_600_000
    assert rows[0]["report"]["gpu_hours"] == 8


def test_bad_arguments_and_files_say_what_to_give(tmp_path):
    with pytest.raises(ValueError, match=r"input_format: unknown format `trt`; give one of reports, vllm, sglang, genai-perf"):
        sweeper.read_reports(SGLANG, input_format="trt")
    with pytest.raises(ValueError, match="gpus: GPU count must be a positive finite number"):
        sweeper.read_reports(SGLANG, gpus=-1)
    with pytest.raises(TypeError, match="gpus: give a GPU count"):
        sweeper.read_reports(SGLANG, gpus=[2])
    with pytest.raises(ValueError, match="map tpot=tpot_ms: no input has a column or key `tpot`"):
        sweeper.read_reports(ROWS, map={"tpot": "tpot_ms"})
    with pytest.raises(OSError, match="cannot read"):
        sweeper.read_reports(tmp_path / "missing.jsonl")
    with pytest.raises(TypeError, match="paths: give a path"):
        sweeper.read_reports(3)
    ambiguous = tmp_path / "bench.jsonl"
    ambiguous.write_text('{"output_throughput": 1, "duration": Infinity}\n')
    with pytest.raises(ValueError, match="give --input-format vllm or --input-format sglang"):
        sweeper.read_reports(ambiguous)
    assert sweeper.read_reports(ambiguous, input_format="sglang")[0]["report"]["duration_ms"] == math.inf
