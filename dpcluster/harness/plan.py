"""Before any work: check a spec against its data, claim its results folder, and find
which cells are finished, borrowable from a sibling folder, or still to run."""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from .. import data, results
from ..errors import ResultsError, SpecError
from ..spec import DatasetSpec, Spec
from .cells import Cell, expand
from .folders import _previous, _spec_location, spec_inputs

#: bytes one run's row costs while runs.csv is assembled (measured on Figure 1: ~0.4 kB)
ROW_BYTES = 600


@functools.lru_cache(maxsize=256)
def _data_warnings(ds_spec: DatasetSpec) -> tuple[str, ...]:
    """:func:`data.warnings_for` once per dataset (the check and meta.json both need it)."""
    return tuple(data.warnings_for(data.load(ds_spec.name, **ds_spec.kwargs)))


def check_spec(spec: Spec) -> list[str]:
    """Check a spec against its data before any work: every dataset loads, has k ≤ N, and
    the runs' rows fit in memory. Raises DataError (loading) or SpecError, each one line;
    returns warnings (constant columns, fewer distinct records than k) for meta.json and
    stderr."""
    warnings = []
    for ds_spec in spec.datasets:
        ds = data.load(ds_spec.name, **ds_spec.kwargs)
        if ds.k > ds.N:
            raise SpecError(
                spec.path,
                f"datasets[{ds_spec.name}].params.k" if "k" in ds_spec.kwargs else "datasets",
                ds.k,
                f"is more than the N = {ds.N} records of dataset {ds_spec.key}: k clusters "
                "need at least k records",
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
            f"algorithms[{heavy.name}].repeat",
            heavy.repeat,
            f"with init.sets = {spec.init.sets} gives {runs:,} runs, whose rows need about "
            f"{need / 2**30:.1f} GiB; this machine has {have / 2**30:.1f} GiB",
            "lower repeat or init.sets",
        )
    return warnings


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


def compile_keys(cell: Cell) -> list[str]:
    """What a cell compiles on first contact: one key per shape value its entry's kernels
    are compiled for (``compile_on``: DPLloyd's per d, EUGkM's grid per k). The harness
    marks them in the kernel cache once the cell is computed; ``run --dry-run`` charges
    the entry's ``compile_s`` for each key not yet marked."""
    info, shape = cell.info, cell.shape
    entry = f"{cell.algorithm.name}@{cell.algorithm.source or ''}"
    return [f"{entry}:{axis}={getattr(shape, axis)}" for axis in info.compile_on]


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
    #: what planning found legal but worth saying (the caller shows them)
    warnings: list[str] = field(default_factory=list)
    #: seconds the cells computed for it spent compiling kernels (cells' ``compile_s``)
    compile_s: float = 0.0


#: ``warn(message)``: how planning reports a warning (the harness never prints)
WarnFn = Callable[[str], None]


def _check_owner(spec: Spec, out: Path, force: bool, warn: WarnFn) -> None:
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
    warn(
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


def _changed_inputs(plan: _Plan, warn: WarnFn) -> None:
    """Say which of the spec's input files changed since the folder was last written, and
    how many cells are recomputed because of each (one line per file)."""
    before = _previous(plan.out / "meta.json").get("inputs", {})
    if not isinstance(before, dict):
        return
    for rel, digest in spec_inputs(plan.spec).items():
        if before.get(rel) not in (None, digest):
            n = sum(rel in c.inputs for c in plan.todo)
            warn(
                f"{rel} changed since {plan.out} was written: {n} cell(s) that read it recomputed"
                if n
                else f"{rel} changed since {plan.out} was written, but gives the same numbers: "
                "its cells are reused"
            )


def _plan(
    spec: Spec, out: Path | str | None, force: bool, locks: ExitStack, on_warning=None
) -> _Plan:
    """Claim ``out`` (locked until ``locks`` closes) and find the cells left to run; each
    warning goes to the plan's ``warnings`` and to ``on_warning`` when given."""
    said: list[str] = []

    def warn(message: str) -> None:
        said.append(message)
        if on_warning is not None:
            on_warning(message)

    out = Path(out) if out is not None else spec.default_out
    _check_out(spec, out)
    results.check_writable(out)
    locks.enter_context(results.FolderLock(out))
    _check_owner(spec, out, force, warn)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    cells = expand(spec)
    todo = [c for c in cells if force or not results.cell_done(out, c.id, warn)]
    borrowed = {}
    if not force:  # the same cell finished for another spec is reused byte for byte
        for c in list(todo):
            source = results.borrow_cell(out, c.id)
            if source is not None:
                borrowed[c.id] = source.name
                todo.remove(c)
    plan = _Plan(spec, out, started, cells, todo, borrowed=borrowed, warnings=said)
    _changed_inputs(plan, warn)
    return plan
