"""Capped DPLloyd: FastLloyd's radius-constrained Lloyd step (Diaa, Humphries and
Kerschbaum, USENIX Security 2025, arXiv 2405.02437; docs/methods.md M5), central model.

Neighbouring relation: add/remove one record. Each iteration i, at public centres C (k, d)
and a public cap λ_i:

1. a record x joins its nearest centre c_j only if ||x − c_j||₂ ≤ λ_i; a farther record
   joins none and adds nothing (its shift is also scaled to norm ≤ λ_i, so that rounding
   at the boundary cannot break the bound);
2. the counts n_j and the *shifted* sums S_j = Σ (x − c_j) are released with noise. One
   record moves one count by 1 and one shifted sum by at most λ_i in L2, so by at most
   min(√d·λ_i, 2·Σ r_j) in L1 (centres and records lie in the box ∏ [-r_j, r_j]);
3. c_j ← c_j + S̃_j/ñ_j, moved at most λ_i from c_j and folded (reflected) into the box:
   post-processing. A centre whose noisy count is at most ``min_count`` holds.

The cap follows the artefact's ``diagonal_then_frac``: λ_0 = D/2, then λ_i = D·α/(2k^(1/d))
with α = 2, D = 2‖r‖₂ the box's diagonal, and λ = D wherever the cap would not be below
it. Noise: with δ > 0 Gaussian, ρ/T per iteration split counts : sums = 1 : 2√d (the
artefact's scales; :func:`~.dplloyd.gaussian_split`), composed in zCDP; in pure ε
Laplace, ε/T per iteration split as A2's c : d (the artefact's ``split_epsilon``).

T, from the artefact's rules on a record count (here the plan's Ñ, never N) clamped to
[2, 7]: with δ > 0, T = 0.016 n²/(k³ η² (1 + √(4d))² σ²), η = 2√d·α/(2k^(1/d)) and σ the
analytic-Gaussian scale of (ε, δ) at sensitivity 1; in pure ε, T = ε/ε_m with A2's ε_m.

Departures, each a privacy or robustness fix: the artefact divides by ñ + 1e-9 (a
negative noisy count flips the step), here such a centre holds; its δ = 1/(N ln N) reads
the exact N, here δ is the caller's.
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy import LaplaceMechanism, Ledger, release
from ..privacy.budget import within
from ..privacy.gaussian import GaussianMechanism, analytic_gaussian_sigma
from . import checks
from .dplloyd import DPResult, gaussian_split, improved_iterations, improved_split

#: the artefact's cap parameter α (its default)
ALPHA = 2.0
#: the artefact's bounds on the number of iterations
MIN_ITERATIONS, MAX_ITERATIONS = 2, 7
#: records per block of the assignment
BLOCK = 1 << 15


def caps(iterations: int, k: int, d: int, r, alpha: float = ALPHA) -> list[float]:
    """λ_0 … λ_{T−1}: half the box's diagonal D, then D·α/(2k^(1/d)); D where not below D."""
    diagonal = 2.0 * checks.l2_extent(d, r)
    later = diagonal * alpha / (2.0 * k ** (1.0 / d))
    return [min(diagonal / 2.0 if i == 0 else later, diagonal) for i in range(iterations)]


def iterations_for(
    count: float, k: int, d: int, epsilon: float, delta: float, alpha: float = ALPHA
) -> int:
    """The artefact's T for ``count`` records (a noisy Ñ), clamped to [2, 7]; in pure ε it
    is A2's rule (:func:`~.dplloyd.improved_iterations`)."""
    if not delta > 0:
        return improved_iterations(epsilon, count, k, d, t_min=MIN_ITERATIONS, t_max=MAX_ITERATIONS)
    sigma = analytic_gaussian_sigma(epsilon, delta)
    eta = 2.0 * math.sqrt(d) * alpha / (2.0 * k ** (1.0 / d))
    t = 0.016 * count**2 / (k**3 * eta**2 * (1 + math.sqrt(4 * d)) ** 2 * sigma**2)
    return int(max(min(t, MAX_ITERATIONS), MIN_ITERATIONS))


