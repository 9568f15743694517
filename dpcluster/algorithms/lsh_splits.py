"""LSH-splits: private coreset from a locality-sensitive-hash prefix tree, then k-means on
the coreset (Chang and Kamath, "Practical Differentially Private Clustering", Google
Research 2021, the practical version of Chang, Ghazi, Kumar and Manurangsi, ICML 2021;
docs/methods.md "LSH-splits").

The algorithm as its authors describe it:

1. **Tree.** A SimHash of D bits: D directions g_1..g_D ~ N(0, I_d), drawn from public
   randomness; record x hashes to bits ``[g_j · x ≥ 0]``, the hyperplanes passing through
   the centre of the public domain. The prefix tree on those hashes is grown from the root:
   a node at depth j < D branches into its two children when its noisy count is at least
   ``T_branch``; a child is kept when its noisy count is at least ``T_node``. Nodes that
   are kept and not branched are the leaves.
2. **Coreset.** For each leaf, the noisy count (its weight) and the noisy sum of its
   records; their ratio, clipped into the domain, is the coreset point.
3. **k-means on the coreset**: weighted greedy k-means++ and Lloyd on (point, weight),
   several starts, the lowest weighted cost kept. Post-processing.

Defaults follow the authors' heuristic (their ``default_tree_param``): ``T_node`` is the
smaller of the count that makes a leaf's sum noise about 0.1 of the domain radius and
``Ñ/(2k)``; ``T_branch = 3 T_node``. Their accountant composes Gaussian noise (ε, δ); this
version stays in pure ε with the Laplace mechanism, so its depth is short (composition
over levels is linear here): ``D = ceil(log2 k) + 3``.

Privacy argument. Neighbouring relation: add/remove one record with every |x_j| ≤ r. The
tree has levels 0..D; a record lies in exactly one node of each level, so the vector of
one level's node counts has L1 sensitivity 1, and ``Lap(1/ε_level)`` on every count of
that level (empty nodes included: which nodes are counted depends only on earlier noisy
counts) is ε_level-DP; the D + 1 levels compose to ``ε_count = Σ ε_level``. Leaves are
disjoint, so the leaves' coordinate sums have L1 sensitivity L = d·r (Σ r_j for per-
feature radii; min(Σ r_j, √d·R) when the records are projected into a public L2 ball of
radius R) and ``Lap(L/ε_sum)`` on each coordinate is ε_sum-DP. Total ``ε = ε_count
+ ε_sum`` (basic composition); the directions, the thresholds' choice from the noisy
root count, and the k-means on the coreset are post-processing. Default split: ``ε_count
= 0.2 ε``, ``ε_sum = 0.8 ε`` (the authors' ``frac_sum = 0.8``). When the tree stops
before depth D, the levels it did not reach release nothing but are booked all the same,
so every run's ledger is the same ε.
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy import LaplaceMechanism, Ledger, release
from ..privacy.budget import split, within
from . import checks
from .dplloyd import DPResult
from .weighted import weighted_kmeans

#: the share of ε on the tree's counts; the rest goes to the leaves' sums
COUNT_SHARE = 0.2
#: the longest hash: node ids are int64 prefixes
MAX_DEPTH = 62


def default_depth(k: int) -> int:
    """D = ceil(log2 k) + 3: room for k leaves and three levels of refinement."""
    return max(1, math.ceil(math.log2(max(k, 1)))) + 3


def node_threshold(
    noisy_n: float, k: int, d: int, epsilon_sum: float, r=1.0, ball: float | None = None
) -> float:
    """T_node = max(1, min(n_low, Ñ/(2k))): ``n_low`` makes a leaf mean's sum noise, of L2
    norm about sqrt(2d)·L/ε_sum (L = Σ r_j, d·r for one radius, at most √d·``ball`` in a
    ball), one tenth of the domain radius sqrt(Σ r_j²) (at most ``ball``)."""
    L = checks.ball_extent(d, r, ball)
    radius = checks.l2_extent(d, r) if ball is None else min(checks.l2_extent(d, r), ball)
    n_low = 10.0 * math.sqrt(2.0 * d) * L / (epsilon_sum * radius)
    return max(1.0, min(n_low, noisy_n / (2.0 * k)))


def _hash_bits(X: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """(N, D) bool: bit j of each record, ``g_j · x ≥ 0``."""
    return (X @ directions.T) >= 0.0


def lsh_splits(
    X: np.ndarray,
    k: int,
    epsilon: float,
    rng: np.random.Generator,
    depth: int = 0,
    count_share: float = COUNT_SHARE,
    r=1.0,
    n_init: int = 10,
    ball: float | None = None,
) -> DPResult:
    """LSH-splits on X (N, d) in [-r, r]^d: centroids (k, d).

    depth        D, the hash length (0: :func:`default_depth`).
    count_share  the share of ε on the tree's counts (levels 0..D, equal parts).
    ball         the radius of a public L2 ball about the origin the records also lie in
                 (records outside it are projected onto it, which keeps every hash bit):
                 the sums' L1 sensitivity is then min(Σ r_j, √d·ball).
    ``rng`` is split into the public directions, the count noise, the sum noise and the
    k-means starts. Returns DPResult with info {depth, leaves, t_node, t_branch}.
    """
    X = checks.points(X, r)
    N, d = X.shape
    X = checks.project_to_ball(X, ball)
    if not 0.0 < count_share < 1.0:
        raise ValueError(f"count_share must lie in (0, 1), got {count_share}")
    D = int(depth) or default_depth(k)
    if not 1 <= D <= MAX_DEPTH:  # refused before anything is released
        raise ValueError(f"depth must lie in 0..{MAX_DEPTH} (0: the default), got {depth}")
    dir_rng, count_rng, sum_rng, km_rng = rng.spawn(4)
    directions = dir_rng.standard_normal((D, d))
    bits = _hash_bits(X, directions)
    eps_count, eps_sum = split(epsilon, count_share)
    level = LaplaceMechanism(within(eps_count, [eps_count / (D + 1)], D + 1)[0], 1.0)
    ledger = Ledger()
    # node ids: a node is the hash prefix of its records, as an integer with its depth
    node = np.zeros(N, dtype=np.int64)
    ledger.record(level, "tree node counts", round=0)
    root = level.add(N, level.noise(count_rng, 1))
    root = float(release(level, "tree node counts", root, lambda data: np.array([len(data)]))[0])
    t_node = node_threshold(root, k, d, eps_sum, r, ball)
    t_branch = 3.0 * t_node
    frontier = {0: root}  # prefix -> noisy count, at the current depth
    leaves: list[tuple[int, int, float]] = []  # (depth, prefix, noisy count)
    for j in range(D):
        branching = sorted(p for p, c in frontier.items() if c >= t_branch)
        leaves += [
            (j, p, c) for p, c in frontier.items() if c < t_branch and (j == 0 or c >= t_node)
        ]
        if not branching:
            frontier = {}
            break
        node, children, noisy = count_children(
            level, node, bits, j, branching, count_rng, ledger, directions
        )
        frontier = {int(p): float(c) for p, c in zip(children, noisy, strict=True) if c >= t_node}
    leaves += [(D, p, c) for p, c in frontier.items()]
    if not leaves:  # nothing passed the thresholds: the root is the one leaf
        leaves = [(0, 0, max(root, 1.0))]
    leaves.sort()
    for j in range(len(ledger.entries), D + 1):  # levels the tree did not reach
        ledger.record(level, "tree node counts (level not reached: booked all the same)", j)
    sum_mech = ledger.record(
        LaplaceMechanism(eps_sum, checks.ball_extent(d, r, ball), coordinates=d),
        "leaf coordinate sums",
    )
    exact_sums = _leaf_sums(X, bits, leaves)
    noisy_sums = sum_mech.add(exact_sums, sum_mech.noise(sum_rng, exact_sums.shape))
    noisy_sums = release(
        sum_mech,
        "leaf coordinate sums",
        noisy_sums,
        lambda data: _leaf_sums(
            checks.project_to_ball(data, ball), _hash_bits(np.asarray(data), directions), leaves
        ),
    )
    weights = np.array([max(c, 1.0) for _, _, c in leaves])
    points = checks.project_to_ball(np.clip(noisy_sums / weights[:, None], -r, r), ball)
    C = weighted_kmeans(points, weights, k, km_rng, n_init=n_init)
    info = {"depth": D, "leaves": len(leaves), "t_node": t_node, "t_branch": t_branch}
    return DPResult(C, ledger, 0, info)


def count_children(level, node, bits, j, branching, rng, ledger, directions):
    """One tree level: both children of every ``branching`` node at depth j, counted with
    ``level``'s noise (booked, drawn from ``rng``, announced). ``node`` (N,) holds each
    record's depth-j prefix; returns (the records' depth-(j + 1) prefixes, the children's
    ids, their noisy counts)."""
    children = np.array([2 * p + b for p in branching for b in (0, 1)], dtype=np.int64)
    node = 2 * node + bits[:, j]
    exact = _counts(node, children)
    ledger.record(level, "tree node counts", round=j + 1)
    noisy = level.add(exact, level.noise(rng, len(children)))
    noisy = release(
        level,
        "tree node counts",
        noisy,
        lambda data: _counts(_prefix(data, directions, j + 1), children),
    )
    return node, children, noisy


def _prefix(X: np.ndarray, directions: np.ndarray, length: int) -> np.ndarray:
    """(N,) the first ``length`` hash bits of each record as an integer."""
    bits = _hash_bits(X, directions[:length]).astype(np.int64)
    return bits @ (1 << np.arange(length - 1, -1, -1, dtype=np.int64))


def _counts(node: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """(len(wanted),) how many records have each node id of ``wanted`` (sorted ids)."""
    ordered = np.sort(node)
    left = np.searchsorted(ordered, wanted, side="left")
    right = np.searchsorted(ordered, wanted, side="right")
    return (right - left).astype(np.float64)


def _leaf_sums(X: np.ndarray, bits: np.ndarray, leaves) -> np.ndarray:
    """(L, d) the coordinate sums of each leaf's records (leaves as (depth, prefix, _)).
    Each record's prefix is computed once per depth that holds a leaf."""
    out = np.zeros((len(leaves), X.shape[1]))
    by_depth: dict[int, list[int]] = {}
    for i, (depth, _, _) in enumerate(leaves):
        by_depth.setdefault(depth, []).append(i)
    for depth, rows in by_depth.items():
        if depth == 0:
            out[rows] = X.sum(axis=0)
            continue
        weights = 1 << np.arange(depth - 1, -1, -1, dtype=np.int64)
        code = bits[:, :depth].astype(np.int64) @ weights
        for i in rows:
            out[i] = X[code == leaves[i][1]].sum(axis=0)
    return out
