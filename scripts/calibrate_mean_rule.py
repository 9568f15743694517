"""Calibrate ``auto``'s private-mean rule on one half of the real sets, report on the other.

Should ``auto`` take the private mean where an average cluster, N/k records, is below
some threshold times the noise floor of an improved-DPLloyd centre? (It does not:
dpcluster/algorithms/auto.py.) This script measures, wherever such a rule could decide
(no grid, no tree), both sides of it at several ε:

- ``dplloyd``: what ``auto`` runs when the rule lets DPLloyd through (improved DPLloyd with
  ``auto``'s clip share and the estimator's passes);
- ``private_mean``: every centre at one DP mean;

with the margin the rule reads (:func:`~dpcluster.algorithms.auto.noise_margin`). Sets are
split into two halves by a hash of their names; the threshold that minimises the
geometric-mean cost ratio of the rule's pick on one half is reported on the other, both
ways round. Usage:

    python scripts/calibrate_mean_rule.py --battery ../shared/battery --battery /tmp/battery2
        [--eps 0.25,0.5,1,2] [--seeds 5] [--jobs 2] [--out results/mean_rule.csv]
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.cluster import KMeans

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_utility import cost  # noqa: E402

from dpcluster import DPKMeans  # noqa: E402
from dpcluster.algorithms import auto  # noqa: E402
from dpcluster.algorithms.plan import COUNT_SHARE  # noqa: E402
from dpcluster.data import benchmark as battery  # noqa: E402

#: thresholds tried (the rule takes the mean below the threshold)
THRESHOLDS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2, 1.5)


def public_box(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """bench_utility's box: each feature's min and max (a constant feature gets a unit range)."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    return lo, np.where(hi > lo, hi, lo + 1.0)


def rule_inputs(X: np.ndarray, k: int, eps: float) -> dict | None:
    """The margin and clip share ``auto`` computes at the exact N, or None where the mean
    rule cannot decide (a grid or a tree comes first)."""
    N, d = X.shape
    lo, hi = public_box(X)
    span = hi - lo
    r = span / span.max()  # the estimator's common scaling: radii relative to the widest
    rest = eps * (1 - COUNT_SHARE)
    method, _ = auto.choose(N, k, d, rest, r)
    if method not in ("private_mean", "dplloyd_improved"):
        return None
    return {"margin": auto.noise_margin(N, k, d, rest, r), "clip": auto.clip_share(N, d, rest)}


def measure(root: str, name: str, eps: float, seed: int, clip: float) -> list[dict]:
    s = battery.read(root, name)
    bounds = public_box(s.X)
    rows = []
    for label, how in (
        ("dplloyd", {"method": "dplloyd_improved", "method_params": {"clip": clip}}),
        ("private_mean", {"method": "private_mean"}),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = DPKMeans(s.k, epsilon=eps, bounds=bounds, random_state=seed, **how).fit(s.X)
        rows.append(
            {
                "set": name,
                "epsilon": eps,
                "seed": seed,
                "side": label,
                "cost": cost(s.X, model.cluster_centers_),
            }
        )
    return rows


def half(name: str) -> int:
    return hashlib.sha256(name.encode()).digest()[0] % 2


def geomean_of_rule(table: pd.DataFrame, threshold: float) -> float:
    pick = np.where(table.margin < threshold, table.private_mean, table.dplloyd)
    return float(np.exp(np.mean(np.log(pick))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--battery", action="append", required=True)
    ap.add_argument("--eps", default="0.25,0.5,1,2")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    eps = [float(e) for e in args.eps.split(",")]
    cells, tasks = [], []
    for root in args.battery:
        for name in battery.find(root):
            s = battery.read(root, name)
            if s.k < 2:
                continue
            base = KMeans(s.k, n_init=10, random_state=0).fit(s.X).inertia_
            for e in eps:
                inputs = rule_inputs(s.X, s.k, e)
                if inputs is None:
                    continue
                key = f"{Path(root).name}/{name}"
                cells.append({"set": key, "epsilon": e, "base": base, **inputs})
                tasks += [(root, name, e, seed, inputs["clip"], key) for seed in range(args.seeds)]
    print(f"{len(cells)} (set, ε) cells, {2 * len(tasks)} fits", file=sys.stderr)

    def run(root, name, e, seed, clip, key):
        return [{**row, "set": key} for row in measure(root, name, e, seed, clip)]

    rows = [r for out in Parallel(n_jobs=args.jobs)(delayed(run)(*t) for t in tasks) for r in out]
    runs = pd.DataFrame(rows)
    med = runs.groupby(["set", "epsilon", "side"]).cost.median().unstack("side").reset_index()
    table = pd.DataFrame(cells).merge(med, on=["set", "epsilon"])
    for side in ("dplloyd", "private_mean"):
        table[side] = table[side] / table.base
    table["half"] = table.set.map(half)
    if args.out:
        table.to_csv(args.out, index=False)
    print(table.sort_values("margin").to_string(index=False, float_format="%.3g"))
    print("\n| calibrated on | threshold | geomean there | reported on | geomean there |")
    print("|---|---|---|---|---|")
    for fit_half in (0, 1):
        on, off = table[table.half == fit_half], table[table.half != fit_half]
        best = min(THRESHOLDS, key=lambda t: (geomean_of_rule(on, t), t))
        print(
            f"| half {fit_half} ({len(on)} cells) | {best:g} | {geomean_of_rule(on, best):.3f} "
            f"| half {1 - fit_half} ({len(off)} cells) | {geomean_of_rule(off, best):.3f} |"
        )
    print("\nAll cells, geometric mean by threshold:")
    for t in THRESHOLDS:
        print(f"  {t:>4g}: {geomean_of_rule(table, t):.3f}")
    return 0 if not math.isnan(table.dplloyd.sum()) else 1


if __name__ == "__main__":
    sys.exit(main())
