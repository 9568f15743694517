"""The user's own data, code and folder (issue 31): results come from content, not from
where the files lie; edits recompute what they touch and say so; outputs stay inside
their folder; a plugin's ε comes from its ledger; non-finite values are counted; hostile
YAML, full disks and bad API arguments get one clear answer."""

from __future__ import annotations

import errno
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from dpcluster import harness, results, spec
from dpcluster.data import user_csv
from tests.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "plugin"

PLUGIN_HEAD = """\
import json
from dpcluster.plugins import Param, algorithm
from dpcluster.privacy import LaplaceMechanism, Ledger
"""


def _experiment(folder: Path, repeat: int = 2) -> Path:
    """A copy of examples/plugin with fewer runs: a csv and a plugin beside the spec."""
    shutil.copytree(EXAMPLE, folder)
    raw = yaml.safe_load((folder / "spec.yaml").read_text())
    raw["epsilon"] = [0.5, 1.0]
    raw["init"] = {"sets": 2}
    for a in raw["algorithms"]:
        if "repeat" in a:
            a["repeat"] = repeat
    raw["algorithms"][2]["params"] = {"count_share": [0.3]}
    raw["plot"] = {"kind": "none"}
    (folder / "spec.yaml").write_text(yaml.safe_dump(raw))
    return folder / "spec.yaml"


def _run(spec_path: Path, *args: str):
    return run_cli("run", "spec.yaml", "-q", *args, cwd=spec_path.parent)


def _tables(out: Path) -> str:
    return (
        "".join((out / name).read_text() for name in ("runs.csv", "summary.csv", "timing.csv"))
        + (out / "meta.json").read_text()
    )


# --- identity from content --------------------------------------------------------------


def test_the_same_experiment_in_two_folders_gives_the_same_bytes(tmp_path):
    one = _experiment(tmp_path / "one")
    two = _experiment(tmp_path / "deep" / "er" / "two")
    for s in (one, two):
        proc = _run(s)
        assert proc.returncode == 0, proc.stderr
    a, b = (s.parent / "results" / "plugin-example" for s in (one, two))
    assert (a / "summary.csv").read_bytes() == (b / "summary.csv").read_bytes()
    assert sorted(p.name for p in (a / "cells").iterdir()) == sorted(
        p.name for p in (b / "cells").iterdir()
    )
    for out in (a, b):
        text = _tables(out)
        assert str(tmp_path) not in text, "an absolute path leaked into a table or meta.json"
        assert "path=points.csv" in (out / "summary.csv").read_text()
    meta = json.loads((a / "meta.json").read_text())
    assert meta["spec_from_out"] == "../../spec.yaml"
    assert set(meta["inputs"]) == {"points.csv", "split_dplloyd.py"}


def test_an_edited_csv_recomputes_its_cells_and_says_why(tmp_path):
    s = _experiment(tmp_path / "x")
    assert _run(s).returncode == 0
    csv = s.parent / "points.csv"
    lines = csv.read_text().splitlines()
    lines[3] = lines[3].rsplit(",", 1)[0] + ",9.5"
    csv.write_text("\n".join(lines) + "\n")
    proc = _run(s)
    assert proc.returncode == 0, proc.stderr
    # every cell reads the csv: lloyd (1) + dplloyd (2 ε) + the plugin (2 ε)
    assert "5 cells computed, 0 reused" in proc.stdout
    assert "points.csv changed since" in proc.stderr and "5 cell(s)" in proc.stderr
    assert run_cli("verify", "results", cwd=s.parent).returncode == 0


