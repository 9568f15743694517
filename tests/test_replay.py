"""The replay audit (dpcluster/audit/replay.py): built-ins replay clean, every planted bug
of tests/mutants.py is caught, diffprivlib as shipped is a violation that names its
release, and the hook hands a replayed run the recorded values."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from dpcluster.audit.catalogue import targets
from dpcluster.audit.generic import entry_target
from dpcluster.audit.replay import neighbour_pairs, replay_target
from dpcluster.audit.replay_report import replay_exit, run_replay
from dpcluster.cli import main
from dpcluster.privacy import LaplaceMechanism, observe, release

from . import mutants

#: one of each kind: batched Lloyd, PE-Lloyd (its refinement's L1 sensitivity is the
#: domain's diameter: the replay found it was the radius), a tree with its exponential
#: splits, the zCDP Gaussian, a ledger that books an exact read, a local encoding, and GkM's
#: shuffle (not replayable)
SAMPLE = (
    "dplloyd",
    "pe_lloyd",
    "dpm",
    "dplloyd (gaussian)",
    "eugkm",
    "dpbv (one attribute)",
    "gkm",
)
EXPECTED = {"eugkm": "books ∞", "gkm": "not replayable"}


@pytest.mark.parametrize("name", SAMPLE)
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_builtin_targets_replay_clean(name, epsilon):
    row = replay_target(targets()[name], epsilon)
    assert row["verdict"] == EXPECTED.get(name, "clean"), row["finding"]
    if row["verdict"] != "not replayable":
        assert row["pairs"] >= 2 and row["releases"] >= 1
        assert 0 < row["worst_ratio"] <= 1 + 1e-9


def _planted(bug: str):
    delta = 1e-6 if bug in mutants.GAUSSIAN_BUGS else 0.0
    params = {"bug": bug, "delta": delta}
    return entry_target("planted_kmeans", mutants.planted_kmeans, params, trials=2, delta=delta)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_clean_plugin_replays_clean(delta):
    target = entry_target(
        "planted_kmeans", mutants.planted_kmeans, {"bug": "", "delta": delta}, delta=delta
    )
    row = replay_target(target, 1.0)
    assert row["verdict"] == "clean", row["finding"]


def test_the_corpus_has_at_least_twenty_bugs():
    assert len(mutants.BUGS) >= 20
    assert mutants.GAUSSIAN_BUGS <= set(mutants.BUGS)


@pytest.mark.parametrize("bug", sorted(mutants.BUGS))
def test_replay_catches_every_planted_bug(bug):
    row = replay_target(_planted(bug), 1.0)
    assert row["verdict"] == "violation", f"{bug}: {row['finding']}"
    assert row["finding"]
    # a violation in a plugin whose ledger proves a finite ε is a bug: exit 4
    assert replay_exit(_table([row])) == 4


def _table(rows):
    import pandas as pd

    from dpcluster.audit.replay_report import COLUMNS

    return pd.DataFrame(rows, columns=COLUMNS)


def test_findings_name_the_release_and_its_source_line():
    row = replay_target(_planted("count_sensitivity_halved"), 1.0)
    assert "'cluster counts'" in row["finding"] and "mutants.py:" in row["finding"]
    assert "above the declared" in row["finding"]


def test_diffprivlib_as_shipped_is_a_violation_naming_its_release():
    from dpcluster.algorithms.comparators import diffprivlib_problem

    if diffprivlib_problem() is not None:
        pytest.skip("diffprivlib 0.6.6 is not installed")
    row = replay_target(targets()["diffprivlib"], 1.0)
    assert row["verdict"] == "violation"
    assert "diffprivlib cluster count (GeometricFolded)" in row["finding"]
    assert "k_means.py" in row["finding"]
    assert "split is swapped" in row["finding"]  # the documented split, reversed
    assert "differs between neighbours: epsilon" in row["finding"]  # T read from the exact N
    assert replay_exit(_table([row])) == 3  # its ledger books the exact reads as ∞


def test_release_returns_what_the_observer_substitutes():
    mech = LaplaceMechanism(1.0, 1.0)
    assert release(mech, "x", 5.0, lambda d: 0.0) == 5.0  # no observer: unchanged
    with observe(lambda rel: None):
        assert release(mech, "x", 5.0, lambda d: 0.0) == 5.0
    with observe(lambda rel: 7.0):
        assert release(mech, "x", 5.0, lambda d: 0.0) == 7.0


def test_pairs_cover_corners_removal_and_order():
    labels = [label for label, _, _ in neighbour_pairs(targets()["dplloyd"], 1.0)]
    assert any("corner (1" in x for x in labels) and any("corner (−1" in x for x in labels)
    assert any("last record" in x for x in labels) and any("first" in x for x in labels)
    for _, D, D2 in neighbour_pairs(targets()["dplloyd"], 1.0):
        assert abs(len(D) - len(D2)) == 1


def test_replay_is_deterministic_and_jobs_free():
    chosen = [targets()["dplloyd_improved"], targets()["private_mean"]]
    one = run_replay(chosen, [1.0], jobs=1).drop(columns="seconds")
    two = run_replay(chosen, [1.0], jobs=2).drop(columns="seconds")
    assert one.equals(two)


def test_cli_replay_writes_its_files_and_exits_0(tmp_path):
    out = tmp_path / "replay"
    res = CliRunner().invoke(
        main, ["audit", "--replay", "-a", "dplloyd_improved", "--epsilon", "1", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert (out / "replay.csv").is_file() and (out / "replay.md").is_file()
    assert "clean" in res.output and "violation" not in res.output  # every target covering it


def test_pe_lloyd_refinement_sensitivity_is_the_domain_diameter():
    """A record at one corner and its centre at the opposite one: the clipped displacement's
    L1 norm is min(√d·τ, 2Σr), not min(√d·τ, Σr)."""
    from dpcluster.algorithms.refine import clipped_stats, step_mechanisms

    d, tau = 2, 3.0
    X = np.ones((1, d))
    C = -np.ones((1, d))
    _, sums = clipped_stats(X, C, tau)
    (_, sum_mech), *_ = step_mechanisms(1.0, 0.0, 1, d, tau, 2.0 * d)
    assert np.abs(sums).sum() <= sum_mech.sensitivity
    assert np.abs(sums).sum() > d  # the bound the radius alone gave would not hold
