"""LSH-splits as Google publishes it: (ε, δ), an L2-ball domain, Gaussian leaf sums
(google/differential-privacy, ``learning/clustering``; Chang and Kamath, "Practical
Differentially Private Clustering", 2021; docs/methods.md "LSH-splits").

The algorithm, with the published defaults:

1. **Tree.** A SimHash of ``max_depth`` = 20 bits from public Gaussian directions through
   the origin. The root's count is released; a node whose noisy count is at least
   ``T_branch`` branches into both children, each counted; a child stays in the tree when
   its noisy count is at least ``T_node``. The tree grows a level at a time until no node
   branches, or depth 20. A leaf is a node of the tree with no child in it (a branching
   node whose children all fell below ``T_node`` is one).
2. **Coreset.** Each leaf's point is its records' sum plus Gaussian noise, divided by its
   noisy count (the root's count at least 1), projected onto the domain ball; its weight is
   the noisy count.
3. **k-means** on the weighted coreset: k-means++ and Lloyd, ``n_init`` starts, the lowest
   weighted cost kept (post-processing).

Thresholds (their ``default_tree_param``): ``T_node = max(1, min(⌊10√d σ/r⌋, ⌊Ñ/2k⌋))``
with σ the sums' noise and Ñ the root's noisy count, ``T_branch = 3 T_node``.

Noise (their ``PrivacyCalculator``): one parameter α sets both parts, the sums'
σ = α·r and each count's discrete Laplace parameter 1/(20α) (ε = 1/(20α) per level with
sensitivity 1), and α is the smallest that keeps the composition within (ε, δ). Their
accountant is a privacy-loss distribution; here it is Rényi composition (:mod:`..privacy.rdp`),
a valid and slightly looser bound, so α is slightly larger for the same budget.

Privacy argument. Neighbouring relation: add/remove one record of L2 norm at most r (the
records are projected onto the ball first). Each level's counts form one vector in which
one record changes one entry by 1: ``Lap`` with ε_level = 1/(20α) per level, 21 levels
(root included; levels the tree did not reach are booked all the same), adaptively
composed (which nodes are counted depends only on earlier noisy counts). Leaves are
disjoint, so the concatenated leaf sums have L2 sensitivity r: one discrete Gaussian
release of zCDP ρ = 1/(2α²). The ledger composes the 21 pure releases and ρ by RDP at δ.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..privacy import LaplaceMechanism, Ledger, pld, release
from ..privacy.gaussian import GaussianMechanism, zcdp_epsilon
from ..privacy.mechanisms import snap_records
from ..privacy.rdp import composed_epsilon
from .checks import project_to_ball, records
from .dplloyd import DPResult
from .lsh_splits import _hash_bits, _leaf_sums, count_children
from .weighted import weighted_kmeans

#: the published tree depth (their ``max_depth``, "chosen experimentally")
MAX_DEPTH = 20
#: their ``dlaplace_param_multiplier``: a count's ε per level is 1/(this·α)
COUNT_MULTIPLIER = 20.0


@functools.lru_cache(maxsize=256)
def calibrate(
    epsilon: float,
    delta: float,
    depth: int = MAX_DEPTH,
    multiplier: float = COUNT_MULTIPLIER,
    before: tuple = (),
    levels: int | None = None,
) -> float:
    """The smallest α (to 1e-9 relative, rounded up) whose releases, ``levels`` (default
    ``depth`` + 1) levels of counts at ε = 1/(multiplier·α) and sums of zCDP 1/(2α²),
    composed with the pure releases ``before`` (ε's already booked in the same ledger:
    ``auto``'s Ñ), stay within ε at δ: first by Rényi or basic composition (bisection),
    then by their privacy-loss distribution (:mod:`~..privacy.pld`), which allows a
    smaller α; the ledger books the smallest of the three totals."""
    levels = depth + 1 if levels is None else levels

    def counts(alpha: float) -> tuple:
        return tuple(before) + (1.0 / (multiplier * alpha),) * levels

    def loose(alpha: float) -> float:  # Rényi or basic composition
        rho = 1.0 / (2.0 * alpha * alpha)
        basic = math.fsum([*counts(alpha), zcdp_epsilon(rho, delta)])
        return min(composed_epsilon(counts(alpha), rho, delta), basic)

    def tight(alpha: float) -> float:  # PLD, kept a margin below ε
        rho = 1.0 / (2.0 * alpha * alpha)
        return pld.composed_epsilon(counts(alpha), rho, delta) * (1.0 + pld.MARGIN)

    lo, hi = 1e-6, 1.0
    while loose(hi) > epsilon:
        lo, hi = hi, hi * 2.0
        if hi > 1e30:
            raise ValueError(f"no noise scale reaches epsilon={epsilon:g}, delta={delta:g}")
    while hi - lo > 1e-9 * hi:
        mid = math.sqrt(lo * hi)
        if loose(mid) > epsilon:
            lo = mid
        else:
            hi = mid
    return min(hi, pld.smallest_scale(tight, epsilon, hi))


def tree_thresholds(noisy_root: float, k: int, d: int, sigma: float, radius: float):
    """(T_node, T_branch) of the published heuristic (module docstring)."""
    low_noise = int(10.0 * math.sqrt(d) * sigma / radius)
    t_node = max(1, min(low_noise, int(noisy_root // (2 * k))))
    return float(t_node), 3.0 * t_node


def grow_tree(
    bits, level: LaplaceMechanism, t_node, t_branch, root: float, rng, ledger, directions
):
    """The tree's leaves as (depth, prefix, noisy count), from the records' hash ``bits``
    (N, D) and the root's released count. Books one count release per level 1..D."""
    N, D = bits.shape
    node = np.zeros(N, dtype=np.int64)
    levels = [{0: root}]
    for j in range(D):
        branching = sorted(p for p, c in levels[-1].items() if c >= t_branch)
        if not branching:
            break
        node, children, noisy = count_children(
            level, node, bits, j, branching, rng, ledger, directions
        )
        kept = {int(p): float(c) for p, c in zip(children, noisy, strict=True) if c >= t_node}
        if not kept:
            break
        levels.append(kept)
    leaves = []
    for depth, nodes in enumerate(levels):
        below = levels[depth + 1] if depth + 1 < len(levels) else {}
        parents = {p >> 1 for p in below}
        leaves += [(depth, p, c) for p, c in sorted(nodes.items()) if p not in parents]
    return leaves


def lsh_splits_gaussian(
    X: np.ndarray,
    k: int,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    radius: float = 1.0,
    depth: int = MAX_DEPTH,
    n_init: int = 10,
    before: tuple = (),
    root: float | None = None,
) -> DPResult:
    """Google's LSH-splits on X (N, d), records in the L2 ball of ``radius`` about the
    origin (projected onto it first): centroids (k, d), (ε, δ)-DP. ``before``: pure ε's the
    caller's ledger already holds, which the total ε covers (:func:`calibrate`); ``root``:
    a noisy record count among them (``auto``'s Ñ), which then serves as the tree's root
    count, as the published code reuses its own, so that levels 1..depth are counted here
    and the root is not counted again. ``rng`` is
    split into the public directions, the count noise, the sum noise and the k-means
    starts. Info: {depth, leaves, t_node, t_branch, alpha, sigma}."""
    if not 0.0 < delta < 1.0:
        raise ValueError(
            f"lsh_splits_gaussian spends (epsilon, delta): delta must lie in (0, 1), got {delta}"
        )
    if not (radius > 0 and math.isfinite(radius)):
        raise ValueError(f"radius must be positive and finite, got {radius}")
    X = records(X)
    if not np.all(np.isfinite(X)):
        raise ValueError("X has a non-finite value: every record must be a finite point")
    # onto the ball, then onto the lattice (toward 0, so still in the ball): sums are exact
    X = snap_records(project_to_ball(X, radius))
    N, d = X.shape
    levels = depth if root is not None else depth + 1
    alpha = calibrate(epsilon, delta, depth, before=before, levels=levels)
    dir_rng, count_rng, sum_rng, km_rng = rng.spawn(4)
    directions = dir_rng.standard_normal((depth, d))
    bits = _hash_bits(X, directions)
    ledger = Ledger(delta=delta)
    level = LaplaceMechanism(1.0 / (COUNT_MULTIPLIER * alpha), 1.0)
    if root is None:
        ledger.record(level, "tree node counts", round=0)
        root = level.add(N, level.noise(count_rng, 1))
        root = release(level, "tree node counts", root, lambda data: np.array([len(data)]))[0]
    root = float(root)
    sums = GaussianMechanism(1.0 / (2.0 * alpha * alpha), radius, d, delta)
    t_node, t_branch = tree_thresholds(root, k, d, sums.sigma, radius)
    leaves = grow_tree(bits, level, t_node, t_branch, root, count_rng, ledger, directions)
    for j in range(len(ledger.entries), levels):  # levels the tree did not reach
        ledger.record(
            level,
            "tree node counts (level not reached: booked all the same)",
            j + depth + 1 - levels,
        )
    if len(leaves) == 1 and leaves[0][0] == 0:  # the root alone: its count at least 1
        leaves = [(0, 0, max(root, 1.0))]
    ledger.record(sums, "leaf coordinate sums")
    exact = _leaf_sums(X, bits, leaves)
    noisy = sums.add(exact, sums.noise(sum_rng, exact.shape))
    noisy = release(
        sums,
        "leaf coordinate sums",
        noisy,
        lambda data: _leaf_sums(
            project_to_ball(data, radius),
            _hash_bits(project_to_ball(data, radius), directions),
            leaves,
        ),
    )
    weights = np.array([c for _, _, c in leaves], dtype=np.float64)
    points = project_to_ball(noisy / weights[:, None], radius)
    C = weighted_kmeans(points, weights, k, km_rng, n_init=n_init)
    info = {
        "depth": depth,
        "leaves": len(leaves),
        "t_node": t_node,
        "t_branch": t_branch,
        "alpha": alpha,
        "sigma": sums.sigma,
    }
    return DPResult(C, ledger, 0, info)
