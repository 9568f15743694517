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
targets_module = importlib.import_module("dpcluster.audit.targets")


def scaled_laplace(f: float) -> type[LaplaceMechanism]:
    """A Laplace mechanism whose scale is Δ/(f·ε): it books ε and spends f·ε."""

    class Overspent(LaplaceMechanism):
        @property
        def noise_epsilon(self) -> float:
            return f * self.epsilon

    return Overspent


def swapped_split(d: int) -> type[LaplaceMechanism]:
    """diffprivlib 0.6.6's mistake: each DPLloyd mechanism books the ε it is given (the
    intended improved split) but noises with the other's budget. Counts get one
    coordinate's sum budget, scale c/ε_count; each coordinate sum gets the count budget,
    scale Δ/(c·ε_sum). True ε per iteration: ε_iter·(1 + d·c)/(d + c), 1.21× at d = 10."""
    c = improved_ratio(d)

    class Swapped(LaplaceMechanism):
        @property
        def noise_epsilon(self) -> float:
            if self.sensitivity == 1.0:  # the counts (the sums' sensitivity is d·r > 1)
                return self.epsilon / c  # scale c/ε_count
            return c * self.epsilon  # scale Δ/(c·ε_sum)

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


def exact_n_auto(X, k, epsilon, rng, r=1.0):
    """``auto`` as it was before the plan: its rules read the exact N = len(X), and its
    ledger books ε as if N were public."""
    from dpcluster.algorithms import methods
    from dpcluster.algorithms.auto import choose, clip_share
    from dpcluster.algorithms.dplloyd import DPResult

    N, d = np.shape(X)
    method, reason = choose(N, k, d, epsilon, r)
    params = {"clip": clip_share(N, d, epsilon)} if method == "dplloyd_improved" else {}
    res = methods.CHOSEN[method](X, k, epsilon, rng, r, n=N, **params)
    return DPResult(res.centroids, res.ledger, res.iterations, {**res.info, "chosen": method})


def exact_n_target(method="auto", rule="auto's method", k=2, d=2, nth=0):
    """The audit target of ``method`` with its rules on the exact N (:func:`exact_n_auto`,
    or the estimator's improved DPLloyd given n = N), its pair at the rule's switch at ε."""
    from dpcluster.algorithms.methods import fit_dplloyd_improved, fit_hybrid

    def one(X, epsilon, rng):
        if method == "auto":
            res = exact_n_auto(X, k, epsilon, rng)
        else:
            fit = fit_hybrid if method == "hybrid" else fit_dplloyd_improved
            res = fit(X, k, epsilon, rng, n=len(X))
        return res.centroids, res.ledger, targets_module.path_of(res)

    return dataclasses.replace(
        targets()[f"{method} @ {rule}"],
        name=f"{method} (exact N) @ {rule}",
        run=targets_module._per_trial(one),
        pair=targets_module.switch_pair(rule, k, d, nth, planned=False),
    )


def half_sigma_gaussian():
    """A Gaussian mechanism that books its ρ but noises with half its σ (4ρ)."""
    from dpcluster.privacy.gaussian import GaussianMechanism

    class HalfSigma(GaussianMechanism):
        @property
        def noise_rho(self) -> float:
            return 4.0 * self.rho

    return HalfSigma


def thin_sigma_gaussian(shrink: float = 0.95):
    """A Gaussian mechanism that books its ρ but draws σ ``shrink`` times what ρ needs
    (5 % too little noise by default: below the PLD bound it is calibrated to)."""
    from dpcluster.privacy.gaussian import GaussianMechanism

    class ThinSigma(GaussianMechanism):
        @property
        def noise_rho(self) -> float:
            return self.rho / shrink**2

    return ThinSigma
