"""A fit says when its output cannot reflect the data: bounds that clip many records, and
an EUGkM grid of one cell per axis (issue: silent degeneration)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcluster import DPKMeans
from dpcluster.estimator import DegenerateFitWarning


def fit_warnings(X, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = DPKMeans(**kw).fit(X)
    return model, [w for w in caught if issubclass(w.category, DegenerateFitWarning)]


def test_bounds_that_miss_the_records_are_reported():
    X = np.random.default_rng(0).normal(0, 3, (2000, 2))
    model, caught = fit_warnings(X, n_clusters=3, epsilon=1.0, bounds=(-1, 1), random_state=0)
    outside = int(np.any(np.abs(X) > 1, axis=1).sum())
    assert model.n_clipped_ == outside and outside > 0.02 * len(X)
    assert len(caught) == 1 and f"{outside} of 2000 records" in str(caught[0].message)


def test_bounds_that_hold_the_records_are_quiet():
    X = np.random.default_rng(1).uniform(-1, 1, (2000, 2))
    model, caught = fit_warnings(X, n_clusters=3, epsilon=1.0, bounds=(-1, 1), random_state=0)
    assert model.n_clipped_ == 0 and caught == []


@pytest.mark.parametrize("d, warned", [(20, True), (2, False)])
def test_a_one_cell_grid_is_reported(d, warned):
    """In 20-D with 500 records at ε = 0.5 EUGkM's grid has one cell per axis: its centres
    depend on a count only. In 2-D it has several."""
    X = np.random.default_rng(2).uniform(-1, 1, (500, d))
    _, caught = fit_warnings(
        X, n_clusters=3, epsilon=0.5, method="eugkm", bounds=(-1, 1), random_state=0
    )
    assert bool(caught) is warned
    if warned:
        assert "one cell per axis" in str(caught[0].message)