def test_the_same_numbers_however_the_file_is_named_or_read_give_the_same_cells(tmp_path):
    """A csv's identity is the numbers it gives: another file name, a gzip copy, columns by
    index instead of name, another label or delimiter reuse every cell, and each table
    names the data as *its* spec does. Rewriting the file without changing its numbers
    says so and recomputes nothing."""
    import gzip

    import pandas as pd

    s = _experiment(tmp_path / "x")
    assert _run(s).returncode == 0
    out = s.parent / "results" / "plugin-example"
    before = pd.read_csv(out / "summary.csv")
    text = (s.parent / "points.csv").read_text()
    (s.parent / "renamed.csv.gz").write_bytes(gzip.compress(text.replace(",", ";").encode()))
    raw = yaml.safe_load(s.read_text())
    params = raw["datasets"][0]["params"]
    params.update(path="renamed.csv.gz", columns=[1, 2], label="Renamed", delimiter=";")
    s.write_text(yaml.safe_dump(raw))
    proc = _run(s)
    assert proc.returncode == 0 and "0 cells computed, 5 reused" in proc.stdout, proc.stdout
    after = pd.read_csv(out / "summary.csv")
    numbers = [c for c in before.columns if c not in ("dataset", "dataset_label")]
    pd.testing.assert_frame_equal(before[numbers], after[numbers])
    assert set(after["dataset_label"]) == {"Renamed"}
    assert all("path=renamed.csv.gz" in key for key in after["dataset"])
    (s.parent / "renamed.csv.gz").write_bytes(gzip.compress(text.replace(",", ";\t").encode()))
    proc = _run(s)
    assert "0 cells computed, 5 reused" in proc.stdout, proc.stdout
    assert "renamed.csv.gz changed since" in proc.stderr and "same numbers" in proc.stderr


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".xz", ".zip"])
def test_every_compression_gives_the_numbers_of_the_plain_file(tmp_path, suffix):
    """A compressed copy (.gz, .bz2, .xz, a one-file .zip), with a byte-order mark, CRLF
    line ends and blank lines, reads as the same numbers as the plain csv."""
    import bz2
    import gzip
    import lzma
    import zipfile

    text = "\ufeffx,y\r\n1.5,2\r\n\r\n-3,4e-1\r\n5,6\r\n"
    blob = text.encode()
    path = tmp_path / f"p.csv{suffix}"
    if suffix == ".zip":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("p.csv", blob)
    else:
        pack = {"": bytes, ".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}
        path.write_bytes(pack[suffix](blob))
    X, y, names = user_csv.read_csv(str(path), None, None, ",", True, "")
    assert names == ("x", "y") and y is None
    np.testing.assert_array_equal(X, [[1.5, 2.0], [-3.0, 0.4], [5.0, 6.0]])


def test_a_zip_of_two_files_is_refused(tmp_path):
    import zipfile

    path = tmp_path / "p.csv.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("a.csv", "x\n1\n2\n")
        z.writestr("b.csv", "x\n3\n4\n")
    with pytest.raises(user_csv.DataError, match="must hold one file; this one holds 2"):
        user_csv.read_csv(str(path), None, None, ",", True, "")


def test_a_csv_dataset_sweeps_k_like_a_generator(tmp_path):
    """params.k: [3, 4] on a csv is two datasets, one per k, as a generator's list is."""
    s = _experiment(tmp_path / "x")
    raw = yaml.safe_load(s.read_text())
    raw["datasets"][0]["params"]["k"] = [3, 4]
    raw["algorithms"] = [{"name": "lloyd"}]
    s.write_text(yaml.safe_dump(raw))
    assert _run(s).returncode == 0
    import pandas as pd

    summary = pd.read_csv(s.parent / "results" / "plugin-example" / "summary.csv")
    assert sorted(summary["k"]) == [3, 4] and summary["dataset"].nunique() == 2
    raw["datasets"][0]["params"]["k"] = []
    s.write_text(yaml.safe_dump(raw))
    proc = run_cli("validate", "spec.yaml", cwd=s.parent)
    assert proc.returncode == 2 and "params.k': is an empty list" in proc.stderr


def test_two_entries_with_the_same_numbers_are_refused(tmp_path):
    s = _experiment(tmp_path / "x")
    raw = yaml.safe_load(s.read_text())
    twin = json.loads(json.dumps(raw["datasets"][0]))
    twin["params"].update(columns=[1, 2], label="Twin")
    raw["datasets"].append(twin)
    s.write_text(yaml.safe_dump(raw))
    proc = run_cli("validate", "spec.yaml", cwd=s.parent)
    assert proc.returncode == 2 and "datasets[1]" in proc.stderr
    assert "same numbers as an earlier csv dataset" in proc.stderr


def test_an_edited_plugin_recomputes_only_its_cells(tmp_path):
    s = _experiment(tmp_path / "x")
    assert _run(s).returncode == 0
    with open(s.parent / "split_dplloyd.py", "a") as fh:
        fh.write("\n# an edit\n")
    assert run_cli("verify", "results", cwd=s.parent).returncode == 5  # stale now
    proc = _run(s)
    assert "2 cells computed, 3 reused" in proc.stdout, proc.stdout + proc.stderr
    assert "split_dplloyd.py changed since" in proc.stderr
    assert run_cli("verify", "results", cwd=s.parent).returncode == 0


def test_a_helper_module_the_plugin_imports_is_part_of_its_identity(tmp_path):
    (tmp_path / "helper.py").write_text("SCALE = 1.0\n")
    (tmp_path / "plug.py").write_text(
        "from helper import SCALE\n" + "from dpcluster.plugins import algorithm\n"
        "@algorithm(private=False, repeat=1)\n"
        "def f(ctx):\n    return [{'init': 0, 'rep': 0, 'nicv': SCALE}], None\n"
    )
    from dpcluster.experiments.registry import plugin_code

    before = plugin_code("plug:f", str(tmp_path))
    assert [rel for rel, _ in before] == ["helper.py", "plug.py"]
    (tmp_path / "helper.py").write_text("SCALE = 2.0\n")
    assert plugin_code("plug:f", str(tmp_path)) != before


def test_a_data_file_is_checked_again_when_loaded(tmp_path):
    s = _experiment(tmp_path / "x")
    sp = spec.load(s)
    (s.parent / "points.csv").write_text("x,y\n1,2\n3,4\n5,6\n7,8\n")
    user_csv.read_csv.cache_clear()  # as in a worker process, which reads the file anew
    outcome = harness.run_cell(harness.expand(sp)[0])
    assert "checksum mismatch" in outcome.error


# --- output paths -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["..", ".", "a/b", "/tmp/x", ".hidden", ""])
def test_a_spec_name_is_a_plain_folder_name(tmp_path, name):
    raw = yaml.safe_load((EXAMPLE / "spec.yaml").read_text())
    raw["name"] = name
    with pytest.raises(spec.SpecError, match="plain folder name"):
        spec.parse(raw, str(EXAMPLE / "spec.yaml"))


def test_nothing_is_written_beside_the_spec_but_the_results(tmp_path):
    s = _experiment(tmp_path / "x")
    before = sorted(p.name for p in s.parent.iterdir())
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # importing the plugin must not leave __pycache__
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "dpcluster.cli", "run", "spec.yaml", "-q"],
        cwd=s.parent,
        env=env,
        check=True,
        capture_output=True,
    )
    assert sorted(p.name for p in s.parent.iterdir()) == sorted([*before, "results"])


