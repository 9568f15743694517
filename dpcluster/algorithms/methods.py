"""One fit per central k-means method, on records already in the working cube, with the
public box they live in: what the registry's entries declare as their ``fit``, so what
:class:`~dpcluster.DPKMeans` runs by name, and what ``auto`` runs.

The records lie in the centred public box ∏ [-r_j, r_j] inside [-1, 1]^d. Starts are drawn
inside it and are data-independent, so they cost nothing. DPLloyd, LSH-splits and the
private mean take the per-feature radii r_j: their coordinate sums then have L1
sensitivity Σ r_j instead of d, which is what keeps narrow features from getting the
widest feature's noise under common scaling.
"""

from __future__ import annotations

import numpy as np

from ..data import sphere_packing
from ..privacy import Ledger
from . import checks
from .auto import choose, clip_share
from .clipping import clipped_extent, private_radius, worth_clipping
from .dplloyd import RHO, DPResult, dplloyd, dplloyd_improved, estimator_iterations
from .eugkm import eugkm
from .gkm import gkm
from .hybrid import hybrid
from .lsh_splits import lsh_splits
from .pgkm import genetic_kmeans
from .reference import private_mean


def packed_start(k: int, box, rng: np.random.Generator) -> np.ndarray:
    """A sphere-packing start (docs/methods.md A0) drawn in [-1, 1]^d and mapped onto the
    box (lo, hi): (k, d)."""
    lo, hi = box
    P = sphere_packing(k, len(lo), rng)[0]
    return lo + (P + 1.0) / 2.0 * (hi - lo)


def radius(r, d: int) -> float | np.ndarray:
    """The records' radii: 1.0 when every feature spans [-1, 1] (the methods then take
    their one-radius path, the papers' arithmetic), else the (d,) per-feature radii."""
    r = np.broadcast_to(np.asarray(r, dtype=np.float64), (d,))
    return 1.0 if np.all(r == 1.0) else np.array(r)


def _box(r, d: int) -> tuple[np.ndarray, np.ndarray]:
    hi = np.broadcast_to(np.asarray(r, dtype=np.float64), (d,))
    return -hi, hi


def _lloyd_start(k: int, Z: np.ndarray, r, rng, init: str) -> np.ndarray:
    box = _box(r, Z.shape[1])
    if init == "sphere_packing":
        return packed_start(k, box, rng)
    return rng.uniform(box[0], box[1], size=(k, Z.shape[1]))


def fit_dplloyd(Z, k, epsilon, rng, r=1.0, init="sphere_packing", min_count="noise", **params):
    """A1 from a sphere-packing start (``init: uniform`` is the paper's), holding a centre
    whose noisy count is noise (``min_count: 0`` is the paper's)."""
    start = _lloyd_start(k, Z, r, rng, init)
    return dplloyd(Z, k, epsilon, start, rng, r=r, min_count=min_count, **params)


def fit_dplloyd_improved(
    Z,
    k,
    epsilon,
    rng,
    r=1.0,
    init="sphere_packing",
    min_count="noise",
    single_pass=True,
    iterations=0,
    clip=0.0,
    **params,
):
    """A2 with :func:`fit_dplloyd`'s start and hold, and one pass with all of ε where the
    clusters are weak (:func:`~.dplloyd.estimator_iterations`; ``single_pass: false``
    keeps A2's t rule). ``iterations`` > 0 fixes t. ``clip`` > 0 spends that share of ε on
    a private radius near the 90th percentile of the records' norms and clips the records
    to it (:mod:`.clipping`): the sums' sensitivity drops from Σ r_j to min(√d·R, Σ r_j),
    and DPLloyd gets the rest of ε. Where N·clip·ε is too small to pick the radius
    reliably (:func:`~.clipping.worth_clipping`), nothing is clipped and DPLloyd gets all
    of ε."""
    start = _lloyd_start(k, Z, r, rng, init)
    N, d = np.shape(Z)
    radius_ledger, radius, extent, info = None, None, None, {}
    if clip > 0 and worth_clipping(N, clip * epsilon):
        Z = checks.points(Z, r)  # in the box before a radius is read from it
        radius_ledger, eps_radius = Ledger(), clip * epsilon
        radius = private_radius(Z, eps_radius, rng, radius_ledger, r)
        extent, info = clipped_extent(d, r, radius), {"radius": radius}
        epsilon = epsilon - eps_radius
    if iterations == 0 and single_pass:  # the released radius is public: t may use it
        iterations = estimator_iterations(epsilon, N, k, d, r, params.get("rho", RHO), extent)
    res = dplloyd_improved(
        Z,
        k,
        epsilon,
        start,
        rng,
        r=r,
        min_count=min_count,
        iterations=iterations,
        clip_radius=radius,
        **params,
    )
    if radius_ledger is None:
        return res
    ledger = radius_ledger.extend(res.ledger)
    return DPResult(res.centroids, ledger, res.iterations, {**res.info, **info})


