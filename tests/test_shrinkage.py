"""Shrunk centres (docs/methods.md M8): the James–Stein arithmetic by hand, the risk it
promises measured, and improved DPLloyd's use of it as free post-processing."""

from __future__ import annotations

import numpy as np
import pytest

from dpcluster import DPKMeans
from dpcluster.algorithms.dplloyd import dplloyd_improved
from dpcluster.algorithms.shrinkage import fill_held, james_stein, pooled_mean, shrink_to_pooled


def test_james_stein_by_hand():
    raw = np.array([3.0, 4.0, 0.0, 0.0])  # ||raw − 0||² = 25, d − 2 = 2
    np.testing.assert_allclose(james_stein(raw, np.zeros(4), np.float64(2.5)), 0.8 * raw)
    np.testing.assert_array_equal(james_stein(raw, np.zeros(4), np.float64(20.0)), np.zeros(4))
    np.testing.assert_array_equal(james_stein(raw, np.zeros(4), np.float64(0.0)), raw)
    two = np.array([3.0, 4.0])
    np.testing.assert_array_equal(james_stein(two, np.zeros(2), np.float64(1e9)), two)


def test_james_stein_lowers_the_squared_error_it_promises_to():
    """d = 10, truth at distance 1 from the target, noise σ = 1 per coordinate: the risk
    of the raw point is d = 10; positive-part James–Stein's is well below (about 2.5 by
    its risk formula for this ||μ||). 4,000 draws: the mean squared errors' standard
    errors are below 0.25, far inside the gap asserted."""
    rng = np.random.default_rng(7)
    d, n = 10, 4000
    mu = np.zeros(d)
    mu[0] = 1.0
    raw = mu + rng.standard_normal((n, d))
    shrunk = james_stein(raw, np.zeros(d), np.full(n, 1.0))
    raw_risk = np.mean(np.sum((raw - mu) ** 2, axis=1))
    js_risk = np.mean(np.sum((shrunk - mu) ** 2, axis=1))
    assert abs(raw_risk - d) < 0.5
    assert js_risk < 0.5 * raw_risk


def test_a_centre_far_above_its_noise_is_left_where_it_is():
    S = np.array([[100.0, 0, 0, 0], [-100.0, 0, 0, 0]])
    n = np.array([10.0, 10.0])
    ok = np.array([True, True])
    out = shrink_to_pooled(S, n, ok, 1e-12, 1e-12, pooled_mean(S, n, 1e-12, 1e-12))
    np.testing.assert_allclose(out, S / n[:, None], rtol=1e-9)


def test_held_centres_hold_unless_all_do_then_the_nearest_takes_the_pooled_mean():
    C = np.array([[0.9, 0.9, 0.9], [-0.5, 0.0, 0.0]])
    S = np.array([[5.0, 5.0, 5.0], [5.0, 5.0, 5.0]])
    n = np.array([10.0, 10.0])
    pooled = pooled_mean(S, n, 0.0, 0.0)
    np.testing.assert_allclose(pooled, [0.5, 0.5, 0.5])
    one_ok = shrink_to_pooled(S, n, np.array([True, False]), 0.0, 0.0, pooled)
    out = fill_held(C, one_ok, pooled)
    np.testing.assert_allclose(out, [[0.5, 0.5, 0.5], [-0.5, 0.0, 0.0]])
    none_ok = shrink_to_pooled(S, n, np.array([False, False]), 0.0, 0.0, pooled)
    out = fill_held(C, none_ok, pooled)
    np.testing.assert_allclose(out, [[0.5, 0.5, 0.5], [-0.5, 0.0, 0.0]])  # row 0 is nearer


def test_a_pooled_count_that_is_not_positive_gives_the_box_centre():
    S = np.ones((3, 5))
    np.testing.assert_array_equal(pooled_mean(S, np.array([-2.0, 1.0, 0.5]), 1.0, 1.0), 0.0)


