"""sweeper.plot draws what `sweeper plot` draws: a sweep, reports, several sweeps on one chart."""

import pytest

import sweeper
from test_score import GOALS, ROWS

CONFIG = """
goal: {target: pareto}
workload: {isl: 1000, osl: 200, num_request_ratio: 4, kv_load_ratio: [0.1, 1.0]}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters:
    tp: {values: [1, 2, 4]}
    replicas: {int: [1, 2]}
    max_batch_size: {values: [16, 64, 256]}
evaluator:
  builtin: {model: qwen3-32b-fp8, gpu: GPU}
sweep: {max_rounds: 3, candidates_per_round: 6, seed: 3}
"""


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweeps")
    for gpu in ("h200", "b200"):
        sweeper.run(CONFIG.replace("GPU", gpu), out=str(root / gpu))
    return root


def test_one_sweep_is_the_svg_the_command_line_draws(sweeps, cli, tmp_path):
    svg = sweeper.plot(sweeps / "h200", label="tp,max_batch_size")
    assert svg.startswith("<svg") and 'class="mark front"' in svg
    code, _, err = cli("plot", sweeps / "h200", "--label", "tp,max_batch_size", "--out", tmp_path / "c.svg")
    assert code == 0, err
    assert svg == (tmp_path / "c.svg").read_text()
    # a result.json's path and a title
    svg = sweeper.plot(str(sweeps / "h200" / "result.json"), title="mine")
    assert ">mine</text>" in svg


def test_two_sweeps_draw_one_chart_with_a_front_each_as_the_command_line_does(sweeps, cli, tmp_path):
    out = tmp_path / "both.svg"
    path = sweeper.plot([sweeps / "h200", sweeps / "b200"], out, label=["tp"], names=["H200", "B200"])
    assert path == str(out)
    svg = out.read_text()
    assert 'class="mark front series-0"' in svg and 'class="mark front series-1"' in svg
    assert "<title>B200 · trial " in svg and ">H200 vs B200</text>" in svg
    code, _, err = cli(
        "plot", sweeps / "h200", sweeps / "b200", "--label", "tp",
        "--name", "H200", "--name", "B200", "--out", tmp_path / "cli.svg",
    )
    assert code == 0, err
    assert svg == (tmp_path / "cli.svg").read_text()
    # named by their directories by default; PNG by the file name
    svg = sweeper.plot([str(sweeps / "h200"), str(sweeps / "b200")])
    assert ">h200: front " in svg and ">b200: front " in svg
    png = tmp_path / "both.png"
    sweeper.plot([sweeps / "h200", sweeps / "b200"], png)
    assert png.read_bytes()[1:4] == b"PNG"


def test_reports_are_scored_under_the_config_and_drawn_with_their_front():
    svg = sweeper.plot(ROWS, config=GOALS["pareto"], label="tp")
    front = sweeper.score(GOALS["pareto"], ROWS)
    assert svg.count('class="mark front"') == len(front)
    # the row over the budget is drawn as such, and counted
    assert 'class="mark over-budget"' in svg and "over the GPU budget (1)" in svg
    # a scalar goal: the value by row and the best so far
    svg = sweeper.plot(ROWS, config=GOALS["throughput_per_gpu"])
    assert 'class="mark best"' in svg
    # three objectives: objectives= picks two axes
    svg = sweeper.plot(ROWS, config=GOALS["pareto3"], objectives=["throughput", "e2e_latency"])
    assert "e2e_latency (ms)" in svg and "throughput_per_user (" not in svg


def test_what_cannot_be_drawn_is_refused_saying_how_to_fix_it(sweeps):
    with pytest.raises(ValueError, match="a list of reports needs config="):
        sweeper.plot(ROWS)
    with pytest.raises(ValueError, match=r"names: give one per input, in their order \(2 inputs, 1 names\)"):
        sweeper.plot([sweeps / "h200", sweeps / "b200"], names=["one"])
    with pytest.raises(ValueError, match="each input has its own colour"):
        sweeper.plot([sweeps / "h200", sweeps / "b200"], color_by="tp")
    with pytest.raises(ValueError, match=r"give a file name ending in \.svg"):
        sweeper.plot(sweeps / "h200", "chart.txt")
    with pytest.raises(
        ValueError,
        match="`reports 2` has the objectives throughput:max, e2e_latency:min, throughput_per_user:max, "
        "`h200` has throughput_per_gpu:max, throughput_per_user:max",
    ):
        sweeper.plot([sweeps / "h200", ROWS], config=GOALS["pareto3"])
    with pytest.raises(ValueError, match="objectives: `latency` is not an objective of the input"):
        sweeper.plot(sweeps / "h200", objectives=["latency"])
