"""Run planned specs: every unfinished cell once, heaviest first, in one pool; then each
spec's runs.csv, summary.csv, timing.csv, figure and meta.json, written atomically."""

from __future__ import annotations

import json
import os
import platform
import sys
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from .. import __version__, results
from ..cache import is_warm, mark_warm
from ..errors import DpclusterError, ResultsError
from ..spec import Spec
from .backends import BACKENDS, _execute, _execute_dask
from .cells import Cell, _git_commit
from .folders import _history, _previous, _relative, _tables, spec_inputs
from .plan import Failure, _data_warnings, _Plan, _plan, cell_cost, compile_keys


@dataclass(kw_only=True)
class RunReport:
    out: Path
    cells_total: int
    cells_computed: int
    cells_resumed: int
    failures: list[Failure]
    runs: pd.DataFrame
    summary: pd.DataFrame
    #: metric values that are inf or NaN (summary.csv's n_nonfinite); the run exits 1
    nonfinite: int = 0
    #: what planning warned about (an edited spec or input, a damaged cell recomputed)
    warnings: list[str] = field(default_factory=list)
    #: seconds of the computed cells spent compiling kernels (once per machine and shape)
    compile_s: float = 0.0
    #: runs whose centres depend on one noisy count only (:func:`results.degenerate_runs`)
    degenerate: int = 0


def _versions() -> dict:
    import joblib
    import numba
    import numpy

    return {
        "dpcluster": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "pandas": pd.__version__,
        "joblib": joblib.__version__,
    }


#: ``progress(cells_done, cells_total, work_fraction, phase)``; the fraction counts only the
#: work of cells computed in this invocation, weighted by :func:`cell_cost`, so an ETA from
#: it is not fooled by resumed cells or by cheap cells finishing first; ``phase`` is one of
#: :data:`PHASES`, the last once every cell is done.
ProgressFn = Callable[[int, int, float, str], None]

#: what a run is doing: until the first cell is back, the workers start and compile the
#: kernels its shapes need (the first time on this machine; docs/performance.md)
COMPILING, RUNNING, WRITING = (
    "starting workers, compiling kernels",
    "running cells",
    "writing tables and figures",
)
PHASES = (COMPILING, RUNNING, WRITING)


