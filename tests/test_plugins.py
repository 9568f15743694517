"""Your data and your algorithm, without editing dpcluster: a csv dataset next to the spec,
an out-of-tree plugin, --set overrides, validate, run, report and audit, through the CLI."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from dpcluster import harness
from dpcluster.plugins import Param, algorithm
from dpcluster.privacy import LaplaceMechanism, Ledger
from dpcluster.spec import parse
from tests.cli import run_cli as _cli

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "plugin"


@pytest.fixture
def example(tmp_path):
    folder = tmp_path / "mine"
    shutil.copytree(EXAMPLE, folder)
    return folder


@pytest.mark.slow
def test_plugin_and_csv_run_validate_report_and_audit(example, tmp_path):
    sets = [
        "--set",
        "seed=3",
        "--set",
        "epsilon=[1.0]",
        "--set",
        "algorithms.split_dplloyd:split_dplloyd.repeat=4",
    ]
    ok = _cli("validate", "mine/spec.yaml", *sets, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    run = _cli("run", "mine/spec.yaml", *sets, "--jobs", "2", "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (out,) = (tmp_path / "results").glob("plugin-example--set-*")
    meta = json.loads((out / "meta.json").read_text())
    assert meta["overrides"] == [
        "seed=3",
        "epsilon=[1.0]",
        "algorithms.split_dplloyd:split_dplloyd.repeat=4",
    ]
    import pandas as pd

    summary = pd.read_csv(out / "summary.csv")
    mine = summary[summary["algorithm"] == "split_dplloyd:split_dplloyd"]
    assert len(mine) == 2 and (mine["n"] == 4).all()
    assert np.allclose(mine["epsilon_provable_max"], 1.0) and (summary["bounds"] == "public").all()
    assert (summary["dataset_label"] == "Four blobs").all()
    listed = json.loads(_cli("results", "--json", cwd=tmp_path).stdout)
    assert [(r["spec_name"], r["cells_done"] == r["cells_total"] > 0) for r in listed] == [
        ("plugin-example", True)
    ]
    assert json.loads(_cli("validate", "mine/spec.yaml", "--json", cwd=tmp_path).stdout)["ok"]
    report = _cli("report", cwd=tmp_path)
    assert report.returncode == 0 and out.name in (tmp_path / "results" / "REPORT.md").read_text()
    audit = _cli(
        "audit", "mine/spec.yaml", "--trials", "300", "--epsilon", "1", "--out", "aud", cwd=tmp_path
    )
    assert audit.returncode == 0, audit.stdout + audit.stderr
    table = pd.read_csv(tmp_path / "aud" / "audit.csv")
    plugin_rows = table[table["algorithm"].str.startswith("split_dplloyd")]
    assert len(plugin_rows) == 2 and (plugin_rows["verdict"] == "consistent").all()
    assert plugin_rows["epsilon_lb_whitebox"].gt(0).all()


def _tiny_spec(entry_name):
    return parse(
        {
            "name": "p",
            "seed": 1,
            "epsilon": [1.0],
            "datasets": [{"name": "synthetic", "params": {"N": 100, "k": 2, "d": 2}}],
            "algorithms": [{"name": entry_name, "repeat": 2}],
            "init": {"sets": 2},
            "plot": {"kind": "none"},
        },
        "p.yaml",
    )


@algorithm(private=True, params={"scale": Param(1.0, float, "ε multiplier")})
def greedy(ctx):
    """Books more than its cell's ε."""
    ledger = Ledger()
    ledger.record(LaplaceMechanism(ctx.epsilon * 2, 1.0), "too much")
    return [{"init": 0, "rep": 0, "nicv": 0.1}], ledger


@algorithm(private=True)
def no_ledger(ctx):
    return [{"init": 0, "rep": 0, "nicv": 0.1}], None


@pytest.mark.parametrize(
    "entry,words", [("greedy", "books ε = 2"), ("no_ledger", "instead of a Ledger")]
)
def test_plugin_protocol_is_enforced(entry, words):
    sp = _tiny_spec(f"tests.test_plugins:{entry}")
    (cell,) = harness.expand(sp)
    outcome = harness.run_cell(cell)
    assert words in outcome.error


def test_unknown_plugin_is_a_spec_error():
    from dpcluster.errors import SpecError

    with pytest.raises(SpecError, match="cannot import"):
        _tiny_spec("no_such_module:thing")
    with pytest.raises(SpecError, match="not an algorithm entry"):
        _tiny_spec("numpy:mean")
    assert np.isfinite(1.0)


def test_an_installed_entry_point_is_found(tmp_path, monkeypatch):
    """A package that declares [dpcluster.algorithms] in its metadata is usable by name."""
    from dpcluster.experiments import known_names, lookup

    dist = tmp_path / "myplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[dpcluster.algorithms]\nsplit_dplloyd_ep = split_dplloyd:split_dplloyd\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(EXAMPLE))
    assert "split_dplloyd_ep" in known_names()
    info = lookup("split_dplloyd_ep")
    assert info.private and "count_share" in info.params
    sp = _tiny_spec("split_dplloyd_ep")
    assert sp.algorithms[0].name == "split_dplloyd_ep"
