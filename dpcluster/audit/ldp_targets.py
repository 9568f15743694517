"""Audit targets for the one-round LDP k-means encoders (docs/methods.md L1–L3): a
distinguishing attack on two inputs of one user, as LDP-Auditor does (Arcolezi and
Gambs): the records at opposite corners of [-1, 1]^d, which every encoder's worst case
separates (different cells, opposite signs on every coordinate, the largest L1 distance).
The white-box bound sums each report's exact log-likelihood ratio."""

from __future__ import annotations

import numpy as np

from ..ldp.one_round import Projection, book_message, encode_users
from ..ldp.oracles import LocalHash
from ..privacy import LaplaceMechanism, Ledger, release
from ..privacy.ledger import LOCAL_RECORD
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
    d = X.shape[1]
    mech = LaplaceMechanism(epsilon, 2.0 * d, coordinates=d)
    ledger = Ledger(LOCAL_RECORD)
    ledger.record(mech, "one report per user: its record with Laplace noise")
    noisy = release(
        mech,
        "record with Laplace noise",
        mech.add(X, mech.noise(rng, X.shape)),
        lambda D: np.asarray(D, dtype=np.float64),
        batch=True,
    )
    return noisy, ledger


def ldp_targets() -> list[Target]:
    """One target per new encoder, each on the corner pair."""
    shape = {"d": D_AUDIT, "pair": "opposite corners of [-1, 1]^d"}
    return [
        Target(
            name="ldp_grid (OLH cell report)",
            covers=("ldp_grid",),
            kind="local",
            params={**shape, "d_proj": D_PROJ, "level": LEVEL},
            trials=10_000,
            run=_grid_run,
            pair=_corners,
        ),
        Target(
            name="ldp_one_round (cell and coordinate)",
            covers=("ldp_one_round",),
            kind="local",
            params={**shape, "d_proj": D_PROJ, "levels": LEVELS, "cell_share": 0.5},
            trials=10_000,
            run=_one_round_run,
            pair=_corners,
        ),
        Target(
            name="ldp_perturb (Laplace record)",
            covers=("ldp_perturb",),
            kind="local",
            params=shape,
            trials=10_000,
            run=_perturb_run,
            pair=_corners,
        ),
    ]