def run_specs(
    specs: list[tuple[Spec, Path | str | None]],
    jobs: int = 1,
    force: bool = False,
    progress: ProgressFn | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> list[RunReport]:
    """Run every unfinished cell of several specs in one worker pool, then write each
    spec's tables under its ``out`` (default ``results/<name>``).

    A cell needed by several specs (same id) is computed once and written to each. Cells
    start heaviest first (:func:`cell_cost`), so the pool does not end on one long cell.
    With ``jobs > 1`` the specs' tables and figures are also written in parallel (each spec
    writes only under its own ``out``). ``backend``: ``"local"`` (joblib processes on this
    machine) or ``"dask"`` (a Dask cluster at ``scheduler``, or a LocalCluster of ``jobs``
    workers; docs/cluster.md). Results do not depend on either.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
    outs = [Path(out) if out is not None else spec.default_out for spec, out in specs]
    for i, out in enumerate(outs):
        if out in outs[:i]:
            raise ResultsError(
                f"{out}: two specs in this run write here "
                f"({specs[outs.index(out)][0].path} and {specs[i][0].path}); "
                "give them different names"
            )
    with ExitStack() as locks:  # every folder is locked until its tables are written
        plans = [_plan(spec, out, force, locks, on_warning) for spec, out in specs]
        return _run_plans(plans, jobs, force, progress, backend, scheduler)


def spread_compilations(order: list[Cell], warm=is_warm) -> list[Cell]:
    """``order`` (heaviest first) rearranged for a cold kernel cache: the first cell of each
    kernel key not compiled yet, then the cells that compile nothing, then the other cells
    of the cold keys. Heaviest first alone sends every worker to the same entry's biggest
    cells at the start, and each compiles the same kernels side by side (on fig1-s1,
    DPLloyd's and then EUGkM's, twice each); this way each worker compiles something else,
    or works while another compiles. With a warm cache the order is unchanged."""
    firsts, free, later, seen = [], [], [], set()
    for cell in order:
        cold = {key for key in compile_keys(cell) if not warm(key)}
        if not cold:
            free.append(cell)
        elif cold - seen:
            firsts.append(cell)
            seen |= cold
        else:
            later.append(cell)
    return firsts + free + later


def _run_plans(plans, jobs, force, progress, backend, scheduler) -> list[RunReport]:
    needed: dict[str, list[_Plan]] = {}
    unique: dict[str, Cell] = {}
    for plan in plans:
        for c in plan.todo:
            needed.setdefault(c.id, []).append(plan)
            unique.setdefault(c.id, c)
    cost = {cid: cell_cost(c) for cid, c in unique.items()}
    order = spread_compilations(sorted(unique.values(), key=lambda c: (-cost[c.id], c.id)))
    cells_total = sum(len(p.cells) for p in plans)
    done = cells_total - sum(len(p.todo) for p in plans)
    work_total, work_done = sum(cost.values()), 0.0
    if progress:
        progress(done, cells_total, 0.0 if order else 1.0, COMPILING if order else WRITING)
    outcomes = (
        _execute_dask(order, jobs, scheduler)
        if backend == "dask" and order
        else _execute(order, jobs)
    )
    for outcome in outcomes:
        cid = outcome.cell.id
        for plan in needed[cid]:
            done += 1
            if outcome.error:
                failure = Failure(outcome.cell.describe(), outcome.error, outcome.traceback)
                plan.failures.append(failure)
                results.write_failure(plan.out, cid, failure._asdict())
            else:
                results.write_cell(plan.out, cid, outcome.rows, outcome.meta)
                plan.compile_s += outcome.meta.get("compile_s", 0.0)
        if not outcome.error and backend != "dask":  # compiled on this machine
            for key in compile_keys(outcome.cell):
                mark_warm(key)
        work_done += cost[cid]
        if progress:
            work = work_done / work_total if work_total > 0 else 1.0
            progress(done, cells_total, work, RUNNING)
    if progress and order:
        progress(done, cells_total, 1.0, WRITING)
    if jobs > 1 and len(plans) > 1:  # tables and figures of different specs are independent
        from joblib import Parallel, delayed

        return Parallel(n_jobs=min(jobs, len(plans)))(delayed(_finish)(p, jobs) for p in plans)
    return [_finish(plan, jobs) for plan in plans]


def run_spec(
    spec: Spec,
    out: Path | str | None = None,
    jobs: int = 1,
    force: bool = False,
    progress: ProgressFn | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> RunReport:
    """Run every unfinished cell of ``spec`` and write the result tables under ``out``."""
    return run_specs([(spec, out)], jobs, force, progress, backend, scheduler, on_warning)[0]


def _finish(plan: _Plan, jobs: int) -> RunReport:
    """Collect a spec's finished cells into runs.csv, summary.csv, timing.csv, its figure
    and meta.json (all written atomically)."""
    spec, out, cells = plan.spec, plan.out, plan.cells
    runs, summary = _tables(spec, out, cells)
    failed_cells = len(plan.failures)
    # a cell finished earlier whose files no longer verify (something wrote over them during
    # the run) is left out of the tables: a failure of this run, never a silent gap
    failed = {f.what for f in plan.failures}
    for cell in cells:
        if cell.describe() not in failed and not results.cell_done(out, cell.id):
            problem = results.verify_cell(out, cell.id)
            plan.failures.append(
                Failure(
                    cell.describe(),
                    f"its result does not verify at the end of the run ({problem}); "
                    "run again to recompute it",
                )
            )
    results.atomic_write_text(out / "runs.csv", results.to_csv(runs))
    results.atomic_write_text(out / "summary.csv", results.to_csv(summary))
    if len(runs):
        results.atomic_write_text(out / "timing.csv", results.to_csv(results.timing(runs)))
    if len(summary) and spec.plot.kind != "none":
        from .. import plotting

        try:
            plotting.render(spec, summary, out)
        except DpclusterError:
            raise
        except Exception as exc:  # noqa: BLE001 - the tables stand; the figure is a failure
            plan.failures.append(
                Failure(
                    f"figure ({spec.plot.kind})",
                    f"{type(exc).__name__}: {exc}",
                    traceback.format_exc(),
                )
            )
    nonfinite = int(summary["n_nonfinite"].sum()) if "n_nonfinite" in summary.columns else 0
    degenerate = results.degenerate_runs(runs)
    computed = len(plan.todo) - failed_cells
    resumed = len(cells) - len(plan.todo)
    meta = {
        "spec": spec.raw,
        "spec_file": _relative(spec.path),
        "spec_from_out": os.path.relpath(Path(spec.path).resolve(), out.resolve()),
        "spec_hash": spec.hash,
        "inputs": spec_inputs(spec),
        "overrides": [f"{k}={v}" for k, v in spec.overrides],
        "versions": _versions(),
        "git_commit": _git_commit(),
        "started": plan.started,
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "jobs": jobs,
        "cells_total": len(cells),
        "cells_computed": computed,
        "cells_resumed": resumed,
        "cells_borrowed": len(plan.borrowed),
        "failures": [f._asdict() for f in plan.failures],
        "nonfinite_values": nonfinite,
        "degenerate_runs": degenerate,
        "argv": ["dpcluster", *(_relative(a) for a in sys.argv[1:])],
    }
    meta["data_warnings"] = sorted({w for ds in spec.datasets for w in _data_warnings(ds)})
    history = _history(out / "meta.json")
    meta["borrowed_from"] = {
        **_previous(out / "meta.json").get("borrowed_from", {}),
        **plan.borrowed,
    }
    meta["history"] = history + [
        {
            key: meta[key]
            for key in (
                "started",
                "finished",
                "git_commit",
                "jobs",
                "cells_computed",
                "cells_resumed",
                "cells_borrowed",
                "failures",
                "argv",
            )
        }
    ]
    results.atomic_write_text(out / "meta.json", json.dumps(meta, indent=1, default=str))
    return RunReport(
        out=out,
        cells_total=len(cells),
        cells_computed=computed,
        cells_resumed=resumed,
        failures=plan.failures,
        runs=runs,
        summary=summary,
        nonfinite=nonfinite,
        warnings=plan.warnings,
        compile_s=plan.compile_s,
        degenerate=degenerate,
    )
