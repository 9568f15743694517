"""What ``run --dry-run`` predicts: a spec's wall-clock time on this machine.

The entries' cost models (:func:`~.plan.cell_cost`, fitted on measured runs of the
bundled specs; docs/performance.md) are scaled by this machine's own measurements when it
has any: the ``timing.csv`` of every results folder under the results root, set against
what the model predicts for the same cells. To the cells' work, divided over the workers,
it adds the start of the process and its workers and the first compilations: a base when
this install has compiled nothing yet, and each entry's ``compile_s`` for every shape value
its kernels are compiled for that the kernel cache has no mark of
(:func:`~.plan.compile_keys`).
``scripts/bench_estimate.py`` measures how close it comes, spec by spec.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..cache import any_warm, is_warm
from .cells import Cell, expand
from .folders import _previous, _spec_location, spec_folders
from .plan import cell_cost, compile_keys

#: seconds a run takes besides its cells: the interpreter, the imports, the workers' start
STARTUP_S = 1.5
#: an install's first compilation of the kernels every shape shares costs about this many
#: shapes' ``compile_s`` (Paper A's: about 8 s; docs/performance.md); a warm cache loads
#: them in about a second
SHARED_SHAPES = 4.0
#: the calibration factor is kept within these bounds (a handful of odd cells must not
#: move every estimate by orders of magnitude)
FACTOR_BOUNDS = (0.2, 5.0)


@dataclass(frozen=True, kw_only=True)
class Estimate:
    """cells: cells to compute; core_s: their work in core-seconds (calibrated); wall_s: the
    predicted wall-clock time with ``jobs`` workers; factor: this machine's measured time
    over the model's (1.0 when nothing was measured yet); measured_cells: how many cells
    that factor rests on; compile_s: the first compilations included in ``wall_s``."""

    cells: int
    core_s: float
    wall_s: float
    factor: float
    measured_cells: int
    compile_s: float


def _measured(out: Path) -> list[tuple[float, float]]:
    """(predicted, measured) seconds of each cell of one results folder that recorded its
    timing: measured = mean wall seconds per run × runs."""
    from .. import spec as spec_mod

    meta = _previous(out / "meta.json")
    timing = out / "timing.csv"
    if "spec" not in meta or not timing.is_file():
        return []
    try:
        sp = spec_mod.parse(meta["spec"], str(_spec_location(meta, out) or out / "spec.yaml"))
        table = pd.read_csv(timing)
    except Exception:  # noqa: BLE001 - an unreadable folder only means no calibration
        return []
    pairs = []
    for cell in expand(sp):
        eps = table["epsilon"].astype(float)
        rows = table[
            (table["dataset"] == cell.dataset.key)
            & (table["variant"] == cell.algorithm.variant)
            & ((eps == cell.epsilon) | (eps.isin([math.inf]) & math.isinf(cell.epsilon)))
        ]
        if len(rows) == 1:
            measured = float(rows["wall_time_s_mean"].iloc[0]) * cell.n_runs
            pairs.append((cell_cost(cell), measured))
    return pairs


def calibration(results_root: Path | str = "results") -> tuple[float, int]:
    """(this machine's measured cell time over the model's, cells measured) from every
    results folder under ``results_root``; (1.0, 0) when there is none."""
    root = Path(results_root)
    pairs = [p for out in (spec_folders(root) if root.is_dir() else []) for p in _measured(out)]
    predicted, measured = sum(p for p, _ in pairs), sum(m for _, m in pairs)
    if not pairs or predicted <= 0 or measured <= 0:
        return 1.0, 0
    lo, hi = FACTOR_BOUNDS
    return min(hi, max(lo, measured / predicted)), len(pairs)


def compile_seconds(cells: list[Cell], jobs: int) -> float:
    """The first compilations ``cells`` would pay on this install: the shared kernels once
    (the workers compile them side by side), then each unmarked key's ``compile_s``,
    spread over the workers (seconds)."""
    new = {key: c.info.compile_s for c in cells for key in compile_keys(c) if not is_warm(key)}
    if not new:
        return 0.0
    shared = 0.0 if any_warm() else SHARED_SHAPES * max(new.values())
    return shared + sum(new.values()) / max(1, jobs)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS says, else all)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def estimate(cells: list[Cell], jobs: int, results_root: Path | str = "results") -> Estimate:
    """The wall-clock time ``cells`` (distinct computations) take with ``jobs`` workers,
    of which no more run at once than this process has CPUs."""
    jobs = min(jobs, usable_cpus())
    factor, measured = calibration(results_root)
    unique = list({c.id: c for c in cells}.values())
    costs = sorted((cell_cost(c) * factor for c in unique), reverse=True)
    core = sum(costs)
    wall = max(core / max(1, jobs), costs[0] if costs else 0.0)
    compiling = compile_seconds(unique, jobs)
    wall += STARTUP_S + compiling
    return Estimate(
        cells=len(costs),
        core_s=core,
        wall_s=wall,
        factor=factor,
        measured_cells=measured,
        compile_s=compiling,
    )
