"""The noise of the estimator's own private methods, measured where each adds it: the
private mean (docs/methods.md M2), LSH-splits (M1) and clipping to a private radius (M4).

As in tests/test_noise.py, each measurement subtracts the release's own noiseless answer
and compares the realised noise with a scale written out by hand from docs/methods.md,
and is parametrised with planted mutants it must reject. The by-hand tests pin the
public decisions around the noise (thresholds, tree shape, candidates, the guard) and
the post-processing a wrong constant would silently change.
"""

from __future__ import annotations

import importlib
import itertools
import math

import numpy as np
import pytest

from dpcluster.algorithms import clipping
from dpcluster.algorithms.dplloyd import dplloyd_batch
from dpcluster.algorithms.lsh_splits import (
    _counts,
    _leaf_sums,
    default_depth,
    lsh_splits,
    node_threshold,
)
from dpcluster.algorithms.reference import private_mean
from dpcluster.algorithms.weighted import squared_distances, weighted_kmeans
from dpcluster.privacy import Ledger, observe
from tests.test_noise import (
    _laplace_noise,
    _patch,
    _releases,
    _uniform,
    independent,
    laplace_scale_is,
)

reference_module = importlib.import_module("dpcluster.algorithms.reference")
lsh_module = importlib.import_module("dpcluster.algorithms.lsh_splits")
dplloyd_module = importlib.import_module("dpcluster.algorithms.dplloyd")
RHO = 0.225  # A2's ρ


def _c(d: int) -> float:
    """A2's count : per-coordinate-sum budget ratio, c = (4dρ²)^(1/3), by hand."""
    return (4 * d * RHO**2) ** (1 / 3)


# --- the private mean (M2): one improved-DPLloyd iteration's split -------------------------


@pytest.mark.parametrize("mutant", [None, "half", "double", "swapped"])
def test_private_mean_splits_count_and_sums_as_one_improved_iteration(mutant, monkeypatch):
    """d = 10, ε = 1, r = 1 (the default): count scale (d + c)/(c ε), each coordinate sum's
    (d + c) r / ε; c = 1.265, so the swapped split is 21 % off on both."""
    d, eps = 10, 1.0
    _patch(monkeypatch, mutant, reference_module, d=d)
    X = _uniform(200, d)
    seen = []
    with observe(seen.append):
        for seed in range(1500):
            private_mean(X, 3, eps, np.random.default_rng(seed))
    c = _c(d)
    counts = _laplace_noise(seen, "record count", X)
    sums = _laplace_noise(seen, "coordinate sums", X)
    assert counts.size == 1500 and sums.size == 1500 * d
    assert laplace_scale_is(counts, (d + c) / (c * eps)) == (mutant is None)
    assert laplace_scale_is(sums, (d + c) / eps) == (mutant is None)
    assert independent(sums.reshape(-1, d))  # one draw per coordinate, not one shared


def _booked_releases(ledger, seen) -> None:
    """Every release is a booked one: its purpose is an entry's, and its mechanism has
    that entry's ε and scale."""
    for rel in seen:
        booked = [e for e in ledger.entries if e.purpose == rel.purpose]
        assert booked, rel.purpose
        assert any(
            e.epsilon == rel.mechanism.epsilon and e.scale == rel.mechanism.scale for e in booked
        )


def test_private_mean_by_hand():
    """One record at 0.5: at ε = 10⁹ the mean is that record (count ≈ 1, not floored at
    more); at ε = 10⁻³ the noisy mean lands outside the box and is clipped to ±r."""
    X = np.full((1, 3), 0.5)
    res, seen = _releases(lambda: private_mean(X, 2, 1e9, np.random.default_rng(0)))
    assert res.centroids.shape == (2, 3) and np.allclose(res.centroids, 0.5, atol=1e-6)
    assert res.iterations == 0 and res.info["noisy_count"] == pytest.approx(1.0, abs=1e-6)
    assert res.ledger.total_epsilon == pytest.approx(1e9)
    assert [e.purpose for e in res.ledger.entries] == ["record count", "coordinate sums"]
    _booked_releases(res.ledger, seen)
    wide = np.array(
        [private_mean(X, 1, 1e-3, np.random.default_rng(s)).centroids[0] for s in range(40)]
    )
    assert wide.max() == 1.0 and wide.min() == -1.0  # clipped on both sides, never beyond
    # per-feature radii: the sums are charged Σ r_j, the mean clipped into each [-r_j, r_j]
    r = np.array([2.0, 0.5, 1.0])
    inside = np.full((1, 3), 0.9) * r  # 1.8 on the first feature: inside r, outside 1
    fits = [private_mean(inside, 1, 1e-3, np.random.default_rng(s), r=r) for s in range(40)]
    assert fits[0].ledger.entries[1].sensitivity == 3.5
    assert np.array_equal(np.abs([f.centroids[0] for f in fits]).max(axis=0), r)
    with pytest.raises(ValueError):
        private_mean(X * 4, 1, 1.0, np.random.default_rng(1), r=r)  # outside the box


