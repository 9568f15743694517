"""The privacy-loss-distribution ledger (dpcluster/privacy/pld.py, docs/privacy.md "PLD"):
Gaussian fits calibrate on it, their ledgers book it, and the exported DpEvent recomputes
it; pure-ε ledgers do not change."""

from __future__ import annotations

import math
from unittest import mock

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant

import dpcluster.privacy.gaussian as g
from dpcluster import DPKMeans
from dpcluster.algorithms import methods
from dpcluster.audit.run import _targets, audit_target
from dpcluster.estimator import GAUSSIAN_METHODS
from dpcluster.privacy import pld
from dpcluster.privacy.gaussian import zcdp_budget
from tests import planted

X = np.random.default_rng(3).normal(size=(600, 3))
BOUNDS = (-4.0, 4.0)


def _google(event, delta: float) -> float:
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(event)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("rho,delta", [(0.01, 1e-6), (0.1, 1e-6), (1.0, 1e-9), (5.0, 1e-5)])
def test_the_gaussian_group_in_closed_form_is_dp_accountings_pld(rho, delta):
    """μ-GDP's analytic curve at μ = √(2ρ) against dp-accounting's pessimistic PLD of the
    same Gaussian: equal to the PLD's discretization, never above it."""
    ours = pld.gaussian_epsilon(rho, delta)
    google = _google(dpa.GaussianDpEvent(1.0 / math.sqrt(2 * rho)), delta)
    assert ours <= google + 1e-12
    assert ours == pytest.approx(google, rel=2e-3)


@pytest.mark.parametrize("rho,pure", [(0.02, (0.05,)), (0.5, (0.1, 0.2)), (5.0, (1.0,))])
def test_the_gaussian_pld_built_here_bounds_the_exact_curve_within_a_grid_step(rho, pure):
    """pld.gaussian_pld rounds the exact loss N(μ²/2, μ²) up to the grid: alone, its ε at δ
    is at or above the closed form and within two grid steps of it; beside pure
    releases, at or above dp-accounting's connect-the-dots PLD of the same Gaussian and
    within two grid steps of it."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    h, delta = pld.grid_interval(rho, math.fsum(pure), min(pure)), 1e-6
    alone = pld.gaussian_pld(rho, h).get_epsilon_for_delta(delta)
    exact = pld.gaussian_epsilon(rho, delta)
    assert exact - 1e-9 <= alone <= exact + 2 * h
    google = dpa_pld.from_gaussian_mechanism(
        standard_deviation=1.0 / math.sqrt(2.0 * rho), value_discretization_interval=h
    )
    for eps in pure:
        google = google.compose(
            dpa_pld.from_privacy_parameters(
                common.DifferentialPrivacyParameters(eps, 0.0), value_discretization_interval=h
            )
        )
    ours = pld.composed_epsilon(pure, rho, delta)
    theirs = google.get_epsilon_for_delta(delta)
    assert theirs - 1e-12 <= ours <= theirs + 2 * h


def test_many_gaussians_compose_to_one():
    """20 Gaussians of σ/Δ = 10 are one of σ/Δ = 10/√20 (GDP composes exactly): the issue's
    first row, ε ≈ 1.995 at δ = 1e-6 against 2.142 by the zCDP conversion."""
    rho = 20 * 1.0 / (2 * 10.0**2)
    ours = pld.gaussian_epsilon(rho, 1e-6)
    google = _google(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(10.0), 20), 1e-6)
    assert ours == pytest.approx(google, rel=2e-3) and ours == pytest.approx(1.995, abs=2e-3)
    assert g.zcdp_epsilon(rho, 1e-6) > 1.07 * ours


def test_pure_releases_compose_as_randomised_response_pairs():
    """A pure ε-DP release enters as binary randomised response at ε, the pair every ε-DP
    mechanism is dominated by: one alone is (ε, 0); 21 at 1/21 compose below their sum
    and below Rényi's 0.875, and above the Laplace-specific 0.837 (a weaker, valid bound)."""
    assert pld.composed_epsilon((0.3,), 0.0, 1e-6) == pytest.approx(0.3, abs=2e-4)
    many = pld.composed_epsilon((1 / 21,) * 21, 0.0, 1e-6)
    assert 0.837 < many < 0.875


def test_gaussian_dplloyd_draws_at_least_6_percent_less_noise():
    """At (ε, δ) = (1, 1e-6), DPLloyd's ρ comes from the PLD: σ ∝ 1/√ρ is ≥ 6 % below
    the zCDP conversion's."""
    rho = methods.gaussian_budget(1.0, 1e-6)["zcdp"]
    assert math.sqrt(zcdp_budget(1.0, 1e-6) / rho) <= 0.94
    assert pld.gaussian_epsilon(rho, 1e-6) <= 1.0


