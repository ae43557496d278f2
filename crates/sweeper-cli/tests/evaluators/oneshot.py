"""A one-shot test evaluator: reads one candidate on stdin, behaves as argv[1] says."""

import json
import os
import signal
import sys

mode = sys.argv[1]
candidate = json.load(sys.stdin)
out = sys.stdout

if mode == "good":
    out.write(json.dumps({"throughput": 1250.5, "ttft_ms": 42, "tpot_ms": float("inf")}))
elif mode == "echo":
    # Echo every field of the candidate back as numbers, so the test can check the shape.
    p = candidate["parameters"]
    w = candidate["workload"]
    out.write(json.dumps({
        "keys_exact": int(sorted(candidate) == sorted([
            "id", "parameters", "used_gpus", "concurrency", "kv_load_ratio",
            "workload", "sla", "planner_target"])),
        "id": candidate["id"],
        "tp": p["tp"],
        "tp_is_int": int(isinstance(p["tp"], int)),
        "replicas": p["replicas"],
        "router_kv_aware": int(p["router"] == "kv_aware"),
        "backend_trtllm": int(p["backend"] == "trtllm"),
        "used_gpus": candidate["used_gpus"],
        "concurrency": -1 if candidate["concurrency"] is None else candidate["concurrency"],
        "kv_load_ratio": -1 if candidate["kv_load_ratio"] is None else candidate["kv_load_ratio"],
        "isl": w["isl"],
        "osl": w["osl"],
        "num_request_ratio": w["num_request_ratio"],
        "e2e_ms": candidate["sla"]["e2e_ms"],
        "planner_throughput": int(candidate["planner_target"] == "throughput"),
    }))
elif mode == "env":
    out.write(json.dumps({
        "value": float(os.environ["SWEEPER_TEST_VALUE"]),
        "has_path": int("PATH" in os.environ),
        "in_cwd": int(os.path.exists("cwd-marker.txt")),
    }))
elif mode == "nan":
    out.write(json.dumps({"throughput": 10.0, "ttft_ms": float("nan")}))
elif mode == "string":
    out.write(json.dumps({"throughput": "fast"}))
elif mode == "string_metric":
    out.write(json.dumps({"output_throughput_tok_s": "fast"}))
elif mode == "malformed":
    out.write('{"throughput": 12.5,')
elif mode == "empty":
    sys.stderr.write("database not found\n")
elif mode == "fail":
    for i in range(1, 9):
        sys.stderr.write(f"trace line {i}\n")
    sys.exit(2)
elif mode == "unsupported":
    sys.stderr.write("loading database\n")
    sys.stderr.write("tp=8 is not supported on this system\n")
    sys.exit(3)
elif mode == "infeasible":
    sys.stderr.write("kv cache holds 120 tokens, one request needs 4250\n")
    sys.exit(4)
elif mode == "status":
    out.write(json.dumps({"status": "unsupported", "reason": "no data for this backend"}))
elif mode == "signal":
    sys.stderr.write("about to crash\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)
elif mode == "chatty":
    # Far more stderr than a pipe holds, before the report.
    for i in range(20000):
        sys.stderr.write(f"progress {i:06d} " + "x" * 100 + "\n")
    out.write(json.dumps({"throughput": 7}))
elif mode == "huge":
    chunk = " " * (1 << 20)
    for _ in range(17):
        out.write(chunk)
    out.write("{}")
else:
    sys.exit(f"unknown mode {mode}")