# --- LSH-splits (M1): (D + 1) levels of counts share 0.2 ε, the leaves' sums get 0.8 ε ------


@pytest.mark.parametrize("mutant", [None, "half", "double"])
def test_lsh_splits_counts_have_scale_d_plus_1_over_02_eps_and_sums_dr_over_08_eps(
    mutant, monkeypatch
):
    """N = 2,000, d = 3, k = 3 (D = 5), ε = 1: every node count has scale 6/0.2 = 30 and
    every leaf coordinate sum d·r/0.8 = 3.75."""
    _patch(monkeypatch, mutant, lsh_module)
    X = _uniform(2000, 3)
    seen = []
    with observe(seen.append):
        for seed in range(150):
            lsh_splits(X, 3, 1.0, np.random.default_rng(seed), n_init=1)
    counts = _laplace_noise(seen, "tree node counts", X)
    sums = _laplace_noise(seen, "leaf coordinate sums", X)
    assert laplace_scale_is(counts, 6 / 0.2) == (mutant is None)
    assert laplace_scale_is(sums, 3 * 1.0 / 0.8) == (mutant is None)
    assert independent(sums.reshape(-1, 3))
    siblings = [  # the first two children of every level: one draw each, not one shared
        np.asarray(r.output[:2], float) - r.query(X)[:2]
        for r in seen
        if r.purpose == "tree node counts" and np.size(r.output) > 1
    ]
    assert independent(np.array(siblings))


@pytest.mark.parametrize(
    "N,k,d,eps,seed",
    [(2000, 3, 3, 1.0, 0), (20_000, 2, 2, 1.0, 1), (300, 4, 5, 0.5, 2), (50_000, 5, 2, 2.0, 3)],
)
@pytest.mark.parametrize("radii", ["one", "per feature"])
def test_lsh_splits_grows_its_tree_by_the_thresholds(N, k, d, eps, seed, radii):
    """From the released counts alone: T_node = max(1, min(10·√(2d)·d·r/(0.8ε·√d·r),
    Ñ/(2k))) and T_branch = 3 T_node; level j + 1 counts the two children of every level-j
    node at or above T_branch; the leaves are the root if it did not branch, the nodes in
    [T_node, T_branch) below it, and every node ≥ T_node at depth D (at least one leaf)."""
    r = np.linspace(0.5, 2.0, d) if radii == "per feature" else 1.0
    X = _uniform(N, d, seed) * r
    rng = np.random.default_rng(seed)
    res, seen = _releases(lambda: lsh_splits(X, k, eps, rng, n_init=1, r=r))
    D = math.ceil(math.log2(k)) + 3 if k > 1 else 4
    levels = [np.asarray(r.output) for r in seen if r.purpose == "tree node counts"]
    root = float(levels[0][0])
    L, radius = float(np.sum(np.broadcast_to(r, d))), float(np.linalg.norm(np.broadcast_to(r, d)))
    t_node = max(1.0, min(10 * math.sqrt(2 * d) * L / (0.8 * eps * radius), root / (2 * k)))
    t_branch = 3 * t_node
    assert res.info["depth"] == D
    assert res.info["t_node"] == pytest.approx(t_node)
    assert res.info["t_branch"] == 3 * res.info["t_node"]  # ε_sum may sit an ulp below 0.8ε
    t_branch = res.info["t_branch"]
    for parent, child in zip(levels, levels[1:], strict=False):
        assert child.size == 2 * int(np.sum(parent >= t_branch))
    leaves = int(root < t_branch)
    for depth, level in enumerate(levels[1:], start=1):
        if depth == D:
            leaves += int(np.sum(level >= t_node))
        else:
            leaves += int(np.sum((level >= t_node) & (level < t_branch)))
    leaves = max(leaves, 1)
    (sums,) = [r for r in seen if r.purpose == "leaf coordinate sums"]
    assert res.info["leaves"] == leaves and np.shape(sums.output) == (leaves, d)
    entries = res.ledger.entries
    assert len(entries) == D + 2 and sum(e.purpose.startswith("tree") for e in entries) == D + 1
    assert [e.round for e in entries[:-1]] == list(range(D + 1))
    assert all(e.epsilon == pytest.approx(0.2 * eps / (D + 1)) for e in entries[:-1])
    assert entries[-1].purpose == "leaf coordinate sums"
    assert entries[-1].epsilon == pytest.approx(0.8 * eps) and entries[-1].sensitivity == L
    _booked_releases(res.ledger, seen)
    assert res.iterations == 0 and np.all(np.abs(res.centroids) <= r)


