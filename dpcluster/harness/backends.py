"""Where cells run: this machine's process pool (joblib's loky) or a Dask cluster. Each
yields a :class:`~.cells.CellOutcome` per cell as it finishes; only the calling process
writes, and results do not depend on the backend (docs/cluster.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..errors import DpclusterError
from ..experiments import ALGORITHMS
from .cells import Cell, CellOutcome, run_cell
from .isolated import run_isolated

BACKENDS = ("local", "dask")


def run_any(cell: Cell, *numba_threads) -> CellOutcome:
    """Every backend's unit of work: a built-in cell in this process, a plugin's in a
    process of its own (:mod:`.isolated`)."""
    if cell.algorithm.name in ALGORITHMS:
        return run_cell(cell, *numba_threads)
    return run_isolated(cell, *numba_threads)


def _execute(todo: list[Cell], jobs: int):
    """Yield a CellOutcome per cell as it finishes. ``jobs == 1`` runs in-process."""
    if jobs <= 1 or len(todo) <= 1:
        for cell in todo:
            yield run_any(cell)
        return
    from joblib import delayed

    threads = 1  # one process per job; numba inside each worker runs single-threaded
    # never more workers than cells: each worker costs a process start and its imports
    yield from local_pool(min(jobs, len(todo)))(delayed(run_any)(c, threads) for c in todo)


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


def _check_scheduler_file(scheduler: str) -> None:
    """A ``--scheduler`` that names a file must be a scheduler file: JSON with an address."""
    path = Path(scheduler)
    if not path.is_file():
        return
    try:
        address = json.loads(path.read_text()).get("address")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        address = None
    if not isinstance(address, str):
        raise DpclusterError(
            f"--scheduler {scheduler}: not a Dask scheduler file (JSON with an 'address', as "
            "`dask scheduler --scheduler-file FILE` writes)"
        )


def _execute_dask(todo: list[Cell], jobs: int, scheduler: str | None):
    """Yield a CellOutcome per cell from a Dask cluster: ``scheduler`` (an address such as
    ``tcp://host:8786``, or a scheduler file) or, without one, a LocalCluster of ``jobs``
    single-threaded worker processes. Workers compute and return rows; only this process
    writes, so no shared filesystem is assumed. Cells are submitted heaviest first (the
    order of ``todo``) with matching priorities."""
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler:
        _check_scheduler_file(scheduler)
        try:
            client = (
                Client(scheduler_file=scheduler) if Path(scheduler).is_file() else Client(scheduler)
            )
        except Exception as exc:  # noqa: BLE001 - dask raises OSError, ValueError, even
            # AssertionError for an unreachable address, a malformed one or a file that is
            # not a scheduler file: each is the --scheduler value's fault
            raise DpclusterError(
                f"--scheduler {scheduler}: cannot connect to a Dask scheduler "
                f"({type(exc).__name__}: {exc})"
            ) from None
    else:
        cluster = LocalCluster(
            n_workers=max(1, min(jobs, len(todo))),
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        client = Client(cluster)
    try:
        futures = {
            client.submit(
                run_any, c, 1, pure=False, key=f"dpcluster-cell-{c.id}", priority=len(todo) - i
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
