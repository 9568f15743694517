"""Rényi composition (dpcluster/privacy/rdp.py) and LSH-splits as Google publishes it
(dpcluster/algorithms/lsh_gaussian.py; docs/methods.md "LSH-splits")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom, norm

from dpcluster import DPKMeans
from dpcluster.algorithms import lsh_gaussian as lg
from dpcluster.privacy import observe, pld
from dpcluster.privacy.rdp import composed_epsilon


def _exact_delta(eps0: float, times: int, eta: float, epsilon: float) -> float:
    """The exact δ(ε) of ``times`` randomised responses of ε0 composed with one Gaussian
    of sensitivity/σ = η (η = 0: none): the privacy loss is ε0·(times − 2B) + G, B
    binomial, G the Gaussian's loss; δ = E[(1 − e^(ε − L))+], summed over B with Balle
    and Wang's closed form for the Gaussian part."""
    q = 1.0 / (1.0 + math.exp(eps0))
    b = np.arange(times + 1)
    pmf = binom.pmf(b, times, q)
    shift = epsilon - eps0 * (times - 2 * b)
    if eta == 0:
        part = np.where(shift < 0, -np.expm1(shift), 0.0)
    else:
        part = norm.cdf(eta / 2 - shift / eta) - np.exp(shift + norm.logcdf(-eta / 2 - shift / eta))
    return float(np.sum(pmf * part))


@pytest.mark.parametrize(
    "eps0,times,rho,delta",
    [(0.05, 21, 0.0, 1e-6), (0.01, 21, 0.02, 1e-6), (0.1, 5, 0.1, 1e-5), (0.5, 3, 0.0, 1e-3)],
)
def test_renyi_epsilon_holds_against_the_exact_loss_and_is_not_far_above_it(
    eps0, times, rho, delta
):
    """At the ε the RDP accountant books, the exact δ of the composition is at most δ (a
    valid bound), and at 0.8 of it the exact δ is already above δ ... unless the bound is
    within 25 % of the truth, which is what 'tight enough to calibrate with' means here."""
    eta = math.sqrt(2 * rho)
    booked = composed_epsilon((eps0,) * times, rho, delta)
    assert _exact_delta(eps0, times, eta, booked) <= delta
    assert _exact_delta(eps0, times, eta, 0.8 * booked) > delta


def test_the_ledger_books_the_smaller_of_basic_and_renyi_composition():
    """Few large pure releases: basic composition is the smaller of the older two; many
    small ones beside a Gaussian: Rényi is. The PLD is below both, and the ledger books
    the smallest; ∞ stays ∞."""
    from dpcluster.privacy import LaplaceMechanism, Ledger
    from dpcluster.privacy.gaussian import GaussianMechanism, zcdp_epsilon

    for eps0, times in ((0.5, 2), (0.01, 40)):
        ledger = Ledger(delta=1e-6)
        for _ in range(times):
            ledger.record(LaplaceMechanism(eps0, 1.0), "count")
        ledger.record(GaussianMechanism(0.05, 1.0, delta=1e-6), "sums")
        basic = times * eps0 + zcdp_epsilon(0.05, 1e-6)
        renyi = composed_epsilon((eps0,) * times, 0.05, 1e-6)
        tight = pld.composed_epsilon((eps0,) * times, 0.05, 1e-6)
        assert ledger.total_epsilon == pytest.approx(min(basic, renyi, tight), rel=1e-9)
        assert tight <= min(basic, renyi)  # the PLD is never looser here
    assert renyi < basic  # the many-small case is where Rényi pays
    assert composed_epsilon((0.1, math.inf), 0.01, 1e-6) == math.inf


def test_calibration_is_the_smallest_alpha_within_the_budget():
    alpha = lg.calibrate(1.0, 1e-6)

    def spent(a):  # the ledger's total: the PLD, within the older two
        counts = (1 / (20 * a),) * 21
        return min(
            composed_epsilon(counts, 1 / (2 * a * a), 1e-6),
            pld.composed_epsilon(counts, 1 / (2 * a * a), 1e-6),
        )

    assert spent(alpha) <= 1.0 < spent(alpha * (1 - 1e-6))


