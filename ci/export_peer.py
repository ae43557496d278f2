#!/usr/bin/env python3
"""The manifests of `sweeper export` against aiconfigurator 0.12.0's generator.

For every candidate of crates/sweeper-export/tests/cases.json on every backend (vllm,
sglang, trtllm), this renders the same candidate with `aiconfigurator.generator` (its
`k8s_deploy.yaml`, nvidia.com/v1alpha1) and compares it with sweeper's golden manifests
(crates/sweeper-export/tests/it/snapshots/, which the Rust tests hold equal to what
`sweeper export` writes): replicas per role, GPUs per worker, the worker's parallel flags
(tensor, data/attention and expert parallelism), and the GPUs the whole manifest requests
by the CRD's rule (replicas x nodeCount x GPU limit). It also reads sweeper's YAML with a
real YAML parser, so the hand-written emitter is checked against PyYAML.

Every disagreement must be a known one, listed in KNOWN with the reason (the README's
"From a sweep to a deployment" repeats them); an unknown one fails (exit 1). Run:

    python -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator==0.12.0
    /tmp/aic/bin/python ci/export_peer.py

Needs aiconfigurator (which brings PyYAML and Jinja2); standard library otherwise.
"""

import json
import logging
import shlex
import sys
from pathlib import Path

import yaml
from aiconfigurator.generator.api import (
    generate_backend_artifacts,
    generate_config_from_input_dict,
)

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "crates/sweeper-export/tests/cases.json"
SNAPSHOTS = ROOT / "crates/sweeper-export/tests/it/snapshots"
BACKENDS = ["vllm", "sglang", "trtllm"]
MODEL = "Qwen/Qwen3-235B-A22B-FP8"

# (case, backend, role, quantity) -> why the two differ; a backend of "*" matches all.
MULTINODE = (
    "aic writes a multinode worker's whole GPU count as its GPU limit beside nodeCount; the "
    "CRD counts nodeCount x limit, so the worker requests nodeCount times its GPUs; sweeper "
    "writes the per-node count"
)
DP_TWICE = (
    "aic's SGLang and TRT-LLM rules set tensor_parallel_size = moe_tp x moe_ep (all the "
    "worker's ranks) and then gpus_per_worker = tensor_parallel_size x pp x data_parallel_size, "
    "counting attention DP twice: a DEP worker of 8 ranks asks for 64 GPUs; its flags agree"
)
KNOWN = {
    ("disagg_moe", "vllm", "decode", "gpu_limit"): MULTINODE,
    ("disagg_moe", "vllm", "all", "manifest_gpus"): MULTINODE,
}
for backend in ("sglang", "trtllm"):
    KNOWN[("agg_moe", backend, "worker", "gpu_limit")] = DP_TWICE
    KNOWN[("agg_moe", backend, "all", "manifest_gpus")] = DP_TWICE
    KNOWN[("disagg_moe", backend, "decode", "gpu_limit")] = DP_TWICE + "; and " + MULTINODE
    KNOWN[("disagg_moe", backend, "all", "manifest_gpus")] = DP_TWICE + "; and " + MULTINODE


def sweeper_manifest(case, backend, api):
    """sweeper's golden manifest, read by PyYAML (the insta header dropped)."""
    text = (SNAPSHOTS / f"it__golden__{case}_{backend}_{api}_dgd.snap").read_text()
    body = text.split("\n---\n", 1)[1]
    return yaml.safe_load(body)


def aic_inputs(candidate, backend):
    """aiconfigurator's generator input for a sweeper candidate."""
    disagg = candidate.get("deployment_mode") == "disagg"
    roles = ["prefill", "decode"] if disagg else ["agg"]
    workers, counts = {}, {}
    is_moe = False
    for role in roles:
        p = "" if role == "agg" else role + "_"
        tp = candidate.get(p + "tp", 1)
        dp = candidate.get(p + "attention_dp", 1)
        pp = candidate.get(p + "pp", 1)
        w = {
            "tensor_parallel_size": tp,
            "pipeline_parallel_size": pp,
            "data_parallel_size": dp,
            "gpus_per_worker": tp * dp * pp,
        }
        if p + "moe_ep" in candidate:
            is_moe = True
            w["moe_tensor_parallel_size"] = candidate[p + "moe_tp"]
            w["moe_expert_parallel_size"] = candidate[p + "moe_ep"]
        if p + "max_batch_size" in candidate:
            w["max_batch_size"] = candidate[p + "max_batch_size"]
        workers[role] = w
        counts[role + "_workers"] = candidate.get(p + "replicas", 1)
    return {
        "ServiceConfig": {"model_path": MODEL, "served_model_name": MODEL},
        "K8sConfig": {"k8s_namespace": "serving", "k8s_image": "IMAGE"},
        "DynConfig": {"mode": "disagg" if disagg else "agg"},
        "ModelConfig": {"is_moe": is_moe},
        "SlaConfig": {"isl": 4000, "osl": 500},
        "WorkerConfig": counts,
        "NodeConfig": {"num_gpus_per_node": 8},
        "Workers": workers,
    }


