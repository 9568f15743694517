"""Every central k-means method by name, on records already in the working cube, with the
public box they live in: what :class:`~dpcluster.DPKMeans` and ``auto`` run.

The records lie in the centred public box ∏ [-r_j, r_j] inside [-1, 1]^d. Starts are drawn
inside it and are data-independent, so they cost nothing. DPLloyd, LSH-splits and the
private mean take the per-feature radii r_j: their coordinate sums then have L1
sensitivity Σ r_j instead of d, which is what keeps narrow features from getting the
widest feature's noise under common scaling.
"""

from __future__ import annotations

import numpy as np

from ..data import sphere_packing
from .auto import choose
from .dplloyd import DPResult, dplloyd, dplloyd_improved
from .eugkm import eugkm
from .gkm import gkm
from .hybrid import hybrid
from .lsh_splits import lsh_splits
from .pgkm import genetic_kmeans
from .reference import private_mean

#: the methods :func:`run` knows, ``auto`` first
NAMES = (
    "auto",
    "dplloyd",
    "dplloyd_improved",
    "eugkm",
    "hybrid",
    "gkm",
    "pgkm",
    "lsh_splits",
    "private_mean",
)


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


def run(method: str, Z: np.ndarray, k: int, eps: float, rng, r=1.0, params=None) -> DPResult:
    """One fit of ``method`` on Z (N, d) inside the centred box ∏ [-r_j, r_j]; ``r`` is one
    radius or (d,) radii, ``params`` the method's own.

    The defaults differ from the papers' protocol where measurement says so
    (docs/utility.md): DPLloyd starts from a sphere-packing set (``init: uniform`` is the
    paper's) and a centre holds when its noisy count is noise (``min_count: 0`` is the
    paper's)."""
    params = dict(params or {})
    d = Z.shape[1]
    r = radius(r, d)
    if method == "auto":
        return auto(Z, k, eps, rng, r)
    hi = np.broadcast_to(np.asarray(r, dtype=np.float64), (d,))
    box = (-hi, hi)
    if method in ("dplloyd", "dplloyd_improved"):
        if params.pop("init", "sphere_packing") == "sphere_packing":
            init = packed_start(k, box, rng)
        else:
            init = rng.uniform(box[0], box[1], size=(k, d))
        params.setdefault("min_count", "noise")
        fn = dplloyd if method == "dplloyd" else dplloyd_improved
        return fn(Z, k, eps, init, rng, r=r, **params)
    if method in ("eugkm", "hybrid"):
        inits = rng.uniform(box[0], box[1], size=(params.pop("init_sets", 30), k, d))
        if method == "eugkm":
            return eugkm(Z, k, eps, inits, rng, **params)
        return hybrid(Z, k, eps, inits, rng, **params)[0]
    if method == "gkm":
        return gkm(Z, k, eps, rng, **params)
    if method == "pgkm":
        return genetic_kmeans(Z, k, rng, eps, **params)
    if method == "lsh_splits":
        return lsh_splits(Z, k, eps, rng, r=r, **params)
    if method == "private_mean":
        return private_mean(Z, k, eps, rng, r=r)
    raise ValueError(f"unknown method {method!r}; known: {', '.join(NAMES)}")


def auto(X: np.ndarray, k: int, epsilon: float, rng, r=1.0) -> DPResult:
    """``auto`` (docs/utility.md): :func:`~dpcluster.algorithms.auto.choose` picks a method
    from public N, d, k, ε and the radii, and it runs with its defaults. The choice reads
    no record, so it costs nothing; ``info`` carries ``chosen`` and ``reason``, and the
    ledger's ``choices`` records both."""
    N, d = np.shape(X)
    r = radius(r, d)
    method, reason = choose(N, k, d, epsilon, r)
    res = run(method, X, k, epsilon, rng, r)
    res.ledger.choices.append(f"auto chose {method}: {reason}")
    return DPResult(
        res.centroids, res.ledger, res.iterations, {**res.info, "chosen": method, "reason": reason}
    )
