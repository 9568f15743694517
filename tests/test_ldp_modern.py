"""One-round LDP k-means (docs/methods.md L1–L3): the randomisers' laws and estimators, the
ledgers, the audit targets, the estimator and the registry entries."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcluster.audit.catalogue import targets
from dpcluster.audit.replay import replay_target
from dpcluster.audit.run import audit_target
from dpcluster.ldp.one_round import (
    Projection,
    grid_oracle_kmeans,
    input_perturbation_kmeans,
    one_round_kmeans,
)
from dpcluster.ldp.oracles import DuchiCoordinate, LocalHash
from dpcluster.privacy.ledger import LOCAL_RECORD

LDP_TARGETS = (
    "ldp_grid (OLH cell report)",
    "ldp_one_round (cell and coordinate)",
    "ldp_perturb (Laplace record)",
)


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 5.0])
def test_local_hash_reports_follow_their_law(epsilon):
    """A user's report equals its hashed cell with probability p, each other value with
    q; over 40,000 users the share of true reports is within 5 SDs of p."""
    mech = LocalHash(epsilon)
    assert mech.p / mech.q == pytest.approx(math.exp(epsilon))
    assert mech.p + (mech.g - 1) * mech.q == pytest.approx(1.0)
    n = 40_000
    cells = np.random.default_rng(1).integers(0, 1000, n)
    reports = mech.encode(np.random.default_rng(2), cells)
    hit = mech.matches(reports, cells[:, None])[:, 0]
    sd = math.sqrt(mech.p * (1 - mech.p) / n)
    assert abs(hit.mean() - mech.p) < 5 * sd
    ll = mech.log_likelihood(reports, cells)
    assert np.allclose(np.exp(ll), np.where(hit, mech.p, mech.q))


def test_local_hash_counts_are_unbiased():
    """Counts of 3 cells among 20,000 users (10,000 / 6,000 / 0), each within 5 of the
    estimate's own SDs."""
    mech = LocalHash(2.0)
    cells = np.repeat([7, 11, 13], [10_000, 6_000, 4_000])
    est = mech.estimate(mech.encode(np.random.default_rng(3), cells), np.array([7, 11, 99]))
    sd = mech.estimate_sd(len(cells)) * 1.5  # true cells add their own binomial spread
    assert np.all(np.abs(est - [10_000, 6_000, 0]) < 5 * sd)


def test_duchi_coordinate_is_unbiased_and_bounded_by_e_to_epsilon():
    eps, d = 1.0, 5
    mech = DuchiCoordinate(eps, d)
    p_hi, p_lo = mech._p_plus(np.array([1.0, -1.0]))
    assert p_hi / p_lo == pytest.approx(math.exp(eps)) and (1 - p_lo) / (1 - p_hi) == pytest.approx(
        math.exp(eps)
    )
    x = np.linspace(-1, 1, d)
    n = 200_000
    reports = mech.encode(np.random.default_rng(4), np.tile(x, (n, 1)))
    mean = mech.vectors(reports).mean(axis=0)
    # each coordinate's estimate d·B·s·1{j} has SD at most d·B/√d per report
    assert np.all(np.abs(mean - x) < 5 * math.sqrt(d) * mech.scale / math.sqrt(n))


def test_projection_cells_and_children_agree():
    proj = Projection.draw(6, 3, np.random.default_rng(5))
    Y = proj.project(np.random.default_rng(6).uniform(-1, 1, (500, 6)))
    for level in (1, 2, 3):
        parents = proj.cells(Y, level)
        kids = proj.cells(Y, level + 1)
        for cell in np.unique(parents):
            assert set(kids[parents == cell]) <= set(proj.children(np.array([cell]), level))