def aic_manifest(candidate, backend):
    params = generate_config_from_input_dict(aic_inputs(candidate, backend), backend=backend)
    artifacts = generate_backend_artifacts(params, backend)
    docs = [d for d in yaml.safe_load_all(artifacts["k8s_deploy.yaml"]) if d]
    return next(d for d in docs if d.get("kind") == "DynamoGraphDeployment")


def words(container):
    """A container's command line as words (a `bash -c` script's too)."""
    out = list(container.get("command") or []) + list(container.get("args") or [])
    text = " ".join(str(w) for w in out)
    return shlex.split(text.replace("\\\n", " "), comments=False, posix=True)


def flags(container):
    """The parallel shape a worker's command line (or TRT-LLM engine config) asks for."""
    ws = words(container)
    script = " ".join(str(a) for a in container.get("args") or [])

    def value(*names):
        for i, w in enumerate(ws):
            for n in names:
                if w == n and i + 1 < len(ws):
                    return int(ws[i + 1])
                if w.startswith(n + "="):
                    return int(w.split("=", 1)[1])
        return None

    tp = value("--tensor-parallel-size", "--tp-size", "--tp")
    dp = value("--data-parallel-size", "--dp-size", "--dp")
    ep = value("--expert-parallel-size", "--ep-size", "--ep")
    attn_dp = "--enable-dp-attention" in ws or "--enable-attention-dp" in ws
    expert = "--enable-expert-parallel" in ws
    # aiconfigurator's TRT-LLM worker carries its shape in an engine YAML inside the script.
    if "tensor_parallel_size:" in script:
        engine = yaml.safe_load(script.split("<<'YAML'\n", 1)[1].split("\nYAML\n", 1)[0])
        tp = engine.get("tensor_parallel_size", tp)
        ep = engine.get("moe_expert_parallel_size", ep)
        attn_dp = bool(engine.get("enable_attention_dp", attn_dp))
    if expert and ep is None:
        ep = (tp or 1) * (dp or 1)  # vLLM: EP over every rank of the worker
    return {
        "tensor_parallel": tp or 1,
        "data_parallel": dp or (1 if not attn_dp else None),
        "expert_parallel": ep or 1,
        "attention_dp": attn_dp or (dp or 1) > 1,
    }


def roles_v1alpha1(manifest):
    out = {}
    for name, svc in manifest["spec"]["services"].items():
        if svc.get("componentType") == "frontend":
            continue
        role = svc.get("subComponentType") or "worker"
        gpu = int(svc.get("resources", {}).get("limits", {}).get("gpu", 0))
        nodes = int((svc.get("multinode") or {}).get("nodeCount", 1))
        out[role] = {
            "replicas": svc.get("replicas", 1),
            "gpu_limit": gpu,
            "nodes": nodes,
            **flags(svc["extraPodSpec"]["mainContainer"]),
        }
    return out


def manifest_gpus(roles):
    return sum(r["replicas"] * r["nodes"] * r["gpu_limit"] for r in roles.values())


def main():
    logging.disable(logging.CRITICAL)  # the generator logs rule-template misses at ERROR
    cases = json.loads(CASES.read_text())
    unknown, rows = [], []
    for case, candidate in cases.items():
        if case.startswith("$"):
            continue
        for backend in BACKENDS:
            ours = roles_v1alpha1(sweeper_manifest(case, backend, "v1alpha1"))
            beta = sweeper_manifest(case, backend, "v1beta1")
            assert beta["apiVersion"] == "nvidia.com/v1beta1", beta["apiVersion"]
            theirs = roles_v1alpha1(aic_manifest(candidate, backend))
            used = candidate["used_gpus"]
            assert manifest_gpus(ours) == used, (case, backend, ours)
            checks = [("all", "manifest_gpus", manifest_gpus(ours), manifest_gpus(theirs))]
            for role in sorted(set(ours) | set(theirs)):
                a, b = ours.get(role, {}), theirs.get(role, {})
                for q in ["replicas", "gpu_limit", "tensor_parallel", "data_parallel", "expert_parallel", "attention_dp"]:
                    checks.append((role, q, a.get(q), b.get(q)))
            for role, q, a, b in checks:
                why = KNOWN.get((case, backend, role, q))
                if a == b:
                    verdict = "agree"
                elif why:
                    verdict = "differ (known, see KNOWN)"
                else:
                    verdict = "DIFFER"
                    unknown.append((case, backend, role, q, a, b))
                rows.append((case, backend, role, q, a, b, verdict))
    width = [max(len(str(r[i])) for r in rows) for i in range(6)]
    for r in rows:
        print("  ".join(str(v).ljust(width[i]) for i, v in enumerate(r[:6])) + "  " + r[6])
    agree = sum(1 for r in rows if r[6] == "agree")
    print(f"\n{agree} of {len(rows)} quantities agree; {len(rows) - agree - len(unknown)} differ as documented; {len(unknown)} unexplained")
    if unknown:
        for u in unknown:
            print("unexplained difference:", u, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
