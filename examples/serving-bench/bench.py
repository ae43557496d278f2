#!/usr/bin/env python3
"""One sweeper evaluation on real GPUs: start a serving engine for the candidate, wait until
it is healthy, benchmark it, stop it, and print sweeper's report.

The one-shot evaluator protocol (docs/large-sweeps.md): the candidate is JSON on stdin, the
report JSON on stdout, diagnostics on stderr; exit 0 with a report, 3 unsupported, 4
infeasible (the server ran out of memory at start), anything else a failure.

    evaluator:
      command: [python3, examples/serving-bench/bench.py, --engine, vllm,
                --model, Qwen/Qwen3-32B-FP8]
      slurm: {partition: gpu, gpus_per_node: 8, time_limit: "01:00:00"}

It maps the candidate's ``tp`` and ``max_batch_size`` (and a searched ``concurrency``, the
load) onto the server; any other parameter fails the candidate, naming it, as sweeper's
adapters do, since a knob the server never sees would only add noise to the sweep
(``--ignore NAME`` lets one pass as a label).

What it does, step by step:

1. Picks a free TCP port by binding port 0 on the loopback (the kernel never hands the same
   free port to two jobs that share a node), unless ``--port`` is given.
2. Starts the server in a process group of its own, its output in ``server-trial-T.log``
   (T the candidate's trial id) in ``--log-dir``, by default the current directory (under
   Slurm the directory sweeper runs in, or the evaluator's ``cwd:``), so that evaluations
   running at once, on one node or on several, never write one log: ``vllm serve MODEL
   --tensor-parallel-size TP --max-num-seqs B --port PORT``, or ``python3 -m
   sglang.launch_server --model-path MODEL --tp TP --max-running-requests B --port PORT``.
   ``--server-cmd`` replaces the command (a Python format string with ``{model}``,
   ``{tp}``, ``{max_batch_size}``, ``{port}``; the test's fake server uses it).
3. Polls ``http://127.0.0.1:PORT/health`` every second until it answers 200, for at most
   ``--start-timeout`` seconds; if the server exits first, the candidate fails with the last
   lines of its log (an out-of-memory at start is reported infeasible, exit 4).
4. Runs the benchmark against it: ``vllm bench serve`` (works for SGLang's OpenAI server too)
   with random prompts of the workload's ``isl``/``osl``, ``--max-concurrency`` the
   candidate's ``concurrency`` and ``num_request_ratio × concurrency`` prompts, saving its
   result JSON; ``--bench-cmd`` replaces it (``{model}``, ``{port}``, ``{isl}``, ``{osl}``,
   ``{concurrency}``, ``{num_prompts}``, ``{result}``).
5. Stops the server: SIGTERM to its process group, SIGKILL after ``--stop-grace`` seconds;
   also when the benchmark fails or sweeper cancels the job (SIGTERM to this script).
6. Prints the report: ``output_throughput_tok_s``, ``mean_ttft_ms``, ``mean_itl_ms``,
   ``mean_e2e_latency_ms``, tok/s/user as ``1000 / mean_tpot_ms``, ``duration_ms`` and
   ``gpu_hours = used_gpus × duration``, the keys sweeper scores.

A multi-node candidate (``used_gpus`` above one node's GPUs) needs the engine's own
multi-node launch (Ray for vLLM, ``--nnodes``/``--node-rank`` for SGLang) started with
``srun`` on every node of the job; see docs/large-sweeps.md. This script serves one node.
"""
import argparse
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

VLLM = ("vllm serve {model} --tensor-parallel-size {tp} --max-num-seqs {max_batch_size}"
        " --port {port}")
SGLANG = ("python3 -m sglang.launch_server --model-path {model} --tp {tp}"
          " --max-running-requests {max_batch_size} --port {port}")
BENCH = ("vllm bench serve --backend openai --base-url http://127.0.0.1:{port} --model {model}"
         " --dataset-name random --random-input-len {isl} --random-output-len {osl}"
         " --num-prompts {num_prompts} --max-concurrency {concurrency}"
         " --percentile-metrics ttft,tpot,itl,e2el"
         " --save-result --result-filename {result}")


# The candidate parameters the server command reads (a searched `concurrency` is the load).
MAPPED = ("tp", "max_batch_size", "concurrency")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(msg):
    print(f"bench.py: {msg}", file=sys.stderr, flush=True)


def tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def healthy(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def stop(server, grace):
    if server is None or server.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        try:
            os.killpg(server.pid, sig)
        except ProcessLookupError:
            return
        try:
            server.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", choices=["vllm", "sglang"], default="vllm")
    ap.add_argument("--model", required=True)
    ap.add_argument("--port", type=int, help="default: a free port")
    ap.add_argument("--server-cmd", help="the server command (a format string)")
    ap.add_argument("--bench-cmd", default=BENCH, help="the benchmark command (a format string)")
    ap.add_argument("--start-timeout", type=float, default=1800.0)
    ap.add_argument("--stop-grace", type=float, default=30.0)
    ap.add_argument("--log-dir", default=".",
                    help="where server-trial-T.log goes (default: the current directory)")
    ap.add_argument("--ignore", action="append", default=[], metavar="NAME",
                    help="a candidate parameter the server does not read (a label); repeatable")
    args = ap.parse_args()

    c = json.load(sys.stdin)
    p = c.get("parameters", {})
    w = c.get("workload") or {}
    unknown = sorted(set(p) - set(MAPPED) - set(args.ignore))
    if unknown:
        log(f"the candidate's parameter(s) {', '.join(unknown)} are not mapped to the server: "
            f"this script maps {', '.join(MAPPED)}; extend its server command, or pass "
            f"--ignore NAME for a label the server does not read")
        return 1
    concurrency = c.get("concurrency") or p.get("concurrency") or w.get("concurrency")
    if concurrency is None:
        log("the candidate has no concurrency: set workload.concurrency or search a "
            "`concurrency` parameter (this script runs a closed loop)")
        return 3
    concurrency = int(concurrency)
    values = {
        "model": args.model,
        "tp": int(p.get("tp", 1)),
        "max_batch_size": int(p.get("max_batch_size", 256)),
        "port": args.port or free_port(),
        "isl": int(w.get("isl", 1024)),
        "osl": int(w.get("osl", 256)),
        "concurrency": concurrency,
        "num_prompts": max(1, round(float(w.get("num_request_ratio", 10)) * concurrency)),
    }
    server_cmd = args.server_cmd or (VLLM if args.engine == "vllm" else SGLANG)
    trial = c.get("id", "unknown")
    server_log = os.path.abspath(os.path.join(args.log_dir, f"server-trial-{trial}.log"))
    os.makedirs(args.log_dir, exist_ok=True)
    server = None

    def on_term(signum, _frame):
        stop(server, args.stop_grace)
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    try:
        argv = shlex.split(server_cmd.format(**values))
        log(f"starting {shlex.join(argv)} (log: {server_log})")
        with open(server_log, "wb") as out:
            server = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + args.start_timeout
        while not healthy(values["port"]):
            if server.poll() is not None:
                text = tail(server_log)
                log(f"the server exited with code {server.returncode} before it was healthy:\n{text}")
                return 4 if "out of memory" in text.lower() else 1
            if time.monotonic() > deadline:
                log(f"the server was not healthy after {args.start_timeout:.0f} s:\n{tail(server_log)}")
                return 1
            time.sleep(1.0)
        log(f"healthy on port {values['port']}")
        with tempfile.TemporaryDirectory() as tmp:
            values["result"] = os.path.join(tmp, "result.json")
            argv = shlex.split(args.bench_cmd.format(**values))
            log(f"benchmarking: {shlex.join(argv)}")
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=sys.stderr)
            if done.returncode != 0:
                log(f"the benchmark exited with code {done.returncode}")
                return 1
            with open(values["result"]) as f:
                r = json.load(f)
    finally:
        stop(server, args.stop_grace)

    duration_s = float(r["duration"])
    gpus = int(c.get("used_gpus") or values["tp"])
    report = {
        "output_throughput_tok_s": float(r["output_throughput"]),
        "mean_ttft_ms": float(r["mean_ttft_ms"]),
        "mean_itl_ms": float(r["mean_itl_ms"]),
        "mean_e2e_latency_ms": float(r["mean_e2el_ms"]),
        "mean_output_token_throughput_per_user": 1000.0 / float(r["mean_tpot_ms"]),
        "duration_ms": duration_s * 1000.0,
        "gpu_hours": gpus * duration_s / 3600.0,
        "concurrency": concurrency,
    }
    json.dump(report, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
