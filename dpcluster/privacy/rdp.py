"""Rényi-DP composition of pure-ε and Gaussian releases (docs/privacy.md, "(ε, δ): Rényi
composition").

A mechanism is (α, τ)-RDP when the Rényi divergence of order α > 1 between neighbours'
outputs is at most τ; RDP composes by adding τ at each order.

* **A pure ε-DP release** is (α, τ_ε(α))-RDP with
  ``τ_ε(α) = log((e^{αε} + e^{(1−α)ε}) / (1 + e^ε)) / (α − 1)``, the divergence of
  randomised response with flip probability 1/(1 + e^ε), which dominates every ε-DP
  mechanism (Mironov, "Rényi Differential Privacy", CSF 2017, Prop. 3, in the equivalent
  sinh form). It is at most ε and, for small ε, about αε²/2.
* **A ρ-zCDP release** (the package's discrete Gaussian) is (α, αρ)-RDP for every α.
* **From RDP to (ε, δ)** (Canonne, Kamath and Steinke, NeurIPS 2020, Prop. 12):
  (α, τ)-RDP gives (ε, δ)-DP with ``δ = e^{(α−1)(τ−ε)} (1 − 1/α)^{α−1} / α``; any order α
  gives a valid bound, so the search over a grid of orders below only loosens it where it
  misses the best one.

For many small pure releases beside a Gaussian (LSH-splits' 21 tree levels and its leaf
sums) this is far tighter than adding the pure ε's to the Gaussian's converted ε, which is
what :class:`~.ledger.Ledger` otherwise does; the ledger books the smaller of the two.
"""

from __future__ import annotations

import functools
import math

import numpy as np

#: the orders α searched (1 < α ≤ 10^4, dense where the optimum of small budgets lies)
ORDERS = np.unique(np.concatenate([1.0 + np.geomspace(1e-3, 1e4, 600)]))


def pure_rdp(epsilon: float, orders: np.ndarray = ORDERS) -> np.ndarray:
    """τ_ε(α) at each order of ``orders`` (module docstring), in log space so that large
    αε does not overflow; never above ε."""
    a = np.asarray(orders, dtype=np.float64)
    eps = float(epsilon)
    log_num = np.logaddexp(a * eps, (1.0 - a) * eps)
    tau = (log_num - math.log1p(math.exp(-eps)) - eps) / (a - 1.0)
    return np.minimum(tau, eps)


def rdp_delta(tau: np.ndarray, epsilon: float, orders: np.ndarray = ORDERS) -> float:
    """The smallest δ over ``orders`` at which RDP curve ``tau`` gives ε-DP (CKS Prop. 12)."""
    a = np.asarray(orders, dtype=np.float64)
    log_delta = (a - 1.0) * (tau - epsilon) + (a - 1.0) * np.log1p(-1.0 / a) - np.log(a)
    return float(min(1.0, math.exp(float(np.min(log_delta)))))


def rdp_epsilon(tau: np.ndarray, delta: float, orders: np.ndarray = ORDERS) -> float:
    """The smallest ε over ``orders`` at which RDP curve ``tau`` gives (ε, δ)-DP:
    ``min_α τ(α) + (log(1/δ) + (α−1) log(1 − 1/α) − log α) / (α − 1)``, never below 0."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1) to convert RDP, got {delta}")
    a = np.asarray(orders, dtype=np.float64)
    eps = tau + (-math.log(delta) + (a - 1.0) * np.log1p(-1.0 / a) - np.log(a)) / (a - 1.0)
    # rounded up by a relative 1e-9: what the ledger books stays above the float error
    return max(0.0, float(np.min(eps)) * (1.0 + 1e-9))


@functools.lru_cache(maxsize=4096)
def _pure_curve(epsilon: float) -> np.ndarray:
    curve = pure_rdp(epsilon)
    curve.setflags(write=False)
    return curve


def composed_epsilon(pure: list[float] | tuple[float, ...], rho: float, delta: float) -> float:
    """The ε at ``delta`` of pure releases ``pure`` (each ε-DP) composed with ρ-zCDP, by
    RDP; ``inf`` when a pure release is unbounded."""
    if any(not math.isfinite(e) for e in pure):
        return math.inf
    tau = float(rho) * ORDERS
    counts: dict[float, int] = {}
    for e in pure:
        counts[float(e)] = counts.get(float(e), 0) + 1
    for e, times in counts.items():
        tau = tau + times * _pure_curve(e)
    return rdp_epsilon(tau, delta)


def largest_rho(pure: tuple, epsilon: float, delta: float) -> float:
    """The largest zCDP ρ that composes with the pure releases ``pure`` to at most ε at
    δ by the privacy-loss distribution (:func:`.pld.largest_rho`), by Rényi composition
    or by basic composition (the pure ε's plus the zCDP group's ε at δ), whichever allows
    more: the ledger books the smallest of the three totals, so any keeps it within ε.
    ValueError when the pure releases alone exceed ε."""
    from .pld import largest_rho as pld_rho

    return max(_largest_rho_rdp(pure, epsilon, delta), pld_rho(pure, epsilon, delta))


def _largest_rho_rdp(pure: tuple, epsilon: float, delta: float) -> float:
    """:func:`largest_rho` by Rényi or basic composition only (bisection, rounded down).
    Rényi's conversion cannot go below about log(1/δ)/10⁴ at the orders searched, so very
    small ε take the basic route."""
    from .budget import remaining
    from .gaussian import zcdp_budget

    try:
        rest = remaining(epsilon, list(pure))
    except ValueError:
        raise ValueError(f"the pure releases {pure} leave nothing of epsilon={epsilon:g}") from None
    basic = zcdp_budget(rest, delta)
    if composed_epsilon(pure, 0.0, delta) >= epsilon:
        return basic
    lo, hi = 0.0, max(epsilon, 1.0)
    while composed_epsilon(pure, hi, delta) <= epsilon:
        lo, hi = hi, hi * 2.0
    while hi - lo > 1e-12 * hi:
        mid = (lo + hi) / 2.0
        if composed_epsilon(pure, mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return max(lo, basic)
