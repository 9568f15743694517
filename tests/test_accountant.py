"""The budget across fits (dpcluster/privacy/accountant.py): one budget, shared and never
copied, refused before any release, summed exactly."""

from __future__ import annotations

import copy
import math
import pickle
import threading

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import cross_validate

from dpcluster import DPKMeans
from dpcluster.privacy import observe
from dpcluster.privacy.accountant import BudgetAccountant, BudgetExceeded


def _blobs(n=600, d=3, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.6, 0.6, (3, d))
    return np.clip(centres[rng.integers(0, 3, n)] + 0.05 * rng.standard_normal((n, d)), -1, 1)


class _Ledger:
    def __init__(self, epsilon, delta=0.0):
        self.total_epsilon, self.total_delta = epsilon, delta


def test_clone_and_deepcopy_share_the_accountant():
    acc = BudgetAccountant(1.0)
    km = DPKMeans(3, epsilon=0.6, bounds=(-1, 1), accountant=acc)
    assert clone(km).accountant is acc
    assert copy.deepcopy(acc) is acc and copy.copy(acc) is acc


def test_cross_validate_runs_one_fit_of_a_budget_that_holds_one():
    acc = BudgetAccountant(1.0)
    km = DPKMeans(3, epsilon=0.6, bounds=(-1, 1), accountant=acc, random_state=0)
    with pytest.warns(FitFailedWarning, match="2 fits failed"):
        out = cross_validate(km, _blobs(), cv=3, error_score=np.nan)
    assert np.count_nonzero(np.isfinite(out["test_score"])) == 1
    assert len(acc.spent) == 1 and acc.spent_epsilon <= 0.6


def test_threads_sharing_one_accountant_release_nothing_when_refused():
    acc = BudgetAccountant(1.0)
    X = _blobs()
    outcomes, releases = [], []
    barrier = threading.Barrier(4)

    def fit(seed):
        seen = []
        barrier.wait()
        with observe(seen.append):
            try:
                DPKMeans(3, epsilon=0.6, bounds=(-1, 1), accountant=acc, random_state=seed).fit(X)
                outcomes.append("fit")
            except BudgetExceeded:
                outcomes.append("refused")
        releases.append((outcomes[-1], len(seen)))

    threads = [threading.Thread(target=fit, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["fit", "refused", "refused", "refused"]
    assert all(n == 0 for what, n in releases if what == "refused")
    assert all(n > 0 for what, n in releases if what == "fit")
    assert acc.spent_epsilon <= 0.6


def test_sums_are_exact():
    acc = BudgetAccountant(0.47)
    acc.spend(_Ledger(0.3))
    assert 0.3 + 0.17 <= 0.47  # the rounded sum would pass
    with pytest.raises(BudgetExceeded):
        acc.check(0.17)
    with pytest.raises(BudgetExceeded):
        acc.reserve(0.17)
    left = acc.remaining[0]
    assert left <= 0.47 - 0.3 and acc.reserve(left).epsilon == left


@pytest.mark.parametrize("bad", [math.nan, -0.1, math.inf, True, "0.1", None])
def test_check_and_reserve_refuse_what_is_not_an_amount(bad):
    acc = BudgetAccountant(1.0, 1e-6)
    for call in (acc.check, acc.reserve):
        with pytest.raises((TypeError, ValueError)):
            call(bad)
        with pytest.raises((TypeError, ValueError)):
            call(0.1, bad)
    assert acc.spent == ()


@pytest.mark.parametrize(
    ("epsilon", "delta"), [(True, 0.0), (math.nan, 0.0), (0.0, 0.0), (-1.0, 0.0), (1.0, 1.0)]
)
def test_a_budget_must_be_a_budget(epsilon, delta):
    with pytest.raises((TypeError, ValueError)):
        BudgetAccountant(epsilon, delta)


def test_spent_cannot_be_edited_and_the_budget_cannot_be_reset():
    acc = BudgetAccountant(1.0)
    acc.spend(_Ledger(0.5))
    with pytest.raises(AttributeError):
        acc.spent.append((-10.0, 0.0))
    with pytest.raises(AttributeError):
        acc.epsilon = 100.0
    assert acc.spent == ((0.5, 0.0),)


def test_a_reservation_settles_once_and_never_above_its_hold():
    acc = BudgetAccountant(1.0)
    hold = acc.reserve(0.6)
    with pytest.raises(BudgetExceeded):
        hold.settle(_Ledger(0.7))
    assert acc.spent == ((0.6, 0.0),)  # the hold stays booked
    hold.settle(_Ledger(0.55))
    assert acc.spent == ((0.55, 0.0),)
    with pytest.raises(ValueError, match="already settled"):
        hold.settle(_Ledger(0.1))


def test_an_accountant_cannot_cross_processes():
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(BudgetAccountant(1.0))


def test_diffprivlib_is_refused_up_front():
    acc = BudgetAccountant(10.0)
    seen = []
    with observe(seen.append), pytest.raises(ValueError, match="cannot book diffprivlib"):
        DPKMeans(3, epsilon=1, bounds=(-1, 1), method="diffprivlib", accountant=acc).fit(_blobs())
    assert seen == [] and acc.spent == ()
