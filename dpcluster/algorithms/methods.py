"""Every central k-means method by name, on records already in the working cube, with the
public box they live in: what :class:`~dpcluster.DPKMeans` and ``auto`` run.

``box`` = (-h, h), (d,) each: the public domain of the records inside [-1, 1]^d, centred.
Starts are drawn inside it and are data-independent, so they cost nothing. DPLloyd,
LSH-splits and the private mean take h as per-feature radii: their coordinate sums then
have L1 sensitivity Σ h_j instead of d, which is what keeps narrow features from getting
the widest feature's noise under common scaling.
"""

from __future__ import annotations

import numpy as np

from ..data import sphere_packing
from .auto import choose, radii_of
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
    box: (k, d)."""
    lo, hi = box
    P = sphere_packing(k, len(lo), rng)[0]
    return lo + (P + 1.0) / 2.0 * (hi - lo)


def unit_box(d: int) -> tuple[np.ndarray, np.ndarray]:
    return -np.ones(d), np.ones(d)


def run(method: str, Z: np.ndarray, k: int, eps: float, rng, box=None, params=None) -> DPResult:
    """One fit of ``method`` on Z (N, d) in the box; ``params`` are the method's own.

    The defaults differ from the papers' protocol where measurement says so
    (docs/utility.md): DPLloyd starts from a sphere-packing set (``init: uniform`` is the
    paper's) and a centre holds when its noisy count is noise (``min_count: 0`` is the
    paper's)."""
    params = dict(params or {})
    d = Z.shape[1]
    box = unit_box(d) if box is None else box
    if method == "auto":
        return auto(Z, k, eps, rng, box)
    # the box is centred: its half-widths are per-feature radii for the methods whose
    # sensitivity is an L1 extent (one radius when every feature spans [-1, 1])
    radius = radii_of(box)
    if method in ("dplloyd", "dplloyd_improved"):
        if params.pop("init", "sphere_packing") == "sphere_packing":
            init = packed_start(k, box, rng)
        else:
            init = rng.uniform(box[0], box[1], size=(k, d))
        params.setdefault("min_count", "noise")
        fn = dplloyd if method == "dplloyd" else dplloyd_improved
        return fn(Z, k, eps, init, rng, r=radius, **params)
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
        return lsh_splits(Z, k, eps, rng, r=radius, **params)
    if method == "private_mean":
        return private_mean(Z, k, eps, rng, r=radius)
    raise ValueError(f"unknown method {method!r}; known: {', '.join(NAMES)}")


def auto(X: np.ndarray, k: int, epsilon: float, rng, box=None) -> DPResult:
    """``auto`` (docs/utility.md): :func:`~dpcluster.algorithms.auto.choose` picks a method
    from public N, d, k and ε, and it runs with its defaults. The choice reads no record,
    so it costs nothing; ``info`` carries ``chosen`` and ``reason``, and the ledger's
    ``choices`` records both."""
    N, d = np.shape(X)
    method, reason = choose(N, k, d, epsilon, radii_of(box))
    res = run(method, X, k, epsilon, rng, box)
    res.ledger.choices.append(f"auto chose {method}: {reason}")
    return DPResult(
        res.centroids, res.ledger, res.iterations, {**res.info, "chosen": method, "reason": reason}
    )
