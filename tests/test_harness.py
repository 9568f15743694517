"""End to end: outputs, resume after a crash, and identical results for any --jobs."""

import json

import pandas as pd
import pytest
import yaml

from dpcluster import harness, results, spec
from tests.cli import run_cli as _cli

TINY = {
    "name": "tiny",
    "seed": 11,
    "datasets": [{"name": "synthetic", "params": {"N": 600, "k": 3, "d": 2}}, {"name": "s1"}],
    "epsilon": [0.5, 2.0],
    "init": {"sets": 3},
    "algorithms": [
        {"name": "lloyd"},
        {"name": "dplloyd", "repeat": 4},
        {"name": "dplloyd_improved", "repeat": 2},
        {"name": "eugkm", "repeat": 2},
    ],
    "plot": {"kind": "nicv_vs_epsilon"},
}
TIMING = ["wall_time_s"]


def _spec(tmp_path, **changes) -> spec.Spec:
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump({**TINY, **changes}))
    return spec.load(path)


def test_outputs_exist_and_hold_numbers(tmp_path):
    sp = _spec(tmp_path)
    rep = harness.run_spec(sp, tmp_path / "out")
    out = tmp_path / "out"
    for name in ("runs.csv", "summary.csv", "meta.json", "figure.png", "figure.pdf"):
        assert (out / name).is_file(), name
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == sum(c.n_runs for c in harness.expand(sp)) == 2 * (3 + 2 * (12 + 6 + 2))
    assert runs["nicv"].between(0, 8).all()
    private = runs[runs["algorithm"] != "lloyd"]
    assert (private["epsilon_claimed"] <= private["epsilon"]).all()
    # A2's t and EUGkM's M read the exact N, as the papers do: ∞ provable under add/remove
    exact_n = private["algorithm"].isin(["dplloyd_improved", "eugkm"])
    assert (private.loc[exact_n, "epsilon_provable"] == float("inf")).all()
    assert (private.loc[~exact_n, "epsilon_provable"] <= private.loc[~exact_n, "epsilon"]).all()
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary.columns) >= {"mean", "std", "ci95_low", "ci95_high", "n"}
    meta = json.loads((out / "meta.json").read_text())
    assert meta["spec_hash"] == sp.hash and "numba" in meta["versions"]
    assert rep.failures == []


def test_resume_after_crash_repeats_no_finished_cell(tmp_path, monkeypatch):
    sp = _spec(tmp_path)
    clean = harness.run_spec(sp, tmp_path / "elsewhere" / "clean")  # not a sibling: no reuse
    crashed = tmp_path / "crashed"
    real_write = results.write_cell
    written = []

    def dying_write(out, cell_id, rows, meta):
        if len(written) == 5:
            raise KeyboardInterrupt  # the process is killed half-way
        real_write(out, cell_id, rows, meta)
        written.append(cell_id)

    monkeypatch.setattr(results, "write_cell", dying_write)
    with pytest.raises(KeyboardInterrupt):
        harness.run_spec(sp, crashed)
    monkeypatch.setattr(results, "write_cell", real_write)
    computed = []
    real_run = harness.run_cell
    monkeypatch.setattr(
        harness.backends, "run_cell", lambda c, *a: computed.append(c.id) or real_run(c, *a)
    )
    rep = harness.run_spec(sp, crashed)
    assert rep.cells_resumed == 5 and not set(computed) & set(written)
    assert len(computed) == rep.cells_total - 5
    assert (crashed / "summary.csv").read_bytes() == (clean.out / "summary.csv").read_bytes()
    # no stray temporary files are left behind
    assert not list(crashed.rglob("*.tmp"))
    # a third run computes nothing; --force recomputes everything
    assert harness.run_spec(sp, crashed).cells_computed == 0
    assert harness.run_spec(sp, crashed, force=True).cells_computed == rep.cells_total


