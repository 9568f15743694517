"""Tidy result tables, atomic writes and run metadata.

Layout of ``results/<spec name>/``::

    cells/<cell id>.csv   one row per run of one cell (written atomically)
    cells/<cell id>.json  the CSV's commit record: its sha256, rows and columns, plus the
                          cell's identity, ledger, versions and timing (written after the
                          CSV; a resumed run skips a cell only when its CSV verifies)
    runs.csv              every run of the spec, in spec order
    summary.csv           per dataset × algorithm variant × ε: n, mean, std, 95% CI, min, max
    meta.json             spec, spec hash, versions, git commit, start/end (written last)
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from .rng import identity_hex

GROUP = [
    "dataset",
    "dataset_label",
    "standin",
    "N",
    "d",
    "k",
    "algorithm",
    "variant",
    "params",
    "epsilon",
]
#: two-sided 97.5% Student-t quantiles for df = 1..30; beyond that the normal 1.96.
_T975 = [
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
]


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


#: files are created as ``open()`` would create them: mode 0666 less the process umask
FILE_MODE = 0o666 & ~_umask()


def atomic_write_bytes(path: Path, blob: bytes) -> None:
    """Write ``blob`` to ``path`` via a temporary file in the same folder and ``os.replace``,
    so a reader (or a resumed run) sees either the old file or the complete new one. The
    file gets the umask's mode, not mkstemp's 0600."""
    from .errors import WriteError

    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.fchmod(fd, FILE_MODE)
        _write_synced(fd, blob)
        os.replace(tmp, path)
    except OSError as exc:  # a full disk, a quota, a folder gone read-only
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise WriteError(
            f"{path}: cannot be written ({exc.strerror or type(exc).__name__}); the old "
            "file, if any, is intact, finished cells are kept, and a rerun resumes"
        ) from None
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def _write_synced(fd: int, blob: bytes) -> None:
    """Write ``blob`` to the open file ``fd``, flush it to the disk and close it."""
    with os.fdopen(fd, "wb") as fh:
        fh.write(blob)
        fh.flush()
        os.fsync(fh.fileno())


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def check_writable(out: Path) -> None:
    """Raise ResultsError (one line naming the folder) unless ``out/cells`` can be created
    and written: checked before any cell is computed."""
    from .errors import ResultsError

    try:
        (out / "cells").mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out / "cells", prefix=".probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ResultsError(
            f"{out}: cannot write results here ({exc.strerror or type(exc).__name__})"
        ) from None


class FolderLock:
    """An exclusive lock on a results folder (``out/.lock``, ``flock``) for as long as a run
    writes it. A second run into the same folder is refused with one line naming the
    holder; the lock goes with its process, so a killed run never leaves it behind."""

    def __init__(self, out: Path):
        self.out = out
        self.fd: int | None = None

    def __enter__(self) -> FolderLock:
        import fcntl

        from .errors import ResultsError

        path = self.out / ".lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 200).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise ResultsError(
                f"{self.out}: another dpcluster run is writing this folder ({holder}); "
                "wait for it to finish, or give this run another --out"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}".encode())
        self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the flock
            self.fd = None


def to_csv(df: pd.DataFrame) -> str:
    """Deterministic CSV text (shortest round-trip floats, '\\n' line ends)."""
    return df.to_csv(index=False, lineterminator="\n")


def cell_paths(out: Path, cell_id: str) -> tuple[Path, Path]:
    return out / "cells" / f"{cell_id}.csv", out / "cells" / f"{cell_id}.json"


#: the version of a cell's commit record; a record of another version does not verify
CELL_FORMAT = 2


def write_cell(out: Path, cell_id: str, rows: pd.DataFrame, meta: dict) -> None:
    """Write a cell's CSV, then its JSON, the CSV's commit record: row count, columns and
    sha256 of the CSV bytes beside ``meta`` (identity, ledger, versions, times)."""
    csv_path, json_path = cell_paths(out, cell_id)
    blob = to_csv(rows).encode()
    atomic_write_bytes(csv_path, blob)
    record = {
        **meta,
        "cell_format": CELL_FORMAT,
        "csv_sha256": hashlib.sha256(blob).hexdigest(),
        "csv_rows": int(len(rows)),
        "csv_columns": [str(c) for c in rows.columns],
    }
    atomic_write_text(json_path, json.dumps(record, indent=1, sort_keys=True, default=str))
    failure_path(out, cell_id).unlink(missing_ok=True)


def failure_path(out: Path, cell_id: str) -> Path:
    return out / "cells" / f"{cell_id}.failed.json"


def write_failure(out: Path, cell_id: str, failure: dict) -> None:
    """The failure record of a cell that raised: what, the error and its traceback (removed
    once the cell is computed). A result of the same cell from an earlier run (``--force``
    recomputes finished cells) goes: the folder holds what its last attempt gave, so the
    next run computes the cell again instead of reusing what this one could not make."""
    atomic_write_text(failure_path(out, cell_id), json.dumps(failure, indent=1))
    for path in cell_paths(out, cell_id):
        path.unlink(missing_ok=True)


def verify_cell(out: Path, cell_id: str) -> str | None:
    """None if the cell's CSV verifies against its JSON record, else what is wrong (one
    line naming the file). Missing files are reported too; see :func:`cell_done`."""
    csv_path, json_path = cell_paths(out, cell_id)
    if not json_path.is_file():
        return (
            f"{json_path}: missing (its CSV has no commit record)"
            if csv_path.is_file()
            else f"{csv_path}: missing"
        )
    if not csv_path.is_file():
        return f"{csv_path}: missing (its record {json_path.name} exists)"
    try:
        record = json.loads(json_path.read_text())
    except JSON_FAULTS as exc:
        return f"{json_path}: unreadable record ({type(exc).__name__})"
    if not isinstance(record, dict) or record.get("cell_format") != CELL_FORMAT:
        return f"{json_path}: not a cell record of format {CELL_FORMAT}"
    blob = csv_path.read_bytes()
    digest = hashlib.sha256(blob).hexdigest()
    if digest != record.get("csv_sha256"):
        return (
            f"{csv_path}: sha256 {digest[:12]}… does not match its record "
            f"({str(record.get('csv_sha256'))[:12]}…)"
        )
    if identity_hex(record.get("identity")) != cell_id:
        return (
            f"{json_path}: its recorded identity is that of cell "
            f"{identity_hex(record.get('identity'))}, not of {cell_id} (a cell copied or "
            "renamed under another cell's id)"
        )
    return None


def cell_done(out: Path, cell_id: str, warn=None) -> bool:
    """True when the cell's CSV verifies against its JSON record. A cell with files that do
    not verify is not done; ``warn(message)`` (if given) hears one line naming the file."""
    csv_path, json_path = cell_paths(out, cell_id)
    if not (csv_path.is_file() or json_path.is_file()):
        return False
    problem = verify_cell(out, cell_id)
    if problem and warn is not None:
        warn(f"{problem}; recomputing the cell")
    return problem is None


def borrow_cell(out: Path, cell_id: str) -> Path | None:
    """Copy a finished, verified cell with this id from a sibling spec's folder
    (``out/../*/cells``) and return the folder it came from (None: nothing borrowed).

    A cell id hashes everything that determines its numbers (root seed, dataset, algorithm,
    params, ε, repeat, init sets), so a cell finished for one spec (Fig. 1's DPLloyd at
    ε = 0.5) *is* the same cell in another (Fig. 5, Fig. 7). Only a cell that verifies is
    borrowed; the copy is byte-identical and atomic, and verified again after copying.
    """
    if not out.parent.is_dir():
        return None
    for sibling in sorted(out.parent.iterdir()):
        if sibling == out or not sibling.is_dir() or verify_cell(sibling, cell_id) is not None:
            continue
        src_csv, src_json = cell_paths(sibling, cell_id)
        dst_csv, dst_json = cell_paths(out, cell_id)
        atomic_write_bytes(dst_csv, src_csv.read_bytes())
        atomic_write_bytes(dst_json, src_json.read_bytes())
        if verify_cell(out, cell_id) is None:
            return sibling
    return None


#: what reading a damaged or hostile JSON file raises: unreadable (or a directory), not
#: UTF-8, not JSON, or nested past Python's recursion limit
JSON_FAULTS = (OSError, UnicodeDecodeError, ValueError, RecursionError)


def read_json(path: Path | str):
    """The JSON value in ``path``, or None when it cannot be read as JSON (any of
    :data:`JSON_FAULTS`): callers treat a damaged record as absent or unverified."""
    try:
        return json.loads(Path(path).read_text())
    except JSON_FAULTS:
        return None


def read_table(path: Path | str) -> pd.DataFrame:
    """A result table; an empty DataFrame for an empty file (a spec whose every cell
    failed writes a summary with no rows and no columns). A file that is not a table raises
    :class:`~dpcluster.errors.VerifyError` (exit 5) naming it."""
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (
        pd.errors.ParserError,
        UnicodeDecodeError,
        ValueError,
        csv.Error,
        IsADirectoryError,
        PermissionError,
    ) as exc:
        from .errors import VerifyError

        raise VerifyError(f"{path}: not a readable table ({type(exc).__name__})") from None


def read_cell(out: Path, cell_id: str) -> pd.DataFrame:
    return pd.read_csv(cell_paths(out, cell_id)[0], keep_default_na=False, na_values=[""])


def t975(n: int) -> float:
    df = n - 1
    return _T975[df - 1] if 1 <= df <= len(_T975) else 1.959964


#: per-run columns whose mean is carried into the summary when present
MEAN_COLUMNS = ("fell_back", "block_size", "blocks", "cells", "iterations", "noise_epsilon")


def timing(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean wall-clock seconds per run, per dataset × variant × ε (``timing.csv``; kept out
    of ``summary.csv`` so that the summary is byte-identical across reruns and ``--jobs``)."""
    g = runs.groupby(GROUP, sort=False, dropna=False)["wall_time_s"]
    return g.mean().rename("wall_time_s_mean").reset_index()


def summarise(
    runs: pd.DataFrame,
    metrics: tuple[str, ...] | list[str] = ("nicv",),
    baseline: str | None = None,
) -> pd.DataFrame:
    """Per dataset × variant × ε (× ``step`` for traces and sweeps inside a cell).

    The first metric present is the *primary* one: n, mean, std (ddof 1), Student-t 95% CI,
    min and max. Every metric present also gets ``<metric>_mean`` and ``<metric>_std``, and
    each :data:`MEAN_COLUMNS` column present its mean (``fell_back`` becomes the hybrid's
    fallback rate). Statistics use the finite values only; a run whose value of any listed
    metric is inf or NaN is counted in ``n_nonfinite``, a column that appears only when that
    count is non-zero somewhere (a group with no finite value gets n = 0 and NaN means).
    ``baseline``: the non-private algorithm whose mean ``cost`` divides every row's of the
    same dataset, as ``cost_ratio`` (the estimator pipeline; dpcluster/experiments/pipeline.py).
    """
    rows = []
    group = GROUP + (["step"] if "step" in runs.columns else [])
    extras = [c for c in MEAN_COLUMNS if c in runs.columns]
    present = [m for m in metrics if m in runs.columns]
    if not present:
        raise ValueError(f"none of the metrics {list(metrics)} is a column of the runs")
    primary = present[0]
    for key, g in runs.groupby(group, sort=False, dropna=False):
        values = {m: pd.to_numeric(g[m], errors="coerce").to_numpy(dtype=float) for m in present}
        nonfinite = int(np.any([~np.isfinite(v) for v in values.values()], axis=0).sum())
        v = values[primary]
        v = v[np.isfinite(v)]
        n = len(v)
        nan = math.nan
        mean = float(np.mean(v)) if n else nan
        std = float(np.std(v, ddof=1)) if n > 1 else (0.0 if n else nan)
        half = t975(n) * std / math.sqrt(n) if n > 1 else 0.0
        means = {
            f"{c}_mean": float(pd.to_numeric(g[c], errors="coerce").astype(float).mean())
            for c in extras
        }
        per_metric = {}
        for m in present:
            col = pd.Series(values[m])
            col = col[np.isfinite(col)]
            per_metric[f"{m}_mean"] = float(col.mean()) if len(col) else nan
            per_metric[f"{m}_std"] = (
                float(col.std(ddof=1)) if len(col) > 1 else (0.0 if len(col) else nan)
            )
        rows.append(
            {
                **dict(zip(group, key)),
                "metric": primary,
                "n": n,
                **({"n_nonfinite": nonfinite} if nonfinite else {}),
                "mean": mean,
                "std": std,
                "ci95_low": mean - half,
                "ci95_high": mean + half,
                "min": float(np.min(v)) if n else nan,
                "max": float(np.max(v)) if n else nan,
                **(
                    {"bounds": ",".join(sorted(set(g["bounds"].astype(str))))}
                    if "bounds" in g.columns
                    else {}
                ),
                "epsilon_claimed_max": float(g["epsilon_claimed"].max()),
                "epsilon_provable_max": float(g["epsilon_provable"].max()),
                **{
                    f"{c}_max": float(g[c].max())
                    for c in ("delta_claimed", "delta_provable")
                    if c in g.columns
                },
                **means,
                **per_metric,
            }
        )
    table = pd.DataFrame(rows)
    if "n_nonfinite" in table.columns:  # present only when some value is inf or NaN
        table["n_nonfinite"] = table["n_nonfinite"].fillna(0).astype(int)
    if baseline is not None and "cost_mean" in table.columns:
        table["cost_ratio"] = cost_ratios(table, baseline)
    return table


def degenerate_runs(runs: pd.DataFrame) -> int:
    """Runs whose centres cannot depend on where the records lie: a grid of one cell per
    axis (``cells`` = 1) that gave the centres (EUGkM, or a hybrid that fell back to its
    grid), so they are a function of one noisy count. Read from the runs' own columns, so
    it costs no budget."""
    if "cells" not in runs.columns or runs.empty:
        return 0
    one_cell = pd.to_numeric(runs["cells"], errors="coerce") == 1
    grid_only = runs["algorithm"] == "eugkm"
    if "fell_back" in runs.columns:
        grid_only |= pd.to_numeric(runs["fell_back"], errors="coerce").fillna(0) > 0
    if "chosen" in runs.columns:
        grid_only |= runs["chosen"] == "eugkm"
    return int((one_cell & grid_only).sum())


def cost_ratios(table: pd.DataFrame, baseline: str) -> pd.Series:
    """Each summary row's mean cost over the mean cost of ``baseline`` on its dataset (the
    baseline's variants pooled by their lowest mean); NaN where the dataset has none."""
    base = table[table["algorithm"] == baseline].groupby("dataset")["cost_mean"].min()
    return table["cost_mean"] / table["dataset"].map(base)