@pytest.mark.parametrize("method", GAUSSIAN_METHODS)
def test_every_gaussian_ledger_is_its_events_pld_epsilon(method):
    """A fit's total_epsilon equals, within 1 %, the PLD ε of its exported DpEvent, at
    most ε; the event recomputes with dp-accounting's own accountant where its parts are
    Gaussian only (randomised response needs our add/remove evaluator, pld.event_epsilon).
    """
    est = DPKMeans(4, 1.0, delta=1e-6, method=method, bounds=BOUNDS, random_state=2).fit(X)
    ledger = est.ledger_
    event = ledger.dp_event()
    assert isinstance(event, dpa.ComposedDpEvent)
    assert ledger.total_epsilon <= 1.0
    assert ledger.total_epsilon == pytest.approx(1.0, rel=1e-6)
    assert pld.event_epsilon(event, 1e-6) == pytest.approx(ledger.total_epsilon, rel=0.01)
    gaussians = [e for e in event.events if not isinstance(e, dpa.RandomizedResponseDpEvent)]
    if len(gaussians) == len(event.events):
        assert _google(event, 1e-6) == pytest.approx(ledger.total_epsilon, rel=0.01)


def test_a_results_rows_ledger_gives_the_same_event():
    est = DPKMeans(4, 1.0, delta=1e-6, method="dplloyd", bounds=BOUNDS, random_state=0).fit(X)
    assert pld.ledger_event(est.ledger_.to_dict()) == est.ledger_.dp_event()


def test_pure_epsilon_ledgers_do_not_change():
    """δ = 0: no Gaussian release, no PLD; the total is the sum of the releases, as before."""
    est = DPKMeans(4, 1.0, method="dplloyd", bounds=BOUNDS, random_state=0).fit(X)
    ledger = est.ledger_
    assert ledger.total_epsilon == math.fsum(e.epsilon for e in ledger.entries)
    assert all(
        isinstance(e, (dpa.RandomizedResponseDpEvent, dpa.SelfComposedDpEvent))
        for e in ledger.dp_event().events
    )


def test_a_sigma_5_percent_below_the_pld_bound_is_a_provable_violation():
    """The audit checks every release's drawn noise against what it books, exactly: a
    Gaussian that draws σ 5 % too small is a violation of provable ε at once, where a
    statistical bound would need millions of trials to see it."""
    target = _targets()["dplloyd (gaussian)"]
    good = audit_target(target, 1.0, trials=400)
    assert good["verdict"] == "consistent"
    with mock.patch.object(g, "GaussianMechanism", planted.thin_sigma_gaussian(0.95)):
        bad = audit_target(target, 1.0, trials=400)
    assert bad["verdict"] == "violation of provable ε"
    assert "its noise gives ρ" in bad["note"]


@pytest.mark.slow
def test_no_gaussian_fit_books_more_than_epsilon_at_random_budgets():
    """Every Gaussian fit at random (ε, δ): the ledger's total is at most ε (calibration
    and ledger evaluate the same PLD on the same ρ grid) and within 1 % of it (the PLD's
    loss grid of 1e-3 leaves a step of slack at the smallest ε)."""
    rng = np.random.default_rng(11)
    Z = rng.uniform(-1, 1, (200, 3))
    fits = [
        methods.auto,
        methods.fit_dplloyd,
        methods.fit_dplloyd_improved,
        lambda *a, **k: methods.fit_dplloyd_improved(*a, clip=0.3, **k),
        methods.fit_dplloyd_capped,
        methods.fit_lsh_splits_gaussian,
        methods.fit_dpm,
        methods.fit_pe_lloyd,
    ]
    for i in range(32):
        eps = float(10 ** rng.uniform(-1.5, 1))
        delta = float(10 ** rng.uniform(-10, -4))
        fit = fits[i % len(fits)]
        ledger = fit(Z, 3, eps, np.random.default_rng(i), delta=delta).ledger
        assert ledger.total_epsilon <= eps, (i, eps, delta)
        assert ledger.total_epsilon >= 0.99 * eps, (i, eps, delta)


def test_an_accountant_composes_gaussian_fits_by_pld():
    """A budget of (3, 1e-5): basic composition holds five fits of (0.6, 1e-7); composed by
    PLD (their Gaussian groups add their ρ) it holds many more, never above ε at the
    budget's δ, and it says which composition it used."""
    from dpcluster.privacy.accountant import BudgetAccountant, BudgetExceeded

    counts = {}
    for how in ("basic", "pld"):
        acc = BudgetAccountant(3.0, 1e-5, composition=how)
        assert acc.composition == how
        n = 0
        with pytest.raises(BudgetExceeded, match=f"by {how} composition"):
            while n < 40:
                DPKMeans(3, 0.6, delta=1e-7, method="dplloyd", bounds=BOUNDS, accountant=acc).fit(X)
                n += 1
        counts[how] = n
        assert acc.spent_epsilon <= 3.0
    assert counts["basic"] == 5 and counts["pld"] >= 15
    with pytest.raises(ValueError, match="delta > 0"):
        BudgetAccountant(1.0, composition="pld")
    with pytest.raises(ValueError, match="composition"):
        BudgetAccountant(1.0, 1e-6, composition="rdp")
