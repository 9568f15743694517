"""One trial of the modern methods' audit targets (LSH-splits with Gaussian sums, DPM,
capped DPLloyd), for :mod:`.targets`' per-trial runs."""

from __future__ import annotations

import numpy as np

from ..algorithms.capped import capped_dplloyd
from ..algorithms.dpm import dpm
from ..algorithms.lsh_gaussian import lsh_splits_gaussian
from ..algorithms.methods import gaussian_budget, packed_start

#: the δ of the Gaussian targets (as Google's LSH-splits benchmark uses) unless
#: ``dpcluster audit --delta`` says otherwise
GAUSSIAN_DELTA = 1e-6


def lsh_gaussian_one(k: int, delta: float):
    """A trial ``one(X, ε, rng) -> (centroids, ledger)`` of LSH-splits with Gaussian sums
    on the ball that holds the pair's box."""

    def one(X, epsilon, rng):
        radius = float(np.sqrt(X.shape[1]))
        res = lsh_splits_gaussian(X, k, epsilon, delta, rng, radius=radius, n_init=1)
        return res.centroids, res.ledger

    return one


def dpm_one(k: int, X, epsilon, rng):
    """One trial of DPM in pure ε: (centroids, ledger)."""
    res = dpm(X, k, epsilon, 0.0, rng, n_init=1)
    return res.centroids, res.ledger


#: capped DPLloyd's audited number of iterations
CAPPED_ITERATIONS = 3


def capped_one(k: int, delta: float = 0.0):
    """A trial of capped DPLloyd for :data:`CAPPED_ITERATIONS` rounds from a sphere-packing
    start: Laplace noise, or Gaussian with ``delta`` > 0."""

    def one(X, epsilon, rng):
        d = X.shape[1]
        start = packed_start(k, (-np.ones(d), np.ones(d)), rng)
        budget = gaussian_budget(epsilon, delta)
        res = capped_dplloyd(X, k, epsilon, start, rng, CAPPED_ITERATIONS, **budget)
        return res.centroids, res.ledger

    return one
