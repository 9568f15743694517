"""DPM, private clustering by separation (dpcluster/algorithms/dpm.py; docs/methods.md
"DPM")."""

from __future__ import annotations

import numpy as np
import pytest

from dpcluster import DPKMeans
from dpcluster.algorithms import dpm as D
from dpcluster.privacy import observe


def _blobs(seed=0, k=4, n=2000, d=3, spread=0.6, std=0.02):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-spread, spread, (k, d))
    X = np.repeat(centres, n, axis=0) + rng.normal(0, std, (k * n, d))
    return np.clip(X, -1, 1), centres


def test_centreness_is_continuous_peaks_at_the_median_and_has_the_bounded_slope():
    n = 1200.0
    p = np.arange(-50, 1251, dtype=float)
    c = D.centreness(n, p)
    assert c[np.argmax(c)] == pytest.approx(1.0) and abs(p[np.argmax(c)] - n / 2) <= 1
    slope = np.abs(np.diff(c))
    assert slope.max() <= D.T_CENTRE / D.Q_CENTRE / n * (1 + 1e-9)


def test_level_shares_grow_as_root_two_and_never_exceed_the_total():
    shares = D.level_shares(0.18, 8)
    assert sum(shares) <= 0.18 and np.allclose(np.diff(np.log(shares)), np.log(2) / 2)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_the_ledger_books_at_most_epsilon_and_every_level(delta):
    X, _ = _blobs()
    res = D.dpm(X, 4, 1.0, delta, np.random.default_rng(1), n_init=1)
    purposes = [e.purpose for e in res.ledger.entries]
    levels = D.default_levels(4)  # ⌈log2 4⌉ + 1 = 3
    assert levels == 3 and D.default_levels(64) == 7  # the published 7 at k = 64
    assert sum("node counts" in p for p in purposes) == levels + 1
    assert sum("split choices" in p for p in purposes) == levels
    assert res.ledger.total_epsilon <= 1.0 and res.ledger.total_delta <= delta
    assert any(e.rho for e in res.ledger.entries) == bool(delta)


def test_it_separates_clear_blobs():
    X, centres = _blobs(seed=3)
    res = D.dpm(X, 4, 1.0, 0.0, np.random.default_rng(2))
    gap = np.linalg.norm(centres[:, None] - res.centroids[None], axis=2).min(axis=1)
    assert gap.max() < 0.1  # every blob found (a missed one is ~1 away), within 5 % of the box


def test_every_release_is_announced_with_a_query_that_reproduces_it():
    """With almost no noise the announced queries, rerun on the data, give the released
    counts and sums to within the noise."""
    X, _ = _blobs(n=300)
    seen = []
    with observe(seen.append):
        D.dpm(X, 4, 1e5, 0.0, np.random.default_rng(4), n_init=1)
    counts = [r for r in seen if r.purpose == "node counts"]
    assert counts and all(np.allclose(r.query(X), r.output, atol=0.5) for r in counts)
    sums = [r for r in seen if r.purpose == "leaf coordinate sums"][0]
    assert np.allclose(sums.query(X), sums.output, atol=0.01)


def test_dpkmeans_runs_dpm_in_pure_epsilon_and_with_delta():
    X, _ = _blobs(d=5)
    for delta in (0.0, 1e-6):
        est = DPKMeans(4, epsilon=1, delta=delta, bounds=(-1, 1), method="dpm", random_state=0).fit(
            X
        )
        assert est.ledger_.total_epsilon <= 1 and est.ledger_.total_delta <= delta


def test_auto_on_a_box_with_delta_runs_pe_lloyd_within_epsilon_and_delta():
    """Where auto once took DPM (a box, δ > 0, many clusters, records enough per leaf),
    PE-Lloyd's signal is above its floor: one count, the whole fit within (ε, δ)."""
    X, _ = _blobs(k=16, n=3000, d=8, spread=0.8, std=0.01)
    est = DPKMeans(16, epsilon=1, delta=1e-6, bounds=(-1, 1), random_state=0).fit(X)
    assert est.method_ == "pe_lloyd"
    assert sum("record count" in e.purpose for e in est.ledger_.entries) == 1
    assert est.ledger_.total_epsilon <= 1.0 and est.ledger_.total_delta <= 1e-6


def _synth(k, n, seed=1):
    """DPM's synth recipe at a smaller scale: make_blobs in 10-D, box (−100, 100), std 1,
    scaled to the unit box; (X, centres)."""
    from sklearn.datasets import make_blobs

    X, _, C = make_blobs(
        n, 10, centers=k, center_box=(-100, 100), random_state=seed, return_centers=True
    )
    return np.clip(X, -100, 100) / 100, C / 100


