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
from . import checks
from .dplloyd import DPResult, improved_split


def noisy_mean(
    X: np.ndarray, epsilon: float, rng: np.random.Generator, ledger: Ledger, r
) -> tuple[np.ndarray, float]:
    """(ε-DP mean of X (d,) clipped into [-r, r]^d, the noisy count); books both releases
    in ``ledger``. ``rng`` is split into the count and the sum streams."""
    N, d = X.shape
    split = improved_split(epsilon, d)
    count_mech = ledger.record(LaplaceMechanism(split.count, 1.0), "record count")
    sum_mech = ledger.record(LaplaceMechanism(split.sum, checks.extent(d, r)), "coordinate sums")
    count_rng, sum_rng = rng.spawn(2)
    count = N + float(count_mech.noise(count_rng, 1)[0])
    total = X.sum(axis=0) + sum_mech.noise(sum_rng, d)
    release(count_mech, "record count", count, lambda data: float(len(data)))
    release(sum_mech, "coordinate sums", total, lambda data: data.sum(axis=0))
    return np.clip(total / max(count, 1.0), -r, r), count


def private_mean(
    X: np.ndarray, k: int, epsilon: float, rng: np.random.Generator, r=1.0
) -> DPResult:
    """k copies of the ε-DP mean of X (N, d) in [-r, r]^d: centroids (k, d)."""
    X = checks.points(X, r)
    ledger = Ledger()
    mean, count = noisy_mean(X, epsilon, rng, ledger, r)
    return DPResult(np.repeat(mean[None], k, axis=0), ledger, 0, {"noisy_count": count})
