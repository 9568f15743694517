"""Fault injection: damaged cells are never trusted; a rerun recomputes them and gives the
same summary bytes as a clean run."""

import json

import pytest

from dpcluster import harness, results
from dpcluster.spec import parse

SPEC = {
    "name": "faults",
    "seed": 11,
    "epsilon": [0.5, 1.0],
    "datasets": [{"name": "synthetic", "params": {"N": 300, "k": 3, "d": 2}}],
    "algorithms": [{"name": "lloyd"}, {"name": "dplloyd", "repeat": 3}],
    "init": {"sets": 4},
    "plot": {"kind": "none"},
}


def _cut_at_line(p):
    lines = p.read_bytes().splitlines(keepends=True)
    p.write_bytes(b"".join(lines[:3]))


def _cut_mid_line(p):
    blob = p.read_bytes()
    p.write_bytes(blob[: len(blob) // 2 + 7])


def _random_bytes(p):
    import numpy as np

    p.write_bytes(np.random.default_rng(0).bytes(500))


def _empty(p):
    p.write_bytes(b"")


def _foreign_columns(p):
    text = p.read_text().splitlines()
    p.write_text("\n".join([text[0] + ",garbage"] + [t + ",text" for t in text[1:]]) + "\n")


DAMAGE = {
    "cut at a line end": _cut_at_line,
    "cut mid-line": _cut_mid_line,
    "random bytes": _random_bytes,
    "empty": _empty,
    "foreign columns": _foreign_columns,
}


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    out = tmp_path_factory.mktemp("clean") / "faults"
    harness.run_spec(parse(SPEC, "faults.yaml"), out)
    return (out / "summary.csv").read_bytes(), _runs_without_times(out)


def _runs_without_times(out):
    import pandas as pd

    return pd.read_csv(out / "runs.csv").drop(columns=["wall_time_s"])


def _damaged_rerun(tmp_path, damage, capsys):
    sp = parse(SPEC, "faults.yaml")
    out = tmp_path / "faults"
    harness.run_spec(sp, out)
    cell = harness.expand(sp)[1]  # a dplloyd cell
    csv_path, json_path = results.cell_paths(out, cell.id)
    damage(csv_path, json_path)
    capsys.readouterr()
    rep = harness.run_spec(sp, out)
    return rep, out, "".join(f"warning: {w}\n" for w in rep.warnings), csv_path


@pytest.mark.parametrize("how", [*sorted(DAMAGE), "json without csv", "csv without json"])
def test_verify_catches_every_damage(tmp_path, how):
    sp = parse(SPEC, "faults.yaml")
    out = tmp_path / "faults"
    harness.run_spec(sp, out)
    assert harness.verify_folder(out) == (1, [])
    csv_path, json_path = results.cell_paths(out, harness.expand(sp)[1].id)
    if how == "json without csv":
        csv_path.unlink()
    elif how == "csv without json":
        json_path.unlink()
    else:
        DAMAGE[how](csv_path)
    checked, problems = harness.verify_folder(out)
    assert checked == 1 and problems and csv_path.name.split(".")[0] in problems[0]


def test_a_root_with_its_own_run_record_is_searched_for_spec_folders(tmp_path):
    """A root whose meta.json describes a whole run (as docs/results' does) still has its
    spec folders verified and listed; a reference copy is named as one, not as damage."""
    sp = parse(SPEC, "faults.yaml")
    harness.run_spec(sp, tmp_path / "faults")
    (tmp_path / "meta.json").write_text(json.dumps({"commits": ["abc"], "wall_time_s": 1.0}))
    assert harness.verify_folder(tmp_path) == (1, [])
    assert [r["spec_name"] for r in harness.list_results(tmp_path)] == ["faults"]
    ref = tmp_path / "fig0"
    ref.mkdir()
    (ref / "meta.json").write_text(json.dumps({"spec_file": "configs/fig0.yaml"}))
    checked, problems = harness.verify_folder(tmp_path)
    assert checked == 2 and len(problems) == 1 and "reference copy" in problems[0]


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_a_damaged_csv_is_recomputed(tmp_path, capsys, clean, how):
    rep, out, err, csv_path = _damaged_rerun(tmp_path, lambda c, j: DAMAGE[how](c), capsys)
    assert rep.cells_computed == 1 and not rep.failures
    assert str(csv_path) in err and "recomputing" in err and err.count("\n") == 1
    assert (out / "summary.csv").read_bytes() == clean[0]
    assert _runs_without_times(out).equals(clean[1])


@pytest.mark.parametrize("missing", ["json", "csv"])
def test_half_a_cell_is_recomputed(tmp_path, capsys, clean, missing):
    rep, out, err, _ = _damaged_rerun(
        tmp_path, lambda c, j: (j if missing == "json" else c).unlink(), capsys
    )
    assert rep.cells_computed == 1
    assert (out / "summary.csv").read_bytes() == clean[0]


def test_a_damaged_cell_is_not_borrowed(tmp_path, capsys, clean):
    sp = parse(SPEC, "faults.yaml")
    harness.run_spec(sp, tmp_path / "faults")
    cell = harness.expand(sp)[1]
    _cut_at_line(results.cell_paths(tmp_path / "faults", cell.id)[0])
    twin = parse({**SPEC, "name": "twin"}, "twin.yaml")
    rep = harness.run_spec(twin, tmp_path / "twin")
    assert rep.cells_computed == 1  # the damaged one; the others are borrowed
    meta = json.loads((tmp_path / "twin" / "meta.json").read_text())
    assert len(meta["borrowed_from"]) == len(harness.expand(twin)) - 1
    assert (tmp_path / "twin" / "summary.csv").read_bytes() == clean[0]


def test_cell_record_and_meta_history(tmp_path):
    sp = parse(SPEC, "faults.yaml")
    out = tmp_path / "faults"
    harness.run_spec(sp, out)
    harness.run_spec(sp, out)
    cell = harness.expand(sp)[0]
    record = json.loads(results.cell_paths(out, cell.id)[1].read_text())
    for key in (
        "csv_sha256",
        "csv_rows",
        "csv_columns",
        "dpcluster",
        "git_commit",
        "created",
        "wall_time_s",
        "identity",
    ):
        assert key in record
    meta = json.loads((out / "meta.json").read_text())
    assert [h["cells_computed"] for h in meta["history"]] == [len(harness.expand(sp)), 0]


@pytest.mark.slow
@pytest.mark.serial
def test_kill_9_at_twenty_points_then_resume_gives_the_same_bytes(tmp_path, clean):
    """SIGKILL (no handler runs) at 20 moments spread over a run, each followed by a
    resume: every resumed folder has the clean run's summary bytes and verifies."""
    import signal
    import subprocess
    import sys
    import time

    import numpy as np
    import yaml

    spec_path = tmp_path / "faults.yaml"
    spec_path.write_text(yaml.safe_dump(SPEC))
    cmd = [sys.executable, "-m", "dpcluster.cli", "run", str(spec_path), "-q", "--jobs", "2"]
    start = time.monotonic()
    subprocess.run(cmd + ["--out", str(tmp_path / "timing")], check=True, capture_output=True)
    full = time.monotonic() - start
    delays = np.random.default_rng(2026).uniform(0.05, 1.0, 20) * full
    for i, delay in enumerate(delays):
        out = tmp_path / f"k{i}"
        proc = subprocess.Popen(
            cmd + ["--out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(delay)
        if proc.poll() is None:
            import os

            os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its workers, mid-write or not
        proc.wait()
        subprocess.run(cmd + ["--out", str(out)], check=True, capture_output=True)
        assert (out / "summary.csv").read_bytes() == clean[0], f"kill at {delay:.2f} s"
        assert harness.verify_folder(out)[1] == []


@pytest.mark.slow
def test_a_damaged_kernel_cache_is_compiled_again_and_said(tmp_path):
    """A damaged file of numba's cache is a cache miss: the kernel is compiled again, the
    file replaced, a warning names it, and every cell runs; the next run is clean."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    spec = (
        "name: t\nseed: 1\ndatasets: [{name: synthetic, params: {N: 100, k: 2, d: 2}}]\n"
        "epsilon: [1]\nalgorithms: [{name: dplloyd, repeat: 2}]\ninit: {sets: 2}\n"
        "plot: {kind: none}\n"
    )
    (tmp_path / "s.yaml").write_text(spec)
    args = [sys.executable, "-m", "dpcluster.cli", "run", "s.yaml", "-q"]
    first = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    damaged = list((tmp_path / "numba").rglob("*.nbc")) + list((tmp_path / "numba").rglob("*.nbi"))
    assert damaged
    for path in damaged:
        path.write_bytes(b"garbage!")
    args.append("--force")
    again = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "is damaged" in again.stderr and "compiled again" in again.stderr
    third = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert third.returncode == 0 and "damaged" not in third.stderr
