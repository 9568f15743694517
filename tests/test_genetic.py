"""PGkM's and Gene's candidate generation (docs/methods.md A5): one-point crossover of
randomly paired parents, then one mutated coordinate per child, clipped to the domain.

It is post-processing, so no privacy rests on it, but it is what the papers' Figures 1,
2 and 4 measure for PGkM and Gene. The parents are built so that every coordinate names
its parent (parent a holds 100·a + i at coordinate i, in a domain wide enough that
nothing is clipped), which lets each child be read back into (parents, cut, mutation).
Frequencies are checked within 5 binomial standard deviations; every seed is fixed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcluster.algorithms.pgkm import _children

R = 10_000.0  # the domain: wide, so only the clipping test clips
DELTA = 0.25  # mutation half-width, below the 0.5 that would blur a coordinate's parent


def _parents(m: int, L: int) -> np.ndarray:
    return 100.0 * np.arange(m)[:, None] + np.arange(L)[None, :]


def _read(child: np.ndarray, L: int):
    """(source parent of each coordinate, mutated coordinate, mutation) of one child."""
    source = np.round((child - np.arange(L)) / 100.0).astype(int)
    clean = 100.0 * source + np.arange(L)
    moved = np.flatnonzero(child != clean)
    assert moved.size <= 1  # one coordinate mutated (or a zero draw)
    j = int(moved[0]) if moved.size else None
    return source, j, (child[j] - clean[j]) if moved.size else 0.0


def test_each_pair_of_children_is_a_one_point_crossover_and_its_mirror():
    m, L = 6, 7
    rng = np.random.default_rng(0)
    for _ in range(50):
        kids = _children(_parents(m, L), 12, rng, DELTA, R)
        for first, second in zip(kids[0::2], kids[1::2], strict=True):
            s1, _, _ = _read(first, L)
            s2, _, _ = _read(second, L)
            cut = int(np.argmax(s1 != s1[0]))  # where the first child changes parent
            a, b = s1[0], s1[-1]
            assert a != b and 1 <= cut <= L - 1
            assert np.array_equal(s1, np.r_[[a] * cut, [b] * (L - cut)])
            assert np.array_equal(s2, np.r_[[b] * cut, [a] * (L - cut)])  # the mirror


def test_parents_are_paired_without_repeats_in_each_round():
    """A round pairs a permutation of the m' parents: 3 disjoint pairs for 6 parents."""
    m, L = 6, 5
    rng = np.random.default_rng(1)
    for _ in range(50):
        kids = _children(_parents(m, L), 6, rng, DELTA, R)
        pairs = [frozenset(_read(k, L)[0][[0, -1]]) for k in kids[0::2]]
        assert len(set().union(*pairs)) == 6


def test_cut_point_mutated_coordinate_and_mutation_size_are_uniform():
    """Cut uniform in 1..L−1, mutated coordinate uniform in 0..L−1, mutation U[−δ, δ]."""
    m, L, rounds = 4, 5, 3000
    rng = np.random.default_rng(2)
    cuts, coords, moves = [], [], []
    for _ in range(rounds):
        kids = _children(_parents(m, L), 2, rng, DELTA, R)
        s, _, _ = _read(kids[0], L)
        cuts.append(int(np.argmax(s != s[0])))
        for kid in kids:
            _, j, u = _read(kid, L)
            coords.append(j)
            moves.append(u)
    n = len(cuts)
    for cut in range(1, L):
        p = 1 / (L - 1)
        assert abs(cuts.count(cut) / n - p) < 5 * math.sqrt(p * (1 - p) / n)
    n = len(coords)
    for j in range(L):
        p = 1 / L
        assert abs(coords.count(j) / n - p) < 5 * math.sqrt(p * (1 - p) / n)
    u = np.array(moves)
    assert np.all(np.abs(u) <= DELTA)
    # U[−δ, δ]: mean 0 and E|u| = δ/2, each with standard deviation δ/√(3n) or below
    assert abs(u.mean()) < 5 * DELTA / math.sqrt(3 * n)
    assert abs(np.abs(u).mean() - DELTA / 2) < 5 * DELTA / math.sqrt(12 * n)


def test_children_are_clipped_to_the_domain():
    parents = np.array([[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0]])
    kids = _children(parents, 400, np.random.default_rng(3), 5.0, 1.0)
    assert np.all(np.abs(kids) <= 1.0)
    assert np.any(kids == 1.0) and np.any(kids == -1.0) and np.any(np.abs(kids) < 1.0)


