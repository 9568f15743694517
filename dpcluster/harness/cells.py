"""A cell: one (dataset, algorithm variant, ε), the unit of work, caching and resumption.

Its identity is built from content only (the root seed, the dataset's parameters with each
data file's sha256, the algorithm, its parameters and a plugin's code digest), and its
random streams derive from that identity and each run's (init, rep) index
(:mod:`dpcluster.rng`), so a cell's numbers do not depend on ``jobs``, the backend, the
folder or the order in which cells finish.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import pickle
import subprocess
import time
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from .. import __version__, data, plugins, results
from ..experiments import ALGORITHMS, CellContext, CellShape
from ..experiments.pipeline import resolve
from ..experiments.registry import plugin_code
from ..kernels.dispatch import compiling
from ..privacy import DATA_BOUNDS_NOTE, LOCAL
from ..rng import StreamFactory, canonical, identity_hex, seeded_globals
from ..spec import AlgorithmSpec, DatasetSpec, Spec

#: runs.csv's columns: a cell's grouping columns (results.GROUP), then each run's own
RUN_COLUMNS = [
    *results.GROUP,
    "init",
    "rep",
    "nicv",
    "epsilon_claimed",
    "epsilon_provable",
    "delta_claimed",
    "delta_provable",
    "bounds",
    "iterations",
    "seed",
    "stream",
    "cell",
    "wall_time_s",
]


@dataclass(frozen=True, kw_only=True)
class Cell:
    dataset: DatasetSpec
    algorithm: AlgorithmSpec
    epsilon: float  # math.inf for a non-private algorithm
    seed: int
    n_init: int
    init_method: str
    #: the spec's δ for a private algorithm (0: pure ε; left out of the identity then)
    delta: float = 0.0
    #: the spec's ``seeds`` (estimator pipeline): run i draws from default_rng(seeds[i])
    seeds: tuple[int, ...] = ()

    @property
    def info(self):
        """The algorithm's registry entry (built-in or plugin), as the spec's pipeline runs
        it (dpcluster/experiments/pipeline.py)."""
        return resolve(self.algorithm.name, self.algorithm.source, self.algorithm.pipeline)

    @property
    def pipeline(self) -> dict:
        """The identity's part for the estimator pipeline; {} for the papers' (so the
        papers' cell ids do not move)."""
        if self.algorithm.pipeline == "paper":
            return {}
        return {
            "pipeline": self.algorithm.pipeline,
            **({"seeds": list(self.seeds)} if self.seeds else {}),
        }

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
            **({"delta": self.delta} if self.delta else {}),
            "repeat": self.algorithm.repeat,
            "init": [self.n_init, self.init_method],
            **self.pipeline,
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
        if self.pipeline:
            prefix += (canonical(self.pipeline),)
        if self.delta:
            return (*prefix, repr(self.epsilon), repr(self.delta))
        return (*prefix, repr(self.epsilon))

    @functools.cached_property
    def shape(self) -> CellShape:
        """The cell as its entry's planning callables see it (the dataset is loaded once,
        from the loader's cache)."""
        ds = data.load(self.dataset.name, **self.dataset.kwargs)
        return CellShape(
            N=ds.N,
            d=ds.d,
            k=ds.k,
            epsilon=self.epsilon,
            params=self.algorithm.kwargs,
            repeat=self.algorithm.repeat,
            n_init=self.n_init,
            delta=self.delta,
        )

    @property
    def n_runs(self) -> int:
        return self.info.count_runs(self.shape)

    def describe(self, brief: bool = False) -> str:
        """The cell in one line: dataset, algorithm, ε (and δ); ``brief``: long dataset
        values elided (:attr:`~dpcluster.spec.DatasetSpec.brief_key`)."""
        eps = "-" if math.isinf(self.epsilon) else f"{self.epsilon:g}"
        delta = f" delta={self.delta:g}" if self.delta else ""
        data = self.dataset.brief_key if brief else self.dataset.key
        return f"{data} {self.algorithm.variant} eps={eps}{delta}"


def expand(spec: Spec) -> list[Cell]:
    """One cell per dataset × algorithm variant × ε (non-private algorithms: one ε = ∞);
    a private algorithm's cells carry the spec's δ."""
    cells = []
    for ds in spec.datasets:
        for alg in spec.algorithms:
            private = resolve(alg.name, alg.source, alg.pipeline).private
            eps_grid = spec.epsilon if private else (math.inf,)
            cells += [
                Cell(
                    dataset=ds,
                    algorithm=alg,
                    epsilon=eps,
                    seed=spec.seed,
                    n_init=spec.init.sets,
                    init_method=spec.init.method,
                    delta=spec.delta if private else 0.0,
                    seeds=spec.seeds,
                )
                for eps in eps_grid
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


#: what a plugin that writes into its cell's data is told (Dataset.read_only)
READ_ONLY_HINT = (
    "a cell's dataset is shared with the worker's other cells and read-only: "
    "copy an array before changing it, e.g. np.array(ctx.dataset.X)"
)


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
            dataset=ds.read_only() if plugin else ds,  # cached: a plugin may not write in it
            k=ds.k,
            epsilon=cell.epsilon,
            delta=cell.delta,
            seeds=cell.seeds,
            params=cell.algorithm.kwargs,
            repeat=cell.algorithm.repeat,
            n_init=cell.n_init,
            init_method=cell.init_method,
            streams=streams,
            init_streams=init_streams,
        )
        start = time.perf_counter()
        with compiling() as compiled:
            with seeded_globals(streams) if plugin else contextlib.nullcontext():
                rows, ledger = info.run_cell(ctx)
        wall = time.perf_counter() - start
        # the first cell of a shape compiles its kernels: a one-off cost of this process,
        # not of the algorithm, so the per-run time leaves it out (it is in meta.json)
        work = max(0.0, wall - compiled.seconds)
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
        df["wall_time_s"] = work / len(df)  # amortised: runs of a cell share kernel passes
        extra = [c for c in df.columns if c not in RUN_COLUMNS]
        df = df[[c for c in RUN_COLUMNS if c in df.columns] + extra]
        ledger = {**ledger, "bounds": ds.bounds}
        declared_domain = ledger.get("neighbouring") == LOCAL and ds.domain_lo is not None
        if ds.bounds == "data" and ledger.get("entries") and not declared_domain:
            ledger["note"] = DATA_BOUNDS_NOTE
        meta = {
            "identity": cell.identity,
            "ledger": ledger,
            "wall_time_s": wall,
            "compile_s": compiled.seconds,
            "n_runs": len(df),
            "numba_threads": numba_threads,
            "dpcluster": __version__,
            "git_commit": _git_commit(),
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        return CellOutcome(cell, df, meta)
    # a plugin's sys.exit() fails its cell too: it must not end the run with its own code
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - reported per cell; the spec goes on
        error = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, SystemExit):
            error = f"SystemExit: the cell called sys.exit({exc.code!r})"
        elif isinstance(exc, ValueError) and "read-only" in str(exc):
            error += f" ({READ_ONLY_HINT})"
        elif hint := _damaged_cache_hint(exc):
            error += f" ({hint})"
        return CellOutcome(cell, error=error, traceback=traceback.format_exc())


def _damaged_cache_hint(exc: BaseException) -> str:
    """What to do when a cell failed while numba loaded a damaged file of its on-disk
    cache (every later cell of that kernel would fail the same way), else ""."""
    if not isinstance(exc, pickle.UnpicklingError | EOFError | ValueError | OSError):
        return ""
    frames = traceback.extract_tb(exc.__traceback__)
    if not any("numba" in f.filename and "caching" in f.filename for f in frames):
        return ""
    folder = os.environ.get("NUMBA_CACHE_DIR", "numba's cache folder")
    return (
        f"a compiled kernel in {folder} is damaged: delete that folder and run again; "
        "the kernels are compiled anew"
    )


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
