"""Record counts where a size rule switches, found by scanning N (docs/audit.md).

A rule that reads the exact N would tell neighbours D (N records) and D' (N + 1) apart
exactly where its value changes between N and N + 1. The audit therefore does not list
pairs by hand: for each rule and each (k, d, ε) it scans N and puts its neighbouring pair
at the first switch. Under the plan (:mod:`dpcluster.algorithms.plan`) every rule reads
the noisy Ñ instead, and the same pairs must then look alike.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..algorithms.auto import choose, clip_share
from ..algorithms.dplloyd import estimator_iterations, improved_iterations
from ..algorithms.eugkm import cells_per_axis
from ..analysis import hybrid_switch

#: the scanned record counts: from a handful of records to well past every rule's last
#: switch at the audit's dimensions
SCAN = (10, 20_000)


def rules(k: int, d: int, epsilon: float) -> dict[str, Callable[[int], object]]:
    """Every size rule of the central methods at (k, d, ε), as a function of a count."""
    return {
        "auto's method": lambda n: choose(n, k, d, epsilon)[0],
        "improved DPLloyd's passes t": lambda n: estimator_iterations(epsilon, n, k, d),
        "A2's passes t": lambda n: improved_iterations(epsilon, n, k, d),
        "the clip share": lambda n: clip_share(n, d, epsilon),
        "the hybrid switch": lambda n: hybrid_switch(n, k, d, epsilon)["use_hybrid"],
        "EUGkM's grid m": lambda n: cells_per_axis(n, epsilon, d),
    }


def switch_points(rule: Callable[[int], object], scan: tuple[int, int] = SCAN) -> list[int]:
    """Every N in ``scan`` with rule(N) ≠ rule(N + 1), smallest first."""
    lo, hi = scan
    values = [rule(n) for n in range(lo, hi + 1)]
    return [lo + i for i in range(len(values) - 1) if values[i] != values[i + 1]]


def first_switch(name: str, k: int, d: int, epsilon: float) -> int | None:
    """The first N of ``scan`` where rule ``name`` switches at (k, d, ε), or None."""
    points = switch_points(rules(k, d, epsilon)[name])
    return points[0] if points else None


def pair_at(N: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """D: N records uniform on [-0.5, 0.5]^d (fixed seed), on the record lattice; D' = D
    plus the corner (1, …, 1)."""
    from ..privacy.mechanisms import snap_records

    D = snap_records(np.random.default_rng(seed).uniform(-0.5, 0.5, (N, d)))
    return D, np.vstack([D, np.ones((1, d))])
