"""The harness: expand specs into cells, run them in parallel, cache, resume and verify.

cells     a cell's identity and computation (:func:`run_cell`)
plan      checks before any work, the results folder's claim, what is left to run
backends  the local process pool and the Dask cluster
run       running planned specs and writing their tables and meta.json
folders   reading, listing and verifying results folders
"""

from . import backends
from .backends import BACKENDS, local_pool
from .cells import RUN_COLUMNS, Cell, CellFailure, CellOutcome, expand, run_cell
from .folders import (
    list_results,
    saved_summary,
    spec_folders,
    spec_inputs,
    unverified_folders,
    verify_folder,
)
from .plan import CELL_OVERHEAD_S, ROW_BYTES, Failure, cell_cost, check_spec
from .run import ProgressFn, RunReport, run_spec, run_specs

__all__ = [
    "BACKENDS",
    "CELL_OVERHEAD_S",
    "RUN_COLUMNS",
    "ROW_BYTES",
    "Cell",
    "CellFailure",
    "CellOutcome",
    "Failure",
    "ProgressFn",
    "RunReport",
    "backends",
    "cell_cost",
    "check_spec",
    "expand",
    "list_results",
    "local_pool",
    "run_cell",
    "run_spec",
    "run_specs",
    "saved_summary",
    "spec_folders",
    "spec_inputs",
    "unverified_folders",
    "verify_folder",
]
