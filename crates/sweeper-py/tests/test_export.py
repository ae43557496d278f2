"""sweeper.export writes what `sweeper export --trial ID` writes, and refuses what it refuses."""

import json
import os
import subprocess

import pytest

import sweeper

CONFIG = """
goal: {target: pareto}
workload: {isl: 1000, osl: 200, num_request_ratio: 4, kv_load_ratio: 0.5}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters:
    tp: {values: [1, 2, 4]}
    replicas: {int: [1, 2]}
    max_batch_size: {values: [16, 64]}
evaluator:
  builtin: {model: qwen3-32b-fp8, gpu: h200}
sweep: {max_rounds: 2, candidates_per_round: 4, seed: 3}
"""


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "out"
    sweeper.run(CONFIG, out=str(out))
    return out


def feasible_ids(out):
    result = json.loads((out / "result.json").read_text())
    return [c["index"] for c in result["candidates"]]


def test_export_writes_the_bundle_the_command_writes(sweep_dir, tmp_path):
    ids = feasible_ids(sweep_dir)
    folders = sweeper.export(str(sweep_dir), ids[:1], tmp_path / "py", model="Qwen/Qwen3-32B-FP8")
    assert folders == [str(tmp_path / "py" / f"trial-{ids[0]}")]
    ours = {f: open(os.path.join(folders[0], f)).read() for f in ("dgd.yaml", "launch.sh", "candidate.json")}
    cand = json.loads(ours["candidate.json"])
    assert cand["trial"] == ids[0]
    assert cand["deployment"]["used_gpus"] == cand["config"]["used_gpus"]
    binary = os.environ.get("SWEEPER_BIN")
    if binary:
        cli_out = tmp_path / "cli"
        subprocess.run(
            [binary, "export", str(sweep_dir), "--trial", str(ids[0]), "--out", str(cli_out), "--model", "Qwen/Qwen3-32B-FP8"],
            check=True,
            capture_output=True,
        )
        for f in ("dgd.yaml", "launch.sh"):
            assert (cli_out / f"trial-{ids[0]}" / f).read_text() == ours[f], f
    # The content of result.json exports the same way.
    result = json.loads((sweep_dir / "result.json").read_text())
    again = sweeper.export(result, ids[:1], tmp_path / "dict", model="Qwen/Qwen3-32B-FP8")
    text = open(os.path.join(again[0], "dgd.yaml")).read()
    assert text.split("\n", 1)[1] == ours["dgd.yaml"].split("\n", 1)[1]  # the source line differs


def test_export_refuses_with_the_commands_messages(sweep_dir, tmp_path):
    with pytest.raises(ValueError, match="the sweep has no trial 100000"):
        sweeper.export(str(sweep_dir), [100000], tmp_path)
    with pytest.raises(ValueError, match="trial_ids is empty"):
        sweeper.export(str(sweep_dir), [], tmp_path)
    with pytest.raises(ValueError, match='backend="tgi"'):
        sweeper.export(str(sweep_dir), feasible_ids(sweep_dir)[:1], tmp_path, backend="tgi")
    with pytest.raises(ValueError, match="not the content of a sweeper result.json"):
        sweeper.export({"trials": []}, [0], tmp_path)
