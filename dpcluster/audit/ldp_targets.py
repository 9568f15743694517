"""Audit targets for the one-round LDP k-means encoders (docs/methods.md L1–L3): a
distinguishing attack on two inputs of one user, as LDP-Auditor does (Arcolezi and
Gambs): the records at opposite corners of [-1, 1]^d, which every encoder's worst case
separates (different cells, opposite signs on every coordinate, the largest L1 distance).
The white-box bound sums each report's exact log-likelihood ratio."""

from __future__ import annotations

import numpy as np

from ..ldp.one_round import Projection, book_message, encode_users, perturb_records
from ..ldp.oracles import LocalHash
from ..privacy import release
from .target import Target

#: the audited shape: records of d = 8 attributes, projected to d' = 4, grid level 3
D_AUDIT, D_PROJ, LEVEL, LEVELS = 8, 4, 3, 3


def _projection() -> Projection:
    return Projection.draw(D_AUDIT, D_PROJ, np.random.default_rng(11))


def _corners():
    return np.ones((1, D_AUDIT)), -np.ones((1, D_AUDIT))


def _grid_run(X, epsilon, rng, n, trial=None):
    proj = _projection()
    hashing = LocalHash(epsilon)
    reports = release(
        hashing,
        "grid cell (OLH)",
        hashing.encode(rng, proj.cells(proj.project(X), LEVEL)),
        lambda D: proj.cells(proj.project(np.asarray(D, dtype=np.float64)), LEVEL),
        batch=True,
    )
    return reports[:, 2:3].astype(float), book_message(epsilon, "its grid cell (OLH)")


def _one_round_run(X, epsilon, rng, n, trial=None):
    _, reports, sampled, _, _ = encode_users(X, epsilon, rng, _projection(), LEVELS, 0.5)
    features = np.column_stack([reports[:, 2], sampled[:, 1]]).astype(float)
    return features, book_message(epsilon, "its cell (OLH) and one coordinate (Duchi)")


def _perturb_run(X, epsilon, rng, n, trial=None):
    return perturb_records(X, epsilon, rng)


def ldp_targets() -> list[Target]:
    """One target per new encoder, each on the corner pair."""
    shape = {"d": D_AUDIT, "pair": "opposite corners of [-1, 1]^d"}
    grid = {"d_proj": D_PROJ, "level": LEVEL}
    tree = {"d_proj": D_PROJ, "levels": LEVELS, "cell_share": 0.5}
    return [
        Target(
            name=name,
            covers=(entry,),
            kind="local",
            params={**shape, **extra},
            trials=10_000,
            run=run,
            pair=_corners,
        )
        for name, entry, extra, run in (
            ("ldp_grid (OLH cell report)", "ldp_grid", grid, _grid_run),
            ("ldp_one_round (cell and coordinate)", "ldp_one_round", tree, _one_round_run),
            ("ldp_perturb (Laplace record)", "ldp_perturb", {}, _perturb_run),
        )
    ]
