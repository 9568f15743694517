"""Private k-means that works on real data: the benchmark-set reader, LSH-splits, the
private-mean reference, ``auto``, geometry-keeping scaling and the estimator's sound
defaults (docs/utility.md)."""

import gzip
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from dpcluster import DPKMeans
from dpcluster.algorithms.auto import choose
from dpcluster.algorithms.dplloyd import dplloyd
from dpcluster.algorithms.lsh_splits import lsh_splits
from dpcluster.algorithms.methods import auto
from dpcluster.algorithms.reference import private_mean
from dpcluster.data import benchmark as battery
from dpcluster.errors import DataError


def _write_set(root, name, X, labels):
    data, lab = battery.files(root, name)
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_bytes(gzip.compress("\n".join(" ".join(map(str, r)) for r in X).encode()))
    lab.write_bytes(gzip.compress("\n".join(map(str, labels)).encode()))


@pytest.fixture
def tiny_battery(tmp_path):
    X, y = make_blobs(300, centers=3, n_features=2, cluster_std=0.5, random_state=0)
    labels = y + 1
    labels[:10] = 0  # ten noise points
    _write_set(tmp_path, "fam/blobs", X, labels)
    return tmp_path, X, labels


# --- the benchmark-set source ---------------------------------------------------------------


def test_a_set_is_read_with_its_reference_k_and_noise(tiny_battery):
    root, X, labels = tiny_battery
    s = battery.read(root, "fam/blobs")
    assert battery.find(root) == ["fam/blobs"]
    assert np.allclose(s.X, X) and np.array_equal(s.labels, labels)
    assert s.k == 3 and s.clustered.sum() == 290


def test_a_broken_set_is_one_clear_error(tmp_path):
    _write_set(tmp_path, "a/short", np.ones((5, 2)), [1, 1, 2])
    with pytest.raises(DataError, match="3 labels for 5 records"):
        battery.read(tmp_path, "a/short")
    with pytest.raises(DataError, match="not found"):
        battery.read(tmp_path, "a/missing")
    _write_set(tmp_path, "a/nan", np.array([[1.0, np.nan]]), [1])
    with pytest.raises(DataError, match="not a finite number"):
        battery.read(tmp_path, "a/nan")


def test_the_second_battery_is_readable_and_the_same_on_every_build(tmp_path):
    """scripts/make_battery.py: every set reads back with its advertised shape and k, the
    Gaussian pairs have the g2mg form (centres 500 and 600, σ = s·√(d/2)), and a second
    build writes the same bytes."""
    spec = importlib.util.spec_from_file_location(
        "make_battery", Path(__file__).parents[1] / "scripts" / "make_battery.py"
    )
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    names = make.build(tmp_path / "a")
    assert battery.find(tmp_path / "a") == names and len(names) == 42
    shapes = {
        "uci/iris": (150, 4, 3),
        "mnist/digits": (1797, 64, 10),
        "other/blobs_20_30": (6000, 20, 30),
    }
    for name, (N, d, k) in shapes.items():
        s = battery.read(tmp_path / "a", name)
        assert (*s.X.shape, s.k) == (N, d, k)
    pair = battery.read(tmp_path / "a", "g2mg/g2mg_32_50")
    assert pair.X.shape == (2048, 32) and pair.k == 2
    lower = pair.X[pair.labels == 1]
    assert abs(lower.mean() - 500.0) < 3.0 and abs(lower.std() / (50 * 4.0) - 1.0) < 0.02
    assert make.build(tmp_path / "b") == names
    for name in names:
        for a, b in zip(battery.files(tmp_path / "a", name), battery.files(tmp_path / "b", name)):
            assert a.read_bytes() == b.read_bytes(), name


def test_a_spec_runs_on_a_benchmark_set_identified_by_content(tiny_battery, tmp_path):
    from dpcluster.spec import load as load_spec

    root, _, _ = tiny_battery
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: b\nseed: 1\ndatasets:\n  - name: benchmark\n"
        f"    params: {{battery: {root}, set: fam/blobs}}\n"
        "epsilon: [1.0]\nalgorithms:\n  - name: auto\n    repeat: 2\nmetrics: [nicv]\n"
    )
    ds = load_spec(spec).datasets[0]
    assert "fam/blobs" in ds.key and str(root) not in ds.identity_key
    from dpcluster import data

    loaded = data.load(ds.name, **ds.kwargs)
    assert loaded.k == 3 and loaded.classes is not None and loaded.label == "fam/blobs"