def capped_stats(X: np.ndarray, C: np.ndarray, cap: float) -> tuple[np.ndarray, np.ndarray]:
    """(counts (k,), shifted sums (k, d)) of the records within ``cap`` of their nearest
    centre; every shift x − c_j has norm ≤ cap."""
    k, d = C.shape
    counts, sums = np.zeros(k), np.zeros((k, d))
    c2 = np.einsum("ij,ij->i", C, C)
    for start in range(0, len(X), BLOCK):
        B = X[start : start + BLOCK]
        d2 = c2[None, :] - 2.0 * B @ C.T
        j = np.argmin(d2, axis=1)
        shift = B - C[j]
        norm = np.sqrt(np.einsum("ij,ij->i", shift, shift))
        inside = norm <= cap
        shift = shift[inside] * np.minimum(1.0, cap / np.maximum(norm[inside], 1e-300))[:, None]
        counts += np.bincount(j[inside], minlength=k)
        np.add.at(sums, j[inside], shift)
    return counts, sums


def fold(C: np.ndarray, r) -> np.ndarray:
    """Each coordinate reflected into [-r_j, r_j] (0 where r_j = 0)."""
    r = np.broadcast_to(np.asarray(r, dtype=np.float64), C.shape[-1:])
    width = 2.0 * r
    safe = np.where(width > 0, width, 1.0)
    v = np.mod(C + r, 2.0 * safe)
    v = np.where(v > safe, 2.0 * safe - v, v)
    return np.where(width > 0, v - r, 0.0)


def _mechanisms(cap, d, r, epsilon_iter, rho_iter, delta):
    """(count mechanism, shifted-sum mechanism) of one iteration at cap λ."""
    if rho_iter is not None:
        rho_count, rho_sums = gaussian_split(rho_iter, d)
        return (
            GaussianMechanism(rho_count, 1.0, 1, delta),
            GaussianMechanism(rho_sums, cap, d, delta),
        )
    budget = improved_split(epsilon_iter, d)
    count, sums = within(epsilon_iter, [budget.count, budget.sum])  # exact sum ≤ ε_iter
    l1 = min(math.sqrt(d) * cap, 2.0 * checks.extent(d, r))
    return LaplaceMechanism(count, 1.0), LaplaceMechanism(sums, l1, d)


def capped_dplloyd(
    X: np.ndarray,
    k: int,
    epsilon: float,
    init: np.ndarray,
    rng: np.random.Generator,
    iterations: int,
    r=1.0,
    alpha: float = ALPHA,
    min_count: float = 0.0,
    zcdp: float | None = None,
    delta: float = 0.0,
) -> DPResult:
    """Capped DPLloyd from ``init`` (k, d) for ``iterations`` rounds: ε/T each in Laplace,
    or ``zcdp``/T each in Gaussian noise (ε unused; the ledger converts at ``delta``).
    Noise from two children of ``rng`` (counts, sums)."""
    X = checks.points(checks.records(X), r)
    C = np.array(init, dtype=np.float64).reshape(k, -1)
    d = X.shape[1]
    count_rng, sum_rng = rng.spawn(2)
    ledger = Ledger(delta=delta) if zcdp is not None else Ledger()
    if zcdp is not None:
        rho_iter, eps_iter = within(zcdp, [zcdp / iterations], iterations)[0], None
    else:
        rho_iter, eps_iter = None, within(epsilon, [epsilon / iterations], iterations)[0]
    schedule = caps(iterations, k, d, r, alpha)
    for it, cap in enumerate(schedule):
        count_mech, sum_mech = _mechanisms(cap, d, r, eps_iter, rho_iter, delta)
        ledger.record(count_mech, "capped cluster counts", round=it)
        ledger.record(sum_mech, "capped shifted sums", round=it)
        counts, sums = capped_stats(X, C, cap)
        noisy_c = count_mech.add(counts, count_mech.noise(count_rng, k))
        noisy_s = sum_mech.add(sums, sum_mech.noise(sum_rng, (k, d)))
        state = C
        noisy_c = release(
            count_mech,
            "capped cluster counts",
            noisy_c,
            lambda data, C=state, cap=cap: capped_stats(data, C, cap)[0],
        )
        noisy_s = release(
            sum_mech,
            "capped shifted sums",
            noisy_s,
            lambda data, C=state, cap=cap: capped_stats(data, C, cap)[1],
        )
        ok = noisy_c > min_count
        step = noisy_s / np.where(ok, noisy_c, 1.0)[:, None]
        length = np.sqrt(np.einsum("ij,ij->i", step, step))
        step *= np.minimum(1.0, cap / np.maximum(length, 1e-300))[:, None]
        C = np.where(ok[:, None], fold(C + step, r), C)
    return DPResult(C, ledger, iterations, {"caps": [float(c) for c in schedule]})
