"""`sweeper.recommend` answers as `sweeper recommend --format json` does, on the sweep of
examples/min-gpus.yaml (the built-in model) and on report rows."""

import json

import pytest

import sweeper
from conftest import EXAMPLES

CONFIG = EXAMPLES / "min-gpus.yaml"


@pytest.fixture(scope="module")
def sweep(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("min-gpus") / "run"
    code, _, err = cli("run", CONFIG, "--out", out)
    assert code == 0, err
    return out


@pytest.mark.parametrize(
    "rate, flags",
    [(4, []), (1, []), (12, []), (12, ["--scale-replicas"]), (4, ["--runner-ups", "1"])],
)
def test_recommend_equals_sweeper_recommend(sweep, cli, rate, flags):
    code, out, err = cli("recommend", "--config", CONFIG, sweep, "--rate", rate, *flags, "--format", "json")
    assert code in (0, 1), err
    want = json.loads(out)
    got = sweeper.recommend(
        CONFIG,
        sweep,
        rate,
        scale_replicas="--scale-replicas" in flags,
        runner_ups=int(flags[1]) if "--runner-ups" in flags else 3,
    )
    assert got == want
    # the journal itself, and a loaded Config, give the same
    assert sweeper.recommend(sweeper.load_config(CONFIG), sweep / "journal.jsonl", rate,
                             scale_replicas="--scale-replicas" in flags,
                             runner_ups=int(flags[1]) if "--runner-ups" in flags else 3) == want
    assert (code == 0) == (want["outcome"] == "found")


def fewest_gpus_serving(sweep, rate):
    """The oracle: the fewest used_gpus among the sweep's feasible trials whose goodput
    reaches `rate` (examples/min-gpus.yaml has no strict SLA), or None."""
    trials = json.loads((sweep / "result.json").read_text())["trials"]
    gpus = [
        t["config"]["used_gpus"]
        for t in trials
        if t["status"] == "feasible"
        and t["metrics"].get("goodput_request_throughput_rps", 0.0) >= rate
    ]
    return min(gpus) if gpus else None


def test_recommend_on_the_example_matches_the_exhaustive_grid(sweep):
    for rate in (1, 4, 12):
        got = sweeper.recommend(CONFIG, sweep, rate)
        fewest = fewest_gpus_serving(sweep, rate)
        if fewest is None:
            assert got["outcome"] == "none_serves", rate
            assert got["failed_bounds"], rate
        else:
            assert got["outcome"] == "found", rate
            assert got["best"]["gpus"] == fewest, rate
            assert got["scaled"] is False


def test_recommend_on_report_rows():
    rows = [
        {"config": {"used_gpus": 8}, "report": {"goodput_request_throughput_rps": 45.0}},
        {"config": {"used_gpus": 4}, "report": {"goodput_request_throughput_rps": 41.0}},
        {"config": {"used_gpus": 2}, "report": {"goodput_request_throughput_rps": 30.0}},
        {"config": {"used_gpus": 64}, "report": {"goodput_request_throughput_rps": 90.0}},
    ]
    got = sweeper.recommend(CONFIG, rows, 40, runner_ups=1)
    assert got["outcome"] == "found"
    assert (got["best"]["candidate"]["index"], got["best"]["gpus"]) == (1, 4)
    assert [p["candidate"]["index"] for p in got["runner_ups"]] == [0]
    assert got["considered"] == 3, "the 64-GPU row is over the budget of 32"
    scaled = sweeper.recommend(CONFIG, rows, 60, scale_replicas=True)
    assert scaled["best"]["copies"] == 2 and scaled["best"]["gpus"] == 4


def test_recommend_errors():
    with pytest.raises(ValueError, match="rate must be a number of requests per second > 0"):
        sweeper.recommend(CONFIG, [], 0)
    with pytest.raises(OSError):
        sweeper.recommend(CONFIG, "/nonexistent/sweep", 4)