# --- LSH-splits and the private mean --------------------------------------------------------

Xb, yb = make_blobs(2000, centers=4, n_features=3, cluster_std=0.3, random_state=1)
Zb = Xb / np.abs(Xb).max()


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_lsh_splits_books_exactly_epsilon_in_every_run(eps):
    for seed in range(5):
        res = lsh_splits(Zb, 4, eps, np.random.default_rng(seed))
        assert res.ledger.total_epsilon == pytest.approx(eps, rel=1e-12)
        assert res.centroids.shape == (4, 3) and np.all(np.abs(res.centroids) <= 1.0)
        # one count entry per level 0..D, then the leaves' sums
        counts = [e for e in res.ledger.entries if e.purpose.startswith("tree node counts")]
        assert len(counts) == res.info["depth"] + 1


def test_lsh_splits_is_reproducible_and_finds_separated_clusters():
    a = lsh_splits(Zb, 4, 2.0, np.random.default_rng(3))
    b = lsh_splits(Zb, 4, 2.0, np.random.default_rng(3))
    assert np.array_equal(a.centroids, b.centroids)
    truth = np.array([Zb[yb == c].mean(axis=0) for c in range(4)])
    gap = np.linalg.norm(truth[:, None] - a.centroids[None], axis=2).min(axis=1)
    assert np.median(gap) < 0.25  # most true centres have a private centre near them


def test_the_private_mean_is_one_centre_repeated():
    res = private_mean(Zb, 4, 1.0, np.random.default_rng(0))
    assert res.ledger.total_epsilon == pytest.approx(1.0)
    assert np.all(res.centroids == res.centroids[0])
    # its error is the Laplace noise on the mean: far below the domain at N = 2000
    assert np.linalg.norm(res.centroids[0] - Zb.mean(axis=0)) < 0.05


# --- auto -----------------------------------------------------------------------------------


def test_auto_chooses_from_public_quantities_only():
    """Two datasets of the same (N, d, k, ε) get the same method: the choice never reads
    the records (so it costs no budget)."""
    rng = np.random.default_rng(0)
    A = rng.uniform(-1, 1, (500, 2))
    B = np.clip(rng.normal(0, 0.1, (500, 2)), -1, 1)
    ra = auto(A, 3, 1.0, np.random.default_rng(1))
    rb = auto(B, 3, 1.0, np.random.default_rng(1))
    assert ra.info["chosen"] == rb.info["chosen"] == choose(500, 3, 2, 1.0)[0]
    assert ra.ledger.total_epsilon == pytest.approx(1.0)
    assert ra.ledger.to_dict()["choices"] == [
        f"auto chose {ra.info['chosen']}: {ra.info['reason']}"
    ]


@pytest.mark.parametrize(
    "N, k, d, eps, expected",
    [
        (3000, 20, 2, 1.0, "hybrid"),  # low d, a grid of 17 cells per axis
        (10**5, 100, 2, 2.0, "hybrid"),
        (2048, 2, 32, 1.0, "dplloyd_improved"),  # high d, 1,024 records per cluster
        (208, 2, 60, 0.1, "private_mean"),  # 104 records per cluster in 60-D at ε = 0.1
        (600, 15, 2, 0.01, "private_mean"),  # a one-cell grid, 40 records per cluster
        (10**9, 10, 3, 2.0, "dplloyd_improved"),  # the grid would exceed eugkm.MAX_CELLS
    ],
)
def test_auto_takes_each_branch_of_its_rule(N, k, d, eps, expected):
    method, reason = choose(N, k, d, eps)
    assert method == expected and reason


# --- the estimator's geometry and defaults --------------------------------------------------