@pytest.mark.parametrize("m,L", [(1, 4), (3, 1)])
def test_one_parent_is_cloned_and_one_coordinate_is_swapped_whole(m, L):
    """One parent: every child is a mutated clone. One coordinate: there is no cut, so the
    two children of a pair are the two parents, each mutated."""
    parents = _parents(m, L)
    kids = _children(parents, 7, np.random.default_rng(4), DELTA, R)
    assert kids.shape == (7, L)
    for kid in kids:
        source, _, u = _read(kid, L)
        assert len(set(source)) == 1 and abs(u) <= DELTA
    if m == 1:
        assert np.all(np.abs(kids - parents[0]) <= DELTA)


def test_gene_keeps_the_fittest_parents_and_narrows_the_mutation_by_07(monkeypatch):
    """Gene (no privacy): each iteration keeps the m' fittest candidates as parents and
    refills the pool with m − m' children mutated by U[−δ, δ], δ = r·0.7^(i−1) for the
    children that iteration i makes (i = 1 … r_it − 1; the last makes none)."""
    from dpcluster.algorithms import pgkm
    from dpcluster.kernels import sse_expanded

    calls = []

    def recording(parents, n_children, rng, delta, r):
        kids = _children(parents, n_children, rng, delta, r)
        calls.append((parents.copy(), n_children, delta, kids))
        return kids

    monkeypatch.setattr(pgkm, "_children", recording)
    X = np.random.default_rng(5).uniform(-2, 2, (300, 2))
    pgkm.genetic_kmeans(X, 3, np.random.default_rng(6), None, pool=40, selected=6, r=2.0)
    assert [n for _, n, _, _ in calls] == [34] * 7
    assert np.allclose([delta for _, _, delta, _ in calls], 2.0 * 0.7 ** np.arange(7))
    # the parents of the second iteration are the 6 fittest of its pool, best first
    pool = np.concatenate([calls[0][0], calls[0][3]])
    fitness = sse_expanded(X, pool.reshape(-1, 3, 2), pgkm.fitness_step(2, 2.0))
    assert np.array_equal(calls[1][0], pool[np.argsort(fitness, kind="stable")[:6]])


def test_two_parents_are_paired_and_two_coordinates_are_cut_between_them():
    """m' = 2 is a pair, not a clone; L = 2 has one cut, after the first coordinate."""
    for m, L in ((2, 5), (4, 2)):
        kids = _children(_parents(m, L), 12, np.random.default_rng(7), DELTA, R)
        for kid in kids:
            source, _, _ = _read(kid, L)
            assert source[0] != source[-1], (m, L, source)  # every child mixes two parents
        if L == 2:
            assert all(_read(kid, L)[0][0] != _read(kid, L)[0][1] for kid in kids)


def test_each_child_draws_its_own_mutated_coordinate_and_amount():
    """One draw shared by every child would move the whole pool the same way."""
    kids = _children(_parents(6, 5), 60, np.random.default_rng(8), DELTA, R)
    reads = [_read(kid, 5) for kid in kids]
    coords = [j for _, j, _ in reads]
    moves = [u for _, _, u in reads]
    assert len(set(coords)) == 5  # 60 uniform draws from 5 miss one with odds < 1e-5
    assert len(set(np.round(moves, 12))) == 60


def test_pgkm_starts_from_a_pool_spread_over_the_whole_domain(monkeypatch):
    """The first pool is uniform on [−r, r] in every coordinate, whatever r."""
    from dpcluster.algorithms import pgkm

    pools = []
    real = pgkm.sse_expanded

    def recording(X, C, step):
        pools.append(np.array(C))
        return real(X, C, step)

    monkeypatch.setattr(pgkm, "sse_expanded", recording)
    X = np.random.default_rng(9).uniform(-3, 3, (200, 2))
    pgkm.genetic_kmeans(X, 2, np.random.default_rng(10), None, pool=400, iterations=2, r=3.0)
    first = pools[0].ravel()
    assert first.min() < -2.9 and first.max() > 2.9


def test_more_parents_than_the_pool_is_refused_by_name():
    from dpcluster.algorithms.pgkm import genetic_kmeans

    X = np.zeros((10, 2))
    with pytest.raises(ValueError, match=r"selected \(m'=30\) must not exceed pool \(m=20\)"):
        genetic_kmeans(X, 2, np.random.default_rng(0), 1.0, pool=20, selected=30)
