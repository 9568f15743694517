"""One pass over the records to check them: the input check of every private algorithm
(:func:`dpcluster.algorithms.checks.points`) reads the data once, with both cores, instead
of twice (``X.min()`` and ``X.max()``, one core each). A single DPLloyd fit counts the same
entries in its first pass instead (:func:`dpcluster.algorithms.checks.points_and_stats`)."""

from __future__ import annotations

from numba import njit, prange

from .config import SCAN_BLOCK


@njit(parallel=True, cache=True)
def count_outside(X, limit):
    """The number of entries of X (N, d) that are not finite or whose magnitude exceeds
    ``limit``: ``not |x| <= limit`` is true for NaN and ±inf as well."""
    N, d = X.shape
    nb = (N + SCAN_BLOCK - 1) // SCAN_BLOCK
    total = 0
    for b in prange(nb):
        bad = 0
        for n in range(b * SCAN_BLOCK, min(N, (b + 1) * SCAN_BLOCK)):
            for i in range(d):
                bad += not (abs(X[n, i]) <= limit)
        total += bad
    return total
