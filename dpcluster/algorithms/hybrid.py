"""The EUGkM → DPLloyd hybrid with its MSE-based switch (docs/methods.md A7).

Privacy argument. Neighbouring relation: add/remove one tuple. The switch reads d, k, ε and
a record count (docs/methods.md A6 with the worst-case ||o||²): a plan's noisy count ``n``
(:mod:`.plan`), or, as the paper does, the exact N, which is booked as an exact read
(ε = ∞ provable under add/remove one; the paper's ε claimed). When
it says "hybrid": EUGkM at ε/2 (ε/2-DP, see :mod:`.eugkm`), then one DPLloyd iteration
from its centroids at ε/2 (counts and sums split by sensitivity, scale (dr+1)/(ε/2), see
:mod:`.dplloyd`); sequential composition gives ε. Otherwise the fallback is EUGkM at ε.
"""

from __future__ import annotations

import numpy as np

from ..analysis import hybrid_switch
from ..analysis.mse import SWITCH_T, THETA
from ..privacy import Ledger
from ..privacy.budget import remaining
from ..privacy.ledger import book_exact_count
from .dplloyd import DPResult, dplloyd_batch
from .eugkm import eugkm


def hybrid(
    X: np.ndarray,
    k: int,
    epsilon: float,
    inits: np.ndarray,
    rng: np.random.Generator,
    lloyd_runs: int = 1,
    force: bool = False,
    theta: float = THETA,
    rounding: str = "round",
    max_iter: int = 100,
    r: float = 1.0,
    distances: str = "float32",
    n: float | None = None,
    seeding: str = "given",
) -> list[DPResult]:
    """One EUGkM synopsis followed by ``lloyd_runs`` independent DPLloyd iterations.

    X (N, d); inits (30, k, d) the shared sets; ``rng`` is split into the synopsis stream and
    one (count, sum) pair per DPLloyd run. ``force`` skips the fallback test. ``distances``
    and ``seeding`` are EUGkM's (:func:`~dpcluster.algorithms.eugkm.eugkm`).
    Returns ``lloyd_runs`` DPResults (one when falling back); info carries ``fell_back``,
    ``ineq15`` and the EUGkM grid.
    """
    N, d = X.shape
    count = float(N) if n is None else max(1.0, float(n))
    switch = hybrid_switch(count, k, d, epsilon, t=SWITCH_T, r=r, theta=theta)
    syn_rng, lloyd_rng = rng.spawn(2)
    info = {"ineq15": switch["ineq15"], "forced": force}
    fall_back = not (switch["use_hybrid"] or force)
    # the synopsis gets all of ε on fallback, half of it before the DPLloyd step otherwise
    first = eugkm(
        X,
        k,
        epsilon if fall_back else epsilon / 2.0,
        inits,
        syn_rng,
        theta=theta,
        rounding=rounding,
        max_iter=max_iter,
        r=r,
        distances=distances,
        n=count,
        seeding=seeding,
    )
    if n is None:
        book_exact_count(first.ledger, "the hybrid's switch and EUGkM's M")
    if fall_back:
        info = {**first.info, **info, "fell_back": True}
        return [DPResult(first.centroids, first.ledger, first.iterations, info)]
    streams = [dict(zip(("count", "sum"), g.spawn(2))) for g in lloyd_rng.spawn(lloyd_runs)]
    C, step_ledger = dplloyd_batch(
        X,
        np.repeat(first.centroids[None], lloyd_runs, axis=0),
        remaining(epsilon, [epsilon / 2.0]),
        streams,
        iterations=1,
        r=r,
    )
    out = []
    for c in C:
        ledger = Ledger().extend(first.ledger).extend(step_ledger)
        out.append(DPResult(c, ledger, 1, {**first.info, **info, "fell_back": False}))
    return out