def test_a_cell_finished_for_another_spec_is_reused(tmp_path, monkeypatch):
    """Fig. 5 and Fig. 7 share cells with Fig. 1: same identity, same bytes, no recompute."""
    first = harness.run_spec(_spec(tmp_path), tmp_path / "results" / "first")
    other = _spec(
        tmp_path,
        name="other",
        algorithms=[
            {"name": "dplloyd", "repeat": 4},
            {"name": "dplloyd", "repeat": 5, "params": {"iterations": 4}},
        ],
    )
    computed = []
    real_run = harness.run_cell
    monkeypatch.setattr(
        harness.backends, "run_cell", lambda c, *a: computed.append(c.id) or real_run(c, *a)
    )
    rep = harness.run_spec(other, tmp_path / "results" / "other")
    shared = [c for c in harness.expand(other) if c.algorithm.repeat == 4]
    assert rep.cells_resumed == len(shared) == 4 and len(computed) == 4  # repeat 5 is new
    for c in shared:
        a, b = (tmp_path / "results" / n / "cells" / f"{c.id}.csv" for n in ("first", "other"))
        assert a.read_bytes() == b.read_bytes()
    assert first.cells_computed == first.cells_total


def test_a_borrowed_cell_takes_the_borrowing_specs_variant_label(tmp_path):
    """Fig. 6 leaves θ at 10 ("eugkm"); Fig. 2 sweeps it ("eugkm(theta=10.0)"): same cell."""
    harness.run_spec(
        _spec(tmp_path, algorithms=[{"name": "eugkm", "repeat": 2}]), tmp_path / "results" / "plain"
    )
    sweep = _spec(
        tmp_path,
        name="sweep",
        algorithms=[{"name": "eugkm", "repeat": 2, "params": {"theta": [10, 20]}}],
    )
    rep = harness.run_spec(sweep, tmp_path / "results" / "sweep")
    assert rep.cells_resumed == 4  # θ = 10 at two datasets × two ε
    assert set(rep.summary["variant"]) == {"eugkm(theta=10.0)", "eugkm(theta=20.0)"}
    assert set(rep.runs["variant"]) == {"eugkm(theta=10.0)", "eugkm(theta=20.0)"}


def test_theta_values_with_the_same_grid_are_one_computation(tmp_path, monkeypatch):
    """EUGkM sees θ only through m: θ = 10 and 10.5 give the same grid here, so their cells
    share an identity, run once, and read back under their own labels and parameters."""
    from dpcluster.algorithms.eugkm import cells_per_axis

    for eps in (0.5, 2.0):  # the premise: same m for θ = 10 and 10.5, another m for θ = 20
        m = [cells_per_axis(600, eps, 2, t) for t in (10, 10.5, 20)]
        assert m[0] == m[1] != m[2]
    sweep = _spec(
        tmp_path,
        datasets=[TINY["datasets"][0]],
        algorithms=[{"name": "eugkm", "repeat": 2, "params": {"theta": [10, 10.5, 20]}}],
    )
    computed = []
    real_run = harness.run_cell
    monkeypatch.setattr(
        harness.backends, "run_cell", lambda c, *a: computed.append(c.id) or real_run(c, *a)
    )
    rep = harness.run_spec(sweep, tmp_path / "results" / "sweep")
    assert rep.cells_total == 6 and len(computed) == len(set(computed)) == 4
    runs = rep.runs.set_index(["epsilon", "rep"])
    a, b = (runs[runs["variant"] == f"eugkm(theta={t})"] for t in (10.0, 10.5))
    assert (a["nicv"] == b["nicv"]).all() and len(a) == 4
    assert a["params"].str.contains('"theta":10.0').all()
    assert b["params"].str.contains('"theta":10.5').all()
    noisy_n = _spec(
        tmp_path,
        datasets=[TINY["datasets"][0]],
        algorithms=[{"name": "eugkm", "params": {"theta": [10, 10.5], "private_n": True}}],
    )
    ids = [c.id for c in harness.expand(noisy_n)]
    assert len(set(ids)) == len(ids)  # a noisy N makes m random: nothing to share


