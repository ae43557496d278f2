"""sweeper.run with a Python callable: the candidate object, every outcome, the output
directory, and a sweep killed with SIGKILL, or stopped by Ctrl-C, and resumed to the
uninterrupted result."""

import _thread
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import sweeper
from conftest import EXAMPLES
from sweep_model import CONFIG, evaluate

SMALL = """\
goal: {target: throughput}
workload: {isl: 100, osl: 100, num_request_ratio: 1, concurrency: 4}
search_space: {gpu_budget: 8, used_gpus: [tp], parameters: {tp: {values: [1, 2, 4, 8]}, x: {float: [0, 1]}}}
sweep: {max_rounds: 3, candidates_per_round: 3, parallel_evals: 3, seed: 5}
"""


def test_the_evaluator_gets_the_command_protocols_candidate(cli, tmp_path):
    seen = []

    def ev(c):
        seen.append(c)
        return {"output_throughput_tok_s": 10.0 * c["parameters"]["x"]}

    result = sweeper.run(SMALL, ev)
    first = seen[0]
    assert set(first) == {"id", "parameters", "used_gpus", "concurrency", "kv_load_ratio", "workload", "sla", "planner_target"}
    assert first["concurrency"] == 4 and first["kv_load_ratio"] is None
    assert first["workload"] == {"isl": 100, "osl": 100, "num_request_ratio": 1, "concurrency": 4}
    assert first["used_gpus"] == first["parameters"]["tp"]
    assert type(first["parameters"]["tp"]) is int and type(first["parameters"]["x"]) is float
    # `sweeper evaluate` sends the same object to a command evaluator
    script = tmp_path / "echo.py"
    script.write_text(
        "import json, sys\n"
        f"c = json.load(sys.stdin); open({str(tmp_path / 'got.json')!r}, 'w').write(json.dumps(c))\n"
        "print(json.dumps({'output_throughput_tok_s': 1.0}))\n"
    )
    config = tmp_path / "c.yaml"
    config.write_text(SMALL + f"evaluator: {{command: [{sys.executable}, {script}]}}\n")
    code, _, err = cli("evaluate", config, "--candidate", json.dumps(first["parameters"]))
    assert code == 0, err
    sent = json.loads((tmp_path / "got.json").read_text())
    assert {k: v for k, v in sent.items() if k != "id"} == {k: v for k, v in first.items() if k != "id"}
    assert result["tallies"]["feasible"] == len(seen)


def test_every_outcome_is_tallied_with_its_reason():
    def ev(c):
        p = c["parameters"]
        if p["tp"] == 1:
            raise sweeper.Unsupported("tp=1 is not built")
        if p["x"] > 0.8:
            raise sweeper.Infeasible("x over 0.8 runs out of memory")
        if p["x"] < 0.1:
            raise KeyError("boom")
        if 0.45 < p["x"] < 0.5:
            return {"output_throughput_tok_s": math.nan}
        if 0.5 <= p["x"] < 0.52:
            return [1, 2]
        return {"output_throughput_tok_s": 100.0 * p["x"] * p["tp"], "model": "m", "big": math.inf}

    config = SMALL.replace("max_rounds: 3", "max_rounds: 6")
    r = sweeper.run(config, ev)
    t = r["tallies"]
    statuses = [x["status"] for x in r["trials"]]
    assert sum(t.values()) == len(r["trials"])
    for status, key in [("feasible", "feasible"), ("infeasible", "infeasible"), ("failed", "failed"), ("unsupported", "unsupported")]:
        assert statuses.count(status) == t[key]
    assert t["unsupported"] > 0 and t["feasible"] > 0
    reasons = dict(r["reasons"])
    assert reasons.get("tp=1 is not built") == t["unsupported"]
    for trial in r["trials"]:
        x, tp = trial["config"]["x"], trial["config"]["tp"]
        if trial["status"] == "failed":
            assert trial["reason"].startswith("the evaluator raised KeyError: 'boom'") or "NaN" in trial["reason"] or "returned list" in trial["reason"], trial
        if trial["status"] == "infeasible" and tp * 1 <= 8:
            assert trial["reason"] == "x over 0.8 runs out of memory"
        if trial["status"] == "feasible":
            assert trial["labels"] == {"model": "m"}
            assert trial["metrics"]["big"] == math.inf
            assert trial["score"] == pytest.approx(100.0 * x * tp)
    # the ranking: best score first
    scores = [c["score"] for c in r["candidates"]]
    assert scores == sorted(scores, reverse=True) and len(scores) == t["feasible"]
    assert r["pareto"] is False and r["objectives"] == ["throughput"]


def test_evaluations_run_on_parallel_evals_threads():
    # each call sleeps with the GIL released; three worker threads overlap their sleeps
    active, peak, lock = [0], [0], threading.Lock()

    def ev(c):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return {"output_throughput_tok_s": c["parameters"]["x"]}

    sweeper.run(SMALL, ev)
    assert peak[0] == 3


def test_out_dir_is_journaled_and_refused_twice(tmp_path):
    out = tmp_path / "out"
    r = sweeper.run(CONFIG, evaluate, out=out)
    for name in ("journal.jsonl", "result.json", "result.csv", "trials.csv", "config.yaml", "front.svg"):
        assert (out / name).is_file(), name
    saved = json.loads((out / "result.json").read_text())
    assert len(saved["trials"]) == len(r["trials"])
    assert r["pareto"] and [c["index"] for c in r["candidates"]] == [c["index"] for c in saved["candidates"]]
    with pytest.raises(OSError, match=r"already holds the journal of a sweep; continue it with run\(config, evaluator, out=.*, resume=True\)"):
        sweeper.run(CONFIG, evaluate, out=out)
    # resuming a finished sweep evaluates nothing and gives the same result
    calls = []
    again = sweeper.run(CONFIG, lambda c: calls.append(c) or evaluate(c), out=out, resume=True)
    assert calls == [] and again == r
    with pytest.raises(RuntimeError, match="another config"):
        sweeper.run(CONFIG.replace("seed: 11", "seed: 12"), evaluate, out=out, resume=True)
    with pytest.raises(ValueError, match="resume=True needs out=DIR"):
        sweeper.run(CONFIG, evaluate, resume=True)