def test_the_estimators_dplloyd_makes_one_full_budget_pass_only_where_clusters_are_weak():
    from dpcluster.algorithms.dplloyd import (
        SINGLE_PASS,
        estimator_iterations,
        improved_iterations,
        pass_margin,
    )

    cases = [(2048, 2, 16, 0.1), (351, 2, 34, 2.0), (2048, 2, 16, 2.0), (10**5, 5, 8, 1.0)]
    for N, k, d, eps in cases:
        t = estimator_iterations(eps, N, k, d)
        weak = pass_margin(N, k, d, eps) < SINGLE_PASS
        assert t == (1 if weak else improved_iterations(eps, N, k, d))
    assert [estimator_iterations(e, N, k, d) for N, k, d, e in cases[:3]] == [1, 1, 2]
    X, _ = make_blobs(351, n_features=34, centers=2, random_state=0)
    bounds = (X.min(axis=0), X.max(axis=0))
    one = DPKMeans(2, 2.0, method="dplloyd_improved", bounds=bounds, random_state=0).fit(X)
    a2 = DPKMeans(
        2,
        2.0,
        method="dplloyd_improved",
        bounds=bounds,
        random_state=0,
        method_params={"single_pass": False},
    ).fit(X)
    assert one.n_iter_ == 1 and a2.n_iter_ == 2
    for est in (one, a2):  # either way the whole budget, and no more
        assert est.ledger_.total_epsilon == pytest.approx(2.0)
    auto = DPKMeans(2, 2.0, bounds=bounds, random_state=0).fit(X)
    assert auto.method_ == "dplloyd_improved" and "one pass" in auto.reason_


def test_common_scaling_keeps_distances_in_proportion():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 2)) * [100.0, 1.0]  # one feature 100x wider
    bounds = ([0.0, 0.0], [100.0, 1.0])
    for scaling, proportional in (("common", True), ("per_feature", False)):
        est = DPKMeans(2, 1.0, bounds=bounds, scaling=scaling, random_state=0).fit(X)
        Z = est._scale(X)
        ratio = np.linalg.norm(Z[1:] - Z[:-1], axis=1) / np.linalg.norm(X[1:] - X[:-1], axis=1)
        assert np.allclose(ratio, ratio[0]) == proportional


def test_centres_stay_in_the_public_box():
    """GkM's noisy average can land outside the domain; clipping is free post-processing."""
    X, _ = make_blobs(300, centers=3, random_state=0)
    bounds = (X.min(axis=0), X.max(axis=0))
    for method in ("gkm", "lsh_splits", "dplloyd"):
        est = DPKMeans(3, 0.05, method=method, bounds=bounds, random_state=2).fit(X)
        assert np.all(est.cluster_centers_ >= bounds[0] - 1e-12)
        assert np.all(est.cluster_centers_ <= bounds[1] + 1e-12)


def test_an_empty_centre_holds_instead_of_drifting_on_noise():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, -0.8, (400, 2))  # every record in one corner
    init = np.array([[-0.9, -0.9], [0.9, 0.9]])  # the second centre gets no records
    held = dplloyd(X, 2, 1.0, init, np.random.default_rng(1), min_count="noise")
    drifted = dplloyd(X, 2, 1.0, init, np.random.default_rng(1), min_count=0.0)
    assert np.array_equal(held.centroids[1], init[1])
    assert not np.array_equal(drifted.centroids[1], init[1])


def test_auto_is_the_default_and_reports_its_choice():
    X, _ = make_blobs(1000, centers=4, random_state=0)
    est = DPKMeans(4, 1.0, bounds=(X.min(axis=0), X.max(axis=0)), random_state=0).fit(X)
    assert DPKMeans().method == "auto" and DPKMeans().scaling == "common"
    assert est.method_ in ("eugkm", "hybrid", "dplloyd_improved", "lsh_splits", "private_mean")
    assert est.reason_ and math.isclose(est.ledger_.total_epsilon, 1.0)


def test_per_feature_radii_set_the_sum_sensitivity_and_the_check():
    rng = np.random.default_rng(0)
    r = np.array([1.0, 0.1])
    X = rng.uniform(-1, 1, (300, 2)) * r
    res = dplloyd(X, 2, 1.0, np.zeros((2, 2)), np.random.default_rng(1), r=r)
    sums = [e for e in res.ledger.entries if e.purpose == "cluster coordinate sums"]
    assert sums and all(e.sensitivity == pytest.approx(1.1) for e in sums)
    assert np.all(np.abs(res.centroids) <= r)
    with pytest.raises(ValueError, match="outside"):
        dplloyd(X + [0.0, 0.15], 2, 1.0, np.zeros((2, 2)), np.random.default_rng(1), r=r)
