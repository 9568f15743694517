"""Promises the docs make at the edges of what a user may give: every documented value
runs, and every refused one is named in one line."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcluster import DPKMeans
from dpcluster.plugins import PluginError, external_claim
from dpcluster.privacy import Ledger
from tests.cli import run_cli

X = np.random.default_rng(0).uniform(-1, 1, (120, 2))


@pytest.mark.parametrize("method", ["dplloyd", "pe_lloyd", "dpm", "lsh_splits_gaussian"])
def test_a_subnormal_delta_inside_the_documented_range_runs(method):
    km = DPKMeans(2, epsilon=1, delta=1e-310, radius=1, method=method, random_state=0).fit(X)
    assert km.ledger_.total_epsilon <= 1 and km.ledger_.total_delta <= 1e-310


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"radius": 5e-324}, "radius=5e-324"),
        ({"radius": 1.0, "center": [0.0, 0.0, 0.0]}, "center must be one number or one per"),
    ],
)
def test_a_domain_that_cannot_be_mapped_is_named(kwargs, words):
    with pytest.raises(ValueError, match=words):
        DPKMeans(2, epsilon=1, **kwargs).fit(X)


def test_an_unknown_method_lists_them_sorted_with_the_closest():
    with pytest.raises(ValueError) as err:
        DPKMeans(2, epsilon=1, method="dpllyod").fit(X)
    text = str(err.value)
    assert "Did you mean 'dplloyd'?" in text
    listed = text[text.index("'auto'") : text.index(" (Did")].split(", ")
    assert listed == sorted(listed)


@pytest.mark.parametrize("value", ["noise", 0, 2.5])
def test_min_count_noise_is_accepted_written_out(value):
    for method in ("dplloyd", "dplloyd_improved"):
        params = {"min_count": value}
        DPKMeans(2, epsilon=1, bounds=(-1, 1), method=method, method_params=params).fit(X)


@pytest.mark.parametrize(
    ("epsilon", "delta"), [(math.nan, 0.0), (-1.0, 0.0), (0.0, 0.0), (1.0, 1.5), (1.0, math.nan)]
)
def test_an_external_claim_must_be_a_budget(epsilon, delta):
    with pytest.raises(PluginError, match="external_claim"):
        external_claim(Ledger(), "their fit", epsilon, delta)


def test_a_random_state_seeds_with_more_than_31_bits():
    from dpcluster.estimator import _rng

    a = _rng(np.random.RandomState(7)).integers(0, 2**63, 4)
    b = np.random.default_rng(np.random.RandomState(7).randint(0, 2**31 - 1)).integers(0, 2**63, 4)
    assert not np.array_equal(a, b)
    assert np.array_equal(a, _rng(np.random.RandomState(7)).integers(0, 2**63, 4))


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--delta", "nan", "-a", "dplloyd"), "--delta"),
        (("-a", ","), "names no target"),
    ],
)
def test_audit_refuses_what_would_audit_nothing_or_crash(tmp_path, args, words):
    proc = run_cli("audit", *args, "--out", str(tmp_path / "a"), cwd=tmp_path)
    assert proc.returncode == 2 and words in proc.stderr
    assert "Traceback" not in proc.stderr
