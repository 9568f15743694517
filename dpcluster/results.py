"""Tidy result tables, atomic writes and run metadata.

Layout of ``results/<spec name>/``::

    cells/<cell id>.csv   one row per run of one cell (written atomically)
    cells/<cell id>.json  the cell's identity, ledger and timing (written after the csv;
                          its presence marks the cell finished, so a resumed run skips it)
    runs.csv              every run of the spec, in spec order
    summary.csv           per dataset × algorithm variant × ε: n, mean, std, 95% CI, min, max
    meta.json             spec, spec hash, versions, git commit, start/end (written last)
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

GROUP = ["dataset", "dataset_label", "standin", "N", "d", "k", "algorithm", "variant",
         "params", "epsilon"]
#: two-sided 97.5% Student-t quantiles for df = 1..30; beyond that the normal 1.96.
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def atomic_write_bytes(path: Path, blob: bytes) -> None:
    """Write ``blob`` to ``path`` via a temporary file in the same folder and ``os.replace``,
    so a reader (or a resumed run) sees either the old file or the complete new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def to_csv(df: pd.DataFrame) -> str:
    """Deterministic CSV text (shortest round-trip floats, '\\n' line ends)."""
    return df.to_csv(index=False, lineterminator="\n")


def cell_paths(out: Path, cell_id: str) -> tuple[Path, Path]:
    return out / "cells" / f"{cell_id}.csv", out / "cells" / f"{cell_id}.json"


def write_cell(out: Path, cell_id: str, rows: pd.DataFrame, meta: dict) -> None:
    csv_path, json_path = cell_paths(out, cell_id)
    atomic_write_text(csv_path, to_csv(rows))
    atomic_write_text(json_path, json.dumps(meta, indent=1, sort_keys=True, default=str))


def cell_done(out: Path, cell_id: str) -> bool:
    csv_path, json_path = cell_paths(out, cell_id)
    return csv_path.is_file() and json_path.is_file()


def borrow_cell(out: Path, cell_id: str) -> bool:
    """Copy a finished cell with this id from a sibling spec's folder (``out/../*/cells``).

    A cell id hashes everything that determines its numbers (root seed, dataset, algorithm,
    params, ε, repeat, init sets), so a cell finished for one spec (Fig. 1's DPLloyd at
    ε = 0.5) *is* the same cell in another (Fig. 5, Fig. 7). The copy is byte-identical and
    atomic. Returns True if a cell was borrowed.
    """
    if not out.parent.is_dir():
        return False
    for sibling in sorted(out.parent.iterdir()):
        if sibling == out or not sibling.is_dir() or not cell_done(sibling, cell_id):
            continue
        src_csv, src_json = cell_paths(sibling, cell_id)
        dst_csv, dst_json = cell_paths(out, cell_id)
        atomic_write_bytes(dst_csv, src_csv.read_bytes())
        atomic_write_bytes(dst_json, src_json.read_bytes())
        return True
    return False


def read_cell(out: Path, cell_id: str) -> pd.DataFrame:
    return pd.read_csv(cell_paths(out, cell_id)[0], keep_default_na=False, na_values=[""])


def t975(n: int) -> float:
    df = n - 1
    return _T975[df - 1] if 1 <= df <= len(_T975) else 1.959964


#: per-run columns whose mean is carried into the summary when present
MEAN_COLUMNS = ("fell_back", "block_size", "blocks", "cells", "iterations")


def timing(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean wall-clock seconds per run, per dataset × variant × ε (``timing.csv``; kept out
    of ``summary.csv`` so that the summary is byte-identical across reruns and ``--jobs``)."""
    g = runs.groupby(GROUP, sort=False, dropna=False)["wall_time_s"]
    return g.mean().rename("wall_time_s_mean").reset_index()


def summarise(runs: pd.DataFrame, metrics: tuple[str, ...] | list[str] = ("nicv",)) -> pd.DataFrame:
    """Per dataset × variant × ε (× ``step`` for traces and sweeps inside a cell).

    The first metric present is the *primary* one: n, mean, std (ddof 1), Student-t 95% CI,
    min and max. Every metric present also gets ``<metric>_mean`` and ``<metric>_std``, and
    each :data:`MEAN_COLUMNS` column present its mean (``fell_back`` becomes the hybrid's
    fallback rate). Rows without a value for the primary metric are left out of its n.
    """
    rows = []
    group = GROUP + (["step"] if "step" in runs.columns else [])
    extras = [c for c in MEAN_COLUMNS if c in runs.columns]
    present = [m for m in metrics if m in runs.columns]
    if not present:
        raise ValueError(f"none of the metrics {list(metrics)} is a column of the runs")
    primary = present[0]
    for key, g in runs.groupby(group, sort=False, dropna=False):
        v = pd.to_numeric(g[primary], errors="coerce").to_numpy(dtype=float)
        v = v[np.isfinite(v)]
        n = len(v)
        if n == 0:
            continue
        mean = float(np.mean(v))
        std = float(np.std(v, ddof=1)) if n > 1 else 0.0
        half = t975(n) * std / math.sqrt(n) if n > 1 else 0.0
        means = {f"{c}_mean": float(pd.to_numeric(g[c], errors="coerce").astype(float).mean())
                 for c in extras}
        per_metric = {}
        for m in present:
            col = pd.to_numeric(g[m], errors="coerce").astype(float)
            per_metric[f"{m}_mean"] = float(col.mean())
            per_metric[f"{m}_std"] = float(col.std(ddof=1)) if col.count() > 1 else 0.0
        rows.append({**dict(zip(group, key)), "metric": primary, "n": n, "mean": mean,
                     "std": std, "ci95_low": mean - half, "ci95_high": mean + half,
                     "min": float(np.min(v)), "max": float(np.max(v)),
                     **({"bounds": ",".join(sorted(set(g["bounds"].astype(str))))}
                        if "bounds" in g.columns else {}),
                     "epsilon_claimed_max": float(g["epsilon_claimed"].max()),
                     "epsilon_provable_max": float(g["epsilon_provable"].max()), **means,
                     **per_metric})
    return pd.DataFrame(rows)
