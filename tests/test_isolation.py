"""A plugin cell runs in a process of its own: whatever it does to its data, to numpy's or
dpcluster's globals, or to its process, no other cell's numbers change, and the run ends
with its failure said in one line (docs/plugins.md, "Trust and isolation")."""

from __future__ import annotations

import textwrap

import pandas as pd
import pytest
import yaml

from tests.cli import run_cli

HOSTILE = textwrap.dedent(
    """
    import os
    import threading
    import time

    import numpy as np

    import dpcluster.kernels
    from dpcluster.plugins import algorithm


    def _row(rep):
        return {"init": 0, "rep": rep, "nicv": 1.0}


    @algorithm(private=False, repeat=1)
    def zeroes_the_data(ctx):
        x = ctx.dataset.X
        while x.base is not None and isinstance(x.base, np.ndarray):
            x = x.base
        x.setflags(write=True)
        x[...] = 0.0
        np.random.seed(0)
        dpcluster.kernels.nicv = lambda X, C: 0.0
        return [_row(0)], None


    @algorithm(private=False, repeat=1)
    def exits(ctx):
        os._exit(0)


    @algorithm(private=False, repeat=1)
    def leaves_a_thread(ctx):
        threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
        return [_row(0)], None
    """
)


def _spec(tmp_path, algorithms):
    doc = {
        "name": "iso",
        "seed": 4,
        "datasets": [{"name": "synthetic", "params": {"N": 300, "k": 3, "d": 2}}],
        "epsilon": [1.0],
        "init": {"sets": 2},
        "algorithms": algorithms,
        "plot": {"kind": "none"},
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_hostile_plugin_changes_no_other_cell_and_ends_the_run_cleanly(tmp_path, jobs):
    (tmp_path / "hostile.py").write_text(HOSTILE)
    builtin = [{"name": "lloyd"}, {"name": "dplloyd", "repeat": 3}]
    clean = tmp_path / "clean"
    clean.mkdir()
    _spec(clean, builtin)
    assert run_cli("run", "s.yaml", "-q", cwd=clean).returncode == 0
    names = ["hostile:zeroes_the_data", "hostile:exits", "hostile:leaves_a_thread"]
    # the hostile cells first, so a shared worker would meet the damage before lloyd's cell
    _spec(tmp_path, [{"name": n} for n in names] + builtin)
    done = run_cli("run", "s.yaml", "-q", "--jobs", jobs, cwd=tmp_path, timeout=600)
    assert done.returncode == 1, done.stderr  # one failed cell: the plugin that exits
    assert "Traceback" not in done.stderr
    assert "hostile:exits" in done.stderr and "ended its process" in done.stderr
    runs = pd.read_csv(tmp_path / "results" / "iso" / "runs.csv")
    mine = runs[runs["algorithm"].isin(["lloyd", "dplloyd"])].reset_index(drop=True)
    ref = pd.read_csv(clean / "results" / "iso" / "runs.csv")
    cols = ["algorithm", "init", "rep", "nicv", "stream", "cell"]
    pd.testing.assert_frame_equal(mine[cols], ref[cols])
    assert (mine["nicv"] > 0).all()


PLUGIN = textwrap.dedent(
    """
    from dpcluster.plugins import algorithm


    @algorithm(private=False, repeat=1)
    def constant(ctx):
        return [{"init": 0, "rep": 0, "nicv": VALUE}], None
    """
)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_two_specs_with_same_named_plugins_each_run_their_own(tmp_path, jobs):
    """One invocation, two spec folders, a ``myalg.py`` in each: every spec's cells run
    its own folder's module, whichever spec imported the name first."""
    for folder, value in (("a", 0.75), ("b", 0.25)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "myalg.py").write_text(f"VALUE = {value}\n" + PLUGIN)
        _spec(tmp_path / folder, [{"name": "myalg:constant"}])
        doc = yaml.safe_load((tmp_path / folder / "s.yaml").read_text())
        (tmp_path / folder / "s.yaml").write_text(yaml.safe_dump({**doc, "name": f"iso-{folder}"}))
    done = run_cli("run", "a/s.yaml", "b/s.yaml", "-q", "--jobs", jobs, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for folder, value in (("a", 0.75), ("b", 0.25)):
        runs = pd.read_csv(tmp_path / "results" / f"iso-{folder}" / "runs.csv")
        assert set(runs["nicv"]) == {value}, folder


def test_a_plugins_module_level_settings_do_not_outlive_its_import(tmp_path):
    """The parent imports a plugin to validate its spec, then runs built-in cells: what the
    plugin's module-level code sets process-wide (numpy's error handling and seed, the
    warnings filters, the working folder) is restored once the import returns."""
    import os
    import warnings

    import numpy as np

    from dpcluster.experiments.registry import lookup

    (tmp_path / "loud.py").write_text(
        "import os, warnings\nimport numpy as np\n"
        'np.seterr(all="raise")\nnp.random.seed(0)\nwarnings.simplefilter("error")\n'
        'os.chdir("/")\n' + PLUGIN.replace("VALUE", "0.5")
    )
    before = (np.geterr(), np.random.get_state()[1][:4].tolist(), list(warnings.filters))
    cwd = os.getcwd()
    info = lookup("loud:constant", str(tmp_path))
    assert info.name.endswith("constant")
    after = (np.geterr(), np.random.get_state()[1][:4].tolist(), list(warnings.filters))
    assert after == before and os.getcwd() == cwd


DAMAGING = textwrap.dedent(
    """
    import glob

    from dpcluster.plugins import algorithm


    @algorithm(private=False, repeat=1)
    def damages(ctx):
        for path in glob.glob("results/iso/cells/*.csv"):
            with open(path, "a") as f:
                f.write("0,0,0\\n")
        return [{"init": 0, "rep": 0, "nicv": 1.0}], None
    """
)


def test_a_run_whose_finished_cells_were_damaged_meanwhile_fails(tmp_path):
    """A plugin that writes over a cell an earlier run finished: the run's tables cannot
    hold that cell, and the run says so and exits 1 instead of writing a table without it."""
    (tmp_path / "damaging.py").write_text(DAMAGING)
    _spec(tmp_path, [{"name": "lloyd"}])
    assert run_cli("run", "s.yaml", "-q", cwd=tmp_path).returncode == 0
    _spec(tmp_path, [{"name": "lloyd"}, {"name": "damaging:damages"}])
    done = run_cli("run", "s.yaml", "-q", "--jobs", "1", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "does not verify at the end of the run" in done.stderr
    assert "Traceback" not in done.stderr
