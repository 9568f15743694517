"""The Dask backend: the same bytes as the local pool, on a LocalCluster and on a scheduler
with two workers started as separate processes; resume works across backends."""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("distributed")

from dpcluster import harness  # noqa: E402
from dpcluster.spec import parse  # noqa: E402

SPEC = {
    "name": "dask",
    "seed": 4,
    "epsilon": [0.5, 1.0],
    "datasets": [{"name": "synthetic", "params": {"N": 400, "k": 3, "d": 2}}, {"name": "s1"}],
    "algorithms": [
        {"name": "lloyd"},
        {"name": "dplloyd", "repeat": 3},
        {"name": "eugkm", "repeat": 2},
        {"name": "gkm", "repeat": 2},
    ],
    "init": {"sets": 3},
    "plot": {"kind": "none"},
}


def _tables(out):
    runs = pd.read_csv(out / "runs.csv").drop(columns=["wall_time_s"])
    return (out / "summary.csv").read_bytes(), runs


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "dask"
    harness.run_spec(parse(SPEC, "d.yaml"), out, jobs=1)
    return _tables(out)


def test_local_cluster_gives_the_local_bytes(tmp_path, local):
    sp = parse(SPEC, "d.yaml")
    rep = harness.run_spec(sp, tmp_path / "dask", jobs=2, backend="dask")
    assert rep.cells_computed == len(harness.expand(sp)) and not rep.failures
    summary, runs = _tables(tmp_path / "dask")
    assert summary == local[0] and runs.equals(local[1])
    again = harness.run_spec(sp, tmp_path / "dask", jobs=2, backend="dask")
    assert again.cells_computed == 0 and again.cells_resumed == len(harness.expand(sp))


@pytest.mark.slow
@pytest.mark.serial
def test_scheduler_and_workers_in_separate_processes(tmp_path, local):
    dask = shutil.which("dask", path=str(Path(sys.executable).parent)) or "dask"
    file = tmp_path / "scheduler.json"
    procs = [
        subprocess.Popen(
            [
                dask,
                "scheduler",
                "--scheduler-file",
                str(file),
                "--port",
                "0",
                "--dashboard-address",
                ":0",
            ],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not file.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        procs.append(
            subprocess.Popen(
                [
                    dask,
                    "worker",
                    "--scheduler-file",
                    str(file),
                    "--nworkers",
                    "2",
                    "--nthreads",
                    "1",
                    "--dashboard-address",
                    ":0",
                ],
                cwd=tmp_path,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        from dask.distributed import Client

        with Client(scheduler_file=str(file), timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        rep = harness.run_spec(
            parse(SPEC, "d.yaml"), tmp_path / "dask", backend="dask", scheduler=str(file)
        )
        assert not rep.failures
        summary, runs = _tables(tmp_path / "dask")
        assert summary == local[0] and runs.equals(local[1])
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def test_cli_backend_flags(tmp_path):
    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, "datasets": SPEC["datasets"][:1]}))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpcluster.cli",
            "run",
            str(spec),
            "--scheduler",
            "tcp://127.0.0.1:1",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 2 and "--scheduler needs --backend dask" in proc.stderr


@pytest.mark.parametrize(
    "scheduler, words",
    [
        ("foo://bar", "cannot connect to a Dask scheduler (ValueError: unknown address scheme"),
        ("sched.json", "not a Dask scheduler file"),
    ],
)
def test_a_scheduler_that_cannot_be_reached_is_one_line(tmp_path, scheduler, words):
    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, "datasets": SPEC["datasets"][:1]}))
    (tmp_path / "sched.json").write_text('{"x": 1}')
    proc = subprocess.run(
        [sys.executable, "-m", "dpcluster.cli", "run", str(spec), "-q"]
        + ["--backend", "dask", "--scheduler", scheduler],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
