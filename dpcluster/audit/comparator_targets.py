"""Audit targets for other libraries' private k-means, run as shipped
(dpcluster/algorithms/comparators.py): present only where the library is installed.

diffprivlib 0.6.6's KMeans sets its iteration count T from the exact N. Its target puts
the pair where T switches, N records on one side and N + 1 on the other (N from ε, k and
d as its ``_calc_iters`` computes them), so a run's discrete path, T, tells the two apart.
"""

from __future__ import annotations

import math

import numpy as np

from ..algorithms.comparators import RHO, diffprivlib_problem, fit_diffprivlib
from .foreign import diffprivlib_hooked, diffprivlib_split_check
from .switches import pair_at
from .target import Target

#: the audited shape: k and d as the central targets', N where T goes from 2 to 3
K_AUDIT, D_AUDIT = 2, 2


def diffprivlib_switch(epsilon: float, k: int = K_AUDIT, d: int = D_AUDIT) -> int:
    """The N at which diffprivlib 0.6.6's T = ⌊max(min(ε/ε_m, 7), 2)⌋ first reaches 3,
    ε_m = sqrt(500 k³ (d + c)³)/N, c = (4dρ²)^(1/3)."""
    c = float(np.cbrt(4 * d * RHO**2))
    scale = math.sqrt(500 * k**3 * (d + c) ** 3)
    return max(2 * k, math.ceil(3 * scale / epsilon))


def _switch_pair(epsilon: float):
    """(D, D'): N − 1 and N records at diffprivlib's T switch for ``epsilon``."""
    return pair_at(diffprivlib_switch(epsilon) - 1, D_AUDIT)


def _diffprivlib_run(X, epsilon, rng, n, trial=None):
    out, ledger = [], None
    for i, g in enumerate(rng.spawn(n)):
        res = fit_diffprivlib(X, K_AUDIT, epsilon, g, r=1.0)
        ledger = res.ledger
        if trial is not None:
            trial.current = i
            trial.paths.append(f"T={res.iterations}")
        out.append(np.asarray(res.centroids, float).reshape(-1))
    return np.array(out), ledger


def unavailable() -> dict[str, str]:
    """The comparator entries that cannot run here, and why (not installed): the audit
    leaves them out rather than fail on them."""
    problem = diffprivlib_problem()
    return {"diffprivlib": problem} if problem else {}


def comparator_targets() -> list[Target]:
    """The installed comparators' targets."""
    if diffprivlib_problem() is not None:
        return []
    return [
        Target(
            name="diffprivlib",
            covers=("diffprivlib",),
            kind="central",
            params={"k": K_AUDIT, "d": D_AUDIT, "pair": "N at its T switch"},
            trials=1_000,
            run=_diffprivlib_run,
            pair=_switch_pair,
            at_epsilon=True,
            whitebox=False,
            per_trial=True,
            note="diffprivlib 0.6.6's KMeans as shipped: black-box and its path T only",
            extra={"replay_hook": diffprivlib_hooked, "replay_check": diffprivlib_split_check},
        )
    ]