def test_same_bytes_for_any_jobs(tmp_path):
    sp = _spec(tmp_path)
    one = harness.run_spec(sp, tmp_path / "j1" / "out", jobs=1)  # separate parents:
    two = harness.run_spec(sp, tmp_path / "j2" / "out", jobs=2)  # nothing borrowed
    assert (one.out / "summary.csv").read_bytes() == (two.out / "summary.csv").read_bytes()
    r1 = pd.read_csv(one.out / "runs.csv").drop(columns=TIMING)
    r2 = pd.read_csv(two.out / "runs.csv").drop(columns=TIMING)
    pd.testing.assert_frame_equal(r1, r2)
    assert results.to_csv(r1) == results.to_csv(r2)


def test_streams_depend_on_identity_not_repeat_count(tmp_path):
    a = harness.run_spec(_spec(tmp_path), tmp_path / "a" / "out").runs
    more = [
        dict(x, repeat=x.get("repeat", 1) * 2) if x["name"] == "dplloyd" else x
        for x in TINY["algorithms"]
    ]
    b = harness.run_spec(_spec(tmp_path, algorithms=more), tmp_path / "b" / "out").runs
    key = ["dataset", "algorithm", "epsilon", "init", "rep"]
    merged = a[a.algorithm == "dplloyd"].merge(b, on=key, suffixes=("", "_b"))
    assert len(merged) == (a.algorithm == "dplloyd").sum()
    assert (merged["nicv"] == merged["nicv_b"]).all()


def test_several_specs_share_one_pool_and_compute_a_shared_cell_once(tmp_path, monkeypatch):
    """``dpcluster run A B``: a cell both specs need runs once and lands in both folders,
    and each spec's tables are the bytes a separate run gives."""
    a = _spec(tmp_path)
    b_path = tmp_path / "b.yaml"
    b_path.write_text(
        yaml.safe_dump(
            {
                **TINY,
                "name": "b",
                "epsilon": [0.5],
                "algorithms": [{"name": "dplloyd", "repeat": 4}],
            }
        )
    )
    b = spec.load(b_path)
    computed = []
    real_run = harness.run_cell
    monkeypatch.setattr(
        harness.backends, "run_cell", lambda c, *x: computed.append(c.id) or real_run(c, *x)
    )
    rep_a, rep_b = harness.run_specs([(a, tmp_path / "r" / "a"), (b, tmp_path / "r" / "b")])
    ids_a = {c.id for c in harness.expand(a)}
    ids_b = {c.id for c in harness.expand(b)}
    assert ids_b <= ids_a and len(computed) == len(set(computed)) == len(ids_a)
    assert rep_b.cells_computed == len(ids_b)
    alone = harness.run_spec(b, tmp_path / "alone" / "b")
    assert (alone.out / "summary.csv").read_bytes() == (rep_b.out / "summary.csv").read_bytes()
    assert rep_a.cells_computed == rep_a.cells_total


def test_arithmetic_parameters_change_the_cell_not_its_noise(tmp_path):
    """EUGkM's ``distances`` is part of a cell's identity (the two precisions are separate
    results) but not of its streams: both cells draw the same synopses, so they compare run
    for run. On this small well-separated grid they agree exactly."""
    sp = _spec(
        tmp_path,
        datasets=[TINY["datasets"][0]],
        epsilon=[2.0],
        algorithms=[
            {"name": "eugkm", "repeat": 2, "params": {"distances": ["float32", "float64"]}}
        ],
    )
    single, double = harness.expand(sp)
    assert single.id != double.id
    assert single.stream_prefix == double.stream_prefix
    runs = harness.run_spec(sp, tmp_path / "out").runs
    a, b = (runs[runs["variant"] == f"eugkm(distances={p})"] for p in ("float32", "float64"))
    assert list(a["stream"]) == list(b["stream"]) and len(a) == 2
    assert list(a["nicv"]) == list(b["nicv"])


