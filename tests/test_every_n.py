"""Private at every N: no decision reads the exact record count, the audit sees a switch,
the noise is exact on its lattice, and no ledger books more than ε (docs/privacy.md)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpcluster import DPKMeans
from dpcluster.algorithms import methods, plan
from dpcluster.audit.run import audit_target
from dpcluster.audit.stats import discrete_epsilon
from dpcluster.audit.switches import pair_at, rules, switch_points
from dpcluster.audit.targets import path_of
from dpcluster.privacy import LaplaceMechanism, observe
from dpcluster.privacy.budget import remaining, split, within
from dpcluster.privacy.sampling import discrete_laplace
from tests import planted

# --- the sampler -------------------------------------------------------------------------


@pytest.mark.statistical
@pytest.mark.parametrize("t,s", [(1, 1), (3, 2), (1, 3), (7, 1)])
def test_discrete_laplace_has_its_pmf(t, s):
    """P(Z = z) = (1 − q)/(1 + q)·q^|z|, q = e^(−s/t): each frequency of 200,000 draws is
    within 5 binomial standard errors of its probability, for |z| ≤ 6."""
    n = 200_000
    z = discrete_laplace(np.random.default_rng([t, s]), t, s, n)
    q = math.exp(-s / t)
    for v in range(-6, 7):
        p = (1 - q) / (1 + q) * q ** abs(v)
        assert abs((z == v).mean() - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12, v


def test_releases_lie_on_one_lattice_whatever_the_answer():
    """Mironov's attack needs outputs that one answer can reach and its neighbour cannot.
    On the lattice both reach every point: the outputs at count 0 and 1 are multiples of
    γ, and the log-ratio of any output between the two answers is at most ε."""
    mech = LaplaceMechanism(0.5, 1.0)
    rng = np.random.default_rng(5)
    for answer in (0.0, 1.0):
        out = mech.add(np.full(5000, answer), mech.noise(rng, 5000))
        steps = out / mech.lattice
        assert np.array_equal(steps, np.round(steps))
        ratio = mech.log_likelihood(out, 0.0) - mech.log_likelihood(out, 1.0)
        assert np.abs(ratio).max() <= 0.5


def test_the_lattice_scale_covers_the_sensitivity_exactly():
    """σ in lattice steps is at least (⌈Δ/γ⌉ + 2p)/ε in exact rational arithmetic."""
    rng = np.random.default_rng(11)
    for _ in range(500):
        eps = float(10 ** rng.uniform(-4, 2))
        sens = float(10 ** rng.uniform(-3, 3))
        p = int(rng.integers(1, 50))
        m = LaplaceMechanism(eps, sens, coordinates=p)
        t, s = m._steps
        need = Fraction(math.ceil(sens / m.lattice) + 2 * p) / Fraction(eps)
        assert Fraction(t, s) >= need
        assert m.scale >= sens / eps


# --- budgets -----------------------------------------------------------------------------


def test_shares_never_sum_above_epsilon_over_thousands_of_budgets():
    rng = np.random.default_rng(3)
    for _ in range(3000):
        eps = float(10 ** rng.uniform(-6, 6))
        t = int(rng.integers(1, 12))
        parts = within(eps, [eps / t * 0.3, eps / t * 0.7], t)
        assert sum(Fraction(x) for x in parts) * t <= Fraction(eps)
        first, rest = split(eps, float(rng.uniform(0.01, 0.99)))
        assert Fraction(first) + Fraction(rest) <= Fraction(eps)
        assert Fraction(rest) + Fraction(remaining(rest, [rest / 3])) > 0


def test_no_fit_books_more_than_epsilon_at_hundreds_of_random_budgets():
    """Every planned fit, at random ε: the ledger's total is at most ε, not by a rounding
    error either, and within 1e-9 of it (nothing wasted)."""
    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, (120, 3))
    fits = [
        methods.auto,
        methods.fit_dplloyd,
        methods.fit_dplloyd_improved,
        lambda *a: methods.fit_dplloyd_improved(*a, clip=0.3),
        lambda *a: methods.fit_eugkm(*a, init_sets=2, max_iter=3),
        lambda *a: methods.fit_hybrid(*a, init_sets=2, max_iter=3),
        methods.fit_private_mean,
        lambda *a: methods.fit_lsh_splits(*a, n_init=1),
    ]
    for i in range(400):
        eps = float(10 ** rng.uniform(-3, 1.5))
        fit = fits[i % len(fits)]
        ledger = fit(X, 3, eps, np.random.default_rng(i)).ledger
        assert ledger.total_epsilon <= eps, (i, eps)
        assert ledger.total_epsilon == pytest.approx(eps, rel=1e-9)


# --- the plan ----------------------------------------------------------------------------


def test_no_decision_reads_the_exact_count(monkeypatch):
    """With Ñ fixed, auto's method, its ledger's shape and (for improved DPLloyd, whose
    passes are planned) its iteration count are the same at every N: nothing but Ñ told
    them how many records there are. (The grid's Lloyd runs until its noisy synopsis
    converges: that count is post-processing of the synopsis.)"""
    monkeypatch.setattr(plan, "release_count", lambda Z, eps, rng, ledger, r=1.0: 400.0)
    for d, planned in ((2, False), (4, True)):
        seen = set()
        for N in (23, 60, 200, 459, 1148, 3000):
            X = pair_at(N, d)[0]
            res = methods.auto(X, 2, 1.0, np.random.default_rng(0))
            shape = [(e.purpose, e.round) for e in res.ledger.entries]
            seen.add((res.info["chosen"], res.iterations if planned else 0, repr(shape)))
        assert len(seen) == 1, d


def test_the_count_is_released_once_and_refusals_come_first():
    X = pair_at(300, 2)[0]
    released = []
    with observe(released.append):
        res = methods.auto(X, 2, 1.0, np.random.default_rng(0))
    assert [r.purpose for r in released].count(plan.PURPOSE) == 1
    assert res.ledger.entries[0].purpose == plan.PURPOSE
    bad = X.copy()
    bad[-1, 0] = np.nan
    for fit in (methods.auto, methods.fit_eugkm, methods.fit_private_mean):
        released.clear()
        with observe(released.append), pytest.raises(ValueError, match="non-finite"):
            fit(bad, 2, 1.0, np.random.default_rng(0))
        assert released == []
    released.clear()
    with observe(released.append), pytest.raises(ValueError, match="depth"):
        methods.fit_lsh_splits(X, 2, 1.0, np.random.default_rng(0), depth=100)
    assert released == []


@pytest.mark.parametrize("N", [0, 1, 3])
def test_every_private_method_releases_k_centres_below_k_records(N):
    """N is private, so whether N < k (or N = 0, the neighbour of every one-record set)
    is not a branch: with public bounds every method whose ledger proves its ε releases
    k finite centres within ε from N records. A method that books an exact read of N as
    ε = ∞ (GkM, diffprivlib as shipped) may refuse; an optional comparator that is not
    installed is skipped."""
    from dpcluster.estimator import GAUSSIAN_METHODS, central_methods

    rng = np.random.default_rng(N)
    X, enough = rng.uniform(-1, 1, (N, 2)), rng.uniform(-1, 1, (10, 2))
    ran = []
    for name in central_methods():
        kw = {"delta": 1e-6} if name in GAUSSIAN_METHODS and name != "auto" else {}
        model = DPKMeans(4, epsilon=0.7, method=name, bounds=(-1, 1), random_state=0, **kw)
        try:
            proves = model.fit(enough).ledger_.total_epsilon <= 0.7
        except ImportError:
            continue
        if not proves:
            continue
        model.fit(X)
        assert model.cluster_centers_.shape == (4, 2), name
        assert np.all(np.isfinite(model.cluster_centers_)), name
        assert model.ledger_.total_epsilon <= 0.7, name
        ran.append(name)
    assert {"auto", "dplloyd", "eugkm", "lsh_splits", "dpm"} <= set(ran)


# --- switch points -----------------------------------------------------------------------


def _paths(N: int, k: int, d: int, eps: float, n: int, side: int) -> list[str]:
    D, D2 = pair_at(N, d)
    data = D2 if side else D
    out = []
    for i in range(n):
        rng = np.random.default_rng([side, N, i])
        model = DPKMeans(k, eps, bounds=(-1, 1), random_state=rng).fit(data)
        res = type("R", (), {})()
        res.centroids, res.ledger, res.iterations = (
            model._centres_scaled,
            model.ledger_,
            model.n_iter_,
        )
        res.info = {"chosen": model.method_}
        out.append(path_of(res))
    return out


@pytest.mark.statistical
@pytest.mark.parametrize(
    "rule,k,d,eps",
    [
        ("auto's method", 2, 2, 1.0),
        ("improved DPLloyd's passes t", 8, 10, 1.0),
        ("auto's method", 4, 3, 0.5),
        ("the clip share", 3, 5, 0.5),
        ("EUGkM's grid m", 3, 2, 2.0),
    ],
)
def test_dpkmeans_discrete_outputs_do_not_tell_neighbours_apart_at_switch_points(rule, k, d, eps):
    """A scan of N finds where the rule would switch; there, the method DPKMeans runs, its
    iteration count, its ledger's shape and its number of distinct centres certify no
    log-ratio above ε (95 % lower bound on 150 + 150 held-out trials)."""
    N = switch_points(rules(k, d, eps)[rule])[0]
    a, b = _paths(N, k, d, eps, 300, 0), _paths(N, k, d, eps, 300, 1)
    assert discrete_epsilon(a, b) <= eps


def test_the_audit_sees_the_exact_count_rule_and_passes_the_plan():
    """Before the plan, auto chose on the exact N: at its first switch (N = 22 → 23 at
    k = d = 2, ε = 1) the audit certifies a violation of the provable ε; the planned auto
    at the same scan's switch is consistent."""
    before = audit_target(planted.exact_n_target(), 1.0)
    assert before["verdict"] == "violation of provable ε"
    assert before["epsilon_lb_discrete"] > 3.0
    assert "white-box refused" in before["note"]
    from dpcluster.audit.run import _targets

    after = audit_target(_targets()["auto @ auto's method"], 1.0)
    assert after["verdict"] == "consistent"
    assert after["epsilon_lb_discrete"] <= 1.0


def test_a_planned_grid_is_capped_not_refused_after_the_count():
    """Ñ is spent before M is known: a grid above max_cells is capped to the largest that
    fits (a decision from Ñ and the public cap), never refused after a release."""
    X = pair_at(2000, 3)[0]
    res = methods.fit_eugkm(X, 3, 1e5, np.random.default_rng(0), init_sets=2, max_cells=1000)
    assert res.info["m"] == 10 and res.info["cells"] == 1000
    assert res.ledger.total_epsilon <= 1e5