def fit_eugkm(Z, k, epsilon, rng, r=1.0, init_sets=30, **params):
    """A3 from ``init_sets`` uniform start sets in the box."""
    box = _box(r, Z.shape[1])
    return eugkm(
        Z, k, epsilon, rng.uniform(box[0], box[1], size=(init_sets, k, Z.shape[1])), rng, **params
    )


def fit_hybrid(Z, k, epsilon, rng, r=1.0, init_sets=30, **params):
    """A7 from ``init_sets`` uniform start sets in the box."""
    box = _box(r, Z.shape[1])
    inits = rng.uniform(box[0], box[1], size=(init_sets, k, Z.shape[1]))
    return hybrid(Z, k, epsilon, inits, rng, **params)[0]


def fit_gkm(Z, k, epsilon, rng, r=1.0, **params):
    """A4."""
    return gkm(Z, k, epsilon, rng, **params)


def fit_pgkm(Z, k, epsilon, rng, r=1.0, **params):
    """A5."""
    return genetic_kmeans(Z, k, rng, epsilon, **params)


def fit_lsh_splits(Z, k, epsilon, rng, r=1.0, **params):
    """LSH-splits (docs/methods.md M1) with the box's radii."""
    return lsh_splits(Z, k, epsilon, rng, r=r, **params)


def fit_private_mean(Z, k, epsilon, rng, r=1.0):
    """The private-mean reference (M2) with the box's radii."""
    return private_mean(Z, k, epsilon, rng, r=r)


def fit_auto(Z, k, epsilon, rng, r=1.0):
    """``auto`` (:func:`auto`)."""
    return auto(Z, k, epsilon, rng, r)


#: what :func:`~dpcluster.algorithms.auto.choose` may pick, and the fit that runs it (the
#: registry, dpcluster/experiments/, maps every method name to its fit)
CHOSEN = {
    "hybrid": fit_hybrid,
    "private_mean": fit_private_mean,
    "dplloyd_improved": fit_dplloyd_improved,
}


def auto(X: np.ndarray, k: int, epsilon: float, rng, r=1.0) -> DPResult:
    """``auto`` (docs/utility.md): :func:`~dpcluster.algorithms.auto.choose` picks a method
    from public N, d, k, ε and the radii, and it runs with its defaults. The choice reads
    no record, so it costs nothing; ``info`` carries ``chosen`` and ``reason``, and the
    ledger's ``choices`` records both."""
    N, d = np.shape(X)
    r = radius(r, d)
    method, reason = choose(N, k, d, epsilon, r)
    params = {"clip": clip_share(N, d, epsilon)} if method == "dplloyd_improved" else {}
    res = CHOSEN[method](X, k, epsilon, rng, r, **params)
    res.ledger.choices.append(f"auto chose {method}: {reason}")
    return DPResult(
        res.centroids, res.ledger, res.iterations, {**res.info, "chosen": method, "reason": reason}
    )
