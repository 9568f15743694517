"""(ε, δ): the discrete Gaussian on a lattice, zCDP accounting, the L2-ball domain and a
budget across fits (docs/privacy.md, "(ε, δ)")."""

from __future__ import annotations

import math
from fractions import Fraction
from unittest import mock

import numpy as np
import pytest

from dpcluster import DPKMeans
from dpcluster.audit.run import _targets, audit_target
from dpcluster.privacy import LaplaceMechanism, Ledger, observe
from dpcluster.privacy import gaussian as g
from dpcluster.privacy.accountant import BudgetAccountant, BudgetExceeded
from dpcluster.privacy.sampling import MAX_VARIANCE, discrete_gaussian
from tests import planted


def _delta_by_hand(rho: float, eps: float) -> float:
    """min over a fine grid of α of exp((α−1)(αρ−ε))/(α−1)·(1−1/α)^α."""
    alphas = 1 + np.geomspace(1e-4, 1e4, 200_001)
    with np.errstate(over="ignore"):  # far α overflow to inf, which the minimum never picks
        values = np.exp((alphas - 1) * (alphas * rho - eps)) / (alphas - 1)
        return float(np.min(values * (1 - 1 / alphas) ** alphas))


def test_zcdp_conversion_by_hand():
    """ρ = 0.5, δ = 1e-6: our ε meets δ at the best α of a fine grid, a slightly smaller ε
    does not, and it lies below the classical ρ + 2√(ρ ln(1/δ))."""
    rho, delta = 0.5, 1e-6
    eps = g.zcdp_epsilon(rho, delta)
    assert _delta_by_hand(rho, eps) <= delta * (1 + 1e-6)
    assert _delta_by_hand(rho, eps * (1 - 1e-3)) > delta
    assert eps < rho + 2 * math.sqrt(rho * math.log(1 / delta))


def test_budget_round_trips_below_epsilon():
    for eps, delta in [(0.1, 1e-6), (1.0, 1e-6), (2.0, 1e-9), (8.0, 1e-5)]:
        rho = g.zcdp_budget(eps, delta)
        assert g.zcdp_epsilon(rho, delta) <= eps
        assert g.zcdp_epsilon(rho * 1.001, delta) > eps  # nothing left on the table


def test_analytic_gaussian_matches_balle_and_wang():
    """Balle and Wang's analytic σ at ε = 1, δ = 1e-5, Δ = 1 is about 3.73 (the classical
    √(2 ln(1.25/δ))/ε = 4.84)."""
    sigma = g.analytic_gaussian_sigma(1.0, 1e-5)
    assert 3.72 < sigma < 3.74
    assert g.analytic_gaussian_delta(sigma, 1.0) <= 1e-5


def test_ledger_composes_gaussians_in_zcdp_and_pure_releases_by_the_tighter_bound():
    """By hand: a Laplace release of ε = 0.1 and two Gaussians of ρ = 0.01 and 0.02 at
    δ = 1e-6: ε is the smallest of basic composition, 0.1 + ε_zCDP(0.03, 1e-6), Rényi
    composition of all three and their PLD; δ = 1e-6."""
    from dpcluster.privacy import pld
    from dpcluster.privacy.rdp import composed_epsilon

    ledger = Ledger(delta=1e-6)
    ledger.record(LaplaceMechanism(0.1, 1.0), "count")
    ledger.record(g.GaussianMechanism(0.01, 1.0, delta=1e-6), "a")
    ledger.record(g.GaussianMechanism(0.02, 1.0, delta=1e-6), "b")
    assert ledger.rho == pytest.approx(0.03)
    basic = 0.1 + g.zcdp_epsilon(0.03, 1e-6)
    renyi = composed_epsilon((0.1,), 0.03, 1e-6)
    tight = pld.composed_epsilon((0.1,), 0.03, 1e-6)
    assert tight < renyi < basic  # the PLD is the tightest here
    assert ledger.total_epsilon == pytest.approx(min(basic, renyi, tight))
    assert ledger.total_delta == 1e-6
    assert "rho" not in ledger.to_dict()["entries"][0]  # pure entries keep their form


def test_the_gaussian_variance_covers_the_sensitivity_exactly():
    rng = np.random.default_rng(4)
    for _ in range(200):
        rho = float(10 ** rng.uniform(-5, 0))
        sens = float(10 ** rng.uniform(-2, 2))
        p = int(rng.integers(1, 64))
        m = g.GaussianMechanism(rho, sens, p)
        steps = Fraction(sens) / Fraction(m.lattice) + 2 * Fraction(math.sqrt(p))
        assert steps * steps / (2 * Fraction(m.variance_steps)) <= Fraction(rho)
        assert m.sigma >= sens / math.sqrt(2 * rho)


@pytest.mark.statistical
@pytest.mark.parametrize("sigma2", [1, 7, 400])
def test_discrete_gaussian_has_its_pmf(sigma2):
    n = 200_000
    z = discrete_gaussian(np.random.default_rng(sigma2), sigma2, n)
    ks = np.arange(-40 * int(math.sqrt(sigma2)) - 5, 40 * int(math.sqrt(sigma2)) + 6)
    w = np.exp(-(ks.astype(float) ** 2) / (2 * sigma2))
    w /= w.sum()
    for v in range(-3, 4):
        p = float(w[ks == v][0])
        assert abs((z == v).mean() - p) <= 5 * math.sqrt(p * (1 - p) / n), v