def test_lsh_splits_counts_the_two_children_of_each_branching_node():
    """At ε = 10⁶ the counts are exact: the two children released after each branching
    node (in node order) hold exactly its records, and the root holds all of them."""
    X = _uniform(5000, 3, 7)
    _, seen = _releases(lambda: lsh_splits(X, 2, 1e6, np.random.default_rng(7), n_init=1))
    levels = [np.asarray(r.output) for r in seen if r.purpose == "tree node counts"]
    assert np.round(levels[0][0]) == 5000 and len(levels) > 3
    t_branch = 3 * node_threshold(levels[0][0], 2, 3, 0.8e6)
    for parent, child in zip(levels, levels[1:], strict=False):
        pairs = np.round(child[0::2]) + np.round(child[1::2])
        assert np.array_equal(pairs, np.round(parent[parent >= t_branch]))


def test_lsh_splits_falls_back_to_the_root_and_keeps_its_centres_in_the_box(monkeypatch):
    """When no node passes the thresholds the root is the one leaf, so the leaf sum is the
    whole data's; at ε = 10⁻³ the noisy coreset points are clipped into the box."""
    monkeypatch.setattr(lsh_module, "_counts", lambda node, wanted: np.zeros(len(wanted)))
    X = _uniform(3000, 2, 8)
    res, seen = _releases(lambda: lsh_splits(X, 2, 1e6, np.random.default_rng(8), n_init=1))
    (sums,) = [r for r in seen if r.purpose == "leaf coordinate sums"]
    assert res.info["leaves"] == 1 and np.allclose(sums.query(X), [X.sum(axis=0)])
    monkeypatch.undo()
    C = np.array(
        [lsh_splits(X, 3, 1e-3, np.random.default_rng(s), n_init=1).centroids for s in range(40)]
    )
    assert C.max() == 1.0 and C.min() == -1.0  # clipped on both sides, never beyond
    for share in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="count_share"):
            lsh_splits(X, 2, 1.0, np.random.default_rng(0), count_share=share)


def test_lsh_splits_constants_by_hand():
    assert [default_depth(k) for k in (1, 2, 3, 4, 5, 8, 9)] == [4, 4, 5, 5, 6, 6, 7]
    # n_low = 10·√(2d)·L/(ε_s·radius): d = 4, L = 4, radius = 2 → 70.71; Ñ/(2k) = 100
    assert node_threshold(1000, 5, 4, 0.8) == pytest.approx(10 * math.sqrt(8) * 4 / 1.6)
    assert node_threshold(100, 5, 4, 0.8) == pytest.approx(10.0)
    assert node_threshold(1, 5, 4, 0.8) == 1.0
    # one radius r = 2: L = 8, radius = 4, n_low as at r = 1
    assert node_threshold(1000, 5, 4, 0.8, 2.0) == pytest.approx(10 * math.sqrt(8) * 4 / 1.6)
    # per-feature radii: L = Σ r_j = 3, radius = √(Σ r_j²) = √2.5
    r = np.array([1.0, 0.5, 0.5, 1.0])
    expected = 10 * math.sqrt(8) * 3 / (0.8 * math.sqrt(2.5))
    assert node_threshold(1000, 5, 4, 0.8, r) == pytest.approx(expected)


def test_lsh_splits_counts_and_leaf_sums_match_a_direct_count():
    rng = np.random.default_rng(5)
    node = rng.integers(0, 12, 400)
    wanted = np.array([0, 3, 4, 11, 12, 40])  # 12 and 40 hold nobody
    assert np.array_equal(_counts(node, wanted), [np.sum(node == w) for w in wanted])
    X = rng.uniform(-1, 1, (300, 3))
    bits = rng.random((300, 4)) < 0.5
    leaves = [(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0), (4, 9, 1.0), (4, 6, 1.0)]
    got = _leaf_sums(X, bits, leaves)
    for row, (depth, prefix, _) in zip(got, leaves, strict=True):
        digits = [(prefix >> (depth - 1 - j)) & 1 for j in range(depth)]
        inside = np.all(bits[:, :depth] == np.array(digits, dtype=bool), axis=1)
        assert np.allclose(row, X[inside].sum(axis=0))


