"""Expand a spec into cells, run them (in parallel through joblib), cache and resume.

A *cell* is one (dataset, algorithm variant, ε). It is the unit of work, of caching and of
resumption: a finished cell is written atomically under ``results/<spec>/cells/`` and is
never recomputed without ``force``. A run's random streams derive from the cell's identity
and the run's (init, rep) index (see :mod:`dpcluster.rng`), so results do not depend on
``jobs`` or on the order in which cells finish.
"""

from __future__ import annotations

import json
import math
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from . import __version__, data, results
from .algorithms.registry import ALGORITHMS, CellContext
from .rng import StreamFactory, canonical, identity_hex
from .spec import AlgorithmSpec, DatasetSpec, Spec

RUN_COLUMNS = ["dataset", "dataset_label", "standin", "N", "d", "k", "algorithm", "variant",
               "params", "epsilon", "init", "rep", "nicv", "epsilon_spent", "iterations",
               "seed", "stream", "cell", "wall_time_s"]


@dataclass(frozen=True)
class Cell:
    dataset: DatasetSpec
    algorithm: AlgorithmSpec
    epsilon: float  # math.inf for a non-private algorithm
    seed: int
    n_init: int
    init_method: str

    @property
    def identity(self) -> dict:
        return {"seed": self.seed, "dataset": self.dataset.key, "algorithm": self.algorithm.name,
                "params": self.algorithm.kwargs, "epsilon": self.epsilon,
                "repeat": self.algorithm.repeat, "init": [self.n_init, self.init_method]}

    @property
    def id(self) -> str:
        return identity_hex(self.identity)

    @property
    def stream_prefix(self) -> tuple:
        return (self.dataset.key, self.algorithm.name, canonical(self.algorithm.kwargs),
                repr(self.epsilon))

    @property
    def n_runs(self) -> int:
        return ALGORITHMS[self.algorithm.name].count_runs(self.algorithm.repeat, self.n_init)

    def describe(self) -> str:
        eps = "-" if math.isinf(self.epsilon) else f"{self.epsilon:g}"
        return f"{self.dataset.key} {self.algorithm.variant} eps={eps}"


def expand(spec: Spec) -> list[Cell]:
    """One cell per dataset × algorithm variant × ε (non-private algorithms: one ε = ∞)."""
    cells = []
    for ds in spec.datasets:
        for alg in spec.algorithms:
            eps_grid = spec.epsilon if ALGORITHMS[alg.name].private else (math.inf,)
            cells += [Cell(ds, alg, eps, spec.seed, spec.init.sets, spec.init.method)
                      for eps in eps_grid]
    return cells


@dataclass
class CellOutcome:
    cell: Cell
    rows: pd.DataFrame | None = None
    meta: dict = field(default_factory=dict)
    error: str = ""


def run_cell(cell: Cell, numba_threads: int | None = None) -> CellOutcome:
    """Compute one cell. Never raises: a failure comes back as ``CellOutcome.error``."""
    try:
        if numba_threads:
            import numba

            numba.set_num_threads(numba_threads)
        ds = data.load(cell.dataset.name, **cell.dataset.kwargs)
        info = ALGORITHMS[cell.algorithm.name]
        streams = StreamFactory(cell.seed, cell.stream_prefix)
        init_streams = StreamFactory(cell.seed, (cell.dataset.key, "k", ds.k))
        ctx = CellContext(ds, ds.k, cell.epsilon, cell.algorithm.kwargs, cell.algorithm.repeat,
                          cell.n_init, cell.init_method, streams, init_streams)
        start = time.perf_counter()
        rows, ledger = info.run_cell(ctx)
        wall = time.perf_counter() - start
        df = pd.DataFrame(rows)
        df.insert(0, "dataset", cell.dataset.key)
        df.insert(1, "dataset_label", ds.label)
        df.insert(2, "standin", ds.standin)
        df.insert(3, "N", ds.N)
        df.insert(4, "d", ds.d)
        df.insert(5, "k", ds.k)
        df.insert(6, "algorithm", cell.algorithm.name)
        df.insert(7, "variant", cell.algorithm.variant)
        df.insert(8, "params", canonical(cell.algorithm.kwargs))
        df.insert(9, "epsilon", cell.epsilon)
        df["seed"] = cell.seed
        df["stream"] = [identity_hex((*cell.stream_prefix, "run", int(i), int(r)))
                        for i, r in zip(df["init"], df["rep"])]
        df["cell"] = cell.id
        df["wall_time_s"] = wall / len(df)  # amortised: runs of a cell share kernel passes
        extra = [c for c in df.columns if c not in RUN_COLUMNS]
        df = df[[c for c in RUN_COLUMNS if c in df.columns] + extra]
        meta = {"identity": cell.identity, "ledger": ledger, "wall_time_s": wall,
                "n_runs": len(df), "numba_threads": numba_threads}
        return CellOutcome(cell, df, meta)
    except Exception as exc:  # noqa: BLE001 - reported per cell, the rest of the spec goes on
        return CellOutcome(cell, error=f"{type(exc).__name__}: {exc}")