@pytest.mark.statistical
def test_discrete_gaussian_at_its_largest_variance_has_its_tails():
    """σ² = 2^30: about one proposal in twenty has a squared gap beyond int64 and is
    decided outside the compiled fill. The variance and the mass beyond 3σ must still be
    the discrete Gaussian's (for σ this large, the continuous one's to well below the
    tolerances, which are five standard errors)."""
    sigma2, n = MAX_VARIANCE, 200_000
    z = discrete_gaussian(np.random.default_rng(3), sigma2, n).astype(float)
    assert abs(z.mean()) <= 5 * math.sqrt(sigma2 / n)
    assert abs(z.var() / sigma2 - 1) <= 5 * math.sqrt(2 / n)
    p = math.erfc(3 / math.sqrt(2))
    assert abs((np.abs(z) > 3 * math.sqrt(sigma2)).mean() - p) <= 5 * math.sqrt(p * (1 - p) / n)


def _blobs(d=16, n=4000, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.5, 0.5, (4, d)) / math.sqrt(d)
    return centres[rng.integers(0, 4, n)] + rng.normal(0, 0.02, (n, d))


def test_dpkmeans_with_delta_and_a_ball_books_at_most_epsilon_and_delta():
    X = _blobs()
    for method in ("auto", "dplloyd", "dplloyd_improved"):
        km = DPKMeans(4, epsilon=1, delta=1e-6, radius=1, method=method, random_state=0).fit(X)
        assert km.ledger_.total_epsilon <= 1.0 and km.ledger_.total_delta <= 1e-6
        assert km.ledger_.rho > 0  # the DPLloyd passes were Gaussian
        assert km.cluster_centers_.shape == (4, 16)


def test_delta_zero_is_the_pure_epsilon_fit_bit_for_bit():
    X = _blobs(d=4)
    a = DPKMeans(4, epsilon=1, bounds=(-1, 1), random_state=3).fit(X)
    b = DPKMeans(4, epsilon=1, bounds=(-1, 1), random_state=3, delta=0.0).fit(X)
    assert np.array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.ledger_.to_dict() == b.ledger_.to_dict() and a.ledger_.total_delta == 0.0


def test_records_outside_the_ball_are_projected_with_a_count():
    X = _blobs(d=3) * 0 + np.array([3.0, 0.0, 0.0])
    with pytest.warns(UserWarning, match=r"4000 of 4000 records lie outside the ball"):
        km = DPKMeans(2, epsilon=1, radius=1, method="dplloyd", random_state=0).fit(X)
    assert np.all(np.linalg.norm(km.cluster_centers_, axis=1) <= math.sqrt(3) + 1e-9)
    with pytest.raises(ValueError, match="bounds .* or radius"):
        DPKMeans(2, radius=1, bounds=(-1, 1)).fit(X)


def test_the_accountant_refuses_an_overspend_before_any_release():
    X = _blobs(d=4)
    acc = BudgetAccountant(1.5, 1e-5)
    DPKMeans(4, epsilon=1, delta=1e-6, radius=1, random_state=0, accountant=acc).fit(X)
    spent_eps, spent_delta = acc.spent[0]
    assert spent_eps <= 1.0 and spent_delta <= 1e-6
    released = []
    with observe(released.append), pytest.raises(BudgetExceeded, match="overspend"):
        DPKMeans(4, epsilon=1, radius=1, random_state=0, accountant=acc).fit(X)
    assert released == [] and len(acc.spent) == 1
    DPKMeans(4, epsilon=0.4, radius=1, random_state=0, accountant=acc).fit(X)
    assert acc.remaining[0] == pytest.approx(1.5 - spent_eps - 0.4, abs=1e-9)


def test_the_audit_catches_a_half_sigma_gaussian_and_passes_the_real_one():
    target = _targets()["dplloyd (gaussian)"]
    good = audit_target(target, 1.0, trials=20_000)
    assert good["verdict"] == "consistent" and good["delta_claimed"] == 1e-6
    with mock.patch.object(g, "GaussianMechanism", planted.half_sigma_gaussian()):
        bad = audit_target(target, 1.0, trials=20_000)
    assert bad["verdict"] == "violation of provable ε"


def _delta_spec(tmp_path, **changes):
    import yaml

    from dpcluster import spec

    doc = {
        "name": "delta",
        "seed": 5,
        "datasets": [{"name": "synthetic", "params": {"N": 800, "k": 3, "d": 4}}],
        "epsilon": [0.5, 1.0],
        "init": {"sets": 2},
        "algorithms": [
            {"name": "lloyd"},
            {"name": "dplloyd", "repeat": 3},
            {"name": "private_mean", "repeat": 2},
        ],
        **changes,
    }
    path = tmp_path / "delta.yaml"
    path.write_text(yaml.safe_dump(doc))
    return spec.load(path)


