"""Expand a spec into cells, run them (in parallel through joblib), cache and resume.

A *cell* is one (dataset, algorithm variant, ε). It is the unit of work, of caching and of
resumption: a finished cell is written atomically under ``results/<spec>/cells/`` and is
never recomputed without ``force``. A run's random streams derive from the cell's identity
and the run's (init, rep) index (see :mod:`dpcluster.rng`), so results do not depend on
``jobs`` or on the order in which cells finish.
"""

from __future__ import annotations

import functools
import json
import math
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from . import __version__, data, plugins, results
from .errors import DataError, DpclusterError, ResultsError, SpecError
from .experiments import ALGORITHMS, CellContext, CellShape, lookup
from .experiments.registry import plugin_code
from .privacy import LOCAL
from .rng import StreamFactory, canonical, identity_hex
from .spec import AlgorithmSpec, DatasetSpec, Spec

#: runs.csv's columns: a cell's grouping columns (results.GROUP), then each run's own
RUN_COLUMNS = [
    *results.GROUP,
    "init",
    "rep",
    "nicv",
    "epsilon_claimed",
    "epsilon_provable",
    "bounds",
    "iterations",
    "seed",
    "stream",
    "cell",
    "wall_time_s",
]


@dataclass(frozen=True)
class Cell:
    dataset: DatasetSpec
    algorithm: AlgorithmSpec
    epsilon: float  # math.inf for a non-private algorithm
    seed: int
    n_init: int
    init_method: str

    @property
    def info(self):
        """The algorithm's registry entry (built-in or plugin)."""
        return lookup(self.algorithm.name, self.algorithm.source)

    @functools.cached_property
    def run_params(self) -> dict:
        """The parameters that determine the computation: the spec's, or the entry's
        ``canonical`` view of them (EUGkM: m in place of θ and rounding)."""
        info = self.info
        if info.canonical is None:
            return self.algorithm.kwargs
        return info.canonical(self.shape)

    @property
    def identity(self) -> dict:
        """What determines the cell's numbers, and nothing else: the root seed, the
        dataset's parameters with each data file's sha256 (never its path), the algorithm,
        its parameters and, for a plugin, the sha256 of its code files."""
        out = {
            "seed": self.seed,
            "dataset": self.dataset.identity_key,
            "algorithm": self.algorithm.name,
            "params": self.run_params,
            "epsilon": self.epsilon,
            "repeat": self.algorithm.repeat,
            "init": [self.n_init, self.init_method],
        }
        if self.algorithm.code:
            out["code"] = [list(f) for f in self.algorithm.code]
        return out

    @property
    def inputs(self) -> dict[str, str]:
        """The files the cell reads, relative to the spec's folder -> sha256."""
        files = {rel: digest for _, rel, digest in self.dataset.files}
        return {**files, **dict(self.algorithm.code)}

    @property
    def id(self) -> str:
        return identity_hex(self.identity)

    @property
    def stream_prefix(self) -> tuple:
        arithmetic = self.info.arithmetic
        drawn = {key: v for key, v in self.run_params.items() if key not in arithmetic}
        prefix = (self.dataset.identity_key, self.algorithm.name, canonical(drawn))
        if self.algorithm.code:
            prefix += (canonical(self.algorithm.code),)
        return (*prefix, repr(self.epsilon))

    @functools.cached_property
    def shape(self) -> CellShape:
        """The cell as its entry's planning callables see it (the dataset is loaded once,
        from the loader's cache)."""
        ds = data.load(self.dataset.name, **self.dataset.kwargs)
        return CellShape(
            ds.N,
            ds.d,
            ds.k,
            self.epsilon,
            self.algorithm.kwargs,
            self.algorithm.repeat,
            self.n_init,
        )

    @property
    def n_runs(self) -> int:
        return self.info.count_runs(self.shape)

    def describe(self) -> str:
        eps = "-" if math.isinf(self.epsilon) else f"{self.epsilon:g}"
        return f"{self.dataset.key} {self.algorithm.variant} eps={eps}"


def expand(spec: Spec) -> list[Cell]:
    """One cell per dataset × algorithm variant × ε (non-private algorithms: one ε = ∞)."""
    cells = []
    for ds in spec.datasets:
        for alg in spec.algorithms:
            eps_grid = spec.epsilon if lookup(alg.name, alg.source).private else (math.inf,)
            cells += [
                Cell(ds, alg, eps, spec.seed, spec.init.sets, spec.init.method) for eps in eps_grid
            ]
    return cells


