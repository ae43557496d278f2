"""Tests of sampler_table.py's rank test and its columns (standard library only).

    python3 -m unittest discover -s benches/peers -p 'test_*.py'
"""

import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sampler_table  # noqa: E402


def exact_p_below(a, b):
    """One-sided p of "a is lower" by enumerating every split of the pooled values (oracle)."""
    from itertools import combinations

    pooled = a + b
    n = len(a)

    def u_of(xs, ys):
        return sum((x > y) + 0.5 * (x == y) for x in xs for y in ys)

    observed = u_of(a, b)
    splits = list(combinations(range(len(pooled)), n))
    low = 0
    for idx in splits:
        xs = [pooled[i] for i in idx]
        ys = [pooled[i] for i in range(len(pooled)) if i not in idx]
        if u_of(xs, ys) <= observed:
            low += 1
    return low / len(splits)


class RankTest(unittest.TestCase):
    def test_share_counts_pairs_and_half_ties(self):
        self.assertEqual(sampler_table.rank_test([1, 2, 3], [4, 5, 6])[0], 0.0)
        self.assertEqual(sampler_table.rank_test([4, 5, 6], [1, 2, 3])[0], 1.0)
        # of the 9 pairs: 2 > 1 once; ties 1 = 1 twice and 2 = 2 twice; the rest lower
        share, _ = sampler_table.rank_test([1, 1, 2], [1, 2, 2])
        self.assertAlmostEqual(share, (1 + 0.5 * 4) / 9)

    def test_z_is_antisymmetric_and_zero_for_equal_samples(self):
        a, b = [0.3, 0.1, 0.7, 0.7, 0.2], [0.5, 0.4, 0.7, 0.9]
        za = sampler_table.rank_test(a, b)[1]
        zb = sampler_table.rank_test(b, a)[1]
        self.assertAlmostEqual(za, -zb)
        self.assertEqual(sampler_table.rank_test(a, list(a))[1], 0.0)
        self.assertEqual(sampler_table.rank_test([1.0, 1.0], [1.0, 1.0])[1], 0.0)

    def test_normal_approximation_is_near_the_exact_test(self):
        # eight against eight, with ties: the exact permutation p and the approximation agree
        a = [0.31, 0.42, 0.42, 0.18, 0.27, 0.36, 0.22, 0.40]
        b = [0.45, 0.42, 0.51, 0.33, 0.48, 0.29, 0.55, 0.39]
        _, z = sampler_table.rank_test(a, b)
        approx = sampler_table.one_sided_below(z)
        exact = exact_p_below(a, b)
        self.assertLess(approx, 0.05)
        self.assertLess(abs(approx - exact), 0.01, (approx, exact))

    def test_well_separated_samples_are_significant_both_ways(self):
        low, high = list(range(30)), list(range(10, 40))
        _, z = sampler_table.rank_test(low, high)
        # scipy.stats.mannwhitneyu(low, high, alternative="less", method="asymptotic",
        # use_continuity=False).pvalue
        self.assertAlmostEqual(sampler_table.one_sided_below(z), 0.00010902373092352982, places=12)
        self.assertAlmostEqual(sampler_table.two_sided(z), 2 * 0.00010902373092352982, places=12)
        self.assertGreater(sampler_table.one_sided_below(-z), 0.999)


def cell(alg, seeds):
    return {
        "problem": "dtlz2",
        "algorithm": alg,
        "trials": 30,
        "batch": 1,
        "seeds": len(seeds),
        "hv_median": sorted(seeds)[len(seeds) // 2],
        "hv_min": min(seeds),
        "hv_max": max(seeds),
        "hv_seeds": seeds,
        "suggest_ms_median": 1.0,
        "suggest_ms_max": 2.0,
    }


class Columns(unittest.TestCase):
    def rows(self, cells):
        lines = sampler_table.table({(c["problem"], c["trials"], str(c["batch"]), c["algorithm"]): c for c in cells})
        head = [h.strip() for h in lines[0].strip("|").split("|")]
        return [dict(zip(head, (v.strip() for v in line.strip("|").split("|")))) for line in lines[2:]]

    def test_a_peer_clearly_ahead_is_named(self):
        ours = [0.1 + 0.01 * i for i in range(20)]
        ahead = [0.5 + 0.01 * i for i in range(20)]
        level = [0.1 + 0.01 * i + 0.001 for i in range(20)]
        (row,) = self.rows([cell("default", ours), cell("optuna_tpe", ahead), cell("optuna_nsga2", level)])
        self.assertEqual(row["verdict"], "loses")
        self.assertEqual(row["peers ahead, p < 0.05"], "TPE")
        self.assertTrue(row["ours > best peer"].startswith("0.00 (p 0.00"), row)

    def test_a_tie_names_no_peer(self):
        ours = [0.1 + 0.01 * i for i in range(20)]
        level = [0.1 + 0.01 * i + 0.001 for i in range(20)]
        (row,) = self.rows([cell("default", ours), cell("optuna_tpe", level)])
        self.assertEqual(row["verdict"], "loses")
        self.assertEqual(row["peers ahead, p < 0.05"], "none")
        share = float(row["ours > best peer"].split()[0])
        self.assertTrue(math.isclose(share, 0.5, abs_tol=0.05), row)

    def test_no_columns_without_per_seed_values(self):
        c = cell("default", [0.2, 0.3])
        del c["hv_seeds"]
        (row,) = self.rows([c, {**cell("optuna_tpe", [0.1, 0.2]), "hv_seeds": [0.1, 0.2]}])
        self.assertEqual(row["ours > best peer"], "—")
        lines = sampler_table.table({("dtlz2", 30, "1", "default"): c})
        self.assertNotIn("peers ahead", lines[0])


if __name__ == "__main__":
    unittest.main()
