"""MSE of one centroid under DPLloyd and EUGkM, and the hybrid test (docs/methods.md A6, [R]).

Symbols: N records, d dimensions, k clusters (C = N/k points each), domain [-r, r]^d,
ε the budget, t DPLloyd iterations, M grid cells, θ the EUGkM constant, ``o_sq`` = ||o||²
of the centroid; by default the worst case d·r², so every quantity here uses only public
(N, d, k, ε) and the hybrid's decision costs no budget.
"""

from __future__ import annotations

import math

#: θ, EUGkM's grid constant in M = (Nε/θ)^(2d/(2+d)) (docs/methods.md A3)
THETA = 10.0
#: t, the DPLloyd iterations the hybrid's MSE test compares EUGkM with (A6, A7)
SWITCH_T = 5


def _o_sq(d: int, r: float, o_sq: float | None) -> float:
    return d * r * r if o_sq is None else float(o_sq)


def dplloyd_mse(
    N: float,
    k: int,
    d: int,
    eps: float,
    t: int = SWITCH_T,
    r: float = 1.0,
    o_sq: float | None = None,
) -> float:
    """Eq. 7/11: ``2 t² k² (dr+1)² (d + ||o||²) / (Nε)²`` (first order in ΔC/C)."""
    return 2.0 * t**2 * k**2 * (d * r + 1) ** 2 * (d + _o_sq(d, r, o_sq)) / (N * eps) ** 2


def eugkm_cells(N: float, eps: float, d: int, theta: float = THETA) -> float:
    """M = (Nε/θ)^(2d/(2+d)) (continuous, before rounding m per axis)."""
    return (N * eps / theta) ** (2.0 * d / (2.0 + d))


def eugkm_variance(
    N: float,
    k: int,
    d: int,
    eps: float,
    theta: float = THETA,
    r: float = 1.0,
    M: float | None = None,
) -> float:
    """Eq. 9/12: ``(2/3) d r² k^(1−2/d) M / (Nε)²`` with M from θ unless given."""
    M = eugkm_cells(N, eps, d, theta) if M is None else M
    return (2.0 / 3.0) * d * r * r * k ** (1.0 - 2.0 / d) * M / (N * eps) ** 2


def eugkm_bias_sq(M: float, d: int, r: float = 1.0) -> float:
    """Eq. 10: squared bias ≤ ``d r² / M^(2/d)`` (cell half-width r/M^(1/d) per axis)."""
    return d * r * r / M ** (2.0 / d)


def hybrid_mse(
    N: float, k: int, d: int, eps: float, r: float = 1.0, o_sq: float | None = None
) -> float:
    """Eq. 13: one DPLloyd iteration at ε/2, i.e. ``8 G/(Nε)²``."""
    return dplloyd_mse(N, k, d, eps / 2.0, t=1, r=r, o_sq=o_sq)


def m_required(k: int, d: int, r: float = 1.0, o_sq: float | None = None) -> float:
    """Ineq. 15's threshold ``12 (dr+1)² k^(1+2/d) (d + ||o||²) / (d r²)``."""
    return 12.0 * (d * r + 1) ** 2 * k ** (1.0 + 2.0 / d) * (d + _o_sq(d, r, o_sq)) / (d * r * r)


def switch_on_epsilon(
    N: float, k: int, d: int, r: float = 1.0, o_sq: float | None = None, theta: float = THETA
) -> float:
    """Smallest ε with Ineq. 15: ``N ε ≥ θ · M_req^((2+d)/(2d))``."""
    return theta * m_required(k, d, r, o_sq) ** ((2.0 + d) / (2.0 * d)) / N


def hybrid_switch(
    N: float,
    k: int,
    d: int,
    eps: float,
    t: int = SWITCH_T,
    r: float = 1.0,
    o_sq: float | None = None,
    theta: float = THETA,
) -> dict:
    """The hybrid's public test (A7): use EUGkM + one DPLloyd step iff Ineq. 14 and 15 hold.

    Ineq. 14, hybrid MSE ≤ DPLloyd MSE, reduces to t ≥ 2. Ineq. 15, hybrid MSE ≤ EUGkM
    variance, to ``(Nε/θ)^(2d/(2+d)) ≥ M_req``. Returns both flags and ``use_hybrid``.
    """
    ineq14 = t >= 2
    ineq15 = eugkm_cells(N, eps, d, theta) >= m_required(k, d, r, o_sq)
    return {"ineq14": ineq14, "ineq15": ineq15, "use_hybrid": ineq14 and ineq15}


def theta_star(d: int, k: int) -> float:
    """θ* = sqrt(d k^(1−2/d) / 3), the θ minimising variance + squared-bias bound (A6)."""
    return math.sqrt(d * k ** (1.0 - 2.0 / d) / 3.0)


def predictions(
    N: float, k: int, d: int, eps: float, t: int = SWITCH_T, theta: float = THETA, r: float = 1.0
) -> dict:
    """Every prediction for one (N, k, d, ε): the row of ``dpcluster analyze``."""
    M = eugkm_cells(N, eps, d, theta)
    sw = hybrid_switch(N, k, d, eps, t, r, theta=theta)
    return {
        "epsilon": eps,
        "dplloyd_mse": dplloyd_mse(N, k, d, eps, t, r),
        "eugkm_M": M,
        "eugkm_var": eugkm_variance(N, k, d, eps, theta, r, M),
        "eugkm_bias_sq": eugkm_bias_sq(M, d, r),
        "hybrid_mse": hybrid_mse(N, k, d, eps, r),
        "ineq15": sw["ineq15"],
        "use_hybrid": sw["use_hybrid"],
        "switch_on_eps": switch_on_epsilon(N, k, d, r, theta=theta),
        "theta_star": theta_star(d, k),
    }
