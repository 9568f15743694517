"""Could ``auto`` choose by results? The bound on any private selection between two fits.

A private choice among fitted candidates (the exponential mechanism on a private cost,
Liu–Talwar, Papernot–Steinke) composes at least two fits, so each gets at most ε/2. This
prints, per (set, ε), ``auto`` at ε, the better of PE-Lloyd and improved DPLloyd each at
ε (what a perfect rule would pick), and the better of the two each at ε/2 (what a free,
exact selection could at best return): the mean over seeds of the cost over
non-private k-means' (scikit-learn, n_init = 10). Where the last column is above the
first, no selection by results beats the rule. docs/utility.md, "auto".

    python scripts/bench_selection.py --battery ../shared/battery \\
        [--sets iris,uci/wine,...] [--epsilons 0.5,1,2] [--seeds 8] [--delta 1e-6]

``iris`` is PE-means's protocol's (unit ball); battery sets get their min–max box.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import pe_sets  # noqa: E402
from bench_utility import cost  # noqa: E402

from dpcluster import DPKMeans  # noqa: E402
from dpcluster.data import benchmark as battery  # noqa: E402

CANDIDATES = ("pe_lloyd", "dplloyd_improved")
DEFAULT_SETS = "iris,uci/wine,uci/ecoli,uci/sonar,uci/ionosphere,g2mg/g2mg_32_10"


def load(root: str, name: str) -> tuple[np.ndarray, int, dict]:
    """(X, k, the DPKMeans domain keywords) of one set."""
    if name in ("iris",):
        X, k = pe_sets([name])[name]
        return X, k, {"radius": 1.0}
    s = battery.read(root, name)
    lo, hi = s.X.min(axis=0), s.X.max(axis=0)
    return s.X, s.k, {"bounds": (lo, np.where(hi > lo, hi, lo + 1.0))}


def mean_ratio(X, k, domain, method, eps, delta, seeds, ref) -> float:
    fits = (
        DPKMeans(k, epsilon=eps, delta=delta, method=method, random_state=s, **domain).fit(X)
        for s in range(seeds)
    )
    return float(np.mean([cost(X, f.cluster_centers_) / ref for f in fits]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--battery", default="../shared/battery")
    ap.add_argument("--sets", default=DEFAULT_SETS)
    ap.add_argument("--epsilons", default="0.5,1,2")
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--delta", type=float, default=1e-6)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    print("| set | ε | auto at ε | better of the two at ε | better of the two at ε/2 |")
    print("|---|---|---|---|---|")
    for name in args.sets.split(","):
        X, k, domain = load(args.battery, name)
        ref = KMeans(k, n_init=10, random_state=0).fit(X).inertia_
        for eps in (float(e) for e in args.epsilons.split(",")):

            def ratio(method, e, X=X, k=k, domain=domain, ref=ref):
                return mean_ratio(X, k, domain, method, e, args.delta, args.seeds, ref)

            full = min(ratio(m, eps) for m in CANDIDATES)
            half = min(ratio(m, eps / 2) for m in CANDIDATES)
            print(f"| {name} | {eps:g} | {ratio('auto', eps):.2f} | {full:.2f} | {half:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