def test_the_harness_columns_are_the_ones_it_writes():
    from dpcluster.plugins import HARNESS_COLUMNS

    assert set(HARNESS_COLUMNS) == set(results.GROUP) | {"bounds", "seed", "cell", "wall_time_s"}
    assert set(HARNESS_COLUMNS) <= set(harness.RUN_COLUMNS)


def test_out_may_not_hold_the_specs_inputs(tmp_path):
    s = _experiment(tmp_path / "x")
    before = sorted(p.name for p in s.parent.iterdir())
    for out in (".", str(tmp_path)):
        proc = _run(s, "--out", out)
        assert proc.returncode == 2 and "holds the spec's own input" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in s.parent.iterdir()) == before  # nothing written


def test_a_folder_another_run_writes_is_refused(tmp_path):
    s = _experiment(tmp_path / "x")
    out = s.parent / "results" / "plugin-example"
    out.mkdir(parents=True)
    with results.FolderLock(out):
        proc = _run(s)
    assert proc.returncode == 2, proc.stderr
    assert "another dpcluster run is writing" in proc.stderr and "pid" in proc.stderr
    assert _run(s).returncode == 0  # the lock went with its holder


# --- trust in cells ---------------------------------------------------------------------


def test_a_cell_copied_under_another_id_is_not_trusted(tmp_path):
    s = _experiment(tmp_path / "x")
    assert _run(s).returncode == 0
    cells = s.parent / "results" / "plugin-example" / "cells"
    a, b = sorted(p.stem for p in cells.glob("*.csv"))[:2]
    for ext in (".csv", ".json"):
        shutil.copy(cells / f"{a}{ext}", cells / f"{b}{ext}")
    proc = run_cli("verify", "results", cwd=s.parent)
    assert proc.returncode == 5 and f"not of {b}" in proc.stderr
    proc = _run(s)
    assert "1 cells computed" in proc.stdout and "recomputing the cell" in proc.stderr
    assert run_cli("verify", "results", cwd=s.parent).returncode == 0


# --- plugins ----------------------------------------------------------------------------


