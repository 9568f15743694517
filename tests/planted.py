"""Planted privacy bugs: copies of real mechanisms with a known overspend. They live here,
never in the registry; the tests and scripts/bench_audit.py check that the audit sees them."""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np

from dpcluster.algorithms.dplloyd import improved_ratio
from dpcluster.audit import targets
from dpcluster.audit.targets import central_pair
from dpcluster.privacy import LaplaceMechanism

dplloyd_module = importlib.import_module("dpcluster.algorithms.dplloyd")
eugkm_module = importlib.import_module("dpcluster.algorithms.eugkm")
gkm_module = importlib.import_module("dpcluster.algorithms.gkm")


def scaled_laplace(f: float) -> type[LaplaceMechanism]:
    """A Laplace mechanism whose scale is Δ/(f·ε): it books ε and spends f·ε."""

    class Overspent(LaplaceMechanism):
        @property
        def scale(self) -> float:
            return self.sensitivity / (f * self.epsilon)

    return Overspent


def swapped_split(d: int) -> type[LaplaceMechanism]:
    """diffprivlib 0.6.6's mistake: each DPLloyd mechanism books the ε it is given (the
    intended improved split) but noises with the other's budget. Counts get one
    coordinate's sum budget, scale c/ε_count; each coordinate sum gets the count budget,
    scale Δ/(c·ε_sum). True ε per iteration: ε_iter·(1 + d·c)/(d + c), 1.21× at d = 10."""
    c = improved_ratio(d)

    class Swapped(LaplaceMechanism):
        @property
        def scale(self) -> float:
            if self.sensitivity == 1.0:  # the counts (the sums' sensitivity is d·r > 1)
                return c / self.epsilon
            return self.sensitivity / (c * self.epsilon)

    return Swapped


def improved_target_in(d: int):
    """The improved-DPLloyd audit target with data in d dimensions."""
    D, D2 = central_pair(200, d)
    base = targets()["dplloyd_improved"]

    def run(X, epsilon, rng, n, trial=None):
        k = 2
        t = dplloyd_module.improved_iterations(epsilon, len(D), k, d)
        count, total = rng.spawn(2)
        inits = np.repeat(np.random.default_rng(1).uniform(-1, 1, (1, k, d)), n, axis=0)
        C, ledger = dplloyd_module.dplloyd_batch(
            X, inits, epsilon, {"count": count, "sum": total}, iterations=t, split="improved"
        )
        return C.reshape(n, -1), ledger

    return dataclasses.replace(
        base,
        name=f"dplloyd_improved d={d}",
        run=run,
        pair=lambda: (D, D2),
        params={**base.params, "d": d},
    )