def test_a_spec_delta_turns_the_grid_into_eps_delta_and_every_row_says_so(tmp_path):
    import pandas as pd

    from dpcluster import harness

    sp = _delta_spec(tmp_path, delta=1e-6)
    assert sp.delta == 1e-6
    harness.run_spec(sp, tmp_path / "out")
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    gauss = runs[runs["algorithm"] == "dplloyd"]
    assert (gauss["delta_provable"] > 0).all() and (gauss["delta_provable"] <= 1e-6).all()
    assert (gauss["epsilon_provable"] <= gauss["epsilon"] * (1 + 1e-12)).all()
    # a pure-ε method in the same grid stays pure: (ε, 0) is (ε, δ) for every δ
    pure = runs[runs["algorithm"] == "private_mean"]
    assert (pure["delta_provable"] == 0).all()
    assert (runs.loc[runs["algorithm"] == "lloyd", "delta_provable"] == 1.0).all()
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert {"delta_provable_max", "delta_claimed_max"} <= set(summary.columns)


def test_delta_zero_is_the_same_cell_as_no_delta_and_a_delta_is_another(tmp_path):
    from dpcluster import harness

    def ids(sp):
        return sorted(c.id for c in harness.expand(sp))

    plain, zero = _delta_spec(tmp_path), _delta_spec(tmp_path, delta=0)
    assert ids(plain) == ids(zero)
    changed = set(ids(_delta_spec(tmp_path, delta=1e-6))) - set(ids(plain))
    assert len(changed) == 4  # every private cell; lloyd's stays


@pytest.mark.parametrize("bad", [-1e-6, 1.0, "tiny", True, float("nan")])
def test_a_bad_spec_delta_names_its_key(tmp_path, bad):
    from dpcluster.errors import SpecError

    with pytest.raises(SpecError, match="delta"):
        _delta_spec(tmp_path, delta=bad)


def test_a_spec_ball_domain_scales_into_the_unit_ball_and_bounds_the_sums(tmp_path):
    import pandas as pd
    import yaml

    from dpcluster import data, harness, spec

    rng = np.random.default_rng(3)
    raw = rng.normal([5.0, -2.0], 1.0, (400, 2))
    raw[0] = [50.0, 50.0]  # outside the ball: projected onto it
    pd.DataFrame(raw, columns=["x", "y"]).to_csv(tmp_path / "p.csv", index=False)
    ball = {"radius": 4.0, "center": [5.0, -2.0]}
    doc = {
        "name": "ball",
        "seed": 2,
        "bounds": "public",
        "delta": 1e-6,
        "datasets": [{"name": "csv", "params": {"path": "p.csv", "k": 3, "domain": ball}}],
        "epsilon": [1.0],
        "init": {"sets": 2},
        "algorithms": [{"name": "dplloyd", "repeat": 3}, {"name": "auto", "repeat": 2}],
        "plot": {"kind": "none"},
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    sp = spec.load(tmp_path / "s.yaml")
    (ds_spec,) = sp.datasets
    ds = data.load(ds_spec.name, **ds_spec.kwargs)
    norms = np.linalg.norm(ds.X, axis=1)
    assert ds.ball == 1.0 and norms.max() <= 1.0 + 1e-12 and ds.clipped >= 1
    np.testing.assert_allclose(ds.raw[1:], np.where(norms[1:, None] < 1, raw[1:], ds.raw[1:]))
    harness.run_spec(sp, tmp_path / "out")
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    assert (runs["epsilon_provable"] <= 1.0 + 1e-12).all()
    assert (runs["delta_provable"] <= 1e-6).all()
    box = {
        **doc,
        "datasets": [
            {"name": "csv", "params": {"path": "p.csv", "k": 3, "domain": [[1, -6], [9, 2]]}}
        ],
    }
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({**box, "name": "box"}))
    harness.run_spec(spec.load(tmp_path / "b.yaml"), tmp_path / "box")
    by_box = pd.read_csv(tmp_path / "box" / "runs.csv")
    assert runs["stream"].tolist() != by_box["stream"].tolist()  # another dataset, another cell


@pytest.mark.parametrize(
    "ball,words",
    [
        ({"radius": 0}, "radius"),
        ({"radius": -1.0}, "radius"),
        ({"radius": "big"}, "radius"),
        ({"radius": 1.0, "center": "x"}, "center"),
        ({"radius": 1.0, "centre": [0, 0]}, "centre"),
    ],
)
def test_a_bad_ball_domain_names_its_key(tmp_path, ball, words):
    import pandas as pd
    import yaml

    from dpcluster import spec
    from dpcluster.errors import SpecError

    pd.DataFrame({"x": [0.0, 1.0, 2.0], "y": [1.0, 0.0, 2.0]}).to_csv(
        tmp_path / "p.csv", index=False
    )
    doc = {
        "name": "ball",
        "seed": 2,
        "bounds": "public",
        "datasets": [{"name": "csv", "params": {"path": "p.csv", "k": 2, "domain": ball}}],
        "epsilon": [1.0],
        "algorithms": [{"name": "dplloyd"}],
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(SpecError, match=words):
        spec.load(tmp_path / "s.yaml")
