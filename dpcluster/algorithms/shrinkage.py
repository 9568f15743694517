"""Positive-part James–Stein shrinkage of noisy centres toward their pooled mean
(docs/methods.md "Shrunk centres").

A DPLloyd-type step releases, per cluster j, a noisy count ñ_j and a noisy coordinate sum
S̃_j (d,). Its centre S̃_j/ñ_j carries noise of per-coordinate variance about

    v_j = (σ_S² + σ_n²·||c_j||²/d) / ñ_j²

(σ_S², σ_n²: the sum's and the count's noise variances; the second term is the delta
method's share of the count noise). Where v_j is large against how far c_j lies from the
pooled mean m = Σ S̃_j / Σ ñ_j, the centre is mostly noise, and a cluster's cost grows as
n_j·||ĉ_j − μ_j||². The positive-part James–Stein estimator

    ĉ_j = m + max(0, 1 − (d − 2)·v_j / ||c_j − m||²)·(c_j − m)

has a lower expected squared error than c_j itself for d ≥ 3, for any μ_j. Far from the
noise floor it leaves a centre where it is (at ε → ∞ it changes nothing); near it, it
pulls a centre toward the pooled mean, the best one-centre answer, instead of leaving it
at a noisy point, which on weakly clustered or low-ε data costs several times more. The
pooled mean is itself shrunk the same way toward the box centre (the working origin),
its variance k times a centre's over (Σ ñ_j)².

A centre whose noisy count is noise (the caller's hold rule) keeps its previous place, as
without shrinkage, except where every centre of a run holds: then the one nearest the
pooled mean moves to it, so a run whose counts are all noise still answers with its best
one-centre estimate and not only with its data-independent start (docs/utility.md).

Privacy: a function of released values (ñ, S̃) and public noise variances only, so it is
post-processing and costs nothing.
"""

from __future__ import annotations

import numpy as np


def noise_variance(mechanism) -> float:
    """The per-entry noise variance of a Laplace or Gaussian mechanism, in answer units."""
    variance = getattr(mechanism, "variance", None)
    return float(variance if variance is not None else mechanism.sigma**2)


def centre_variance(x: np.ndarray, n: np.ndarray, var_sum: float, var_count: float) -> np.ndarray:
    """(...): the per-coordinate noise variance of ratios x = S̃/ñ (..., d) with noisy
    denominators ``n`` (...), by the delta method: (σ_S² + σ_n²·||x||²/d)/n²."""
    d = x.shape[-1]
    return (var_sum + var_count * np.einsum("...j,...j->...", x, x) / d) / np.square(n)


def james_stein(raw: np.ndarray, target: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Positive-part James–Stein: ``target + max(0, 1 − (d − 2)·v/||raw − target||²)·(raw −
    target)`` for points ``raw`` (..., d) with per-coordinate noise variances ``v`` (...)
    and targets broadcastable to them; ``raw`` itself in d ≤ 2."""
    d = raw.shape[-1]
    if d <= 2:
        return raw
    gap = raw - target
    gap2 = np.einsum("...j,...j->...", gap, gap)
    weight = np.clip(1.0 - (d - 2) * v / np.maximum(gap2, np.finfo(np.float64).tiny), 0.0, 1.0)
    return target + weight[..., None] * gap


def pooled_mean(noisy_sums, noisy_counts, var_sum: float, var_count: float) -> np.ndarray:
    """(..., d): Σ_j S̃_j / Σ_j ñ_j over all k clusters, shrunk toward the box centre (the
    origin of the working coordinates) by :func:`james_stein`; the origin where the pooled
    count is not positive."""
    S = np.asarray(noisy_sums, dtype=np.float64)
    k, d = S.shape[-2:]
    total = np.sum(noisy_counts, axis=-1)
    positive = total > 0
    safe = np.where(positive, total, 1.0)
    raw = np.sum(S, axis=-2) / safe[..., None]
    v = k * centre_variance(raw, safe, var_sum, var_count)  # k sums' and counts' noise
    return np.where(positive[..., None], james_stein(raw, np.zeros(d), v), 0.0)


def shrink_to_pooled(
    noisy_sums: np.ndarray,
    noisy_counts: np.ndarray,
    ok: np.ndarray,
    var_sum: float,
    var_count: float,
    pooled: np.ndarray,
) -> np.ndarray:
    """Centres (..., k, d) from one release of noisy sums S̃ (..., k, d) and counts ñ
    (..., k), with those noises' per-entry variances: each centre S̃_j/ñ_j shrunk toward
    ``pooled`` (..., d; :func:`pooled_mean`) by :func:`james_stein`; a centre not ``ok``
    (..., k) (its count is noise) is NaN, for :func:`fill_held`. In d ≤ 2 the raw means."""
    S = np.asarray(noisy_sums, dtype=np.float64)
    safe = np.where(ok, np.asarray(noisy_counts, dtype=np.float64), 1.0)
    raw = S / safe[..., None]
    v = centre_variance(raw, safe, var_sum, var_count)
    return np.where(ok[..., None], james_stein(raw, pooled[..., None, :], v), np.nan)


def fill_held(C: np.ndarray, means: np.ndarray, pooled: np.ndarray) -> np.ndarray:
    """Centres (..., k, d): ``means`` where finite, else the previous ``C``; in a run
    where no centre moved, the centre nearest its ``pooled`` (..., d) mean moves to it."""
    shape = np.shape(means)
    C, means = np.reshape(C, (-1, *shape[-2:])), np.reshape(means, (-1, *shape[-2:]))
    pooled = np.reshape(pooled, (-1, shape[-1]))
    held = np.isnan(means[..., 0])
    out = np.where(held[..., None], C, means)
    for run in np.flatnonzero(np.all(held, axis=-1)):
        gap = C[run] - pooled[run]
        out[run, np.argmin(np.einsum("kj,kj->k", gap, gap))] = pooled[run]
    return out.reshape(shape)
