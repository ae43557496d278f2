"""score(config, reports): the ranking or the front of `sweeper score` on the same rows."""

import json
import math

import pytest

import sweeper
from conftest import EXAMPLES, cli_json

HOUR = 3_600_000.0


def row(gpus, tok_s, per_user=None, latency=None, **config):
    report = {"output_throughput_tok_s": tok_s, "gpu_hours": gpus, "duration_ms": HOUR}
    if per_user is not None:
        report["mean_output_token_throughput_per_user"] = per_user
    if latency is not None:
        report["mean_e2e_latency_ms"] = latency
    return {"config": {"used_gpus": gpus, **config}, "report": report}


ROWS = [
    row(4, 1000.0, 20.0, 900.0, tp=4),
    row(8, 1600.0, 30.0, 800.0, tp=8),
    row(4, 600.0, 50.0, 700.0, tp=4, router="kv_aware"),
    row(64, 9000.0, 60.0, 100.0, tp=8),  # over every budget below
    row(2, 400.0, 40.0, math.inf, tp=2),
    row(4, 1000.0, 20.0, 900.0, tp=4),  # a duplicate of row 0
]

GOALS = {
    "throughput": "goal: {target: throughput}\nsearch_space: {gpu_budget: 16}\n",
    "throughput_per_gpu": "goal: {target: throughput_per_gpu}\nsearch_space: {gpu_budget: 16}\n",
    "e2e_latency": "goal: {target: e2e_latency}\nsearch_space: {gpu_budget: 16}\n",
    "pareto": "goal: {target: pareto}\nsearch_space: {gpu_budget: 16}\n",
    "pareto3": "goal: {target: pareto, pareto_objectives: [throughput, e2e_latency, throughput_per_user]}\nsearch_space: {gpu_budget: 16}\n",
}


def test_scalar_goals_rank_best_first_ties_to_fewer_gpus_then_input_order():
    ranked = sweeper.score(GOALS["throughput_per_gpu"], ROWS)
    assert [c["index"] for c in ranked] == [0, 5, 4, 1, 2]
    assert [c["score"] for c in ranked] == [250.0, 250.0, 200.0, 200.0, 150.0]
    assert ranked[2]["config"] == {"used_gpus": 2, "tp": 2}
    assert ranked[2]["used_gpus"] == 2.0
    assert "objectives" not in ranked[0]
    # e2e_latency is minimized: the score is negated, and an infinite latency ranks last
    ranked = sweeper.score(GOALS["e2e_latency"], ROWS)
    assert [c["index"] for c in ranked] == [2, 1, 0, 5, 4]
    assert ranked[-1]["score"] == -math.inf
    assert ranked[-1]["metrics"]["mean_e2e_latency_ms"] == math.inf


def test_pareto_goals_give_the_front_sorted_by_the_last_objective():
    front = sweeper.score(GOALS["pareto"], ROWS)
    # throughput_per_gpu vs throughput_per_user; rows 0 and 5 are equal and both kept
    assert [c["index"] for c in front] == [0, 5, 4, 2]
    assert front[0]["objectives"] == {"throughput_per_gpu": 250.0, "throughput_per_user": 20.0}
    assert list(front[0]["objectives"]) == ["throughput_per_gpu", "throughput_per_user"]
    assert front[0]["score"] == 250.0
    three = sweeper.score(GOALS["pareto3"], ROWS)
    assert list(three[0]["objectives"]) == ["throughput", "e2e_latency", "throughput_per_user"]


@pytest.mark.parametrize("goal", sorted(GOALS))
def test_score_equals_sweeper_score(goal, cli, tmp_path):
    config = tmp_path / "goal.yaml"
    config.write_text(GOALS[goal])
    reports = tmp_path / "rows.json"
    # the CLI reads the JSON spelling of infinity
    reports.write_text(json.dumps(ROWS).replace("Infinity", '"inf"'))
    want = cli_json(cli, "score", "--config", config, reports)
    got = sweeper.score(config, ROWS)
    assert [c["index"] for c in got] == [c["index"] for c in want]
    for g, w in zip(got, want):
        assert g["config"] == w["config"]
        assert g["score"] == (float(w["score"]) if isinstance(w["score"], str) else w["score"])
        if "objectives" in w:
            assert g["objectives"] == {k: float(v) for k, v in w["objectives"].items()}


def test_budget_and_the_used_gpus_rule_of_the_config():
    text = (
        "goal: {target: throughput}\n"
        "search_space:\n  gpu_budget: 8\n  used_gpus: [tp, replicas]\n"
        "  parameters: {tp: {values: [1, 2, 4, 8]}, replicas: {int: [1, 4]}}\n"
    )
    rows = [
        {"config": {"tp": 4, "replicas": 4}, "report": {"output_throughput_tok_s": 900}},
        {"config": {"tp": 2, "replicas": 2}, "report": {"output_throughput_tok_s": 500}},
        {"config": {"tp": 8, "replicas": 4, "used_gpus": 1}, "report": {"output_throughput_tok_s": 100}},
        {"report": {"output_throughput_tok_s": 50}},
    ]
    ranked = sweeper.score(text, rows)
    # 16 GPUs is over the budget; a row's own used_gpus wins over the rule; no config, 0
    assert [(c["index"], c["used_gpus"]) for c in ranked] == [(1, 4.0), (2, 1.0), (3, 0.0)]
    assert sweeper.score("search_space: {gpu_budget: 1}", [row(4, 1.0)]) == []
    loaded = sweeper.load_config(EXAMPLES / "throughput.yaml")
    # its budget is 16: the 16-GPU row fits there
    assert [c["index"] for c in sweeper.score(loaded, rows)] == [0, 1, 2, 3]


def test_bad_rows_name_the_row_and_key():
    cfg = GOALS["throughput"]
    with pytest.raises(ValueError, match=r"reports\[1\]: candidate 1: report key `output_throughput_tok_s` is NaN"):
        sweeper.score(cfg, [row(1, 1.0), row(1, float("nan"))])
    with pytest.raises(ValueError, match=r"reports\[0\]: unknown key `metrics`"):
        sweeper.score(cfg, [{"report": {}, "metrics": {}}])
    with pytest.raises(ValueError, match=r"reports\[0\]: missing `report`"):
        sweeper.score(cfg, [{"config": {}}])
    with pytest.raises(ValueError, match=r"reports\[0\]: candidate 0: `used_gpus` must be a number >= 0"):
        sweeper.score(cfg, [{"config": {"used_gpus": -1}, "report": {}}])
    with pytest.raises(ValueError, match=r"reports\[0\]: candidate 0: `output_throughput_tok_s` must be a number"):
        sweeper.score(cfg, [{"report": {"output_throughput_tok_s": "fast"}}])
    with pytest.raises(TypeError, match=r"reports\[0\] must be a dict"):
        sweeper.score(cfg, [[1, 2]])
    with pytest.raises(sweeper.ConfigError):
        sweeper.score("goal: {target: goodput}", [])
    # labels under keys the scorer does not read are fine
    assert sweeper.score(cfg, [{"report": {"output_throughput_tok_s": 1, "model": "m"}}])[0]["index"] == 0
