"""Lloyd steps on clipped displacements: private refinement of public centres
(docs/methods.md "Clipped refinement").

Given public centres C (k, d), a step moves each centre c_j by the noisy mean of its
records' displacements x − c_j, each clipped to the L2 ball of radius τ:
``c_j ← c_j + S̃_j / ñ_j`` with S_j = Σ clip_τ(x − c_j) and n_j the record count, a centre
whose noisy count is below :data:`HOLD_SIGMAS` count σ's held. The radius τ is released
first, near the :data:`QUANTILE` of the records' distances to their nearest centre.

Privacy argument. Neighbouring relation: add/remove one record of the public domain; C is
public (a function of earlier releases), so the assignment of a record to its centre is a
function of that record alone.

* **τ.** The exponential mechanism over :data:`GRID` public candidates, geometric from
  R/:data:`SPAN` to 2R (R the domain's largest L2 norm), with loss ``|#{dist ≤ τ} − q·N|``: one
  record moves N by 1 and the count by 0 or 1 in the same direction, so the loss moves by
  at most max(q, 1 − q) (as :mod:`.clipping`'s radius).
* **A step.** One record changes one count by 1 (L2 and L1 sensitivity 1, one entry) and
  one centre's displacement sum by a vector of L2 norm at most τ (Gaussian: L2
  sensitivity τ; Laplace: L1 sensitivity min(√d·τ, the domain's L1 diameter), d entries).
  Gaussian releases with δ > 0 (zCDP, split between count and sums as
  :func:`~.dplloyd.gaussian_split`), Laplace with δ = 0.

Clipping the displacement instead of the record is what makes the noise small: it scales
with how far records lie from their centre, not with the domain. It biases a centre
toward its records' τ-core when other records are assigned to it from afar, which is
what a step from a good start needs.
"""

from __future__ import annotations

import math

import numpy as np

from ..kernels import labels
from ..privacy import ExponentialMechanism, LaplaceMechanism, Ledger, release
from ..privacy.budget import within
from ..privacy.gaussian import GaussianMechanism
from . import checks
from .dplloyd import gaussian_split
from .shrinkage import centre_variance, james_stein, noise_variance

#: the share of records the released τ aims to leave unclipped
QUANTILE = 0.9
#: candidates for τ, geometric from R/SPAN to 2R
GRID, SPAN = 64, 1000.0
#: a centre whose noisy count is below this many count σ's is held
HOLD_SIGMAS = 3.0
#: the share of ε the radius τ spends: pure ε, and with δ > 0, where a pure release
#: costs about ε²/2 of the Rényi budget, as one small release among many
TAU_SHARE, TAU_SHARE_GAUSSIAN = 0.1, 0.02


def tau_candidates(radius: float) -> np.ndarray:
    """(GRID,) public candidates for τ: geometric from radius/SPAN to 2·radius."""
    return np.geomspace(radius / SPAN, 2.0 * radius, GRID)


