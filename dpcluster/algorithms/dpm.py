"""DPM: private clustering by separation (Liebenow, Schulz, Stark and Mohammadi, "DPM:
Clustering Sensitive Data through Separation", ACM CCS 2024, arXiv 2307.02969; their
artefact, UzL-PrivSec/dp-mondrian-clustering, read for its parameters; docs/methods.md
"DPM").

The algorithm:

1. **Ñ**, the noisy record count; ``split_limit = Ñ / 2^L`` (L split levels: their 7,
   which is ⌈log2 k⌉ + 1 at their k = 64; here ⌈log2 k⌉ + 1 at every k).
2. **Interval size.** The q = 0.65 quantile of the gaps between consecutive sorted values,
   pooled over the axes, released by the exponential mechanism over a public geometric
   grid of candidates; σ̂ = that gap over the same quantile of the gaps of Ñ standard
   normal samples (public randomness), and the interval size is h = σ̂/2 (their
   codebook's 0.5), at least the box's width / 256. Each axis is cut into ⌊width/h⌋
   intervals.
3. **Separation tree.** A node with noisy count ñ at level l < L picks one (axis, interval)
   by the exponential mechanism on ``w_c·centreness + w_e·emptiness`` (w_c = 1,
   w_e = 5): emptiness 1 − (records in the interval)/ñ clipped to [0, 1]; centreness is
   the published piecewise-linear score of the interval centre's rank p among the node's
   records, peaking at the median (t = 0.3, q = 1/12). It splits at the interval's centre;
   both halves are counted; when either count is at most ``split_limit`` the node is a
   leaf, else both halves recurse. Level L nodes are leaves. (``leaf_rule="child"``,
   ``auto``'s: a half at or below the limit is a leaf by itself and the other half
   recurses; the node is a leaf only when both are.)
4. **Centres.** Each leaf's coordinate sum plus Gaussian noise, divided by its noisy
   count, clipped into the box: DPM's centres (as many as leaves). To return k centres,
   weighted greedy k-means++ and Lloyd on (leaf centres, noisy counts) follow, as for
   LSH-splits' coreset (post-processing).

Budget (their defaults): ε_bandwidth = 0.04ε, ε_count = 0.18ε over levels 0..L and
ε_split = 0.18ε over levels 0..L−1, each split across levels ∝ √(2^l); the leaves' sums
get what is left of (ε, δ) under Rényi composition (:func:`~..privacy.rdp.largest_rho`)
as Gaussian noise. Their artefact gives the sums 0.6ε and 0.8δ by basic composition,
which leaves budget unspent. With δ = 0 the sums get Laplace noise on the rest of ε
(basic composition), L1 sensitivity Σ r_j: DPM in pure ε.

Privacy argument. Neighbouring relation: add/remove one record in the public box
∏ [-r_j, r_j]. (a) The pooled gaps: per axis, adding a record replaces one gap by two, so
#{gaps ≤ c} moves by −d..2d and q·M (M = d(N−1) gaps) by q·d: the loss
|#{gaps ≤ c} − qM| has sensitivity max(2 − q, 1 + q)·d. (b) Counts: the nodes of one
level are disjoint, so each level is one Laplace release of sensitivity 1. (c) Splits:
with n = max(ñ, 1) (ñ released), emptiness moves by at most 1/n and centreness, whose
slope in p is at most (t/q)/n, by at most (t/q)/n; the mechanism's sensitivity is
w_c(t/q)/ñ_s + w_e/ñ_s with ñ_s = max(ñ + log(2δ_c)/ε_l, 1) ≤ n, as published (a lower
bound on the count, so it only adds noise); the nodes of a level are disjoint, one
release per level. Their artefact scores with n = ñ even when 0 < ñ < 1, where its
sensitivity no longer covers the score; here n = max(ñ, 1). (d) Leaves are disjoint: the
sums have L2 sensitivity √(Σ r_j²) (L1 Σ r_j), one discrete Gaussian (Laplace)
release. Every level is booked whether or not the tree reaches it.
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy import ExponentialMechanism, LaplaceMechanism, Ledger, release
from ..privacy.budget import remaining, within
from ..privacy.gaussian import GaussianMechanism
from ..privacy.rdp import largest_rho
from . import checks
from .dplloyd import DPResult
from .refine import ball_announcer
from .weighted import weighted_kmeans

#: split levels L: 0 means ⌈log2 k⌉ + 1 (:func:`default_levels`), their 7 at k = 64
LEVELS = 0


def default_levels(k: int) -> int:
    """L = ⌈log2 k⌉ + 1: the published 7 at k = 64, and at other k the depth whose leaf
    limit Ñ/2^L is about half an average cluster (docs/decisions.md)."""
    return max(1, math.ceil(math.log2(max(k, 1)))) + 1


#: when a split leaves a half at or below the leaf limit Ñ/2^L: ``published`` makes the
#: node a leaf (the paper and its artefact); ``child`` makes that half a leaf and lets the
#: other half recurse, so a node holding a sliver of one cluster and whole others is not
#: closed over them (docs/methods.md M1d). Both read only released counts.
LEAF_RULES = ("published", "child")

#: shares of ε: bandwidth, counts, splits (the rest, with δ, goes to the leaves' sums)
SHARES = (0.04, 0.18, 0.18)
#: score weights and centreness shape (their w_c, w_e, t, q)
W_CENTRE, W_EMPTY, T_CENTRE, Q_CENTRE = 1.0, 5.0, 0.3, 1.0 / 12.0
#: the gap quantile the interval size is read from (their 65th percentile)
GAP_QUANTILE = 0.65
#: the most intervals one axis is cut into (a smaller interval size is raised to width/this)
MAX_INTERVALS = 256
#: the public candidates for the gap quantile, per unit of box width
GAP_CANDIDATES = np.geomspace(1e-7, 1.0, 512)


def level_shares(total: float, levels: int) -> list[float]:
    """``total`` split over ``levels`` levels ∝ √(2^l), summing exactly to at most it."""
    w = np.sqrt(2.0 ** np.arange(levels))
    return within(total, list(total * w / w.sum()))


def centreness(n: float, p: np.ndarray) -> np.ndarray:
    """The published centreness of rank p among n records: t·(n/2 − |p − n/2|)/(nq) in
    the outer parts, rising linearly to 1 at the median in the middle."""
    t, q = T_CENTRE, Q_CENTRE
    off = np.abs(p - n / 2.0)
    outer = (n / 2.0 - off) * t / (n * q)
    middle = (t - 2 * q) / (1 - 2 * q) + (n / 2.0 - off) * (1 - t) / (n / 2.0 - n * q)
    return np.where(off >= n / 2.0 - n * q, outer, middle)


def interval_size(X, r, noisy_n, epsilon, rng, sim_rng, ledger, announce=release) -> float:
    """h = σ̂/2 from the private q-quantile of the pooled per-axis gaps (module docstring)."""
    N, d = X.shape
    width = float(2.0 * np.max(r))
    gaps = np.diff(np.sort(X, axis=0), axis=0).ravel()
    gaps.sort()
    candidates = GAP_CANDIDATES * width
    sensitivity = max(2.0 - GAP_QUANTILE, 1.0 + GAP_QUANTILE) * d

    def loss(gaps):
        return np.abs(np.searchsorted(gaps, candidates, side="right") - GAP_QUANTILE * len(gaps))

    mech = ledger.record(ExponentialMechanism(epsilon, sensitivity), "gap quantile")
    pick = mech.select(rng, loss(gaps))
    pick = announce(
        mech,
        "gap quantile",
        pick,
        lambda data: loss(np.sort(np.diff(np.sort(data, axis=0), axis=0).ravel())),
        rng=rng,
    )
    n = int(min(max(noisy_n, 2.0), 2e6))
    normal = np.diff(np.sort(sim_rng.standard_normal((n, 4)), axis=0), axis=0)
    unit_gap = float(np.quantile(normal, GAP_QUANTILE))
    return max(0.5 * candidates[pick] / unit_gap, width / MAX_INTERVALS)


def dpm(
    X: np.ndarray,
    k: int,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    r=1.0,
    levels: int = LEVELS,
    n_init: int = 10,
    ball: float | None = None,
    before: tuple = (),
    leaf_rule: str = "published",
) -> DPResult:
    """DPM on X (N, d) in the box ∏ [-r_j, r_j] (and, when ``ball`` is given, in the L2
    ball of that radius about the origin): k centroids (k, d), (ε, δ)-DP. Info:
    {leaves, interval, noisy_count}; ``info["leaf_centres"]`` holds DPM's own centres.
    ``before``: pure ε's the caller's ledger already holds (``auto``'s Ñ), which ε covers:
    the sums get what is left after them. ``leaf_rule``: one of :data:`LEAF_RULES`."""
    if leaf_rule not in LEAF_RULES:
        raise ValueError(f"dpm: leaf_rule must be one of {LEAF_RULES}, got {leaf_rule!r}")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"dpm: delta must lie in [0, 1), got {delta}")
    X = checks.points(X, r)
    N, d = X.shape
    r_vec = np.broadcast_to(np.asarray(r, dtype=np.float64), (d,))
    X = checks.project_to_ball(X, ball)  # in a ball, every record's norm is at most it
    announce = ball_announcer(ball)
    levels = int(levels) or default_levels(k)
    eps_bw, eps_count, eps_split = within(epsilon, [s * epsilon for s in SHARES])
    counts = level_shares(eps_count, levels + 1)
    splits = level_shares(eps_split, levels)
    delta_count = 0.2 * delta / (levels + 1)
    count_rng, bw_rng, sim_rng, split_rng, sum_rng, km_rng = rng.spawn(6)
    ledger = Ledger(delta=delta)

    level_mechs = [LaplaceMechanism(e, 1.0) for e in counts]
    ledger.record(level_mechs[0], "node counts", round=0)
    noisy_n = level_mechs[0].add(N, level_mechs[0].noise(count_rng, 1))
    noisy_n = announce(
        level_mechs[0],
        "node counts",
        noisy_n,
        lambda data: np.array([float(len(data))]),
    )
    noisy_n = float(noisy_n[0])
    h = interval_size(X, r_vec, noisy_n, eps_bw, bw_rng, sim_rng, ledger, announce)
    lo = -r_vec
    n_intervals = np.maximum(1, np.floor(2.0 * r_vec / h)).astype(int)
    centres_of = [lo[j] + (np.arange(n_intervals[j]) + 0.5) * h for j in range(d)]
    split_limit = noisy_n / 2.0**levels

    # a node: (its records' indices, the splits that define it, its noisy count)
    leaves: list[tuple[np.ndarray, tuple, float]] = []
    frontier = [(np.arange(N), (), noisy_n)]
    for level in range(levels):
        if not frontier:
            break
        chosen, mechs = [], []
        for idx, path, n_noisy in frontier:
            n = max(n_noisy, 1.0)
            shift = math.log(2 * delta_count) / counts[level] if delta_count else 0.0
            n_s = max(n_noisy + shift, 1.0)
            mech = ExponentialMechanism(
                splits[level], W_CENTRE * (T_CENTRE / Q_CENTRE) / n_s + W_EMPTY / n_s
            )

            def loss(data, path=path, n=n, n_noisy=n_noisy):
                if n_noisy <= 0:  # no score: a uniform choice
                    return np.zeros(int(n_intervals.sum()))
                return -_scores(data[_members(data, path)], centres_of, h, n)

            no_score = np.zeros(int(n_intervals.sum()))  # ñ <= 0: a uniform choice
            scores = _scores(X[idx], centres_of, h, n) if n_noisy > 0 else no_score
            pick = mech.select(split_rng, -scores)
            pick = announce(mech, "split choice", pick, loss, rng=split_rng)
            chosen.append((idx, path, n_noisy, _split_at(pick, n_intervals, centres_of)))
            mechs.append(mech)
        ledger.record(
            max(mechs, key=lambda m: m.sensitivity), "split choices (one per node)", round=level
        )
        children = []
        for idx, path, _, (axis, cut) in chosen:
            below = X[idx, axis] <= cut
            children += [
                (idx[~below], path + ((axis, cut, False),)),
                (idx[below], path + ((axis, cut, True),)),
            ]
        mech_count = ledger.record(level_mechs[level + 1], "node counts", round=level + 1)
        exact = np.array([float(len(i)) for i, _ in children])
        noisy = mech_count.add(exact, mech_count.noise(count_rng, len(exact)))
        paths = [p for _, p in children]
        noisy = announce(
            mech_count,
            "node counts",
            noisy,
            lambda data, paths=paths: np.array([float(_members(data, p).sum()) for p in paths]),
        )
        frontier = []
        for i, (idx, path, n_noisy, _) in enumerate(chosen):
            halves = (
                (*children[2 * i], float(noisy[2 * i])),
                (*children[2 * i + 1], float(noisy[2 * i + 1])),
            )
            small = [half[2] <= split_limit for half in halves]
            if all(small) or (any(small) and leaf_rule == "published"):
                leaves.append((idx, path, n_noisy))
            else:
                for half, is_small in zip(halves, small):
                    (leaves if is_small else frontier).append(half)
    leaves += frontier
    reached = {e.round for e in ledger.entries if e.purpose == "split choices (one per node)"}
    for level in range(levels):
        if level not in reached:
            ledger.record(
                ExponentialMechanism(splits[level], 1.0),
                "split choices (level not reached: booked all the same)",
                level,
            )
            ledger.record(
                level_mechs[level + 1],
                "node counts (level not reached: booked all the same)",
                level + 1,
            )

    pure = tuple(before) + tuple(e.epsilon for e in ledger.entries)
    norm = float(np.sqrt(np.sum(r_vec**2)))
    if ball is not None:
        norm = min(norm, float(ball))
    if delta:
        sums = GaussianMechanism(largest_rho(pure, epsilon, delta), norm, d, delta)
    else:  # pure ε: Laplace on the sums, L1 sensitivity Σ r_j (min(√d·R, Σ r_j) in a ball)
        l1 = checks.ball_extent(d, r_vec, ball)
        sums = LaplaceMechanism(remaining(epsilon, list(pure)), l1, coordinates=d)
    ledger.record(sums, "leaf coordinate sums")
    exact_sums = np.array([X[idx].sum(axis=0) for idx, _, _ in leaves])
    noisy_sums = sums.add(exact_sums, sums.noise(sum_rng, exact_sums.shape))
    noisy_sums = announce(
        sums,
        "leaf coordinate sums",
        noisy_sums,
        lambda data: np.array([data[_members(data, p)].sum(axis=0) for _, p, _ in leaves]),
    )
    weights = np.array([max(c, 1.0) for _, _, c in leaves])
    points = np.clip(noisy_sums / weights[:, None], -r_vec, r_vec)
    C = weighted_kmeans(points, weights, k, km_rng, n_init=n_init)
    info = {"leaves": len(leaves), "interval": h, "noisy_count": noisy_n, "leaf_centres": points}
    return DPResult(C, ledger, 0, info)


def _scores(Xn: np.ndarray, centres_of: list[np.ndarray], h: float, n: float) -> np.ndarray:
    """(Σ intervals,) w_c·centreness + w_e·emptiness of every (axis, interval) for the
    node's records Xn, with count n (= max(ñ, 1))."""
    out = []
    for j, centres in enumerate(centres_of):
        col = np.sort(Xn[:, j])
        inside = np.searchsorted(col, centres + h / 2, side="left") - np.searchsorted(
            col, centres - h / 2, side="left"
        )
        empty = np.clip(1.0 - inside / n, 0.0, 1.0)
        p = np.searchsorted(col, centres, side="left").astype(np.float64)
        out.append(W_CENTRE * centreness(n, p) + W_EMPTY * empty)
    return np.concatenate(out)


def _members(data: np.ndarray, path: tuple) -> np.ndarray:
    """(N,) bool: the records of ``data`` in the node the splits ``path`` define, each
    split (axis, cut, below) keeping x[axis] <= cut (below) or > cut."""
    keep = np.ones(len(data), dtype=bool)
    for axis, cut, below in path:
        keep &= (data[:, axis] <= cut) == below
    return keep


def _split_at(pick: int, n_intervals: np.ndarray, centres_of) -> tuple[int, float]:
    """(axis, cut) of candidate ``pick``: the centre of that axis's interval."""
    ends = np.cumsum(n_intervals)
    axis = int(np.searchsorted(ends, pick, side="right"))
    return axis, float(centres_of[axis][pick - (ends[axis] - n_intervals[axis])])