def test_the_ledger_books_at_most_epsilon_and_delta_with_21_count_levels():
    X = np.random.default_rng(0).normal(0, 0.1, (3000, 5))
    res = lg.lsh_splits_gaussian(X, 4, 1.0, 1e-6, np.random.default_rng(1), n_init=1)
    counts = [e for e in res.ledger.entries if not e.rho]
    sums = [e for e in res.ledger.entries if e.rho]
    assert len(counts) == lg.MAX_DEPTH + 1 and len(sums) == 1
    assert res.ledger.total_epsilon <= 1.0 and res.ledger.total_delta <= 1e-6
    # basic composition of the same releases would book more than the budget
    basic = sum(e.epsilon for e in counts) + res.ledger._group_epsilon()[0]
    assert basic > 1.15


def test_the_tree_ends_where_identical_records_stop_splitting():
    """Four points, 500 copies each, almost no noise: every branching node keeps one
    child, so the leaves are the four points at depth 20 (or where their hashes part),
    and the centres are the four points."""
    points = np.array([[0.5, 0.5, 0], [-0.5, 0.5, 0], [0.5, -0.5, 0], [-0.4, -0.4, 0.3]])
    X = np.repeat(points, 500, axis=0)
    res = lg.lsh_splits_gaussian(X, 4, 1e5, 1e-6, np.random.default_rng(2), n_init=3)
    assert res.info["leaves"] == 4 and res.info["t_node"] == 1
    found = np.sort(np.round(res.centroids, 3), axis=0)
    assert np.allclose(found, np.sort(points, axis=0), atol=1e-3)


def test_grow_tree_makes_a_branching_node_without_kept_children_a_leaf():
    class Exact:
        """A stand-in mechanism that adds no noise."""

        epsilon, delta, sensitivity, scale = 1.0, 0.0, 1.0, 1.0

        def add(self, answer, noise):
            return np.asarray(answer, float)

        def noise(self, rng, shape):
            return np.zeros(shape)

    from dpcluster.privacy import Ledger

    # 10 records hash 0 then split 5/5 on the second bit; T_node = 6 keeps neither child
    bits = np.zeros((10, 3), dtype=np.int64)
    bits[5:, 1] = 1
    leaves = lg.grow_tree(bits, Exact(), 6.0, 8.0, 10.0, None, Ledger(), np.zeros((3, 2)))
    assert leaves == [(1, 0, 10.0)]


def test_every_release_is_announced_and_the_records_are_projected_onto_the_ball():
    X = np.random.default_rng(3).normal(0, 2.0, (2000, 3))  # most outside the unit ball
    seen = []
    with observe(seen.append):
        res = lg.lsh_splits_gaussian(X, 3, 1.0, 1e-6, np.random.default_rng(4), n_init=1)
    assert len(seen) == len(res.ledger.entries) - sum(
        "not reached" in e.purpose for e in res.ledger.entries
    )
    assert np.all(np.linalg.norm(res.centroids, axis=1) <= 1.0 + 1e-9)


def test_dpkmeans_runs_it_with_a_ball_and_refuses_it_without_delta():
    X = np.random.default_rng(5).normal(0, 0.3, (2000, 4))
    est = DPKMeans(
        3, epsilon=1, delta=1e-6, radius=1.0, method="lsh_splits_gaussian", random_state=0
    ).fit(X)
    assert est.ledger_.total_epsilon <= 1 and est.ledger_.total_delta <= 1e-6
    with pytest.raises(ValueError, match="give delta > 0"):
        DPKMeans(3, epsilon=1, radius=1.0, method="lsh_splits_gaussian", random_state=0).fit(X)


def test_auto_takes_pe_lloyd_where_a_tree_had_enough_records_per_leaf():
    """A leaf's low-noise size (10√d·σ records per half cluster, at k ≥ 8) puts N·ε/√d far
    above PE-Lloyd's floor, so auto runs PE-Lloyd there, on a ball and on a box."""
    from dpcluster.algorithms.auto import PE_MIN_SIGNAL, choose, pe_signal

    node = 10.0 * 100**0.5 * lg.calibrate(0.99, 1e-6)
    big = 2 * 8 * node
    assert pe_signal(big, 100, 0.99) > PE_MIN_SIGNAL
    assert choose(big, 64, 100, 0.99, delta=1e-6, ball=True)[0] == "pe_lloyd"
    assert choose(big, 64, 100, 0.99, delta=1e-6)[0] == "pe_lloyd"
    assert choose(10**7, 64, 3, 0.99, delta=1e-6, ball=True)[0] == "hybrid"  # a grid