def test_parallel_table_writing_gives_the_same_bytes(tmp_path):
    a = _spec(tmp_path)
    b_path = tmp_path / "b.yaml"
    b_path.write_text(
        yaml.safe_dump(
            {
                **TINY,
                "name": "b",
                "epsilon": [0.5],
                "algorithms": [{"name": "dplloyd", "repeat": 4}],
            }
        )
    )
    b = spec.load(b_path)
    serial = harness.run_specs([(a, tmp_path / "s" / "a"), (b, tmp_path / "s" / "b")], jobs=1)
    pooled = harness.run_specs([(a, tmp_path / "p" / "a"), (b, tmp_path / "p" / "b")], jobs=2)
    for one, two in zip(serial, pooled):
        assert one.cells_computed == two.cells_computed == one.cells_total
        assert (one.out / "summary.csv").read_bytes() == (two.out / "summary.csv").read_bytes()
        pd.testing.assert_frame_equal(one.runs.drop(columns=TIMING), two.runs.drop(columns=TIMING))


def test_heaviest_cells_start_first(tmp_path, monkeypatch):
    """With a warm kernel cache the cells start heaviest first (a cold cache first spreads
    the compilations, :func:`~dpcluster.harness.run.spread_compilations`, tested on its
    own): the cache's state on this machine must not decide the test."""
    import dpcluster.harness.run as run_module

    monkeypatch.setattr(run_module, "spread_compilations", lambda order, warm=None: order)
    started = []
    real_run = harness.run_cell
    monkeypatch.setattr(
        harness.backends, "run_cell", lambda c, *x: started.append(c) or real_run(c, *x)
    )
    harness.run_spec(_spec(tmp_path), tmp_path / "out")
    costs = [harness.cell_cost(c) for c in started]
    assert costs == sorted(costs, reverse=True) and costs[0] > costs[-1] > 0
    assert started[0].algorithm.name == "eugkm"  # grid Lloyd outweighs the rest here


def test_cli_bad_spec_exit_2_without_traceback(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**TINY, "algorithms": [{"name": "dplloyd", "repat": 3}]}))
    proc = _cli("run", str(path))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert str(path) in proc.stderr and "algorithms[0].repat" in proc.stderr
    assert "Did you mean 'repeat'" in proc.stderr