def _plugin_spec(tmp_path: Path, body: str, private: bool = True, **extra) -> Path:
    (tmp_path / "plug.py").write_text(
        PLUGIN_HEAD + f"@algorithm(private={private}, repeat=2)\ndef f(ctx):\n" + body
    )
    raw = {
        "name": "p",
        "seed": 1,
        "epsilon": [1.0],
        "datasets": [{"name": "synthetic", "params": {"N": 100, "k": 3, "d": 2}}],
        "algorithms": [{"name": "plug:f"}],
        "plot": {"kind": "none"},
        **extra,
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


ROWS = "[{'init': 0, 'rep': r, 'nicv': 0.1, **extra} for r in range(ctx.repeat)]"


class _Negative:
    """A mechanism that claims to cost a negative ε (bypassing Laplace's own check)."""


@pytest.mark.parametrize(
    "body, words",
    [
        (  # books 0.5 ε, its rows say ε: the ledger's word is written
            f"    L = Ledger(); L.record(LaplaceMechanism(ctx.epsilon / 2, 1.0), 'a')\n"
            f"    extra = {{'epsilon_provable': 0.01, 'epsilon_claimed': 0.01}}\n"
            f"    return {ROWS}, L\n",
            None,
        ),
        (  # a 3ε release hidden by a -2ε entry appended behind the ledger's back
            "    from dpcluster.privacy.ledger import Spend\n"
            "    L = Ledger(); L.record(LaplaceMechanism(ctx.epsilon * 3, 1.0), 'a')\n"
            "    L.entries.append(Spend('b', 'x', -2 * ctx.epsilon, 1.0, 1.0))\n"
            f"    extra = {{}}\n    return {ROWS}, L\n",
            "ledger entry 1 books ε = -2",
        ),
        (  # a mechanism whose ε is negative is refused by the ledger itself
            "    class M: epsilon = -1.0; delta = 0.0; sensitivity = 1.0; scale = 1.0\n"
            "    L = Ledger(); L.record(M(), 'a')\n"
            f"    extra = {{}}\n    return {ROWS}, L\n",
            "positive finite ε",
        ),
        (  # centres of the wrong shape
            "    L = Ledger(); L.record(LaplaceMechanism(ctx.epsilon, 1.0), 'a')\n"
            "    extra = {'centroids': json.dumps([[0.0, 0.0]])}\n"
            f"    return {ROWS}, L\n",
            "shape (1, 2); expected finite (3, 2)",
        ),
        (  # non-finite centres
            "    L = Ledger(); L.record(LaplaceMechanism(ctx.epsilon, 1.0), 'a')\n"
            "    extra = {'centroids': [[float('nan'), 0.0]] * 3}\n"
            f"    return {ROWS}, L\n",
            "non-finite",
        ),
    ],
)
def test_a_plugins_privacy_comes_from_its_ledger(tmp_path, body, words):
    path = _plugin_spec(tmp_path, body)
    proc = run_cli("run", "spec.yaml", "-q", cwd=tmp_path)
    runs = tmp_path / "results" / "p" / "runs.csv"
    if words is None:
        assert proc.returncode == 0, proc.stderr
        import pandas as pd

        eps = pd.read_csv(runs)[["epsilon_provable", "epsilon_claimed"]]
        assert (eps == 0.5).all().all()
    else:
        assert proc.returncode == 1 and words in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    assert path.is_file()


@pytest.mark.parametrize(
    "body, words",
    [
        ("    return None\n", "must return (rows, ledger)"),
        ("    return 5, None\n", "list of dicts"),
        ("    return [{'nicv': 0.1}], None\n", "integer 'init'"),
        ("    return [{'init': 0, 'rep': 0}], None\n", "lacks the metric(s) ['nicv']"),
        ("    return [{'init': 0, 'rep': 0, 'nicv': 1, 'cell': 'x'}], None\n", "['cell']"),
        ("    return [], None\n", "returned no rows"),
        ("    return [{'init': 0, 'rep': 0, 'nicv': '0.5'}], None\n", "'0.5', not a number"),
        ("    return [{'init': 0, 'rep': 0, 'nicv': True}], None\n", "True, not a number"),
        ("    return [{'init': 0, 'rep': 0, 'nicv': None}], None\n", "None, not a number"),
        ("    return [{'init': 0.0, 'rep': 0, 'nicv': 1.0}], None\n", "integer 'init'"),
        (
            "    row = {'init': 0, 'rep': 0, 'nicv': 1}\n    return [row, dict(row)], None\n",
            "rows 0 and 1 are both init 0, rep 0",
        ),
        ("    return [{'init': -1, 'rep': 0, 'nicv': 1}], None\n", "row 0 is init -1, rep 0"),
        ("    return [{'init': 0, 'rep': -2, 'nicv': 1}], None\n", "rep is >= 0"),
        (  # the spec's default 30 sets: init numbers one of them
            "    return [{'init': 30, 'rep': 0, 'nicv': 1}], None\n",
            "one of the spec's 30 initial sets (0..29)",
        ),
        # sys.exit in a plugin ended the whole run, with the plugin's code as the exit code
        ("    import sys\n    sys.exit(3)\n", "SystemExit: the cell called sys.exit(3)"),
    ],
)
def test_a_plugin_that_breaks_the_protocol_fails_its_cell_in_one_line(tmp_path, body, words):
    _plugin_spec(tmp_path, body, private=False)
    proc = run_cli("run", "spec.yaml", "-q", cwd=tmp_path)
    assert proc.returncode == 1 and words in proc.stderr and "Traceback" not in proc.stderr


def test_a_plugin_cannot_change_the_data_the_next_cell_gets(tmp_path):
    """A worker caches each dataset for all its cells: a plugin that writes into its input
    fails in one line with the way out, and the next cell in the same process still sees
    the records as loaded."""
    from dpcluster import data

    path = _plugin_spec(tmp_path, "    ctx.dataset.X[:] = 0.0\n")
    with (tmp_path / "plug.py").open("a") as f:
        f.write(
            "\n@algorithm(private=False, repeat=1)\ndef g(ctx):\n"
            "    return [{'init': 0, 'rep': 0, 'nicv': float(abs(ctx.dataset.X).sum())}], None\n"
        )
    raw = yaml.safe_load(path.read_text())
    raw["epsilon"] = [1.0, 2.0]  # two writer cells, so one runs before the reader
    raw["algorithms"].append({"name": "plug:g"})
    path.write_text(yaml.safe_dump(raw))
    proc = run_cli("run", "spec.yaml", "-q", "--jobs", "1", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "assignment destination is read-only" in proc.stderr
    assert "np.array(ctx.dataset.X)" in proc.stderr
    import pandas as pd

    runs = pd.read_csv(tmp_path / "results" / "p" / "runs.csv")
    X = data.load("synthetic", N=100, k=3, d=2).X
    assert runs["nicv"].tolist() == [float(abs(X).sum())] and np.abs(X).sum() > 0


def test_a_plugin_drawing_from_the_global_generators_is_reproducible(tmp_path):
    """np.random.* and random.* in a plugin are seeded from the cell's identity: two runs
    in fresh processes, with 1 and 2 workers, give the same bytes, and runs differ."""
    path = _plugin_spec(
        tmp_path,
        "    import random\n    import numpy as np\n"
        "    return [{'init': 0, 'rep': r, 'nicv': float(np.random.rand()) + random.random()}"
        " for r in range(ctx.repeat)], None\n",
        private=False,
    )
    raw = yaml.safe_load(path.read_text())
    raw["datasets"][0]["params"]["k"] = [2, 3]  # two cells, so two workers share them
    path.write_text(yaml.safe_dump(raw))
    import pandas as pd

    tables = []
    for jobs in ("1", "2"):
        proc = run_cli("run", "spec.yaml", "-q", "--force", "--jobs", jobs, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        runs = pd.read_csv(tmp_path / "results" / "p" / "runs.csv")
        tables.append(runs.drop(columns=["wall_time_s"]))
    one, two = tables
    pd.testing.assert_frame_equal(one, two)
    assert one["nicv"].nunique() == len(one) == 4


def test_a_forced_cell_that_fails_leaves_no_earlier_result_to_reuse(tmp_path):
    """--force recomputes finished cells; one that now fails (here: a flag file the entry
    reads, outside its identity) drops its earlier result, so the next run computes it
    again rather than reusing what the last run could not make."""
    _plugin_spec(
        tmp_path,
        "    import pathlib\n"
        "    if pathlib.Path('fail').exists():\n"
        "        raise RuntimeError('asked to fail')\n"
        "    return [{'init': 0, 'rep': r, 'nicv': 0.1} for r in range(ctx.repeat)], None\n",
        private=False,
    )
    assert run_cli("run", "spec.yaml", "-q", cwd=tmp_path).returncode == 0
    (tmp_path / "fail").touch()
    proc = run_cli("run", "spec.yaml", "-q", "--force", cwd=tmp_path)
    assert proc.returncode == 1 and "asked to fail" in proc.stderr
    cells = tmp_path / "results" / "p" / "cells"
    assert [p.name.split(".", 1)[1] for p in cells.iterdir()] == ["failed.json"]
    (tmp_path / "fail").unlink()
    proc = run_cli("run", "spec.yaml", "-q", cwd=tmp_path)
    assert proc.returncode == 0 and "1 cells computed, 0 reused" in proc.stdout, proc.stdout
    assert not list(cells.glob("*.failed.json"))


def test_a_plugins_numpy_integers_and_floats_are_taken_as_python_numbers(tmp_path):
    _plugin_spec(
        tmp_path,
        "    import numpy as np\n"
        "    return [{'init': np.int64(0), 'rep': np.int32(r), 'nicv': np.float32(0.5),"
        " 'step': np.int64(1)} for r in range(ctx.repeat)], None\n",
        private=False,
    )
    proc = run_cli("run", "spec.yaml", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    runs = pd.read_csv(tmp_path / "results" / "p" / "runs.csv")
    assert runs[["init", "rep", "nicv"]].values.tolist() == [[0, 0, 0.5], [0, 1, 0.5]]


@pytest.mark.parametrize("name", ["a:", ":f", "plug:f:g", "pl ug:f", "1plug:f"])
def test_a_malformed_plugin_name_is_one_line(tmp_path, name):
    path = _plugin_spec(tmp_path, "    pass\n")
    raw = yaml.safe_load(path.read_text())
    raw["algorithms"][0]["name"] = name
    path.write_text(yaml.safe_dump(raw))
    proc = run_cli("validate", "spec.yaml", cwd=tmp_path)
    assert proc.returncode == 2 and "algorithms[0].name" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_a_plugin_that_raises_keeps_its_traceback(tmp_path):
    _plugin_spec(tmp_path, "    return helper()\n\ndef helper():\n    raise RuntimeError('bug')\n")
    proc = run_cli("run", "spec.yaml", "-q", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "RuntimeError: bug" in proc.stderr and "--traceback" in proc.stderr
    meta = json.loads((tmp_path / "results" / "p" / "meta.json").read_text())
    assert 'plug.py", line' in meta["failures"][0]["traceback"]
    assert list((tmp_path / "results" / "p" / "cells").glob("*.failed.json"))
    proc = run_cli("run", "spec.yaml", "-q", "--traceback", cwd=tmp_path)
    assert "in helper" in proc.stderr and "raise RuntimeError('bug')" in proc.stderr


@pytest.mark.parametrize(
    "source, words",
    [
        ("def f(:\n", "SyntaxError"),
        ("raise RuntimeError('at import')\n", "at import at plug.py:1"),
        ("x = 1\n", "not an algorithm entry"),
        ("import sys\nsys.exit(4)\n", "SystemExit: 4 at plug.py:2"),  # not exit code 4
    ],
)
def test_a_plugin_that_cannot_be_imported_is_one_line(tmp_path, source, words):
    _plugin_spec(tmp_path, "    pass\n")
    (tmp_path / "plug.py").write_text(source.replace("x = 1", "f = 1"))
    for command in ("run", "validate"):
        proc = run_cli(command, "spec.yaml", cwd=tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert words in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_audit_takes_a_plugin_by_module_and_attribute(tmp_path):
    shutil.copy(EXAMPLE / "split_dplloyd.py", tmp_path)
    proc = run_cli(
        "audit",
        "-a",
        "split_dplloyd:split_dplloyd",
        "--epsilon",
        "1",
        "--trials",
        "40",
        "--out",
        "a",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "split_dplloyd:split_dplloyd" in proc.stdout


# --- non-finite values ------------------------------------------------------------------


def test_non_finite_metrics_are_counted_and_fail_the_run(tmp_path):
    body = (
        "    v = {'some': [float('inf'), 0.5], 'all': [float('nan'), float('inf')]}\n"
        "    return [{'init': 0, 'rep': r, 'nicv': v[ctx.params['mode']][r]} "
        "for r in range(2)], None\n"
    )
    (tmp_path / "plug.py").write_text(
        PLUGIN_HEAD + "@algorithm(private=False, repeat=2, "
        "params={'mode': Param('some', str, '', choices=('some', 'all'))})\n"
        "def f(ctx):\n" + body
    )
    raw = {
        "name": "p",
        "seed": 1,
        "datasets": [{"name": "synthetic", "params": {"N": 100, "k": 3, "d": 2}}],
        "algorithms": [{"name": "plug:f", "params": {"mode": ["some", "all"]}}],
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(raw))
    proc = run_cli("run", "spec.yaml", "-q", cwd=tmp_path)
    assert proc.returncode == 1 and "NON-FINITE: 3 metric value(s)" in proc.stderr
    import pandas as pd

    s = pd.read_csv(tmp_path / "results" / "p" / "summary.csv")
    assert list(s["n"]) == [1, 0] and list(s["n_nonfinite"]) == [1, 2]
    assert s["mean"].iloc[0] == 0.5 and np.isnan(s["mean"].iloc[1])
    # the cells verify byte for byte, yet the folder's numbers rest on fewer runs than the
    # spec asked for: verify says so, naming the cells, and the report flags the folder
    proc = run_cli("verify", "results", cwd=tmp_path)
    assert proc.returncode == 5 and "3 run(s) have an inf or NaN metric" in proc.stderr
    proc = run_cli("report", "--results", "results", cwd=tmp_path)
    assert proc.returncode == 5 and "inf or NaN metric" in proc.stderr
    assert (tmp_path / "results" / "REPORT.md").is_file()


def test_report_reads_a_summary_whose_every_cell_failed(tmp_path):
    _plugin_spec(tmp_path, "    raise RuntimeError('x')\n")
    assert run_cli("run", "spec.yaml", "-q", cwd=tmp_path).returncode == 1
    proc = run_cli("report", "--results", "results", cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    proc = run_cli("verify", "results", cwd=tmp_path)  # incomplete: says which and why
    assert proc.returncode == 5 and "(synthetic(N=100,d=2,k=3) plug:f eps=1) failed" in proc.stderr
    assert ".failed.json" in proc.stderr


# --- hostile YAML -----------------------------------------------------------------------

BOMB = "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['lol'] * 9)}]\n"
    for p, c in zip(["", *"abcdefgh"], "abcdefghi")
)


@pytest.mark.parametrize(
    "text, words",
    [
        (BOMB, "100,000 YAML nodes"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "deeper than 32"),
        ("a: &x [*x]\n", "refers to itself"),
        ("a: " + "*x " * 10 + "\n", "not valid YAML"),
        ("? [1, 2]\n: 3\n", "not a valid key"),
    ],
)
def test_hostile_yaml_is_refused_quickly_in_one_line(tmp_path, text, words):
    (tmp_path / "s.yaml").write_text(text)
    start = time.monotonic()
    with pytest.raises(spec.SpecError, match=words):
        spec.load(tmp_path / "s.yaml")
    assert time.monotonic() - start < 2.0


def test_a_hostile_set_value_is_refused_quickly(tmp_path):
    levels = ["a: &a [" + ", ".join(["lol"] * 9) + "]"]
    levels += [f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]
    start = time.monotonic()
    proc = run_cli(
        "validate",
        str(EXAMPLE / "spec.yaml"),
        "--set",
        "seed={" + ", ".join(levels) + "}",
        cwd=tmp_path,
    )
    assert time.monotonic() - start < 10.0
    assert proc.returncode == 2 and "--set seed" in proc.stderr and "YAML nodes" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


# --- a full disk ------------------------------------------------------------------------


def test_a_full_disk_is_one_line_and_a_rerun_resumes(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from dpcluster import cli

    s = _experiment(tmp_path / "x")
    monkeypatch.chdir(s.parent)
    real = results._write_synced
    writes = {"n": 0}

    def full_after_four(fd, blob):
        writes["n"] += 1
        if writes["n"] > 4:
            os.close(fd)
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, blob)

    monkeypatch.setattr(results, "_write_synced", full_after_four)
    out = CliRunner().invoke(cli.main, ["run", "spec.yaml", "-q"])
    assert out.exit_code == 6, out.output
    assert "No space left on device" in out.output and "rerun resumes" in out.output
    monkeypatch.setattr(results, "_write_synced", real)
    assert not list(Path("results").rglob("*.tmp")), "a temporary file was left behind"
    out = CliRunner().invoke(cli.main, ["run", "spec.yaml", "-q"])
    assert out.exit_code == 0 and "3 cells computed, 2 reused" in out.output, out.output


# --- the Python API ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"n_clusters": 2.7}, "n_clusters"),
        ({"n_clusters": 0}, "n_clusters"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"epsilon": 1e-320}, "epsilon"),
        ({"epsilon": 1e308}, "epsilon"),
        ({"method": "kmeans"}, "method"),
        ({"method": "eugkm", "method_params": {"theta": -1}}, "theta"),
        ({"method": "dplloyd", "method_params": {"iterations": 0}}, "iterations"),
        ({"method": "dplloyd", "method_params": {"iterations": 2.5}}, "iterations"),
        ({"method": "dplloyd", "method_params": {"r": 4.0}}, "not a parameter"),
        ({"method_params": {"iterations": 5}}, "'auto' takes none"),
        ({"scaling": "log"}, "scaling"),
        ({"bounds": (np.nan, 1.0)}, "bounds"),
        ({"bounds": (5.0, 1.0)}, "bounds"),
    ],
)
def test_the_estimator_validates_like_scikit_learn(kwargs, words):
    from dpcluster import DPKMeans

    X = np.random.default_rng(0).normal(size=(200, 2))
    with pytest.raises(ValueError, match=words):
        DPKMeans(**{"n_clusters": 3, "bounds": (-5, 5), **kwargs}).fit(X)


def test_the_estimator_records_feature_names():
    import pandas as pd

    from dpcluster import DPBVEncoder, DPKMeans

    X = pd.DataFrame(np.random.default_rng(0).normal(size=(200, 2)), columns=["a", "b"])
    km = DPKMeans(3, bounds=(-5, 5), random_state=0).fit(X)
    assert list(km.feature_names_in_) == ["a", "b"] and km.n_features_in_ == 2
    with pytest.raises(ValueError, match="feature names"):
        km.predict(pd.DataFrame(np.zeros((3, 3)), columns=["a", "b", "c"]))
    enc = DPBVEncoder(s=64, bounds=(-5, 5), random_state=0).fit(X)
    assert list(enc.feature_names_in_) == ["a", "b"]


def test_suspicious_data_is_named_by_its_label_and_1_based_column():
    """A constant column and too few distinct records are warnings that name the dataset a
    user knows (its label, e.g. the csv's stem) and the column counted from 1."""
    from dpcluster.data import schema

    raw = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])
    X, lo, hi = schema.normalise(raw, "data")
    ds = schema.Dataset(name="csv", X=X, k=2, label="mine", lo=lo, hi=hi)
    assert schema.warnings_for(ds) == [
        "mine: constant column(s) 1, 2 (1-based), scaled to 0",
        "mine: only 1 distinct records for k = 2 clusters",
    ]


def _claiming_plugin(tmp_path: Path, times: float) -> Path:
    """A plugin that books another library's fit at ``times`` the cell's ε, as a claim."""
    body = (
        "    from dpcluster.plugins import external_claim\n"
        f"    L = Ledger(); external_claim(L, 'their KMeans', {times} * ctx.epsilon)\n"
        f"    extra = {{}}\n    return {ROWS}, L\n"
    )
    return _plugin_spec(tmp_path, body)


def test_a_plugin_books_another_librarys_epsilon_as_a_claim_only(tmp_path):
    """external_claim: the rows show the library's ε as claimed and ∞ as provable, and the
    report's privacy table says the claim is not proven."""
    _claiming_plugin(tmp_path, 1.0)
    proc = run_cli("run", "spec.yaml", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    runs = pd.read_csv(tmp_path / "results" / "p" / "runs.csv")
    assert (runs["epsilon_claimed"] == 1.0).all() and np.isinf(runs["epsilon_provable"]).all()
    assert run_cli("report", "--results", "results", cwd=tmp_path).returncode == 0
    report = (tmp_path / "results" / "REPORT.md").read_text()
    assert "| p | plug:f | 1 | ∞ | 0 | 0 | no |" in report


def test_a_plugin_may_not_claim_more_than_its_cell(tmp_path):
    _claiming_plugin(tmp_path, 2.0)
    proc = run_cli("run", "spec.yaml", "-q", cwd=tmp_path)
    assert proc.returncode == 1 and "claims ε = 2 in a cell of ε = 1" in proc.stderr
