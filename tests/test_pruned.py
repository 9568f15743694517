"""The pruned grid search (dpcluster/kernels/pruned.py) against the brute-force kernel, its
oracle: the same counts, sums and SSE, bit for bit, on random grids with negative weights
and on centroids built to tie."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcluster import kernels
from dpcluster.kernels.config import GRID_LANES
from dpcluster.kernels.grid import grid_accumulate
from dpcluster.kernels.pruned import grid_accumulate_pruned, pruned_pays


def _both(w, m, C, float32, leaf=None, with_sse=True):
    """(brute force, pruned) statistics of centroid sets C (R, k, d) on the m^d grid."""
    R, k, d = C.shape
    Rp = -(-R // GRID_LANES) * GRID_LANES
    Ct = np.ascontiguousarray(np.transpose(np.concatenate([C, C[:1].repeat(Rp - R, 0)]), (1, 2, 0)))
    out = []
    for kernel, extra in ((grid_accumulate, {}), (grid_accumulate_pruned, {"leaf": leaf})):
        counts, sums, err = np.empty((k, Rp)), np.empty((k, d, Rp)), np.empty(Rp)
        kernel(w, m, 1.0, Ct, counts, sums, err, with_sse, float32=float32, runs=R, **extra)
        out.append((counts[:, :R], sums[:, :, :R], err[:R]))
    return out


def _assert_same(w, m, C, float32, **kw):
    brute, pruned = _both(w, m, C, float32, **kw)
    for a, b in zip(brute, pruned, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("float32", [True, False])
@pytest.mark.parametrize(
    "d, m, k, R", [(1, 50, 3, 3), (2, 31, 40, 5), (2, 8, 3, 2), (3, 9, 20, 4), (4, 5, 9, 3)]
)
def test_pruned_search_gives_the_brute_force_bits(rng, float32, d, m, k, R):
    """Random centroids (some outside the box), negative noisy weights."""
    C = rng.uniform(-1.2, 1.2, (R, k, d))
    w = rng.laplace(size=m**d) + rng.poisson(0.5, m**d)
    for leaf in (1, 7, 10**9):  # every box split to one cell, a mix, the whole grid a leaf
        _assert_same(w, m, C, float32, leaf=leaf)
    _assert_same(w, m, C, float32, with_sse=False)


@pytest.mark.parametrize("float32", [True, False])
def test_pruned_search_ties_go_to_the_lowest_index(rng, float32):
    """Duplicates, centroids mirrored about a cell centre (exact ties at every cell of that
    plane), one-ulp neighbours and centroids on cell centres and edges: the margins keep
    every tied or nearly tied centroid, so the labels are the brute force's."""
    d, m, k = 2, 16, 20
    ax = -1.0 + (np.arange(m) + 0.5) * (2.0 / m)
    C = rng.uniform(-1.0, 1.0, (3, k, d))
    C[:, 1] = C[:, 0]
    C[:, 3] = C[:, 2]
    C[:, 3, 0] = 2 * ax[5] - C[:, 2, 0]  # mirrored about the column of cells a0 = 5
    C[:, 5] = np.nextafter(C[:, 4], 2.0)
    C[:, 6] = ax[rng.integers(0, m, (3, d))]
    C[:, 7] = np.round(C[:, 7] * m / 2) / (m / 2)
    w = rng.laplace(size=m**d)
    for leaf in (1, 4, 32):
        _assert_same(w, m, C, float32, leaf=leaf)
    brute, _ = _both(w, m, C, float32)
    assert (brute[0][1] == 0).all()  # a duplicate never wins a cell


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    d=st.integers(1, 3),
    m=st.integers(2, 12),
    k=st.sampled_from([1, 3, 9, 20, 40]),  # k's the other tests compile too
    seed=st.integers(0, 2**32 - 1),
    float32=st.booleans(),
    leaf=st.integers(1, 64),
    spread=st.sampled_from([1e-6, 0.05, 1.0, 3.0]),
)
def test_pruned_search_matches_on_any_grid(d, m, k, seed, float32, leaf, spread):
    """Centroids clustered at any scale, from nearly coincident to far outside the box."""
    rng = np.random.default_rng(seed)
    centre = rng.uniform(-1, 1, d)
    C = centre + spread * rng.standard_normal((2, k, d))
    w = rng.laplace(size=m**d)
    _assert_same(w, m, C, float32, leaf=leaf)


def test_grid_stats_takes_the_pruned_path_with_the_same_numbers(rng, monkeypatch):
    """Through the public face: a shape the dispatch sends to the pruned search gives
    what the brute force gives for it."""
    import dpcluster.kernels.api as api

    m, C = 320, rng.uniform(-1, 1, (30, 40, 2))
    assert pruned_pays(m, 2, 40) and not pruned_pays(m, 3, 40)
    w = rng.laplace(size=m * m)
    pruned = kernels.grid_stats(w, m, C, distances="float32")
    monkeypatch.setattr(api, "pruned_pays", lambda m, d, k: False)
    brute = kernels.grid_stats(w, m, C, distances="float32")
    for a, b in zip(brute, pruned, strict=True):
        np.testing.assert_array_equal(a, b)