@dataclass
class CellOutcome:
    cell: Cell
    rows: pd.DataFrame | None = None
    meta: dict = field(default_factory=dict)
    error: str = ""
    #: the failure's traceback (``run --traceback`` prints it; meta.json keeps it)
    traceback: str = ""


class CellFailure(Exception):
    """A cell cannot run as the spec was read (its plugin's code changed since)."""


def run_cell(cell: Cell, numba_threads: int | None = None) -> CellOutcome:
    """Compute one cell. Never raises: a failure comes back as ``CellOutcome.error``, with
    its traceback."""
    try:
        if numba_threads:
            import numba

            numba.set_num_threads(numba_threads)
        ds = data.load(cell.dataset.name, **cell.dataset.kwargs)
        info = cell.info
        plugin = cell.algorithm.name not in ALGORITHMS
        if plugin and plugin_code(cell.algorithm.name, cell.algorithm.source) != (
            cell.algorithm.code
        ):
            raise CellFailure(
                f"{cell.algorithm.name}: its code changed since the spec was read; run again"
            )
        streams = StreamFactory(cell.seed, cell.stream_prefix)
        init_streams = StreamFactory(cell.seed, (cell.dataset.identity_key, "k", ds.k))
        ctx = CellContext(
            ds,
            ds.k,
            cell.epsilon,
            cell.algorithm.kwargs,
            cell.algorithm.repeat,
            cell.n_init,
            cell.init_method,
            streams,
            init_streams,
        )
        start = time.perf_counter()
        rows, ledger = info.run_cell(ctx)
        wall = time.perf_counter() - start
        if plugin:
            plugins.enforce(cell.algorithm.name, info, ctx, rows, ledger)
        if not len(rows):
            raise CellFailure(f"{cell.algorithm.name} returned no rows")
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
        df["bounds"] = ds.bounds
        df["seed"] = cell.seed
        if "stream" not in df.columns:  # entries that draw ("run", init, rep) say nothing
            df["stream"] = [
                identity_hex((*cell.stream_prefix, "run", int(i), int(r)))
                for i, r in zip(df["init"], df["rep"])
            ]
        df["cell"] = cell.id
        df["wall_time_s"] = wall / len(df)  # amortised: runs of a cell share kernel passes
        extra = [c for c in df.columns if c not in RUN_COLUMNS]
        df = df[[c for c in RUN_COLUMNS if c in df.columns] + extra]
        ledger = {**ledger, "bounds": ds.bounds}
        declared_domain = ledger.get("neighbouring") == LOCAL and ds.domain_lo is not None
        if ds.bounds == "data" and ledger.get("entries") and not declared_domain:
            ledger["note"] = (
                "ε assumes public bounds: the data were scaled by their own min "
                "and max (bounds: data)"
            )
        meta = {
            "identity": cell.identity,
            "ledger": ledger,
            "wall_time_s": wall,
            "n_runs": len(df),
            "numba_threads": numba_threads,
            "dpcluster": __version__,
            "git_commit": _git_commit(),
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        return CellOutcome(cell, df, meta)
    except Exception as exc:  # noqa: BLE001 - reported per cell, the rest of the spec goes on
        return CellOutcome(
            cell, error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()
        )


#: bytes one run's row costs while runs.csv is assembled (measured on Figure 1: ~0.4 kB)
ROW_BYTES = 600


@functools.lru_cache(maxsize=256)
def _data_warnings(ds_spec: DatasetSpec) -> tuple[str, ...]:
    """:func:`data.warnings_for` once per dataset (the check and meta.json both need it)."""
    return tuple(data.warnings_for(data.load(ds_spec.name, **ds_spec.kwargs)))


def check_spec(spec: Spec) -> list[str]:
    """Check a spec against its data before any work: every dataset loads, has k ≤ N, and
    the runs' rows fit in memory. Raises DataError/SpecError (one line); returns warnings
    (constant columns, fewer distinct records than k) for meta.json and stderr."""
    warnings = []
    for ds_spec in spec.datasets:
        ds = data.load(ds_spec.name, **ds_spec.kwargs)
        if ds.k > ds.N:
            raise DataError(
                f"{spec.path}: dataset {ds_spec.key}: k = {ds.k} clusters is more "
                f"than its N = {ds.N} records"
            )
        warnings += _data_warnings(ds_spec)
    cells = expand(spec)
    for c in cells:
        info = c.info
        if info.preflight is not None and (problem := info.preflight(c.shape)):
            param, why = problem
            where = f"algorithms[{c.algorithm.variant}]"
            raise SpecError(
                spec.path,
                f"{where}.params.{param}" if param else where,
                c.algorithm.kwargs.get(param) if param else c.algorithm.name,
                f"{why} (dataset {c.dataset.key})",
            )
    runs = sum(c.n_runs for c in cells)
    need, have = runs * ROW_BYTES, data.physical_memory()
    if need > have // 2:
        heavy = max(spec.algorithms, key=lambda a: a.repeat)
        raise SpecError(
            spec.path,
            "algorithms[].repeat",
            heavy.repeat,
            f"gives {runs:,} runs, whose rows need about {need / 2**30:.1f} GiB; "
            f"this machine has {have / 2**30:.1f} GiB",
        )
    return warnings


@dataclass
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


@functools.lru_cache(maxsize=1)
def _git_commit() -> str | None:
    try:
        return (
            subprocess.run(
                ["git", "rev-parse", "HEAD"],
                capture_output=True,
                text=True,
                cwd=Path(__file__).parent,
                timeout=5,
            ).stdout.strip()
            or None
        )
    except (OSError, subprocess.SubprocessError):
        return None


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


#: ``progress(cells_done, cells_total, work_fraction)``; the fraction counts only the work
#: of cells computed in this invocation, weighted by :func:`cell_cost`, so an ETA from it
#: is not fooled by resumed cells or by cheap cells finishing first.
ProgressFn = Callable[[int, int, float], None]


#: seconds every cell costs besides its algorithm's work (median of the measured small cells)
CELL_OVERHEAD_S = 0.2


def cell_cost(cell: Cell) -> float:
    """A rough work estimate for one cell (arbitrary units, about seconds on one core).

    Used only to start the heaviest cells first and to weight the progress ETA; it never
    affects results. Entries that declare ``cost`` (EUGkM, the hybrid, PGkM, GkM, Paper B's)
    give their own; otherwise a cell costs ``runs · N · k · d · 1.5 ns`` (a few batched data
    passes per run, which fits DPLloyd). Every cell also pays ``CELL_OVERHEAD_S`` (loading, NICV,
    writing), which is most of the time of the ~1,000 small cells of ``make reproduce-all``.
    """
    info = cell.info
    ds = data.load(cell.dataset.name, **cell.dataset.kwargs)
    if info.cost is not None:
        work = info.cost(cell.shape)
    else:
        work = cell.n_runs * ds.N * ds.k * ds.d * 1.5e-9
    return CELL_OVERHEAD_S + work


class Failure(NamedTuple):
    """A cell that failed: what it was, the one-line error, and the traceback."""

    what: str
    error: str
    traceback: str = ""


@dataclass
class _Plan:
    """One spec's cells and where they stand before any work starts."""

    spec: Spec
    out: Path
    started: str
    cells: list[Cell]
    todo: list[Cell]
    failures: list[Failure] = field(default_factory=list)
    #: cell id -> the sibling folder it was copied from
    borrowed: dict[str, str] = field(default_factory=dict)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _spec_location(meta: dict, out: Path) -> Path | None:
    """Where the spec that wrote a results folder lives, from its meta.json: ``spec_from_out``
    (relative to the folder, so it moves with a copied experiment), else ``spec_file``."""
    rel = meta.get("spec_from_out")
    if isinstance(rel, str):
        return (out / rel).resolve()
    file = meta.get("spec_file")
    return Path(file).resolve() if isinstance(file, str) else None


def _check_owner(spec: Spec, out: Path, force: bool) -> None:
    """A folder written by another spec file (another hash under the same name) is not
    overwritten without ``force``; the same file, edited, resumes with a warning."""
    old = _previous(out / "meta.json")
    if not old or old.get("spec_hash") in (None, spec.hash):
        return
    where = _spec_location(old, out)
    if where not in (None, Path(spec.path).resolve()) and not force:
        raise ResultsError(
            f"{out}: written by spec {old.get('spec_file')} (hash {str(old['spec_hash'])[:12]}),"
            f" not by {spec.path} (hash {spec.hash[:12]}); give this spec another name or "
            "--out, or pass --force to replace those results"
        )
    _warn(
        f"{spec.path} changed since {out} was written; finished cells that still belong "
        "to it are reused"
    )


def _check_out(spec: Spec, out: Path) -> None:
    """``out`` may not be, or contain, the spec's own folder or any file it reads: the
    tables, meta.json and cells/ would land among the user's files."""
    target = out.resolve()
    inputs = [Path(spec.path).resolve()]
    inputs += [Path(dict(ds.params)[p]).resolve() for ds in spec.datasets for p, _, _ in ds.files]
    for a in spec.algorithms:
        inputs += [(Path(a.source) / rel).resolve() for rel, _ in a.code]
    for path in inputs:
        if path == target or target in path.parents:
            raise ResultsError(
                f"{out}: holds the spec's own input {path.name}; results would be written "
                "among it; choose an --out outside the spec's folder or a sub-folder"
            )


def spec_inputs(spec: Spec) -> dict[str, str]:
    """Every file a spec's cells read (relative to its folder) -> sha256 (meta.json)."""
    out: dict[str, str] = {}
    for ds in spec.datasets:
        out.update({rel: digest for _, rel, digest in ds.files})
    for a in spec.algorithms:
        out.update(dict(a.code))
    return dict(sorted(out.items()))


def _changed_inputs(plan: _Plan) -> None:
    """Say which of the spec's input files changed since the folder was last written, and
    how many cells are recomputed because of each (one line per file)."""
    before = _previous(plan.out / "meta.json").get("inputs", {})
    if not isinstance(before, dict):
        return
    for rel, digest in spec_inputs(plan.spec).items():
        if before.get(rel) not in (None, digest):
            n = sum(rel in c.inputs for c in plan.todo)
            _warn(
                f"{rel} changed since {plan.out} was written: {n} cell(s) that read it recomputed"
            )


def _plan(spec: Spec, out: Path | str | None, force: bool, locks: ExitStack) -> _Plan:
    out = Path(out) if out is not None else spec.default_out
    _check_out(spec, out)
    results.check_writable(out)
    locks.enter_context(results.FolderLock(out))
    _check_owner(spec, out, force)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    cells = expand(spec)
    todo = [c for c in cells if force or not results.cell_done(out, c.id, _warn)]
    borrowed = {}
    if not force:  # the same cell finished for another spec is reused byte for byte
        for c in list(todo):
            source = results.borrow_cell(out, c.id)
            if source is not None:
                borrowed[c.id] = source.name
                todo.remove(c)
    plan = _Plan(spec, out, started, cells, todo, borrowed=borrowed)
    _changed_inputs(plan)
    return plan


BACKENDS = ("local", "dask")


def run_specs(
    specs: list[tuple[Spec, Path | str | None]],
    jobs: int = 1,
    force: bool = False,
    progress: ProgressFn | None = None,
    backend: str = "local",
    scheduler: str | None = None,
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
        plans = [_plan(spec, out, force, locks) for spec, out in specs]
        return _run_plans(plans, jobs, force, progress, backend, scheduler)


def _run_plans(plans, jobs, force, progress, backend, scheduler) -> list[RunReport]:
    needed: dict[str, list[_Plan]] = {}
    unique: dict[str, Cell] = {}
    for plan in plans:
        for c in plan.todo:
            needed.setdefault(c.id, []).append(plan)
            unique.setdefault(c.id, c)
    cost = {cid: cell_cost(c) for cid, c in unique.items()}
    order = sorted(unique.values(), key=lambda c: (-cost[c.id], c.id))
    cells_total = sum(len(p.cells) for p in plans)
    done = cells_total - sum(len(p.todo) for p in plans)
    work_total, work_done = sum(cost.values()), 0.0
    if progress:
        progress(done, cells_total, 0.0 if order else 1.0)
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
        work_done += cost[cid]
        if progress:
            progress(done, cells_total, work_done / work_total if work_total > 0 else 1.0)
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
) -> RunReport:
    """Run every unfinished cell of ``spec`` and write the result tables under ``out``."""
    return run_specs([(spec, out)], jobs, force, progress, backend, scheduler)[0]


def _read_rows(out: Path, cell: Cell) -> pd.DataFrame:
    """A finished cell's rows, labelled with *this* spec's variant name and parameters.

    The label is presentation, not identity: a cell borrowed from a spec that left θ at its
    default says ``eugkm``, where the spec sweeping θ calls the same cell
    ``eugkm(theta=10.0)``; and θ = 2 and θ = 5 cells that resolve to the same EUGkM grid are
    one cell read under two labels.
    """
    rows = results.read_cell(out, cell.id)
    if cell.dataset.files:  # a data file is named by its path relative to *this* spec
        rows["dataset"] = cell.dataset.key
        rows["dataset_label"] = data.load(cell.dataset.name, **cell.dataset.kwargs).label
    rows["variant"] = cell.algorithm.variant
    rows["params"] = canonical(cell.algorithm.kwargs)
    return rows


def _tables(spec: Spec, out: Path, cells: list[Cell]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """runs.csv and summary.csv of a spec, from its verified cells, in spec order."""
    ok = [c for c in cells if results.cell_done(out, c.id)]
    runs = (
        pd.concat([_read_rows(out, c) for c in ok], ignore_index=True)
        if ok
        else pd.DataFrame(columns=RUN_COLUMNS)
    )
    summary = results.summarise(runs, spec.metrics) if len(runs) else pd.DataFrame()
    return runs, summary


def spec_folders(root: Path | str) -> list[Path]:
    """``root`` itself when its meta.json was written by ``dpcluster run`` for one spec;
    otherwise every folder directly under it with a meta.json (a results root, or the
    reference copy in docs/results, whose own meta.json describes the whole run)."""
    root = Path(root)
    children = sorted(p.parent for p in root.glob("*/meta.json"))
    own = root / "meta.json"
    if own.is_file() and ("spec" in _previous(own) or not children):
        return [root]
    return children


def list_results(root: Path | str) -> list[dict]:
    """Every spec folder under ``root`` (or ``root`` itself): spec name, hash, file,
    overrides, cells done / total, commit and finish time, from meta.json and the cells."""
    from . import spec as spec_mod

    rows = []
    for out in spec_folders(root):
        meta = _previous(out / "meta.json")
        if "spec" not in meta:
            continue
        try:
            location = _spec_location(meta, out)
            cells = expand(spec_mod.parse(meta["spec"], str(location or out / "spec.yaml")))
            done = sum(results.verify_cell(out, c.id) is None for c in cells)
            total = len(cells)
        except DpclusterError:
            done = total = -1
        rows.append(
            {
                "folder": str(out),
                "spec_name": str(meta["spec"].get("name", "")),
                "spec_hash": str(meta.get("spec_hash", "")),
                "spec_file": meta.get("spec_file"),
                "overrides": meta.get("overrides", []),
                "cells_done": done,
                "cells_total": total,
                "git_commit": meta.get("git_commit"),
                "finished": meta.get("finished"),
            }
        )
    return rows


def verify_folder(folder: Path | str) -> tuple[int, list[str]]:
    """Check a spec's results folder, or every spec folder (with a meta.json) under a
    results root: every cell of the spec verifies against its record, and runs.csv and
    summary.csv are exactly what its cells give. Returns (folders checked, problems)."""
    from . import spec as spec_mod

    folders = spec_folders(folder)
    problems: list[str] = []
    for out in folders:
        meta = _previous(out / "meta.json")
        if "spec" not in meta:
            problems.append(
                f"{out / 'meta.json'}: a reference copy (scripts/make_reference.py: "
                "summaries only, no cells), nothing to verify against"
                if "spec_file" in meta
                else f"{out / 'meta.json'}: unreadable or not written by dpcluster run"
            )
            continue
        location = _spec_location(meta, out)
        try:
            sp = spec_mod.parse(meta["spec"], str(location or out / "spec.yaml"))
        except DpclusterError as exc:
            problems.append(f"{out / 'meta.json'}: its spec no longer validates: {exc}")
            continue
        recorded = meta.get("inputs", {})
        changed = [
            f"{rel}: changed since {out} was written (sha256 {digest[:12]}…, recorded "
            f"{str(recorded[rel])[:12]}…); its cells and tables are stale, rerun the spec"
            for rel, digest in spec_inputs(sp).items()
            if isinstance(recorded, dict) and recorded.get(rel) not in (None, digest)
        ]
        if changed:  # the cells of the current inputs are missing, which says no more
            problems += changed
            continue
        cells = expand(sp)
        for c in cells:
            problem = results.verify_cell(out, c.id)
            if problem:
                problems.append(problem)
        runs, summary = _tables(sp, out, cells)
        for name, table in (("runs.csv", runs), ("summary.csv", summary)):
            path = out / name
            if not path.is_file():
                problems.append(f"{path}: missing")
            elif path.read_bytes() != results.to_csv(table).encode():
                problems.append(f"{path}: differs from what the verified cells give")
    return len(folders), problems


def _finish(plan: _Plan, jobs: int) -> RunReport:
    """Collect a spec's finished cells into runs.csv, summary.csv, timing.csv, its figure
    and meta.json (all written atomically)."""
    spec, out, cells = plan.spec, plan.out, plan.cells
    runs, summary = _tables(spec, out, cells)
    failed_cells = len(plan.failures)
    results.atomic_write_text(out / "runs.csv", results.to_csv(runs))
    results.atomic_write_text(out / "summary.csv", results.to_csv(summary))
    if len(runs):
        results.atomic_write_text(out / "timing.csv", results.to_csv(results.timing(runs)))
    if len(summary) and spec.plot.kind != "none":
        from . import plotting

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
    return RunReport(out, len(cells), computed, resumed, plan.failures, runs, summary, nonfinite)


def _relative(path: str) -> str:
    """An absolute path as a path relative to the working folder (meta.json records no
    absolute path); anything else unchanged."""
    return os.path.relpath(path) if os.path.isabs(path) else path


def _previous(meta_path: Path) -> dict:
    """The meta.json a previous invocation wrote, or {} when there is none or it is damaged."""
    try:
        old = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return old if isinstance(old, dict) else {}


def _history(meta_path: Path) -> list[dict]:
    """Earlier invocations recorded in meta.json (each run appends one entry)."""
    history = _previous(meta_path).get("history", [])
    return history if isinstance(history, list) else []


def _execute(todo: list[Cell], jobs: int):
    """Yield a CellOutcome per cell as it finishes. ``jobs == 1`` runs in-process."""
    if jobs <= 1 or len(todo) <= 1:
        for cell in todo:
            yield run_cell(cell)
        return
    from joblib import delayed

    threads = 1  # one process per job; numba inside each worker runs single-threaded
    yield from local_pool(jobs)(delayed(run_cell)(c, threads) for c in todo)


def local_pool(jobs: int):
    """A joblib pool of ``jobs`` loky worker processes yielding results as they finish,
    whose workers stay for the whole run (:func:`_keep_workers`)."""
    from joblib import Parallel

    return Parallel(n_jobs=jobs, return_as="generator_unordered", initializer=_keep_workers)


def _keep_workers():
    """Run in each new local worker: turn off loky's leak guard in this process.

    With psutil installed, loky replaces a worker whose memory grew by more than
    ``_MAX_MEMORY_LEAK_SIZE`` (300 MB) since its first task, assuming a leak. A cell
    worker's memory grows by design: it keeps the kernels generated and compiled for every
    shape (k, d) it meets, 3-20 MB each (fig6's 81 shapes grow one process by 470 MB), and a
    replaced worker loads them all again. A Dask worker has no such guard either. The limit
    is raised rather than psutil's use turned off, because without psutil loky runs a full
    garbage collection after a task every second instead (about 55 ms in a cell worker).
    ``_MAX_MEMORY_LEAK_SIZE`` is loky's module constant, read at every check;
    docs/decisions.md.
    """
    try:
        from joblib.externals.loky import process_executor
    except ImportError:  # a joblib without its vendored loky has no such guard
        return
    process_executor._MAX_MEMORY_LEAK_SIZE = sys.maxsize


def _execute_dask(todo: list[Cell], jobs: int, scheduler: str | None):
    """Yield a CellOutcome per cell from a Dask cluster: ``scheduler`` (an address such as
    ``tcp://host:8786``, or a scheduler file) or, without one, a LocalCluster of ``jobs``
    single-threaded worker processes. Workers compute and return rows; only this process
    writes, so no shared filesystem is assumed. Cells are submitted heaviest first (the
    order of ``todo``) with matching priorities."""
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler:
        client = (
            Client(scheduler_file=scheduler) if Path(scheduler).is_file() else Client(scheduler)
        )
    else:
        cluster = LocalCluster(
            n_workers=max(1, jobs), threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    try:
        futures = {
            client.submit(
                run_cell, c, 1, pure=False, key=f"dpcluster-cell-{c.id}", priority=len(todo) - i
            ): c
            for i, c in enumerate(todo)
        }
        for fut in as_completed(futures):
            if fut.status == "error":  # a worker died: the cell fails, the rest go on
                exc = fut.exception()
                yield CellOutcome(futures[fut], error=f"{type(exc).__name__}: {exc}")
            else:
                yield fut.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