def test_the_child_leaf_rule_misses_fewer_clusters_and_spends_the_same():
    """A cut that leaves a sliver of one cluster closes the node over the whole others
    under the published rule; the child rule closes the sliver alone. Over ten seeds on a
    16-blob synth recipe (ε = 1, δ = 1/(N√N)) it misses fewer blobs (a blob is missed
    when no centre is within 10 data units), and books the same releases."""
    X, C = _synth(16, 25_000)
    delta = 1 / (len(X) * len(X) ** 0.5)
    missed, ledgers = {}, {}
    for rule in D.LEAF_RULES:
        missed[rule] = 0
        for seed in range(10):
            res = D.dpm(X, 16, 1.0, delta, np.random.default_rng(seed), leaf_rule=rule)
            gap = np.linalg.norm(C[:, None] - res.centroids[None], axis=2).min(axis=1)
            missed[rule] += int((gap > 0.1).sum())
            ledgers.setdefault(rule, [(e.purpose, e.epsilon, e.rho) for e in res.ledger.entries])
    assert missed["child"] < missed["published"]
    assert ledgers["child"] == ledgers["published"]


def test_an_unknown_leaf_rule_is_refused():
    X, _ = _blobs(n=100)
    with pytest.raises(ValueError, match="leaf_rule"):
        D.dpm(X, 4, 1.0, 0.0, np.random.default_rng(0), leaf_rule="parent")


def test_the_leaf_rule_reaches_dpm_from_a_spec_and_from_dpkmeans(monkeypatch):
    """The registry's ``dpm`` takes ``leaf_rule`` (its Param names the choices) and
    DPKMeans passes it through method_params; the published rule is the default."""
    from dpcluster.algorithms import methods
    from dpcluster.experiments import ALGORITHMS
    from dpcluster.experiments.protocol import ParamError

    seen = []

    def recording(*args, **kwargs):
        seen.append(kwargs.get("leaf_rule"))
        return D.dpm(*args, **kwargs)

    monkeypatch.setattr(methods, "dpm", recording)
    param = ALGORITHMS["dpm"].params["leaf_rule"]
    assert param.default == "published" and param.coerce("child") == "child"
    with pytest.raises(ParamError):
        param.coerce("parent")
    X, _ = _blobs(k=8, n=1500, d=5, spread=0.8, std=0.01)
    fits = {
        rule: DPKMeans(
            8,
            epsilon=1,
            delta=1e-6,
            bounds=(-1, 1),
            method="dpm",
            method_params={"leaf_rule": rule},
            random_state=0,
        ).fit(X)
        for rule in D.LEAF_RULES
    }
    assert all(f.ledger_.total_epsilon <= 1 for f in fits.values())
    assert seen == list(D.LEAF_RULES)


@pytest.mark.parametrize("method", ["dpm", "lsh_splits"])
def test_in_a_ball_the_sums_are_charged_the_ball_and_every_query_sees_the_projected_records(
    method,
):
    """Records of the cube [-1, 1]^6 projected into the unit ball: the pure-ε sums' L1
    sensitivity is min(Σ r_j, √d·R) = √6 (not 6), and with almost no noise every announced
    query, rerun on the raw records, gives the released value (so the queries project as
    the mechanisms do)."""
    from dpcluster.algorithms.lsh_splits import lsh_splits

    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (600, 6))
    assert (np.linalg.norm(X, axis=1) > 1).mean() > 0.5  # most records need the projection
    seen = []
    with observe(seen.append):
        if method == "dpm":
            res = D.dpm(X, 4, 1e5, 0.0, np.random.default_rng(4), n_init=1, ball=1.0)
        else:
            res = lsh_splits(X, 4, 1e5, np.random.default_rng(4), n_init=1, ball=1.0)
    sums = [e for e in res.ledger.entries if "leaf coordinate sums" in e.purpose]
    assert len(sums) == 1 and sums[0].sensitivity == pytest.approx(6**0.5)
    assert np.linalg.norm(res.centroids, axis=1).max() <= 1 + 1e-9
    counts = [r for r in seen if "count" in r.purpose]
    assert counts and all(np.allclose(r.query(X), r.output, atol=0.5) for r in counts)
    released = [r for r in seen if r.purpose == "leaf coordinate sums"][0]
    assert np.allclose(released.query(X), released.output, atol=0.01)


@pytest.mark.parametrize("method", ["lsh_splits", "dpm"])
def test_dpkmeans_gives_a_ball_domain_to_the_pure_epsilon_trees(method):
    """``radius`` reaches LSH-splits and DPM in pure ε: their sums are charged √d·R of the
    unit ball of the working space (√8 here), not the cube's d."""
    X, _ = _blobs(k=4, n=500, d=8, spread=0.2, std=0.02)
    est = DPKMeans(4, epsilon=1, radius=1.0, method=method, random_state=0).fit(X)
    sums = [e for e in est.ledger_.entries if "leaf coordinate sums" in e.purpose]
    assert len(sums) == 1 and sums[0].sensitivity == pytest.approx(8**0.5)
    assert est.ledger_.total_epsilon <= 1.0
