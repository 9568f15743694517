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


def _spec_file(tmp_path, **top):
    import yaml

    raw = {
        "name": "p",
        "seed": 1,
        "datasets": [{"name": "synthetic", "params": {"N": 200, "k": 3, "d": 2}}],
        "epsilon": [1.0],
        "algorithms": [{"name": "dplloyd"}],
        "plot": {"kind": "none"},
        **top,
    }
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(raw))
    return str(path)


@pytest.mark.parametrize(
    ("top", "key", "words"),
    [
        ({"pipeline": "estimator", "init": {"sets": 3}}, "init", "belongs to the papers'"),
        ({"metrics": ["cost"]}, "metrics[0]", "belongs to pipeline: estimator"),
        (
            {"pipeline": "estimator", "algorithms": [{"name": "lloyd"}]},
            "algorithms[0].name",
            "kmeans, its baseline",
        ),
    ],
)
def test_a_key_of_the_other_pipeline_is_named_as_such(tmp_path, top, key, words):
    from dpcluster.errors import SpecError
    from dpcluster.spec import load

    with pytest.raises(SpecError) as err:
        load(_spec_file(tmp_path, **top))
    assert f"'{key}'" in str(err.value) and words in str(err.value)
    assert "Did you mean 'lloyd'" not in str(err.value)


def test_dry_run_says_which_cells_are_done_and_estimates_the_rest(tmp_path):
    path = _spec_file(tmp_path, algorithms=[{"name": "dplloyd", "repeat": 2}])
    first = run_cli("run", path, "--dry-run", cwd=tmp_path)
    assert "0 of 1 cells already done" in first.stdout
    assert "estimate for the 1 cells" in first.stdout
    assert run_cli("run", path, "-q", cwd=tmp_path).returncode == 0
    again = run_cli("run", path, "--dry-run", cwd=tmp_path)
    assert "1 of 1 cells already done" in again.stdout and "nothing to compute" in again.stdout


def test_verify_names_a_tampered_cell_in_a_folder_copied_away_from_its_spec(tmp_path):
    import shutil

    work = tmp_path / "work"
    work.mkdir()
    path = _spec_file(work, algorithms=[{"name": "dplloyd", "repeat": 2}])
    assert run_cli("run", path, "-q", cwd=work).returncode == 0
    copy = tmp_path / "elsewhere" / "p"
    shutil.copytree(work / "results" / "p", copy)
    shutil.rmtree(work)  # its spec is gone
    cell = sorted((copy / "cells").glob("*.csv"))[0]
    cell.write_text(cell.read_text() + "0,0,0\n")
    proc = run_cli("verify", str(copy), cwd=tmp_path)
    assert proc.returncode == 5
    assert f"{cell.name}: sha256" in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"method": "eugkm", "delta": 1e-6, "bounds": (-1, 1)}, "delta=1e-06 is not used"),
        ({"method": "eugkm", "radius": 1.0}, "runs in the ball's bounding box"),
        ({"method": "dplloyd", "radius": 100.0}, "a tenth|less than 10%"),
    ],
)
def test_what_a_fit_does_not_use_or_cannot_use_well_is_said(kwargs, words):
    with pytest.warns(UserWarning, match=words):
        DPKMeans(2, epsilon=1, random_state=0, **kwargs).fit(X)


def test_internal_arguments_are_not_parameters_and_list_shows_the_estimators():
    from dpcluster.estimator import central_methods

    for name, info in central_methods().items():
        assert not {"zcdp", "clip_radius"} & set(info.fit.params), name
        assert all(p.doc for p in info.fit.params.values()), name
    with pytest.raises(ValueError, match="is not a parameter"):
        DPKMeans(2, epsilon=1, bounds=(-1, 1), method="dplloyd", method_params={"zcdp": 1.0}).fit(X)
    listed = run_cli("list").stdout
    block = listed[listed.index("  dplloyd_improved ") :].split("\n  dpm ")[0]
    assert "pipeline: estimator and DPKMeans(method_params=...) take:" in block
    assert "clip = 0.0" in block
