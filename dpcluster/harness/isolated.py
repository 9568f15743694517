"""A plugin cell runs in a process of its own (docs/plugins.md, "Trust and isolation").

A plugin is code the user chose to run, so it may do anything the user may; what it must
not do is change *another* cell's numbers or end the run silently. A built-in cell shares
its worker with the cells before it (the dataset cache, numpy's global state, dpcluster's
modules), so a plugin cell never does: :func:`run_isolated` starts a fresh interpreter for
it (``python -m dpcluster.harness.isolated``), hands it the cell, and reads back the
:class:`~.cells.CellOutcome` from a file the child writes. The child then ends with
``os._exit``, so threads the plugin left running end with it. Whatever the plugin does to
its data, globals or modules dies with its process; a plugin that ends the process itself
(``os._exit``, a crash) leaves no result, and its cell fails with the exit status.

The cost is one interpreter start and dpcluster's imports per plugin cell (about 1-2 s;
numba's kernels come from the on-disk cache).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

from .cells import Cell, CellOutcome, run_cell


def run_isolated(cell: Cell, numba_threads: int | None = None) -> CellOutcome:
    """:func:`~.cells.run_cell` of ``cell`` in a fresh child process (module docstring)."""
    with tempfile.TemporaryDirectory(prefix="dpcluster-plugin-") as tmp:
        job, result = Path(tmp) / "cell.pickle", Path(tmp) / "outcome.pickle"
        job.write_bytes(pickle.dumps((list(sys.path), cell, numba_threads)))
        # the child's output is the plugin's: shown on stderr, never mixed into ours
        done = subprocess.run(
            [sys.executable, "-m", "dpcluster.harness.isolated", str(job), str(result)],
            stdin=subprocess.DEVNULL,
            stdout=sys.stderr.fileno() if _has_fileno(sys.stderr) else subprocess.DEVNULL,
            check=False,
        )
        if result.is_file():
            try:
                return pickle.loads(result.read_bytes())
            except Exception as exc:  # noqa: BLE001 - a damaged result is the cell's failure
                return CellOutcome(cell, error=f"the plugin cell's result is unreadable: {exc}")
        return CellOutcome(
            cell,
            error=(
                f"the plugin ended its process (exit status {done.returncode}) before its "
                "cell returned: no result"
            ),
        )


def _has_fileno(stream) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


def _child(job: str, result: str) -> None:
    paths, cell, numba_threads = pickle.loads(Path(job).read_bytes())
    sys.path[:] = paths
    outcome = run_cell(cell, numba_threads)
    blob = pickle.dumps(outcome)
    partial = Path(result).with_suffix(".partial")
    partial.write_bytes(blob)
    os.replace(partial, result)


if __name__ == "__main__":
    code = 0
    try:
        _child(sys.argv[1], sys.argv[2])
    except BaseException:  # noqa: BLE001 - no result file: the parent reports the failure
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # threads the plugin left running end here