def test_shrinking_is_post_processing_the_same_releases_and_ledger():
    """With and without shrink the same generator draws the same noise and books the same
    ledger; in d ≤ 2 the centres are the same bits too."""
    rng = np.random.default_rng(3)
    for d in (2, 6):
        X = np.clip(rng.normal(0, 0.3, size=(400, d)), -1, 1)
        init = np.clip(rng.normal(0, 0.5, size=(3, d)), -1, 1)
        on = dplloyd_improved(X, 3, 0.3, init, np.random.default_rng(1), n=400, shrink=True)
        off = dplloyd_improved(X, 3, 0.3, init, np.random.default_rng(1), n=400, shrink=False)
        assert on.ledger.total_epsilon == off.ledger.total_epsilon
        assert [e.purpose for e in on.ledger.entries] == [e.purpose for e in off.ledger.entries]
        if d == 2:
            np.testing.assert_array_equal(on.centroids, off.centroids)


@pytest.mark.parametrize("shrink", [True, False])
def test_the_estimator_takes_shrink_and_books_the_same_epsilon(shrink):
    X = np.random.default_rng(0).normal(size=(300, 8))
    model = DPKMeans(
        3,
        epsilon=0.5,
        method="dplloyd_improved",
        method_params={"shrink": shrink},
        bounds=(-4.0, 4.0),
        random_state=0,
    ).fit(X)
    assert model.ledger_.total_epsilon <= 0.5


def test_low_signal_centres_collapse_toward_the_data_not_the_start():
    """Two overlapping 64-D Gaussians at ε = 0.1 (every count is noise): the shrunk fit
    answers near the one-centre cost; the raw fit keeps its start. 5 seeds, medians."""
    rng = np.random.default_rng(11)
    d, N = 64, 2000
    X = np.vstack([rng.normal(0.2, 1.0, (N // 2, d)), rng.normal(-0.2, 1.0, (N // 2, d))])
    one = float(np.sum((X - X.mean(0)) ** 2))

    def cost(shrink, seed):
        C = (
            DPKMeans(
                2,
                epsilon=0.1,
                method="dplloyd_improved",
                method_params={"shrink": shrink},
                bounds=(-5.0, 5.0),
                random_state=seed,
            )
            .fit(X)
            .cluster_centers_
        )
        return float(np.sum(np.min(((X[:, None] - C[None]) ** 2).sum(-1), axis=1)))

    shrunk = np.median([cost(True, s) for s in range(5)])
    raw = np.median([cost(False, s) for s in range(5)])
    assert shrunk < 1.2 * one < raw


def test_pe_lloyds_steps_shrink_toward_the_centre_and_cost_nothing():
    """A step far above its noise moves in full; one inside it stays put. With and without
    shrinking, PE-Lloyd books the same releases at the same ε."""
    from dpcluster.algorithms.methods import fit_pe_lloyd
    from dpcluster.algorithms.refine import shrink_steps
    from dpcluster.privacy import LaplaceMechanism

    count, sums = LaplaceMechanism(1.0, 1.0), LaplaceMechanism(1.0, 1.0, coordinates=8)
    big = np.full((1, 8), 5.0)
    np.testing.assert_allclose(
        shrink_steps(big, np.array([1e6]), np.array([True]), count, sums), big, rtol=1e-6
    )
    small = np.full((1, 8), 1e-3)
    np.testing.assert_array_equal(
        shrink_steps(small, np.array([10.0]), np.array([True]), count, sums), 0.0
    )
    X = np.clip(np.random.default_rng(2).normal(0, 0.3, (3000, 8)), -1, 1)
    fits = [
        fit_pe_lloyd(X, 3, 1.0, np.random.default_rng(5), shrink=shrink) for shrink in (True, False)
    ]
    assert fits[0].ledger.total_epsilon == fits[1].ledger.total_epsilon <= 1.0
    assert [e.purpose for e in fits[0].ledger.entries] == [
        e.purpose for e in fits[1].ledger.entries
    ]
