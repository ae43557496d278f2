"""Tests of sampler_paired.py (standard library only)."""

import json
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sampler_paired  # noqa: E402


class Paired(unittest.TestCase):
    def test_mean_se_and_t_of_the_differences(self):
        base = [0.1, 0.2, 0.3, 0.4]
        variant = [0.2, 0.2, 0.5, 0.4]  # differences 0.1, 0, 0.2, 0
        mean, se, t = sampler_paired.paired(base, variant)
        self.assertAlmostEqual(mean, 0.075)
        sd = math.sqrt((0.025**2 + 0.075**2 + 0.125**2 + 0.075**2) / 3)  # deviations from 0.075
        self.assertAlmostEqual(se, sd / 2)
        self.assertAlmostEqual(t, 0.075 / (sd / 2))

    def test_only_shared_seeds_count_and_identical_runs_give_zero(self):
        mean, _, t = sampler_paired.paired([0.5, 0.6, 0.7], [0.5, 0.6, 0.7, 9.0])
        self.assertEqual((mean, t), (0.0, 0.0))
        mean, se, t = sampler_paired.paired([0.5, 0.6], [0.6, 0.7])
        self.assertAlmostEqual(mean, 0.1)
        self.assertEqual(t, math.inf)
        with self.assertRaises(ValueError):
            sampler_paired.paired([], [0.1])

    def test_a_shift_shows_where_medians_cannot(self):
        # a variant 0.01 better on every seed of a wide spread: t is large
        base = [0.2 + 0.6 * ((i * 37) % 60) / 60 for i in range(60)]
        variant = [v + 0.01 + 0.001 * ((i * 7) % 3) for i, v in enumerate(base)]
        _, _, t = sampler_paired.paired(base, variant)
        self.assertGreater(t, 10)

    def test_files_cells_and_count_line(self):
        def line(problem, alg, seeds, batch=1):
            return json.dumps({"problem": problem, "algorithm": alg, "trials": 30, "batch": batch, "hv_seeds": seeds})

        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a.jsonl"), os.path.join(tmp, "b.jsonl")
            with open(a, "w") as f:
                f.write(line("dtlz2", "default", [0.1, 0.2, 0.3]) + "\n")
                f.write(line("kernel", "default", [0.5, 0.5, 0.6]) + "\n")
                f.write(line("kernel", "random", [0.0, 0.0, 0.0]) + "\n")
            with open(b, "w") as f:
                f.write("not json, skipped\n")
                f.write(line("dtlz2", "default", [0.3, 0.4, 0.6]) + "\n")
                f.write(line("kernel", "default", [0.4, 0.45, 0.5]) + "\n")
                f.write(line("zdt1", "default", [0.9, 0.9, 0.9]) + "\n")
            out = sampler_paired.report(sampler_paired.load(a, "default"), sampler_paired.load(b, "default"))
        self.assertEqual(len(out), 3, out)
        self.assertTrue(out[0].startswith("dtlz2"), out)
        self.assertIn("+0.2333", out[0])
        self.assertTrue(out[1].startswith("kernel"), out)
        self.assertEqual(out[2], "cells: 2; t >= 2: 1; t <= -2: 1")


if __name__ == "__main__":
    unittest.main()
