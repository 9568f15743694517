"""diffprivlib's KMeans as shipped, with the ε it really spends
(dpcluster/algorithms/comparators.py). The tests that run it need the optional
``compare`` extra and skip without it; those of its refusal and its arithmetic run
everywhere."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import yaml

from dpcluster import DPKMeans, harness, spec
from dpcluster.algorithms import comparators
from dpcluster.audit.comparator_targets import diffprivlib_switch
from dpcluster.errors import SpecError

installed = comparators.diffprivlib_problem() is None
needs_diffprivlib = pytest.mark.skipif(not installed, reason="diffprivlib 0.6.6 not installed")


def _swapped(epsilon: float, d: int) -> float:
    """What the swapped split spends: ε(1 + d·c)/(d + c), c = (4dρ²)^(1/3)."""
    c = (4 * d * 0.225**2) ** (1 / 3)
    return epsilon * (1 + d * c) / (d + c)


@pytest.mark.parametrize("d", [2, 13, 30])
def test_the_split_is_the_swapped_one(d):
    """Per iteration the count gets u and each coordinate sum c·u; over T iterations the
    noise spends ε(1 + dc)/(d + c): below ε at d = 2, 1.32ε at d = 13, 1.75ε at d = 30."""
    T = 3
    count, per_sum = comparators.diffprivlib_split(1.0, T, d)
    assert T * (count + d * per_sum) == pytest.approx(_swapped(1.0, d), rel=1e-12)
    assert T * (per_sum + d * count) == pytest.approx(1.0, rel=1e-12)  # what it claims
    expected = {2: 0.905, 13: 1.32, 30: 1.75}[d]
    assert _swapped(1.0, d) == pytest.approx(expected, abs=0.005)


def test_a_spec_naming_it_without_the_package_is_refused_with_the_install_line(
    tmp_path, monkeypatch
):
    def missing():
        raise ImportError(f"diffprivlib is not installed: {comparators.INSTALL_HINT}")

    monkeypatch.setattr(comparators, "load_diffprivlib_kmeans", missing)
    path = tmp_path / "s.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "s",
                "seed": 1,
                "datasets": [{"name": "synthetic", "params": {"N": 200, "k": 2, "d": 2}}],
                "epsilon": [1.0],
                "algorithms": [{"name": "diffprivlib", "repeat": 1}],
            }
        )
    )
    with pytest.raises(SpecError, match=r"compare"):
        harness.check_spec(spec.load(path))


@needs_diffprivlib
def test_dpkmeans_runs_diffprivlib_as_shipped_and_books_what_it_spends(rng):
    X = rng.normal(size=(600, 13)) * np.arange(1, 14)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = DPKMeans(3, epsilon=1.0, method="diffprivlib", random_state=5).fit(X)
        # the same call made directly on the records DPKMeans hands it
        Z = ours._scale(X)
        seed = int(np.random.default_rng(5).integers(0, 2**32 - 1))
        theirs = comparators.load_diffprivlib_kmeans()(
            3,
            epsilon=1.0,
            bounds=(-np.maximum(ours._radius, 1e-5), np.maximum(ours._radius, 1e-5)),
            random_state=np.random.RandomState(seed),
        ).fit(Z)
    np.testing.assert_allclose(ours._centres_scaled, theirs.cluster_centers_, rtol=0, atol=0)
    ledger = ours.ledger_
    assert ledger.claimed_epsilon == pytest.approx(1.0, rel=1e-12)
    assert math.isinf(ledger.total_epsilon)  # T and the empty-cluster skip read the data
    noise = sum(e.epsilon for e in ledger.entries if math.isfinite(e.epsilon))
    assert noise == pytest.approx(_swapped(1.0, 13), rel=1e-12)


@needs_diffprivlib
def test_the_switch_is_where_diffprivlib_changes_its_iteration_count():
    KMeans = comparators.load_diffprivlib_kmeans()
    for epsilon in (0.5, 1.0, 2.0):
        n = diffprivlib_switch(epsilon)
        model = KMeans(2, epsilon=epsilon)
        assert model._calc_iters(2, n - 1) == 2 and model._calc_iters(2, n) == 3


@needs_diffprivlib
def test_the_audit_certifies_more_than_the_claimed_epsilon():
    """At its T switch the path alone tells N from N + 1: the certified bound exceeds the
    nominal ε = 1 by far (the ceiling of 300 trials per side is ln(150/3.7) ≈ 3.7)."""
    from dpcluster.audit import run_audit

    table = run_audit(["diffprivlib"], epsilons=(1.0,), trials=300)
    row = table[table["algorithm"] == "diffprivlib"].iloc[0]
    assert row["epsilon_lb_discrete"] > 2.0 and row["verdict"] == "violation"
    assert math.isinf(row["epsilon_provable"])


@needs_diffprivlib
def test_a_spec_row_shows_diffprivlibs_nominal_and_real_epsilon(tmp_path):
    """Through a spec (the estimator pipeline) a diffprivlib row carries its nominal ε as
    claimed, ∞ as provable, and what its noise alone spends at d = 13."""
    import pandas as pd

    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.normal(size=(300, 13)), columns=[f"f{i}" for i in range(13)])
    frame.to_csv(tmp_path / "x.csv", index=False)
    path = tmp_path / "s.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "s",
                "seed": 1,
                "pipeline": "estimator",
                "datasets": [{"name": "csv", "params": {"path": "x.csv", "k": 3}}],
                "epsilon": [1.0],
                "algorithms": [
                    {"name": "kmeans", "repeat": 1},
                    {"name": "diffprivlib", "repeat": 2},
                ],
                "plot": {"kind": "none"},
            }
        )
    )
    harness.run_spec(spec.load(path), tmp_path / "out")
    summary = pd.read_csv(tmp_path / "out" / "summary.csv").set_index("algorithm")
    row = summary.loc["diffprivlib"]
    assert row["epsilon_claimed_max"] == pytest.approx(1.0)
    assert math.isinf(row["epsilon_provable_max"])
    assert row["noise_epsilon_mean"] == pytest.approx(_swapped(1.0, 13), rel=1e-12)
    assert row["cost_ratio"] > 1.0


def test_the_audit_leaves_out_a_comparator_that_is_not_installed(monkeypatch):
    from dpcluster.audit import catalogue
    from dpcluster.audit.choose import choose_targets
    from dpcluster.errors import DpclusterError

    def missing():
        raise ImportError(f"diffprivlib is not installed: {comparators.INSTALL_HINT}")

    monkeypatch.setattr(comparators, "load_diffprivlib_kmeans", missing)
    assert "diffprivlib" not in catalogue.targets()  # neither its own nor a generic target
    with pytest.raises(DpclusterError, match="diffprivlib cannot be audited here"):
        choose_targets(["diffprivlib"])
