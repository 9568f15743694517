#!/usr/bin/env python
"""Measure: certified ε lower bounds at the record counts where a size rule switches,
for ``auto`` with its rules on the exact N (before the plan; kept in tests/planted.py) and
for the planned ``DPKMeans()`` default, on the same neighbouring pairs.

For every (k, d, ε) below and every rule of :mod:`dpcluster.audit.switches`, the scan
finds the first N where the rule, read on the exact N, switches; D is N records uniform on
[-0.5, 0.5]^d, D' = D plus the corner. Each side runs ``--trials`` fits; the discrete
bound (:func:`~dpcluster.audit.stats.discrete_epsilon`: the method, iteration count,
ledger shape and distinct centres) is certified on held-out halves. Prints a Markdown
table.

    python scripts/audit_switches.py [--trials 300]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the planted auto's home

from dpcluster.algorithms import methods  # noqa: E402
from dpcluster.audit.stats import blackbox_ceiling, discrete_epsilon  # noqa: E402
from dpcluster.audit.switches import pair_at, rules, switch_points  # noqa: E402
from dpcluster.audit.targets import path_of  # noqa: E402
from tests.planted import exact_n_auto  # noqa: E402

#: (k, d, ε): the issue's examples and others around them
CONFIGS = ((2, 2, 1.0), (8, 10, 1.0), (3, 5, 0.5), (4, 3, 2.0), (16, 2, 0.5), (5, 20, 1.0))


def paths(fit, X, k, eps, trials, seed) -> list[str]:
    return [path_of(fit(X, k, eps, np.random.default_rng([seed, i]))) for i in range(trials)]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=300)
    args = parser.parse_args(argv)
    n = args.trials
    print(f"ceiling of the discrete bound at {n} trials per side: {blackbox_ceiling(n):.2f}\n")
    print("| k | d | ε | rule | N → N+1 | before (exact N) | after (plan) |")
    print("|---|---|---|---|---|---|---|")
    for k, d, eps in CONFIGS:
        done = set()
        for name, rule in rules(k, d, eps).items():
            points = [p for p in switch_points(rule) if p >= k]
            if not points or points[0] in done:
                continue
            N = points[0]
            done.add(N)
            D, D2 = pair_at(N, d)
            lb = []
            for fit in (exact_n_auto, methods.auto):
                a = paths(fit, D, k, eps, n, 0)
                b = paths(fit, D2, k, eps, n, 1)
                lb.append(discrete_epsilon(a, b))
            print(
                f"| {k} | {d} | {eps:g} | {name} | {N} → {N + 1} | {lb[0]:.2f} | {lb[1]:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
