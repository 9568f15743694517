"""The trivial private reference: every centre at one DP mean (docs/utility.md).

It knows nothing but the data's centre of mass, so its k-means cost is the data's total
variance around (a noisy estimate of) the mean. A private method that does worse than this
has spent its budget on noise. ``auto`` falls back to it where every method's predicted
noise exceeds what the clusters can gain (docs/utility.md).

Privacy argument. Neighbouring relation: add/remove one tuple with every |x_j| ≤ r_j. The
record count has L1 sensitivity 1 and the coordinate-sum vector Σ_j r_j (d·r for one
radius); each gets
``Lap(Δ/ε_part)`` with the budget split as improved DPLloyd splits one iteration
(docs/methods.md A2, c = (4dρ²)^(1/3), ε_count = ε·c/(d+c)), and the two compose
sequentially to ε. Dividing, clipping into [-r, r]^d and repeating the centre k times are
post-processing.
"""

from __future__ import annotations

import numpy as np

from ..privacy import LaplaceMechanism, Ledger, release
from ..privacy.budget import within
from . import checks
from .dplloyd import DPResult, improved_split


def noisy_mean(
    X: np.ndarray, epsilon: float, rng: np.random.Generator, ledger: Ledger, r, count=None
) -> tuple[np.ndarray, float]:
    """(ε-DP mean of X (d,) clipped into [-r, r]^d, the noisy count); books both releases
    in ``ledger``. ``rng`` is split into the count and the sum streams. A ``count``
    released before (a plan's Ñ) is the divisor instead, and the sums get all of ε."""
    N, d = X.shape
    count_rng, sum_rng = rng.spawn(2)
    if count is None:
        share = improved_split(epsilon, d)
        count_eps, sum_eps = within(epsilon, [share.count, share.sum])
        count_mech = ledger.record(LaplaceMechanism(count_eps, 1.0), "record count")
        count = float(count_mech.add(N, count_mech.noise(count_rng, 1))[0])
        count = release(count_mech, "record count", count, lambda data: float(len(data)))
    else:
        sum_eps = epsilon
    sum_mech = ledger.record(
        LaplaceMechanism(sum_eps, checks.extent(d, r), coordinates=d), "coordinate sums"
    )
    total = sum_mech.add(X.sum(axis=0), sum_mech.noise(sum_rng, d))
    total = release(sum_mech, "coordinate sums", total, lambda data: data.sum(axis=0))
    return np.clip(total / max(count, 1.0), -r, r), count


def private_mean(
    X: np.ndarray, k: int, epsilon: float, rng: np.random.Generator, r=1.0, count=None
) -> DPResult:
    """k copies of the ε-DP mean of X (N, d) in [-r, r]^d: centroids (k, d). ``count``:
    see :func:`noisy_mean`."""
    X = checks.points(X, r)
    ledger = Ledger()
    mean, count = noisy_mean(X, epsilon, rng, ledger, r, count)
    return DPResult(np.repeat(mean[None], k, axis=0), ledger, 0, {"noisy_count": count})