def test_weighted_kmeans_weights_every_point_and_ignores_weightless_ones():
    P = np.array([[0.0, 0.0], [1.0, 0.0], [10.0, 10.0], [11.0, 10.0], [100.0, 100.0]])
    w = np.array([0.125, 0.375, 0.25, 0.25, 0.0])  # each cluster's mass is 1/2
    C = weighted_kmeans(P, w, 2, np.random.default_rng(0))
    C = C[np.argsort(C[:, 0])]
    assert np.allclose(C, [[0.75, 0.0], [10.5, 10.0]])  # weighted means; the 0-weight point
    assert np.allclose(weighted_kmeans(P[:1], w[:1], 3, np.random.default_rng(0)), P[0])
    # no weight at all: the seeds are drawn uniformly and Lloyd leaves them in place
    C = weighted_kmeans(P, np.zeros(5), 2, np.random.default_rng(0), n_init=1)
    assert all(any(np.array_equal(c, p) for p in P) for c in C)


@pytest.mark.parametrize("trials", [1, 2])
def test_weighted_kmeans_seeds_by_weight_times_squared_distance(trials):
    """Greedy k-means++ with weights, read off with no Lloyd step (max_iter = 0): the first
    seed is drawn ∝ w; each next one is, of ``trials`` candidates drawn ∝ w·D² (D the
    distance to the nearest seed so far), the first of lowest Σ w·D² after it (one
    candidate: plain k-means++). Four points on a line with weights and distances small
    enough that no mass sums to 1; the exact law by enumerating the candidates."""
    x, w = np.array([0.0, 0.3, 0.9, 1.0]), np.array([0.1, 0.1, 0.2, 0.15])

    def next_seed(d2):
        """{point: probability} of the next seed given the current D² (4,)."""
        q = w * d2 / (w * d2).sum()
        law = dict.fromkeys(range(4), 0.0)
        for picks in itertools.product(range(4), repeat=trials):
            after = [(w * np.minimum(d2, (x - x[c]) ** 2)).sum() for c in picks]
            law[picks[int(np.argmin(after))]] += float(np.prod(q[list(picks)]))
        return law

    expected = {}
    for i in range(4):
        d_i = (x - x[i]) ** 2
        for j, p_j in next_seed(d_i).items():
            d_ij = np.minimum(d_i, (x - x[j]) ** 2)
            for k, p_k in next_seed(d_ij).items():
                expected[i, j, k] = w[i] / w.sum() * p_j * p_k
    draws, n = dict.fromkeys(expected, 0), 6000
    for seed in range(n):
        C = weighted_kmeans(
            x[:, None], w, 3, np.random.default_rng(seed), n_init=1, max_iter=0, trials=trials
        )
        draws[tuple(int(np.argmin(np.abs(x - c))) for c in C[:, 0])] += 1
    for triple, p in expected.items():
        assert abs(draws[triple] / n - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-9, triple


def test_weighted_kmeans_keeps_the_start_of_lowest_weighted_cost():
    """Ten starts never end above the first start alone (the same generator draws it
    first), and on some seeds end strictly below it."""
    rng = np.random.default_rng(9)
    P = np.concatenate([rng.normal(c, 0.3, (20, 2)) for c in ((0, 0), (4, 0), (0, 4), (4, 4))])
    w = rng.uniform(0.5, 2.0, len(P))

    def cost(C):
        return float((w * ((P[:, None] - C[None]) ** 2).sum(axis=2).min(axis=1)).sum())

    gains = []
    for seed in range(40):
        one = cost(weighted_kmeans(P, w, 4, np.random.default_rng(seed), n_init=1, max_iter=0))
        ten = cost(weighted_kmeans(P, w, 4, np.random.default_rng(seed), n_init=10, max_iter=0))
        assert ten <= one
        gains.append(one - ten)
    assert max(gains) > 0


@pytest.mark.parametrize("d", range(1, 11))
def test_squared_distances_have_the_bits_of_the_numpy_expression(d):
    """The coordinate loop (d ≤ 7) and the fallback (d ≥ 8, where NumPy sums pairwise) give
    exactly ``((P[None] − Q[:, None]) ** 2).sum(axis=2)``, so the seeding draws the same
    centres as before; values span six orders of magnitude so any reordering shows."""
    rng = np.random.default_rng(d)
    P = rng.normal(size=(500, d)) * 10 ** rng.uniform(-3, 3, (500, d))
    Q = P[rng.integers(0, 500, 7)] + rng.normal(size=(7, d))
    want = ((P[None] - Q[:, None]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(squared_distances(Q, P), want)


# --- clipping to a private radius (M4) ---------------------------------------------------


def _clipped_sum_scale(d: int, R: float, t: int, eps: float) -> float:
    """Improved DPLloyd's per-coordinate sum scale with the sums' sensitivity min(√d·R, d·r)
    (r = 1): the sum vector gets ε/t · d/(d + c)."""
    return min(math.sqrt(d) * R, d) * (d + _c(d)) * t / (eps * d)


@pytest.mark.parametrize("mutant", [None, "unclipped sensitivity", "raw queries", "half"])
def test_clipped_dplloyd_sums_have_the_clipped_scale(mutant, monkeypatch):
    """d = 8, R = 0.5, t = 2, ε = 1: sums' scale √8·0.5·(8 + c)·2/8 = 3.24 (against 18.3
    for the unclipped box). The noise is measured against the release's own query on the raw
    records, so a query that forgot to clip (the audit's first finding) is off too."""
    d, R, t, eps = 8, 0.5, 2, 1.0
    if mutant == "unclipped sensitivity":
        monkeypatch.setattr(dplloyd_module, "clipped_extent", lambda d, r, radius: float(d))
    elif mutant == "raw queries":  # the data are clipped, the release functions are not
        real, calls = dplloyd_module.clip_to_ball, []

        def clip_data_only(Z, radius):
            calls.append(radius)
            return real(Z, radius) if len(calls) == 1 else Z

        monkeypatch.setattr(dplloyd_module, "clip_to_ball", clip_data_only)
    else:
        _patch(monkeypatch, mutant, dplloyd_module)
    X = _uniform(400, d)  # norms ≈ 1.6: every record is clipped to 0.5
    inits = np.random.default_rng(1).uniform(-0.3, 0.3, (150, 3, d))
    streams = {"count": np.random.default_rng(2), "sum": np.random.default_rng(3)}
    _, seen = _releases(
        lambda: dplloyd_batch(X, inits, eps, streams, iterations=t, split="improved", clip_radius=R)
    )
    sums = _laplace_noise(seen, "cluster coordinate sums", X)
    assert laplace_scale_is(sums, _clipped_sum_scale(d, R, t, eps)) == (mutant is None)


def test_clipping_candidates_and_guard_by_hand():
    radii = clipping.candidates(np.array([3.0, 4.0]), 2)  # half-diagonal 5
    assert radii.size == 32 and radii[0] == pytest.approx(5 / 16) and radii[-1] == 5.0
    assert np.allclose(radii[1:] / radii[:-1], 16 ** (1 / 31))
    assert clipping.candidates(1.0, 4)[-1] == 2.0
    assert clipping.worth_clipping(1, clipping.MIN_N_EPSILON)  # the guard is inclusive
    assert not clipping.worth_clipping(1, clipping.MIN_N_EPSILON * (1 - 1e-9))
    assert clipping.MIN_N_EPSILON == pytest.approx(40.5)


def test_a_record_on_a_candidate_radius_counts_as_inside():
    radii = clipping.candidates(1.0, 1)
    Z = np.array([[radii[5]], [-radii[5]], [radii[9]]])  # |z| is exactly a candidate
    inside = 3 * 0.9 - clipping.radius_loss(Z, radii)  # q·N − loss where the count < q·N
    assert inside[5] == pytest.approx(2) and inside[4] == pytest.approx(0)
    assert inside[9] == pytest.approx(3 * 0.9 - abs(3 - 2.7))


def test_the_private_radius_uses_its_quantile_and_releases_what_it_books():
    """At ε = 10⁶ the pick is the candidate whose count is nearest q·N, here for q = 0.5
    (the median norm), not the default 0.9; its one release is the booked mechanism, with
    the loss of the same quantile as its query."""
    rng = np.random.default_rng(3)
    Z = rng.uniform(-1, 1, (500, 4)) * rng.uniform(0.05, 1, (500, 1))
    radii = clipping.candidates(1.0, 4)
    ledger = Ledger()
    (R,), seen = _releases(lambda: [clipping.private_radius(Z, 1e6, rng, ledger, quantile=0.5)])
    best = int(np.argmin(clipping.radius_loss(Z, radii, 0.5)))
    assert best != int(np.argmin(clipping.radius_loss(Z, radii, 0.9)))
    assert R == radii[best]
    (spend,), (rel,) = ledger.entries, seen
    assert rel.purpose == spend.purpose == "clipping radius (norm quantile)"
    assert rel.mechanism.epsilon == spend.epsilon == 1e6 and rel.output == best
    assert rel.mechanism.sensitivity == spend.sensitivity == 0.5
    assert np.array_equal(rel.query(Z), clipping.radius_loss(Z, radii, 0.5))
