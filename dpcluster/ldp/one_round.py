"""One-round local-DP k-means (docs/methods.md L1–L3): every user sends one message, the
aggregator clusters from the messages alone.

* :func:`one_round_kmeans` (L1): the practical form of Chang, Ghazi, Kumar and Manurangsi,
  "Locally Private k-Means in One Round" (ICML 2021). A public Gaussian projection to d'
  dimensions and a public hierarchy of grids there (the net tree); each user reports,
  with ε₁, its cell at one level it draws at random (optimised local hashing), and, with
  ε₂ = ε − ε₁, one sampled coordinate of its record (Duchi et al.). The aggregator grows
  the tree level by level, keeping the cells whose estimated count clears a threshold set
  from the estimate's own noise (the private coreset: the kept cells with no kept child,
  weighted by their estimated counts), runs weighted k-means on the coreset, and
  estimates each cluster's centre in the original space from the coordinate reports of
  the users whose reported cell falls in it (bucketed vector summation).
* :func:`grid_oracle_kmeans` (L2): every user reports its cell of one public grid in the
  projected space with all of ε; weighted k-means on the estimated histogram.
* :func:`input_perturbation_kmeans` (L3): every user sends its record with Laplace noise
  (L1 sensitivity 2d in [-1, 1]^d); k-means on the noisy records.

Each user labels itself with the nearest released centre, in the space the centres live
in: post-processing on the user's side, no release. Records are in [-1, 1]^d (the
public domain); the number of messages n is public to the aggregator (it receives them).
The ledger books one pure ε-LDP report per user.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..algorithms.weighted import weighted_kmeans
from ..kernels import labels as nearest
from ..privacy import LaplaceMechanism, Ledger, release
from ..privacy.budget import within
from ..privacy.ledger import LOCAL_RECORD
from .oracles import DuchiCoordinate, LocalHash

#: projected coordinates are clipped to [-R, R]: each is N(0, ‖x‖²/d) ≤ N(0, 1) in law
PROJECTED_RADIUS = 2.5
#: a tree cell is kept when its estimated count is at least this many estimate SDs
KEEP_SDS = 2.0
#: the most cells kept per level (the largest counts first)
MAX_KEPT = 256
#: the most cells a grid may have (the grid histogram estimates every one; a cell id is an
#: int64): (2^level)^{d'} ≤ 2^22
MAX_GRID_BITS = 22
#: a net tree's level-1 candidates are 2^{d'}, and its finest cell ids need levels·d' bits
MAX_TREE_DIMS, MAX_TREE_BITS = 16, 62


def grid_problem(d: int, d_proj: int, level: int) -> str:
    """Why a level-``level`` grid in min(d, d_proj) dimensions is too large, or ""."""
    dims = min(d, d_proj)
    if level * dims > MAX_GRID_BITS:
        return (
            f"the grid has (2^{level})^{dims} cells, above 2^{MAX_GRID_BITS}: lower level or d_proj"
        )
    return ""


def tree_problem(d: int, d_proj: int, levels: int) -> str:
    """Why a net tree of ``levels`` levels in min(d, d_proj) dimensions is too large, or
    ""."""
    dims = min(d, d_proj)
    if dims > MAX_TREE_DIMS or levels * dims > MAX_TREE_BITS:
        return (
            f"a {levels}-level tree in {dims} dimensions needs {levels * dims}-bit cell ids "
            f"and 2^{dims} first-level cells (at most {MAX_TREE_BITS} bits and 2^"
            f"{MAX_TREE_DIMS}): lower levels or d_proj"
        )
    return ""


@dataclass
class LDPResult:
    """labels (n,) each user's cluster; centres (k, d) or (k, d') in ``space``; the
    ledger; info: what the aggregator built (coreset size, kept cells per level)."""

    labels: np.ndarray
    centres: np.ndarray
    ledger: Ledger
    space: str
    info: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Projection:
    """The public projection y = clip(G x/√d, ±R), G (d', d) standard Gaussian, and the
    hierarchy of grids on [-R, R]^{d'}: level ℓ has 2^ℓ cells per axis."""

    G: np.ndarray

    @classmethod
    def draw(cls, d: int, d_proj: int, rng: np.random.Generator) -> Projection:
        return cls(rng.standard_normal((min(d, d_proj), d)))

    @property
    def dims(self) -> int:
        return self.G.shape[0]

    def project(self, X: np.ndarray) -> np.ndarray:
        Y = np.asarray(X, dtype=np.float64) @ self.G.T / math.sqrt(self.G.shape[1])
        return np.clip(Y, -PROJECTED_RADIUS, PROJECTED_RADIUS)

    def cells(self, Y: np.ndarray, level: int) -> np.ndarray:
        """(n,) cell ids of points Y (n, d') at ``level``: the grid index in mixed radix."""
        m = 2**level
        idx = np.floor((Y + PROJECTED_RADIUS) / (2 * PROJECTED_RADIUS) * m).astype(np.int64)
        idx = np.clip(idx, 0, m - 1)
        return (idx * (m ** np.arange(self.dims))).sum(axis=1)

    def centres(self, cells: np.ndarray, level: int) -> np.ndarray:
        """(m, d') centres of cells at ``level``."""
        m = 2**level
        idx = (np.asarray(cells)[:, None] // (m ** np.arange(self.dims))) % m
        return (idx + 0.5) / m * (2 * PROJECTED_RADIUS) - PROJECTED_RADIUS

    def children(self, cells: np.ndarray, level: int) -> np.ndarray:
        """The 2^{d'} children at ``level`` + 1 of each cell at ``level``."""
        m = 2**level
        idx = (np.asarray(cells)[:, None] // (m ** np.arange(self.dims))) % m
        offsets = np.array(np.meshgrid(*[[0, 1]] * self.dims, indexing="ij")).reshape(self.dims, -1)
        child = 2 * idx[:, :, None] + offsets[None]  # (c, d', 2^{d'})
        weights = (2 * m) ** np.arange(self.dims)
        return np.unique((child * weights[None, :, None]).sum(axis=1).ravel())


def book_message(epsilon: float, what: str) -> Ledger:
    """A local ledger booking one pure ε-LDP message per user, ``what`` it holds."""
    ledger = Ledger(LOCAL_RECORD)
    ledger.record(_PerUser(epsilon, what), f"one report per user: {what}")
    return ledger


@dataclass(frozen=True)
class _PerUser:
    """The ledger's view of a whole message: pure ``epsilon``-LDP (its parts composed)."""

    epsilon: float
    what: str
    delta = 0.0
    sensitivity = 1.0
    scale = 0.0


def one_round_kmeans(
    X: np.ndarray,
    k: int,
    epsilon: float,
    rng: np.random.Generator,
    public_rng: np.random.Generator,
    d_proj: int = 8,
    levels: int = 3,
    cell_share: float = 0.5,
    n_init: int = 10,
) -> LDPResult:
    """L1 (module docstring). X (n, d) in [-1, 1]^d; ``rng`` draws the users'
    randomisation, ``public_rng`` the projection and the aggregator's k-means seeds.
    ``cell_share``: the share ε₁/ε for the cell report. Labels come from the projected
    centres (each user projects its own record); ``centres`` are the original-space
    estimates."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if problem := tree_problem(d, d_proj, levels):
        raise ValueError(problem)
    proj = Projection.draw(d, d_proj, public_rng)
    ledger = book_message(epsilon, "its cell (OLH) and one coordinate (Duchi)")
    Y = proj.project(X)
    level, reports, sampled, hashing, coords = encode_users(
        X, epsilon, rng, proj, levels, cell_share
    )
    kept = _grow_tree(proj, hashing, reports, level, levels, n)
    leaves, weights, leaf_level = _coreset(proj, kept)
    if len(leaves) == 0:  # nothing cleared the threshold: the root's centre
        leaves, weights, leaf_level = np.zeros(1, np.int64), np.ones(1), np.zeros(1, np.int64)
    points = np.array(
        [proj.centres(np.array([c]), int(lv))[0] for c, lv in zip(leaves, leaf_level, strict=True)]
    )
    C_proj = weighted_kmeans(points, np.maximum(weights, 1e-9), k, public_rng, n_init=n_init)
    centres = _cluster_means(proj, hashing, coords, reports, sampled, level, kept, C_proj, k)
    labels = nearest(Y, C_proj)
    info = {
        "coreset": int(len(leaves)),
        "kept_per_level": [
            int(len(kept[lv][0])) if lv in kept else 0 for lv in range(1, levels + 1)
        ],
        "projected_centres": C_proj,
    }
    return LDPResult(labels, centres, ledger, "original", info)


def encode_users(X, epsilon, rng, proj: Projection, levels: int, cell_share: float):
    """The users' side of L1: each user draws its level ℓ ∈ 1..``levels``, reports its
    cell at ℓ by OLH at ε₁ = ``cell_share``·ε and one sampled coordinate by Duchi at
    ε₂ = ε − ε₁ (both announced as batched releases). Returns (levels (n,), OLH reports
    (n, 3), coordinate reports (n, 2), the OLH mechanism, the Duchi mechanism)."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    eps_cell, eps_vec = within(epsilon, [cell_share * epsilon, (1 - cell_share) * epsilon])
    level_rng, cell_rng, vec_rng = rng.spawn(3)
    level = level_rng.integers(1, levels + 1, size=n)
    hashing, coords = LocalHash(eps_cell), DuchiCoordinate(eps_vec, d)
    cells = _cells_at(proj, X, level)
    reports = release(
        hashing,
        "cell at the user's level (OLH)",
        hashing.encode(cell_rng, cells),
        lambda D, lv=level: _cells_at(proj, D, lv),
        batch=True,
    )
    sampled = release(
        coords,
        "one sampled coordinate (Duchi)",
        coords.encode(vec_rng, X),
        lambda D: np.asarray(D, dtype=np.float64),
        batch=True,
    )
    return level, reports, sampled, hashing, coords


def _cells_at(proj: Projection, D, level: np.ndarray) -> np.ndarray:
    """The audit's query: each record's cell at its user's level."""
    Y = proj.project(np.asarray(D, dtype=np.float64))
    out = np.zeros(len(Y), dtype=np.int64)
    for lv in np.unique(level):
        at = level == lv
        out[at] = proj.cells(Y[at], int(lv))
    return out


def _grow_tree(proj, hashing, reports, level, levels, n) -> dict[int, tuple]:
    """{level: (cells, estimated counts)} of the kept cells, level 1 down: a level's
    candidates are the children of the previous level's kept cells; a cell is kept when
    its count, estimated from that level's reports and scaled to all n users, is at least
    :data:`KEEP_SDS` estimate SDs (at most :data:`MAX_KEPT`, largest first)."""
    kept: dict[int, tuple] = {}
    candidates = np.arange((2**1) ** proj.dims, dtype=np.int64)
    for lv in range(1, levels + 1):
        at = level == lv
        m = int(at.sum())
        if m == 0 or len(candidates) == 0:
            break
        scale = n / m
        est = hashing.estimate(reports[at], candidates) * scale
        threshold = KEEP_SDS * hashing.estimate_sd(m) * scale
        order = np.argsort(-est, kind="stable")[:MAX_KEPT]
        keep = order[est[order] >= threshold]
        if len(keep) == 0:
            break
        kept[lv] = (candidates[keep], est[keep])
        candidates = proj.children(candidates[keep], lv)
    return kept


def _coreset(proj, kept) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cells, weights, levels) of the kept cells none of whose children was kept."""
    cells, weights, levels = [], [], []
    for lv, (c, w) in kept.items():
        below = kept.get(lv + 1)
        parents = set() if below is None else set((_parent(proj, below[0], lv + 1)).tolist())
        for cell, weight in zip(c, w, strict=True):
            if int(cell) not in parents:
                cells.append(int(cell))
                weights.append(float(weight))
                levels.append(lv)
    return np.array(cells, np.int64), np.array(weights), np.array(levels, np.int64)


def _parent(proj: Projection, cells: np.ndarray, level: int) -> np.ndarray:
    m = 2**level
    idx = (np.asarray(cells)[:, None] // (m ** np.arange(proj.dims))) % m
    return ((idx // 2) * ((m // 2) ** np.arange(proj.dims))).sum(axis=1)


def _cluster_means(proj, hashing, coords, reports, sampled, level, kept, C_proj, k) -> np.ndarray:
    """(k, d) centres in the original space: for each user, the unbiased indicator that
    its cell lies in cluster j (summed over the kept cells of its level that are nearest
    to centre j) times its unbiased record estimate, summed and divided by the summed
    indicators (at least 1), clipped to the box."""
    d = coords.d
    sums, counts = np.zeros((k, d)), np.zeros(k)
    vectors = coords.vectors(sampled)
    for lv, (cells, _) in kept.items():
        at = np.flatnonzero(level == lv)
        if len(at) == 0:
            continue
        owner = nearest(proj.centres(cells, lv), C_proj)
        ind = hashing.indicator(reports[at], cells)  # (users, cells)
        per_cluster = np.stack([ind[:, owner == j].sum(axis=1) for j in range(k)], axis=1)
        sums += per_cluster.T @ vectors[at]
        counts += per_cluster.sum(axis=0)
    return np.clip(sums / np.maximum(counts, 1.0)[:, None], -1.0, 1.0)


def grid_oracle_kmeans(
    X: np.ndarray,
    k: int,
    epsilon: float,
    rng: np.random.Generator,
    public_rng: np.random.Generator,
    d_proj: int = 4,
    level: int = 3,
    n_init: int = 10,
) -> LDPResult:
    """L2 (module docstring): OLH of each user's cell of the level-``level`` grid in the
    projected space, every cell's count estimated, weighted k-means on the cell centres
    (negative estimates weigh 0). Centres and labels in the projected space."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if problem := grid_problem(d, d_proj, level):
        raise ValueError(problem)
    proj = Projection.draw(d, d_proj, public_rng)
    ledger = book_message(epsilon, "its grid cell (OLH)")
    hashing = LocalHash(epsilon)
    Y = proj.project(X)
    reports = release(
        hashing,
        "grid cell (OLH)",
        hashing.encode(rng, proj.cells(Y, level)),
        lambda D: proj.cells(proj.project(np.asarray(D, dtype=np.float64)), level),
        batch=True,
    )
    every = np.arange((2**level) ** proj.dims, dtype=np.int64)
    est = np.zeros(len(every))
    for start in range(0, len(every), 4096):  # (n, 4096) blocks of hash evaluations
        est[start : start + 4096] = hashing.estimate(reports, every[start : start + 4096])
    weights = np.maximum(est, 0.0)
    if weights.sum() <= 0:
        weights = np.ones_like(weights)
    C = weighted_kmeans(proj.centres(every, level), weights, k, public_rng, n_init=n_init)
    return LDPResult(nearest(Y, C), C, ledger, "projected", {"cells": int(len(every))})


def perturb_records(X: np.ndarray, epsilon: float, rng: np.random.Generator):
    """The users' side of L3: each record (n, d) in [-1, 1]^d plus lattice Laplace noise of
    L1 sensitivity 2d, announced as one batched release. Returns (noisy records (n, d),
    the local ledger booking one ε-LDP report per user)."""
    X = np.asarray(X, dtype=np.float64)
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


def input_perturbation_kmeans(
    X: np.ndarray,
    k: int,
    epsilon: float,
    rng: np.random.Generator,
    public_rng: np.random.Generator,
    n_init: int = 10,
) -> LDPResult:
    """L3 (module docstring): each record plus lattice Laplace noise of L1 sensitivity 2d
    (any two records of [-1, 1]^d), k-means (k-means++, ``n_init`` starts) on the noisy
    records, centres clipped to the box."""
    from sklearn.cluster import KMeans

    noisy, ledger = perturb_records(X, epsilon, rng)
    seed = int(public_rng.integers(0, 2**31 - 1))
    C = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit(noisy).cluster_centers_
    C = np.clip(C, -1.0, 1.0)
    return LDPResult(nearest(X, C), C, ledger, "original", {})