@dataclass
class RunReport:
    out: Path
    cells_total: int
    cells_computed: int
    cells_resumed: int
    failures: list[tuple[str, str]]
    runs: pd.DataFrame
    summary: pd.DataFrame


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _versions() -> dict:
    import joblib
    import numba
    import numpy

    return {"dpcluster": __version__, "python": platform.python_version(),
            "numpy": numpy.__version__, "numba": numba.__version__, "pandas": pd.__version__,
            "joblib": joblib.__version__}


ProgressFn = Callable[[int, int, int, int], None]


def run_spec(spec: Spec, out: Path | str | None = None, jobs: int = 1, force: bool = False,
             progress: ProgressFn | None = None) -> RunReport:
    """Run every unfinished cell of ``spec`` and write the result tables under ``out``.

    ``progress(cells_done, cells_total, runs_done, runs_total)`` is called as cells finish.
    """
    out = Path(out) if out is not None else Path("results") / spec.name
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    cells = expand(spec)
    todo = [c for c in cells if force or not results.cell_done(out, c.id)]
    if not force:  # the same cell finished for another spec is reused byte for byte
        todo = [c for c in todo if not results.borrow_cell(out, c.id)]
    resumed = len(cells) - len(todo)
    runs_total = sum(c.n_runs for c in cells)
    runs_done = sum(c.n_runs for c in cells if c not in todo)
    done = resumed
    if progress:
        progress(done, len(cells), runs_done, runs_total)
    failures: list[tuple[str, str]] = []
    for outcome in _execute(todo, jobs):
        done += 1
        if outcome.error:
            failures.append((outcome.cell.describe(), outcome.error))
        else:
            results.write_cell(out, outcome.cell.id, outcome.rows, outcome.meta)
            runs_done += outcome.cell.n_runs
        if progress:
            progress(done, len(cells), runs_done, runs_total)
    ok = [c for c in cells if results.cell_done(out, c.id)]
    runs = pd.concat([results.read_cell(out, c.id) for c in ok], ignore_index=True) if ok \
        else pd.DataFrame(columns=RUN_COLUMNS)
    summary = results.summarise(runs, spec.metrics) if len(runs) else pd.DataFrame()
    results.atomic_write_text(out / "runs.csv", results.to_csv(runs))
    results.atomic_write_text(out / "summary.csv", results.to_csv(summary))
    if len(runs):
        results.atomic_write_text(out / "timing.csv", results.to_csv(results.timing(runs)))
    if len(summary) and spec.plot.kind != "none":
        from . import plotting

        plotting.render(spec, summary, out)
    meta = {"spec": spec.raw, "spec_file": spec.path, "spec_hash": spec.hash,
            "versions": _versions(), "git_commit": _git_commit(), "started": started,
            "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "jobs": jobs, "cells_total": len(cells), "cells_computed": len(todo) - len(failures),
            "cells_resumed": resumed, "failures": failures, "argv": sys.argv}
    results.atomic_write_text(out / "meta.json", json.dumps(meta, indent=1, default=str))
    return RunReport(out, len(cells), len(todo) - len(failures), resumed, failures, runs, summary)


def _execute(todo: list[Cell], jobs: int):
    """Yield a CellOutcome per cell as it finishes. ``jobs == 1`` runs in-process."""
    if jobs <= 1 or len(todo) <= 1:
        for cell in todo:
            yield run_cell(cell)
        return
    from joblib import Parallel, delayed

    threads = 1  # one process per job; numba inside each worker runs single-threaded
    yield from Parallel(n_jobs=jobs, return_as="generator_unordered")(
        delayed(run_cell)(c, threads) for c in todo)
