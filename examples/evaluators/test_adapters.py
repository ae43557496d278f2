"""Tests of the tool-free parts of the adapters: the protocol helper and the aiperf converter.

Standard library only, no wrapped tool needed:

    python3 -m unittest discover -s examples/evaluators -p 'test_*.py'
"""

from __future__ import annotations

import json
import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import aiperf_to_report as ap  # noqa: E402
import sweeper_eval as se  # noqa: E402

SAMPLE = HERE / "aiperf-sample"


def candidate(**overrides):
    base = {
        "id": 1,
        "parameters": {"tp": 2, "replicas": 1},
        "used_gpus": 2,
        "concurrency": 32,
        "kv_load_ratio": None,
        "workload": {"isl": 4000, "osl": 500, "num_request_ratio": 10, "concurrency": 32},
        "sla": None,
        "planner_target": None,
    }
    base.update(overrides)
    return base


class Spec5(unittest.TestCase):
    def test_round_half_even_ties_go_to_even(self):
        self.assertEqual([se.round_half_even(x) for x in (0.5, 1.5, 2.5, 3.5, 2.4, 2.6)], [0, 2, 2, 4, 2, 3])

    def test_request_count_is_at_least_one(self):
        self.assertEqual(se.request_count(0.01, 3), 1)
        self.assertEqual(se.request_count(10, 64), 640)
        self.assertEqual(se.request_count(0.5, 5), 2)

    def test_spec_example_ratio_to_concurrency(self):
        # SPEC 5: 10,000 tokens per rank, block 64, 2 DP ranks, 3 replicas, isl = osl = 100.
        kv_tokens = se.whole_blocks(10_000, 64) * 2 * 3
        self.assertEqual(kv_tokens, 59_904)
        capacity = se.kv_capacity(kv_tokens, 100, 100)
        self.assertEqual(capacity, 399)
        self.assertEqual(se.concurrency_for_ratio(0.5, capacity), 199)

    def test_capacity_below_one_request_is_infeasible_and_names_the_numbers(self):
        with self.assertRaises(se.Infeasible) as caught:
            se.kv_capacity(3200, 4000, 500, "decode")
        self.assertIn("decode pool holds 3200 kv tokens", caught.exception.reason)
        self.assertIn("4250", caught.exception.reason)
        self.assertEqual(caught.exception.exit_code, 4)

    def test_ratio_has_no_upper_clamp_and_a_floor_of_one(self):
        self.assertEqual(se.concurrency_for_ratio(2.0, 10), 20)
        self.assertEqual(se.concurrency_for_ratio(0.0, 10), 1)

    def test_resolve_load_kinds(self):
        fixed = se.resolve_load(candidate())
        self.assertEqual((fixed.concurrency, fixed.request_count), (32, 320))
        ratio = se.resolve_load(candidate(concurrency=None, kv_load_ratio=0.5), lambda: 59_904 * 30)
        self.assertEqual(ratio.kv_capacity_tokens, 59_904 * 30)
        self.assertEqual(ratio.concurrency, (59_904 * 30 // 4250) // 2)
        rate = se.resolve_load(
            candidate(concurrency=None, workload={"isl": 10, "osl": 10, "num_request_ratio": 20, "request_rate": 2.5})
        )
        self.assertEqual((rate.concurrency, rate.request_rate, rate.request_count), (None, 2.5, 50))
        trace = se.resolve_load(candidate(concurrency=None, workload={"trace_path": "t.jsonl", "replay_concurrency": 8}))
        self.assertEqual((trace.trace_path, trace.concurrency, trace.request_count), ("t.jsonl", 8, None))

    def test_a_searched_level_is_the_load(self):
        # sweeper sends a searched concurrency or request_rate as the request's own load,
        # with a workload that fixes none
        workload = {"isl": 10, "osl": 10, "num_request_ratio": 20}
        conc = se.resolve_load(candidate(concurrency=64, workload=workload))
        self.assertEqual((conc.concurrency, conc.request_rate, conc.request_count), (64, None, 1280))
        rate = se.resolve_load(candidate(concurrency=None, request_rate=0.5, workload=workload))
        self.assertEqual((rate.concurrency, rate.request_rate, rate.request_count), (None, 0.5, 10))

    def test_a_ratio_among_the_parameters_is_read_and_allowed(self):
        cand = candidate(concurrency=None, parameters={"tp": 1, "kv_load_ratio": 0.5})
        se.check_known(cand["parameters"], ["tp"], [])
        self.assertEqual(se.resolve_load(cand, lambda: 42_500).concurrency, 5)

    def test_a_ratio_without_a_kv_model_is_unsupported(self):
        with self.assertRaises(se.Unsupported):
            se.resolve_load(candidate(concurrency=None, kv_load_ratio=0.5))

    def test_no_load_fails(self):
        with self.assertRaises(se.Failed):
            se.resolve_load(candidate(concurrency=None, workload={"isl": 1, "osl": 1, "num_request_ratio": 1}))


class Reports(unittest.TestCase):
    def test_nan_in_a_spec_key_fails_and_elsewhere_is_dropped(self):
        with self.assertRaises(se.Failed) as caught:
            se.finish_report({"output_throughput_tok_s": float("nan")})
        self.assertIn("output_throughput_tok_s", caught.exception.reason)
        self.assertEqual(se.finish_report({"extra": float("nan"), "x": 1, "flag": True, "none": None}), {"x": 1})

    def test_unknown_parameters_fail_unless_ignored(self):
        with self.assertRaises(se.Failed):
            se.check_known({"tp": 1, "label": "a"}, ["tp"], [])
        se.check_known({"tp": 1, "label": "a"}, ["tp"], ["label"])

    def test_status_object(self):
        obj = se.status_object(se.Unsupported("tp=3"))
        self.assertEqual(obj, {se.STATUS_KEY: "unsupported", "reason": "tp=3"})


class Aiperf(unittest.TestCase):
    def test_converts_the_synthetic_sample(self):
        export = json.loads((SAMPLE / "tp2-r1" / "profile_export_aiperf.json").read_text())
        self.assertIn("SYNTHETIC", export["_synthetic"])
        report = ap.convert(export, 2)
        self.assertEqual(report["output_throughput_tok_s"], export["output_token_throughput"]["avg"])
        self.assertEqual(report["mean_e2e_latency_ms"], export["request_latency"]["avg"])
        self.assertEqual(report["mean_tpot_ms"], export["inter_token_latency"]["avg"])
        self.assertEqual(report["duration_ms"], export["benchmark_duration"]["avg"] * 1000.0)
        self.assertAlmostEqual(report["gpu_hours"], 2 * export["benchmark_duration"]["avg"] / 3600.0)
        self.assertAlmostEqual(
            report["goodput_output_throughput_tok_s"],
            export["goodput"]["avg"] * export["output_sequence_length"]["avg"],
        )
        self.assertEqual(report["concurrency"], 32)

    def test_time_units_are_converted_to_ms(self):
        export = {
            "output_token_throughput": {"avg": 100.0},
            "request_latency": {"unit": "sec", "avg": 2.0},
            "time_to_first_token": {"unit": "ns", "avg": 5e6},
            "benchmark_duration": {"unit": "sec", "avg": 60.0},
        }
        report = ap.convert(export, None)
        self.assertEqual(report["mean_e2e_latency_ms"], 2000.0)
        self.assertEqual(report["mean_ttft_ms"], 5.0)
        self.assertNotIn("gpu_hours", report)

    def test_missing_throughput_fails(self):
        with self.assertRaises(se.Failed):
            ap.convert({"request_latency": {"avg": 1.0}, "benchmark_duration": {"avg": 1.0}}, 1)

    def test_template_names_a_missing_placeholder(self):
        with self.assertRaises(se.Failed) as caught:
            ap.fill("runs/tp{tp}-r{replicas}", {"tp": 1})
        self.assertIn("{replicas}", caught.exception.reason)


class Protocol(unittest.TestCase):
    """The converter run as a process, through both protocol modes."""

    def run_converter(self, stdin: str, *args: str) -> subprocess.CompletedProcess:
        template = str(SAMPLE / "tp{tp}-r{replicas}" / "profile_export_aiperf.json")
        return subprocess.run(
            [sys.executable, str(HERE / "aiperf_to_report.py"), "--export", template, *args],
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
        )

    def test_one_shot_report_and_exit_codes(self):
        done = self.run_converter(json.dumps(candidate()))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(json.loads(done.stdout)["used_gpus"], 2)
        missing = self.run_converter(json.dumps(candidate(parameters={"tp": 8, "replicas": 1})))
        self.assertEqual(missing.returncode, 3)
        self.assertEqual(missing.stdout, "")
        self.assertIn("no aiperf export", missing.stderr.strip().splitlines()[-1])
        broken = self.run_converter("{not json")
        self.assertEqual(broken.returncode, 1)

    def test_persistent_answers_one_line_per_candidate(self):
        lines = [
            json.dumps(candidate()),
            json.dumps(candidate(id=2, parameters={"tp": 8, "replicas": 1})),
            "not json",
            json.dumps(candidate(id=3, parameters={"tp": 4, "replicas": 2}, used_gpus=8)),
        ]
        done = self.run_converter("\n".join(lines) + "\n", "--persistent")
        self.assertEqual(done.returncode, 0, done.stderr)
        answers = [json.loads(line) for line in done.stdout.splitlines()]
        self.assertEqual(len(answers), 4)
        self.assertIn("output_throughput_tok_s", answers[0])
        self.assertEqual(answers[1][se.STATUS_KEY], "unsupported")
        self.assertEqual(answers[2][se.STATUS_KEY], "failed")
        self.assertEqual(answers[3]["used_gpus"], 8)
        # Every answer names the candidate it answers, so sweeper can drop one out of step;
        # a line that was no JSON object had no id to echo.
        self.assertEqual([a.get(se.ID_KEY) for a in answers], [1, 2, None, 3])


    def test_whatever_the_tool_prints_stays_off_the_protocol_stream(self):
        noisy = (
            "import os, sys\n"
            f"sys.path.insert(0, {str(HERE)!r})\n"
            "import sweeper_eval as se\n"
            "def make():\n"
            "    print('import-time chatter')\n"
            "    def evaluate(c):\n"
            "        print('python print'); os.write(1, b'native write\\n')\n"
            "        return {'output_throughput_tok_s': 1.0}\n"
            "    return evaluate\n"
            "sys.exit(se.serve(make, persistent=True))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", noisy], input="{}\n{}\n", capture_output=True, text=True, check=False
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.splitlines(), ['{"output_throughput_tok_s": 1.0}'] * 2)
        self.assertIn("native write", done.stderr)
        self.assertIn("import-time chatter", done.stderr)


if __name__ == "__main__":
    unittest.main()


class DynamoTopologyKeys(unittest.TestCase):
    """The Dynamo replay adapter on a topology candidate's flat keys (SPEC 8), against a
    stand-in `dynamo` package that records the replay's arguments."""

    def setUp(self):
        import tempfile
        import types

        self.tmp = tempfile.TemporaryDirectory()
        pkg = Path(self.tmp.name) / "dynamo"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        (pkg / "_core.py").write_text(
            "def _normalize_mocker_config(args):\n"
            "    return {'engine': {'num_gpu_blocks': 1000, 'block_size': 16},"
            " 'dp_size': args.get('dp_size', 1)}\n"
        )
        (pkg / "replay.py").write_text(
            "CALLS = []\n"
            "class R:\n"
            "    summary = {'completed_requests': 4, 'output_throughput_tok_s': 1.0}\n"
            "def run_synthetic_trace_replay(isl, osl, n, **kw):\n"
            "    CALLS.append(kw)\n"
            "    return R()\n"
            "def run_trace_replay(path, **kw):\n"
            "    CALLS.append(kw)\n"
            "    return R()\n"
        )
        sys.path.insert(0, self.tmp.name)
        for name in [m for m in sys.modules if m == "dynamo" or m.startswith("dynamo.")]:
            del sys.modules[name]
        import dynamo_replay

        opts = types.SimpleNamespace(engine_args=None, ignore=[], seed=42)
        self.evaluate = dynamo_replay.make_evaluate(opts)
        import dynamo.replay

        self.calls = dynamo.replay.CALLS

    def tearDown(self):
        sys.path.remove(self.tmp.name)
        for name in [m for m in sys.modules if m == "dynamo" or m.startswith("dynamo.")]:
            del sys.modules[name]
        self.tmp.cleanup()

    def test_a_disagg_candidate_maps_each_pool_with_its_own_attention_dp(self):
        params = {
            "deployment_mode": "disagg", "backend": "vllm", "used_gpus": 24,
            "prefill_tp": 8, "prefill_pp": 1, "prefill_attention_dp": 1, "prefill_moe_tp": 1,
            "prefill_moe_ep": 8, "prefill_strategy": "tep", "prefill_replicas": 1,
            "decode_tp": 1, "decode_pp": 1, "decode_attention_dp": 8, "decode_moe_tp": 1,
            "decode_moe_ep": 8, "decode_strategy": "dep", "decode_replicas": 2,
        }
        report = self.evaluate(candidate(parameters=params, used_gpus=24))
        self.assertEqual(report["used_gpus"], 24)
        kw = self.calls[-1]
        self.assertEqual(kw["num_prefill_workers"], 1)
        self.assertEqual(kw["num_decode_workers"], 2)
        self.assertEqual(kw["prefill_engine_args"]["tensor_parallel_size"], 8)
        self.assertEqual(kw["prefill_engine_args"]["dp_size"], 1)
        self.assertEqual(kw["decode_engine_args"]["tensor_parallel_size"], 1)
        self.assertEqual(kw["decode_engine_args"]["dp_size"], 8)

    def test_an_agg_candidate_and_a_pipeline_stage(self):
        params = {
            "deployment_mode": "agg", "backend": "vllm", "used_gpus": 8, "tp": 1, "pp": 1,
            "attention_dp": 4, "moe_tp": 1, "moe_ep": 4, "strategy": "dep", "replicas": 2,
        }
        report = self.evaluate(candidate(parameters=params, used_gpus=8))
        self.assertEqual(report["used_gpus"], 8)
        self.assertEqual(self.calls[-1]["num_workers"], 2)
        self.assertEqual(self.calls[-1]["extra_engine_args"]["dp_size"], 4)
        with self.assertRaises(se.Unsupported):
            self.evaluate(candidate(parameters=dict(params, pp=2)))


class AiconfiguratorTopologyKeys(unittest.TestCase):
    """The aiconfigurator adapter on a disaggregated candidate's flat keys, against stand-in
    `aiconfigurator`/`aiconfigurator_core` packages that record the estimate's arguments."""

    STUBS = {
        "aiconfigurator/__init__.py": "",
        "aiconfigurator/cli/__init__.py": "",
        "aiconfigurator/cli/api.py": (
            "CALLS = []\n"
            "class E:\n"
            "    def __init__(self, kw):\n"
            "        workers = kw.get('decode_num_workers', 1)\n"
            "        bs = kw.get('decode_batch_size', kw.get('batch_size'))\n"
            "        self.raw = {'tokens/s': 100.0 * bs * workers, 'seq/s': 1.0 * bs * workers,\n"
            "                    'request_latency': 500.0, 'num_total_gpus': 11, '(d)memory': 7.5}\n"
            "        self.ttft, self.tpot, self.kv_cache_warning = 40.0, 10.0, None\n"
            "def cli_estimate(model, system, **kw):\n"
            "    CALLS.append(kw)\n"
            "    return E(kw)\n"
        ),
        "aiconfigurator_core/__init__.py": "",
        "aiconfigurator_core/sdk/__init__.py": "",
        "aiconfigurator_core/sdk/memory.py": (
            "KV = []\n"
            "def estimate_kv_cache(model, system, backend, version, **kw):\n"
            "    KV.append(kw)\n"
            "    return {'total_kv_size_tokens': 32000}\n"
        ),
        "aiconfigurator_core/sdk/perf_database.py": (
            "def get_latest_database_version(system, backend):\n"
            "    return '1.0'\n"
        ),
    }

    def setUp(self):
        import tempfile
        import types

        self.tmp = tempfile.TemporaryDirectory()
        for rel, text in self.STUBS.items():
            path = Path(self.tmp.name) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        sys.path.insert(0, self.tmp.name)
        self._forget()
        import aiconfigurator_eval

        opts = types.SimpleNamespace(
            model="m", system="h200_sxm", backend="trtllm", backend_version=None,
            max_batch_size=256, kv_block_size=None, ignore=[],
        )
        self.evaluate = aiconfigurator_eval.make_evaluate(opts)
        import aiconfigurator.cli.api
        import aiconfigurator_core.sdk.memory

        self.calls = aiconfigurator.cli.api.CALLS
        self.kv = aiconfigurator_core.sdk.memory.KV

    def _forget(self):
        for name in [m for m in sys.modules if m.split(".")[0] in ("aiconfigurator", "aiconfigurator_core")]:
            del sys.modules[name]

    def tearDown(self):
        sys.path.remove(self.tmp.name)
        self._forget()
        self.tmp.cleanup()

    DISAGG = {
        "deployment_mode": "disagg", "backend": "trtllm", "used_gpus": 11,
        "prefill_tp": 1, "prefill_pp": 1, "prefill_attention_dp": 1, "prefill_moe_tp": 1,
        "prefill_moe_ep": 1, "prefill_strategy": "tp", "prefill_replicas": 3,
        "decode_tp": 1, "decode_pp": 1, "decode_attention_dp": 4, "decode_moe_tp": 1,
        "decode_moe_ep": 4, "decode_strategy": "dep", "decode_replicas": 2,
        "max_batch_size": 16,
    }

    def test_a_disagg_candidate_is_one_disagg_estimate_with_each_pool_its_shape(self):
        report = self.evaluate(candidate(parameters=dict(self.DISAGG), used_gpus=11, concurrency=20))
        kw = self.calls[-1]
        self.assertEqual(kw["mode"], "disagg")
        self.assertEqual((kw["prefill_tp_size"], kw["prefill_attention_dp_size"], kw["prefill_num_workers"]), (1, 1, 3))
        self.assertEqual(
            (kw["decode_tp_size"], kw["decode_attention_dp_size"], kw["decode_moe_ep_size"], kw["decode_num_workers"]),
            (1, 4, 4, 2),
        )
        # the shared batch cap is the decode pool's; prefill runs whole prompts one at a time
        self.assertEqual(kw["prefill_batch_size"], 1)
        self.assertEqual(kw["decode_batch_size"], 10)  # ceil(20 / 2 decode workers), under the cap 16
        self.assertEqual(report["used_gpus"], 11)
        # the stand-in's estimate is of both pools at 10 a worker, all 20 in flight: no scaling
        self.assertEqual(report["output_throughput_tok_s"], 2000.0)
        self.assertEqual(report["memory_gb"], 7.5)
        # the KV capacity is the decode pool's: tokens a rank x its 4 DP ranks x 2 workers
        self.assertEqual(self.kv[-1]["attention_dp_size"], 4)
        self.assertEqual(report["kv_capacity_tokens"], 32000 * 4 * 2)

    def test_a_decode_pool_over_its_cap_queues_and_a_prefill_cap_is_its_own(self):
        params = dict(self.DISAGG, prefill_max_batch_size=2)
        report = self.evaluate(candidate(parameters=params, used_gpus=11, concurrency=64))
        kw = self.calls[-1]
        self.assertEqual(kw["prefill_batch_size"], 2)
        self.assertEqual(kw["decode_batch_size"], 16)
        # 32 of 64 in flight: the whole-deployment estimate is scaled to them, the rest wait
        self.assertEqual(report["output_throughput_tok_s"], 3200.0)
        self.assertGreater(report["queue_wait_ms"], 0.0)

    def test_the_keys_min_gpus_and_strict_sla_read_are_reported(self):
        # the stand-in: TTFT 40 ms, TPOT 10 ms, 20 requests a second at 20 in flight
        params = dict(self.DISAGG)
        met = self.evaluate(
            candidate(parameters=params, used_gpus=11, concurrency=20, sla={"ttft_ms": 100, "itl_ms": 20})
        )
        self.assertEqual(met["mean_itl_ms"], 10.0)
        self.assertEqual(met["mean_ttft_ms"], 40.0)
        self.assertEqual(met["request_throughput_rps"], 20.0)
        self.assertEqual(met["goodput_request_throughput_rps"], 20.0)
        missed = self.evaluate(
            candidate(parameters=params, used_gpus=11, concurrency=20, sla={"itl_ms": 5})
        )
        self.assertEqual(missed["goodput_request_throughput_rps"], 0.0)
        self.assertEqual(missed["goodput_output_throughput_tok_s"], 0.0)
        no_sla = self.evaluate(candidate(parameters=params, used_gpus=11, concurrency=20))
        self.assertNotIn("goodput_request_throughput_rps", no_sla)

    def test_a_key_of_the_other_branch_is_refused(self):
        with self.assertRaises(se.Failed) as caught:
            self.evaluate(candidate(parameters=dict(self.DISAGG, tp=2), used_gpus=11))
        self.assertIn("unknown parameter(s) tp:", caught.exception.reason)