@pytest.mark.parametrize(
    "method", [one_round_kmeans, grid_oracle_kmeans, input_perturbation_kmeans]
)
def test_each_method_books_one_message_of_epsilon_per_user(method):
    X = np.random.default_rng(7).uniform(-1, 1, (400, 3))
    res = method(X, 3, 1.5, np.random.default_rng(8), np.random.default_rng(9))
    assert res.ledger.neighbouring == LOCAL_RECORD
    assert res.ledger.total_epsilon == pytest.approx(1.5) and res.ledger.total_epsilon <= 1.5
    assert res.labels.shape == (400,) and set(res.labels.tolist()) <= set(range(3))
    assert np.all(np.isfinite(res.centres))


def test_methods_find_separated_blobs_at_a_large_epsilon():
    """Four blobs in 2-D, 4,000 users, ε = 8 per user: each method's ARI ≥ 0.5."""
    from sklearn.datasets import make_blobs
    from sklearn.metrics import adjusted_rand_score

    X, y = make_blobs(
        4000,
        centers=[[-0.6, -0.6], [0.6, 0.6], [-0.6, 0.6], [0.6, -0.6]],
        cluster_std=0.08,
        random_state=0,
    )
    X = np.clip(X, -1, 1)
    for method in (one_round_kmeans, grid_oracle_kmeans, input_perturbation_kmeans):
        res = method(X, 4, 8.0, np.random.default_rng(10), np.random.default_rng(11))
        assert adjusted_rand_score(y, res.labels) >= 0.5, method.__name__


@pytest.mark.parametrize("name", LDP_TARGETS)
def test_ldp_audit_targets_certify_at_least_half_of_epsilon(name):
    """The distinguishing attack on opposite corners certifies ε_lb ≥ 0.5·ε at ε = 2,
    and never above the provable ε."""
    row = audit_target(targets()[name], 2.0, trials=2_000)
    assert row["verdict"] == "consistent", row["note"]
    assert row["epsilon_lb_whitebox"] >= 1.0
    assert row["epsilon_lb_whitebox"] <= 2.0 * (1 + 1e-9)


@pytest.mark.parametrize("name", LDP_TARGETS)
def test_ldp_targets_replay_clean(name):
    row = replay_target(targets()[name], 2.0)
    assert row["verdict"] == "clean", row["finding"]


def test_ldp_estimator_fits_and_books():
    from sklearn.datasets import make_blobs

    from dpcluster import LDPKMeans

    X, _ = make_blobs(2000, centers=3, n_features=2, random_state=1)
    est = LDPKMeans(3, epsilon=4.0, method="perturb", bounds=(-15, 15), random_state=0).fit(X)
    assert est.cluster_centers_.shape == (3, 2) and est.labels_.shape == (2000,)
    assert est.ledger_.total_epsilon == pytest.approx(4.0)
    assert np.array_equal(est.predict(X), est.labels_)
    grid = LDPKMeans(3, epsilon=4.0, method="grid", bounds=(-15, 15), random_state=0).fit(X)
    assert grid.cluster_centers_ is None and grid.projected_centers_.shape[0] == 3
    with pytest.raises(ValueError, match="projected space"):
        grid.predict(X)


def test_per_attribute_budget_books_d_times_epsilon():
    from dpcluster.data import Dataset
    from dpcluster.experiments import ALGORITHMS, CellContext
    from dpcluster.rng import StreamFactory

    X = np.random.default_rng(12).uniform(-1, 1, (300, 4))
    ds = Dataset(name="u", X=X, k=2, label="u", lo=-np.ones(4), hi=np.ones(4), bounds="public")
    info = ALGORITHMS["ldp_perturb"]
    for budget, want in (("per_record", 0.5), ("per_attribute", 2.0)):
        ctx = CellContext(
            dataset=ds,
            k=2,
            epsilon=0.5,
            params={"budget": budget},
            repeat=1,
            n_init=1,
            init_method="uniform",
            streams=StreamFactory(1, ("t",)),
            init_streams=StreamFactory(0, ("p",)),
        )
        rows, ledger = info.run_cell(ctx)
        assert ledger["total_epsilon"] == pytest.approx(want)
        assert rows[0]["kmeans_cost"] > 0