def _halfway_child(tmp_path, out, total, **popen):
    """A child process running sweep_model.py's sweep into `out`, once it has made half of
    its `total` evaluator calls (each sleeps 50 ms)."""
    log = tmp_path / f"{out.name}.calls.log"
    env = dict(os.environ, SWEEP_LOG=str(log), SWEEP_SLEEP="0.05")
    here = os.path.dirname(__file__)
    child = subprocess.Popen([sys.executable, os.path.join(here, "sweep_model.py"), str(out)], env=env, **popen)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if log.exists() and len(log.read_text().split()) >= total // 2:
            return child
        assert child.poll() is None, "the sweep ended before it could be stopped"
        time.sleep(0.01)
    raise AssertionError("the sweep made too few calls in 120 s")


def test_a_killed_sweep_resumes_to_the_uninterrupted_result(tmp_path):
    whole = sweeper.run(CONFIG, evaluate, out=tmp_path / "whole")
    total = len(whole["trials"])

    out = tmp_path / "killed"
    child = _halfway_child(tmp_path, out, total)
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    lines = [json.loads(x) for x in (out / "journal.jsonl").read_text().splitlines() if x.strip()]
    finished = sum(1 for x in lines if x.get("kind") == "outcome")
    assert 0 < finished < total
    assert not (out / "result.json").exists()

    calls = []
    resumed = sweeper.run(CONFIG, lambda c: calls.append(c["id"]) or evaluate(c), out=out, resume=True)
    # only what had not finished ran again, and the end is the uninterrupted run's
    assert len(calls) == total - finished
    assert resumed == whole
    assert json.loads((out / "result.json").read_text())["candidates"] == json.loads(
        (tmp_path / "whole" / "result.json").read_text()
    )["candidates"]


def _outcomes(out):
    lines = [json.loads(x) for x in (out / "journal.jsonl").read_text().splitlines() if x.strip()]
    return sum(1 for x in lines if x.get("kind") == "outcome")


@pytest.fixture
def ctrl_c():
    """Ctrl-C raises KeyboardInterrupt for the test's length, also where the suite was
    started with SIGINT ignored (a shell's background job), as an interactive Python has it."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_stops_the_sweep_and_resume_loses_nothing(tmp_path, ctrl_c):
    whole = sweeper.run(CONFIG, evaluate, out=tmp_path / "whole")
    total = len(whole["trials"])
    out, calls = tmp_path / "interrupted", []

    def ev(c):
        calls.append(c["id"])
        if len(calls) == total // 2:
            _thread.interrupt_main()  # what Ctrl-C does: the main thread's signal flag
        time.sleep(0.02)
        return evaluate(c)

    with pytest.raises(KeyboardInterrupt, match=r"sweeper.run interrupted; the finished evaluations are in .*journal.jsonl; continue with run\(config, evaluator, out=.*, resume=True\)"):
        sweeper.run(CONFIG, ev, out=out)
    finished = _outcomes(out)
    assert total // 2 <= finished < total
    assert not (out / "result.json").exists()
    again = []
    resumed = sweeper.run(CONFIG, lambda c: again.append(c["id"]) or evaluate(c), out=out, resume=True)
    # every call of the interrupted run was journaled (none failed): none ran twice
    assert len(calls) + len(again) == total and not set(calls) & set(again)
    assert resumed == whole


def test_sigint_ends_a_python_process_in_the_middle_of_a_sweep(tmp_path):
    whole = sweeper.run(CONFIG, evaluate, out=tmp_path / "whole")
    total = len(whole["trials"])
    out = tmp_path / "sigint"
    child = _halfway_child(tmp_path, out, total, stderr=subprocess.PIPE, text=True)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    # an uncaught KeyboardInterrupt ends Python by SIGINT, as a shell expects
    assert child.returncode == -signal.SIGINT, err
    assert "KeyboardInterrupt: sweeper.run interrupted" in err and "resume=True" in err, err
    finished = _outcomes(out)
    assert 0 < finished < total
    calls = []
    resumed = sweeper.run(CONFIG, lambda c: calls.append(c["id"]) or evaluate(c), out=out, resume=True)
    assert len(calls) == total - finished
    assert resumed == whole


def test_without_an_evaluator_the_configs_own_runs(tmp_path):
    r = sweeper.run(EXAMPLES / "quickstart.yaml", out=tmp_path / "q")
    assert r["pareto"] and r["tallies"]["feasible"] > 0
    assert json.loads((tmp_path / "q" / "result.json").read_text())["candidates"]
    with pytest.raises(ValueError, match="no evaluator: pass evaluator=callable"):
        sweeper.run(SMALL)
    with pytest.raises(TypeError, match="evaluator must be a callable"):
        sweeper.run(SMALL, 42)
    with pytest.raises(sweeper.ConfigError):
        sweeper.run("goal: {target: goodput}", evaluate)


def test_an_evaluator_that_always_fails_stops_the_sweep():
    def ev(c):
        raise RuntimeError("no GPU")

    with pytest.raises(RuntimeError, match=r"stopped: the evaluator failed \d+ evaluations in a row .*the evaluator raised RuntimeError: no GPU"):
        sweeper.run(SMALL.replace("max_rounds: 3", "max_rounds: 20"), ev)