def displacements(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(labels (N,), x − c(x) (N, d)) of records X against their nearest centre in C."""
    assigned = labels(X, C)
    return assigned, X - C[assigned]


def tau_loss(X: np.ndarray, C: np.ndarray, candidates: np.ndarray, q: float = QUANTILE):
    """(GRID,) ``|#{||x − c(x)|| ≤ τ} − q·N|`` for each candidate τ."""
    _, V = displacements(X, C)
    dist = np.sort(np.sqrt(np.einsum("ij,ij->i", V, V)))
    return np.abs(np.searchsorted(dist, candidates, side="right") - q * len(X))


def release_tau(X, C, epsilon, rng, ledger: Ledger, radius: float, announce=release) -> float:
    """τ by the exponential mechanism (module docstring), booked in ``ledger``."""
    candidates = tau_candidates(radius)
    purpose = "displacement radius τ (distance quantile)"
    mech = ledger.record(ExponentialMechanism(epsilon, max(QUANTILE, 1 - QUANTILE)), purpose)
    i = mech.select(rng, tau_loss(X, C, candidates))
    i = announce(mech, purpose, i, lambda data, C=C: tau_loss(data, C, candidates), rng=rng)
    return float(candidates[i])


def step_mechanisms(
    budget: float, delta: float, steps: int, d: int, tau: float, l1_diameter: float
):
    """[(count mechanism, sum mechanism)] per step: Gaussian splitting zCDP ``budget``
    (δ > 0), or Laplace splitting ε ``budget`` in half between counts and sums (δ = 0).

    A clipped displacement x − c(x) has L2 norm at most τ, so L1 norm at most √d·τ, and at
    most ``l1_diameter``, the largest L1 distance between two points of the domain (x and
    c(x) both lie in it): twice the largest L1 norm of a record, not once."""
    per = within(budget, [budget / steps], steps)[0]
    if delta > 0:
        rho_count, rho_sums = gaussian_split(per, d)
        pair = (
            GaussianMechanism(rho_count, 1.0, 1, delta),
            GaussianMechanism(rho_sums, tau, d, delta),
        )
    else:
        eps_count, eps_sums = within(per, [per / 2.0, per / 2.0])
        l1 = min(math.sqrt(d) * tau, l1_diameter)
        pair = (LaplaceMechanism(eps_count, 1.0), LaplaceMechanism(eps_sums, l1, coordinates=d))
    return [pair] * steps


def clipped_stats(X, C, tau):
    """(counts (k,), sums (k, d)) of the records' displacements clipped to τ."""
    k, d = C.shape
    assigned, V = displacements(X, C)
    norms = np.sqrt(np.einsum("ij,ij->i", V, V))
    inner = tau * (1.0 - 1e-12)  # a hair inside, so rounding never leaves the ball
    V *= np.minimum(1.0, inner / np.maximum(norms, np.finfo(np.float64).tiny))[:, None]
    counts = np.bincount(assigned, minlength=k).astype(np.float64)
    sums = np.zeros((k, d))
    np.add.at(sums, assigned, V)
    return counts, sums


def refine(
    X: np.ndarray,
    C: np.ndarray,
    mechanisms,
    rng: np.random.Generator,
    ledger: Ledger,
    tau: float,
    project,
    announce=release,
    shrink: bool = False,
) -> np.ndarray:
    """Lloyd steps on displacements clipped to τ from centres C (k, d), one per
    (count, sum) mechanism pair, each booked in ``ledger``; ``project`` maps centres into
    the public domain; ``shrink``: each step's mean displacement is shrunk toward zero
    (:func:`shrink_steps`). Returns the centres (k, d)."""
    k, d = C.shape
    count_rng, sum_rng = rng.spawn(2)
    for step, (count_mech, sum_mech) in enumerate(mechanisms):
        ledger.record(count_mech, "cluster counts (refinement)", round=step)
        ledger.record(sum_mech, "clipped displacement sums (refinement)", round=step)
        counts, sums = clipped_stats(X, C, tau)
        noisy_c = count_mech.add(counts, count_mech.noise(count_rng, k))
        noisy_s = sum_mech.add(sums, sum_mech.noise(sum_rng, (k, d)))
        noisy_c = announce(
            count_mech,
            "cluster counts (refinement)",
            noisy_c,
            lambda data, C=C: clipped_stats(data, C, tau)[0],
        )
        noisy_s = announce(
            sum_mech,
            "clipped displacement sums (refinement)",
            noisy_s,
            lambda data, C=C: clipped_stats(data, C, tau)[1],
        )
        floor = HOLD_SIGMAS * math.sqrt(getattr(count_mech, "variance", count_mech.scale**2))
        ok = noisy_c > floor
        step = noisy_s / np.where(ok, noisy_c, 1.0)[:, None]
        if shrink:
            step = shrink_steps(step, noisy_c, ok, count_mech, sum_mech)
        moved = C + step
        C = project(np.where(ok[:, None], moved, C))
    return C


def shrink_steps(step, noisy_counts, ok, count_mech, sum_mech) -> np.ndarray:
    """(k, d): each centre's noisy mean displacement S̃_j/ñ_j shrunk toward zero (the
    centre stays where it is) by positive-part James–Stein, with per-coordinate variance
    (σ_S² + σ_n²·||step_j||²/d)/ñ_j² from the two mechanisms' noise (docs/methods.md M8).
    Post-processing of the step's releases: it costs nothing."""
    var_s, var_c = noise_variance(sum_mech), noise_variance(count_mech)
    v = centre_variance(step, np.where(ok, noisy_counts, 1.0), var_s, var_c)
    return james_stein(step, np.zeros(step.shape[1]), v)


def ball_announcer(ball: float | None):
    """:func:`~..privacy.release` with each query fed the records as the mechanisms see
    them: projected into the ball when there is one."""
    if ball is None:
        return release

    def announce(mechanism, purpose, output, query, rng=None):
        return release(
            mechanism,
            purpose,
            output,
            lambda data: query(checks.project_to_ball(data, ball)),
            rng=rng,
        )

    return announce