def test_cli_validate_list_dry_run_and_plot(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(TINY))
    assert _cli("validate", str(path)).returncode == 0
    listing = _cli("list")
    assert listing.returncode == 0 and "eugkm" in listing.stdout and "theta" in listing.stdout
    assert "iterations = 5 [1..10,000]" in listing.stdout  # a bounded parameter's range
    dry = _cli("run", str(path), "--dry-run")
    assert dry.returncode == 0 and "cells" in dry.stdout and "core-minutes" in dry.stdout
    two_out = _cli("run", str(path), str(path), "--out", str(tmp_path / "x"))
    assert two_out.returncode == 2 and "--out takes a single SPEC" in two_out.stderr
    assert "Traceback" not in two_out.stderr
    assert not (tmp_path / "results").exists()
    out = tmp_path / "o"
    assert _cli("run", str(path), "--out", str(out), "-q").returncode == 0
    (out / "figure.png").unlink()
    assert _cli("plot", str(path), "--out", str(out)).returncode == 0
    assert (out / "figure.png").is_file()
    summary = out / "summary.csv"
    good = summary.read_bytes()
    for tampered in (good.replace(b"\n", b"\n\n", 2), b"", good[: len(good) // 2]):
        summary.write_bytes(tampered)
        proc = _cli("plot", str(path), "--out", str(out))
        assert (
            proc.returncode == 5
            and "summary.csv: differs from what the verified cells give" in (proc.stderr)
        ), proc.stderr
        assert "Traceback" not in proc.stderr
    summary.unlink()
    proc = _cli("plot", str(path), "--out", str(out))
    assert proc.returncode == 2 and "no saved summary" in proc.stderr


def test_cli_failed_cell_exit_1_keeps_the_rest(tmp_path):
    # a plugin that raises: its cell fails, Lloyd's is kept
    (tmp_path / "broken.py").write_text(
        "from dpcluster.plugins import algorithm\n"
        "@algorithm(private=False, repeat=1)\n"
        "def broken(ctx):\n    raise ValueError('above max_cells')\n"
    )
    raw = {
        **TINY,
        "datasets": [{"name": "synthetic", "params": {"N": 300, "k": 2, "d": 2}}],
        "algorithms": [{"name": "lloyd"}, {"name": "broken:broken"}],
        "epsilon": [1.0],
    }
    path = tmp_path / "fail.yaml"
    path.write_text(yaml.safe_dump(raw))
    out = tmp_path / "o"
    proc = _cli("run", str(path), "--out", str(out), "-q")
    assert proc.returncode == 1, proc.stderr
    assert "FAILED" in proc.stderr and "max_cells" in proc.stderr
    runs = pd.read_csv(out / "runs.csv")
    assert set(runs["algorithm"]) == {"lloyd"}


def test_data_checksum_and_missing_file_errors(tmp_path):
    from dpcluster import data
    from dpcluster.errors import DataError

    src = data.FILES["s1"]
    bad = tmp_path / "s1.csv.gz"
    bad.write_bytes(b"not the file")
    with pytest.raises(DataError, match="checksum mismatch"):
        src.load(bad)
    with pytest.raises(DataError, match="missing"):
        src.load(tmp_path / "absent.csv.gz")
    ds = data.load("s1")
    assert ds.X.shape == (5000, 2) and ds.k == 15 and abs(ds.X).max() == 1.0
    assert data.load("image").standin and "stand-in" in data.load("gowalla").label


class _Ticks:
    """A stand-in for the heartbeat's stop event: ``wait`` times out ``n`` times, then
    reports the event set. No wall clock is involved."""

    def __init__(self, n: int):
        self.n = n

    def wait(self, timeout):
        self.n -= 1
        return self.n < 0

    def set(self):
        self.n = -1


def test_progress_heartbeat_prints_between_cells_and_stops(capsys):
    from dpcluster.cli import Progress

    p = Progress(tick=3600.0)  # no line is due by the clock: only the heartbeat draws
    p.stop = _Ticks(3)
    p(0, 4, 0.0)
    p.thread.join()  # three ticks while no cell finishes, then the (stand-in) event is set
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 + 3 and all("cells 0/4" in x and "ETA  -" in x for x in lines)
    p(2, 4, 0.5)
    p(4, 4, 1.0)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "cells 4/4" in lines[0] and "work 100%" in lines[0]
    p._heartbeat()  # finished: the event is set, the heartbeat draws nothing
    assert capsys.readouterr().err == ""


def test_progress_in_a_log_prints_at_most_one_line_per_tick(capsys):
    from dpcluster.cli import Progress

    p = Progress(tick=3600.0)  # not a terminal under pytest
    for done in range(50):
        p(done, 50, done / 50)
    p(50, 50, 1.0)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and "cells 0/50" in lines[0] and "cells 50/50" in lines[1]


_HELD = []


def _grow_on_second_task(i):
    """A task for a pool worker: its second task keeps 400 MB (touched) for the rest of
    the worker's life, more than loky's 300 MB leak allowance; every task takes 0.3 s,
    so loky's once-a-second memory check runs between them."""
    import os
    import time

    import numpy as np

    _HELD.append(None)
    if len(_HELD) == 2:
        _HELD.append(np.ones(50_000_000))
    time.sleep(0.3)
    return os.getpid()


@pytest.mark.slow
@pytest.mark.serial
def test_local_pool_keeps_its_workers_when_their_memory_grows():
    """A cell worker keeps every kernel it compiles, so its memory grows by design (by
    470 MB over fig6's shapes); the local pool must not replace it as a leak, which
    would load them all again. Without harness._keep_workers, loky replaces each worker
    that grew, so more than 2 processes answer."""
    from joblib import delayed

    pids = set(harness.local_pool(2)(delayed(_grow_on_second_task)(i) for i in range(16)))
    assert len(pids) <= 2


def test_progress_names_its_phases_and_the_last_call_writes_the_tables(tmp_path):
    from dpcluster.harness.run import COMPILING, RUNNING, WRITING

    calls = []
    harness.run_spec(_spec(tmp_path), tmp_path / "out", progress=lambda *a: calls.append(a))
    phases = [c[3] for c in calls]
    assert phases[0] == COMPILING and phases[-1] == WRITING
    assert set(phases[1:-1]) == {RUNNING} and calls[-1][2] == 1.0
    calls.clear()  # a rerun with every cell finished only writes the tables
    harness.run_spec(_spec(tmp_path), tmp_path / "out", progress=lambda *a: calls.append(a))
    assert [c[3] for c in calls] == [WRITING]


def test_dry_run_estimate_is_calibrated_by_this_machines_measured_cells(tmp_path):
    from dpcluster.harness.estimate import FACTOR_BOUNDS, STARTUP_S, calibration, estimate

    sp = _spec(tmp_path)
    cells = harness.expand(sp)
    assert calibration(tmp_path / "results") == (1.0, 0)  # nothing measured yet
    before = estimate(cells, jobs=2, results_root=tmp_path / "results")
    assert before.measured_cells == 0 and before.wall_s >= STARTUP_S
    harness.run_spec(sp, tmp_path / "results" / "tiny")
    factor, measured = calibration(tmp_path / "results")
    assert measured == len({c.id for c in cells}) and FACTOR_BOUNDS[0] <= factor <= FACTOR_BOUNDS[1]
    after = estimate(cells, jobs=2, results_root=tmp_path / "results")
    assert after.factor == factor and after.core_s == pytest.approx(before.core_s * factor)


def test_dry_run_charges_compilation_only_for_shapes_this_install_has_not_run(
    tmp_path, monkeypatch
):
    from dpcluster.harness.estimate import SHARED_SHAPES, compile_seconds

    monkeypatch.setenv("DPCLUSTER_CACHE", str(tmp_path / "cache"))  # the marks; numba keeps its
    sp = _spec(tmp_path)
    cells = harness.expand(sp)
    cold = compile_seconds(cells, jobs=2)
    keys = {key: c.info.compile_s for c in cells for key in harness.plan.compile_keys(c)}
    assert cold == pytest.approx(SHARED_SHAPES * max(keys.values()) + sum(keys.values()) / 2)
    harness.run_spec(sp, tmp_path / "out")
    assert compile_seconds(cells, jobs=2) == 0.0  # every key marked by the run
    wider = {"name": "synthetic", "params": {"N": 600, "k": 4, "d": 3}}  # a new k and d
    for c in harness.expand(_spec(tmp_path, datasets=[wider])):
        # each new value the entry compiles for costs its compile_s, without the base
        new = len(c.info.compile_on)
        assert compile_seconds([c], jobs=1) == pytest.approx(new * c.info.compile_s)


def test_more_jobs_than_cpus_warns_and_the_dry_run_counts_only_the_cpus(tmp_path):
    """--jobs above the CPUs says so once, and the dry run counts no more workers than
    CPUs (a run with more cells than CPUs is not faster for more workers)."""
    from dpcluster.harness.estimate import estimate, usable_cpus

    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(TINY))
    proc = _cli("run", str(path), "--out", str(tmp_path / "o"), "-q", "--jobs", "999")
    assert proc.returncode == 0, proc.stderr
    assert f"--jobs 999 is more than the {usable_cpus()} CPUs" in proc.stderr
    cells = harness.expand(spec.parse(TINY, str(path)))
    assert estimate(cells, 999).wall_s == estimate(cells, usable_cpus()).wall_s


def test_the_dry_run_charges_dplloyds_iterations():
    """Fitted at its default t = 5: t = 5 costs as before, t = 50 about ten times as much,
    and a per-iteration term makes many iterations on tiny data cost something."""
    from dpcluster.experiments import costs
    from dpcluster.experiments.protocol import CellShape

    def cost(t, N=10_000):
        shape = CellShape(
            N=N, d=5, k=5, epsilon=1.0, params={"iterations": t}, repeat=100, n_init=30
        )
        return costs.dplloyd(shape)

    work = 100 * 30 * 10_000 * 5 * 5 * costs.LLOYD_BATCH_S
    assert cost(5) == pytest.approx(work + 5 * costs.LLOYD_PASS_S)
    assert cost(50) == pytest.approx(10 * work + 50 * costs.LLOYD_PASS_S)
    assert cost(20_000, N=6) > 1.0


def _fresh_kernel(name: str):
    """A numba function no cache holds: calling it compiles it."""
    from numba import njit

    scope: dict = {}
    exec(f"def {name}(x):\n    return x * 2.5 + {len(name)}", scope)  # noqa: S102
    return njit(cache=False)(scope[name])


def test_compiling_times_this_threads_compilations_only():
    import threading

    from dpcluster.kernels.dispatch import compiling

    first, other = _fresh_kernel("first_kernel"), _fresh_kernel("other_kernel")
    with compiling() as timer:
        assert first(2.0) == 17.0
    assert timer.seconds > 0
    with compiling() as again:
        first(3.0)  # compiled already: nothing to time
    assert again.seconds == 0.0
    with compiling() as mine:
        worker = threading.Thread(target=other, args=(1.0,))
        worker.start()
        worker.join()
    assert mine.seconds == 0.0  # another thread's compilation is not this cell's


def test_a_cells_per_run_time_leaves_out_its_compilation(tmp_path, monkeypatch):
    """The first cell of a shape compiles: meta.json keeps its whole wall time and the
    compile seconds, and the runs' wall_time_s share what is left (Fig. 7 times the
    algorithm, not numba)."""
    import contextlib
    import time
    import types

    from dpcluster.harness import cells as cell_module

    @contextlib.contextmanager
    def half_compiling():
        timer, start = types.SimpleNamespace(seconds=0.0), time.perf_counter()
        yield timer
        timer.seconds = (time.perf_counter() - start) / 2

    monkeypatch.setattr(cell_module, "compiling", half_compiling)
    cell = next(c for c in harness.expand(_spec(tmp_path)) if c.algorithm.name == "dplloyd")
    outcome = harness.run_cell(cell)
    wall, compiled = outcome.meta["wall_time_s"], outcome.meta["compile_s"]
    assert 0 < compiled < wall
    assert outcome.rows["wall_time_s"].sum() == pytest.approx(wall - compiled, rel=1e-9)


def test_a_cold_cache_spreads_the_first_compilations_over_the_workers(tmp_path):
    """Heaviest first, except that with nothing compiled yet each kernel key's first cell
    leads, then the cells that compile nothing, then the rest: two workers do not start by
    compiling the same kernels side by side. A warm cache keeps the order."""
    from dpcluster.harness.plan import compile_keys
    from dpcluster.harness.run import spread_compilations

    order = harness.expand(_spec(tmp_path))
    assert spread_compilations(order, warm=lambda key: True) == order
    spread = spread_compilations(order, warm=lambda key: False)
    assert sorted(c.id for c in spread) == sorted(c.id for c in order)
    keys = [frozenset(compile_keys(c)) for c in spread]
    distinct = len({k for ks in keys for k in ks})
    leading = keys[:distinct]
    assert len(set().union(*leading)) == distinct  # every key compiled first by one cell
    assert all(ks - set().union(*keys[:i]) for i, ks in enumerate(leading))
    # a cell whose kernels are compiled already goes before the cold keys' other cells
    lloyd_warm = spread_compilations(order, warm=lambda key: key.startswith("lloyd@"))
    free = [i for i, c in enumerate(lloyd_warm) if c.algorithm.name == "lloyd"]
    later = len(set().union(*[set(compile_keys(c)) for c in order if c.algorithm.name != "lloyd"]))
    assert free == list(range(later, later + len(free)))
