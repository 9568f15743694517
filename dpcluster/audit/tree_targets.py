"""One trial of the modern methods' audit targets (LSH-splits in pure ε and with Gaussian
sums, DPM, capped DPLloyd), for :mod:`.targets`' per-trial runs."""

from __future__ import annotations

import numpy as np

from ..algorithms.dpm import dpm
from ..algorithms.lsh_gaussian import lsh_splits_gaussian
from ..algorithms.lsh_splits import lsh_splits
from ..algorithms.methods import fit_dplloyd_capped, fit_pe_lloyd, fit_pe_means

#: the δ of the Gaussian targets (as Google's LSH-splits benchmark uses) unless
#: ``dpcluster audit --delta`` says otherwise
GAUSSIAN_DELTA = 1e-6


def lsh_one(k: int, ball: float | None = None):
    """A trial ``one(X, ε, rng) -> (centroids, ledger)`` of LSH-splits in pure ε; with
    ``ball``, the records projected into that ball and the sums charged min(d·r, √d·R),
    which the pair's corner record, projected, attains."""

    def one(X, epsilon, rng):
        res = lsh_splits(X, k, epsilon, rng, n_init=1, ball=ball)
        return res.centroids, res.ledger

    return one


def lsh_gaussian_one(k: int, delta: float):
    """A trial ``one(X, ε, rng) -> (centroids, ledger)`` of LSH-splits with Gaussian sums
    on the ball that holds the pair's box."""

    def one(X, epsilon, rng):
        radius = float(np.sqrt(X.shape[1]))
        res = lsh_splits_gaussian(X, k, epsilon, delta, rng, radius=radius, n_init=1)
        return res.centroids, res.ledger

    return one


def dpm_one(k: int, X, epsilon, rng, leaf_rule: str = "published"):
    """One trial of DPM in pure ε with ``leaf_rule``: (centroids, ledger)."""
    res = dpm(X, k, epsilon, 0.0, rng, n_init=1, leaf_rule=leaf_rule)
    return res.centroids, res.ledger


#: capped DPLloyd's audited number of iterations
CAPPED_ITERATIONS = 3


def capped_one(k: int, delta: float = 0.0):
    """A trial of the registry's capped DPLloyd for :data:`CAPPED_ITERATIONS` rounds (so
    no count is planned): Laplace noise, or Gaussian with ``delta`` > 0."""

    def one(X, epsilon, rng):
        res = fit_dplloyd_capped(X, k, epsilon, rng, iterations=CAPPED_ITERATIONS, delta=delta)
        return res.centroids, res.ledger

    return one


#: the audited number of PE generations (each one vote histogram)
PE_GENERATIONS = 3


def pe_one(k: int, method: str, delta: float = 0.0):
    """A trial of the registry's ``pe_means`` or ``pe_lloyd`` with
    :data:`PE_GENERATIONS` generations and one selection start: Laplace votes (and
    steps), or Gaussian with ``delta`` > 0; the planned count Ñ included."""
    fit = {"pe_means": fit_pe_means, "pe_lloyd": fit_pe_lloyd}[method]

    def one(X, epsilon, rng):
        res = fit(X, k, epsilon, rng, delta=delta, generations=PE_GENERATIONS, n_init=1)
        return res.centroids, res.ledger

    return one
