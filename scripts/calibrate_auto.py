"""Calibrate a threshold of ``auto``'s rule on one half of the real sets, report on the other.

Two rules (dpcluster/algorithms/auto.py), each measured on both of its sides wherever it
decides, at several ε:

- ``mean``: should ``auto`` take the private mean where the margin (N/k over the noise
  floor of an improved-DPLloyd centre, :func:`~dpcluster.algorithms.auto.noise_margin`)
  is below T? Sides: improved DPLloyd as ``auto`` runs it, and the private mean. Cells:
  where no grid or tree comes first.
- ``grid``: in 1 to 3 dimensions, should ``auto`` take the grid (the hybrid) only where
  the EUGkM grid has at least T cells per cluster (m^d/k)? Sides: improved DPLloyd and
  the hybrid. Cells: where the grid can be built (m ≥ 2, m^d ≤ MAX_CELLS).

The feature is computed at the exact N with the ε that ``auto`` has after Ñ. Below T a
rule takes its ``low`` side, else its ``high`` side. Sets are split in two halves by a
hash of their names; the T that minimises one half's geometric-mean cost ratio is
reported on the other, both ways round. Usage:

    python scripts/calibrate_auto.py --rule mean --battery ../shared/battery \
        --battery /tmp/battery2 [--eps 0.05,0.1,0.25,0.5,1,2] [--seeds 5] [--jobs 2]
        [--out results/mean_rule.csv]
"""

from __future__ import annotations

import argparse
import hashlib
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
from dpcluster.algorithms.eugkm import MAX_CELLS, cells_per_axis  # noqa: E402
from dpcluster.algorithms.plan import COUNT_SHARE  # noqa: E402
from dpcluster.data import benchmark as battery  # noqa: E402

#: per rule: the feature's name, the thresholds tried, the side below and the side above
RULES = {
    "mean": ("margin", (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.2, 1.5), "mean", "dplloyd"),
    "grid": ("cells per cluster", (0.0, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0), "dplloyd", "grid"),
}


def public_box(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """bench_utility's box: each feature's min and max (a constant feature gets a unit range)."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    return lo, np.where(hi > lo, hi, lo + 1.0)


def rule_inputs(rule: str, X: np.ndarray, k: int, eps: float) -> dict | None:
    """The rule's feature and ``auto``'s clip share at the exact N, or None where the rule
    does not decide."""
    N, d = X.shape
    lo, hi = public_box(X)
    span = hi - lo
    r = span / span.max()  # the estimator's common scaling: radii relative to the widest
    rest = eps * (1 - COUNT_SHARE)
    clip = auto.clip_share(N, d, rest)
    if rule == "mean":
        if d <= auto.GRID_MAX_D and auto.choose(N, k, d, rest, r)[0] != "dplloyd_improved":
            return None
        return {"feature": auto.noise_margin(N, k, d, rest, r), "clip": clip}
    m = cells_per_axis(N, rest, d)
    if d > auto.GRID_MAX_D or m < 2 or float(m) ** d > MAX_CELLS:
        return None
    return {"feature": float(m) ** d / k, "clip": clip}


def measure(rule: str, root: str, name: str, eps: float, seed: int, clip: float) -> list[dict]:
    s = battery.read(root, name)
    bounds = public_box(s.X)
    other = ("mean", {"method": "private_mean"})
    if rule == "grid":
        other = ("grid", {"method": "hybrid"})
    rows = []
    for label, how in (
        ("dplloyd", {"method": "dplloyd_improved", "method_params": {"clip": clip}}),
        other,
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = DPKMeans(s.k, epsilon=eps, bounds=bounds, random_state=seed, **how).fit(s.X)
        rows.append({"epsilon": eps, "seed": seed, "side": label,
                     "cost": cost(s.X, model.cluster_centers_)})  # fmt: skip
    return rows


def half(name: str) -> int:
    return hashlib.sha256(name.encode()).digest()[0] % 2


def geomean_of_rule(table: pd.DataFrame, threshold: float, low: str, high: str) -> float:
    pick = np.where(table.feature < threshold, table[low], table[high])
    return float(np.exp(np.mean(np.log(pick))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rule", choices=sorted(RULES), required=True)
    ap.add_argument("--battery", action="append", required=True)
    ap.add_argument("--eps", default="0.05,0.1,0.25,0.5,1,2")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    feature, thresholds, low, high = RULES[args.rule]
    eps = [float(e) for e in args.eps.split(",")]
    cells, tasks = [], []
    for root in args.battery:
        for name in battery.find(root):
            s = battery.read(root, name)
            if s.k < 2:
                continue
            base = None
            for e in eps:
                inputs = rule_inputs(args.rule, s.X, s.k, e)
                if inputs is None:
                    continue
                if base is None:
                    base = KMeans(s.k, n_init=10, random_state=0).fit(s.X).inertia_
                key = f"{Path(root).name}/{name}"
                cells.append({"set": key, "epsilon": e, "base": base, **inputs})
                tasks += [(root, name, e, seed, inputs["clip"], key) for seed in range(args.seeds)]
    print(f"{len(cells)} (set, ε) cells, {2 * len(tasks)} fits", file=sys.stderr)

    def run(root, name, e, seed, clip, key):
        return [{**row, "set": key} for row in measure(args.rule, root, name, e, seed, clip)]

    rows = [r for out in Parallel(n_jobs=args.jobs)(delayed(run)(*t) for t in tasks) for r in out]
    med = pd.DataFrame(rows).groupby(["set", "epsilon", "side"]).cost.median()
    table = pd.DataFrame(cells).merge(med.unstack("side").reset_index(), on=["set", "epsilon"])
    for side in (low, high):
        table[side] = table[side] / table.base
    table["half"] = table.set.map(half)
    if args.out:
        table.to_csv(args.out, index=False)
    print(table.sort_values("feature").to_string(index=False, float_format="%.3g"))
    print(f"\nRule: {low} where {feature} < T, else {high}.\n")
    print("| calibrated on | best T | geometric mean there | reported on | geometric mean there |")
    print("|---|---|---|---|---|")
    for fit_half in (0, 1):
        on, off = table[table.half == fit_half], table[table.half != fit_half]
        best = min(thresholds, key=lambda t: (geomean_of_rule(on, t, low, high), t))
        print(
            f"| half {fit_half} ({len(on)} cells) | {best:g} "
            f"| {geomean_of_rule(on, best, low, high):.3f} "
            f"| half {1 - fit_half} ({len(off)} cells) "
            f"| {geomean_of_rule(off, best, low, high):.3f} |"
        )
    print("\nAll cells, geometric mean by threshold:")
    for t in thresholds:
        print(f"  {t:>4g}: {geomean_of_rule(table, t, low, high):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
