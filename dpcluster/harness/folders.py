"""Results folders as they stand: what a previous run recorded in meta.json, the tables a
folder's verified cells give, listing and verifying folders."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .. import data, results
from .. import spec as spec_mod
from ..errors import DpclusterError, ResultsError, VerifyError
from ..experiments.pipeline import BASELINE
from ..rng import canonical
from ..spec import Spec
from .cells import RUN_COLUMNS, Cell, expand


def _relative(path: str) -> str:
    """An absolute path as a path relative to the working folder (meta.json records no
    absolute path); anything else unchanged."""
    return os.path.relpath(path) if os.path.isabs(path) else path


def _previous(meta_path: Path) -> dict:
    """The meta.json a previous invocation wrote, or {} when there is none or it is damaged."""
    old = results.read_json(meta_path)
    return old if isinstance(old, dict) else {}


def _history(meta_path: Path) -> list[dict]:
    """Earlier invocations recorded in meta.json (each run appends one entry)."""
    history = _previous(meta_path).get("history", [])
    return history if isinstance(history, list) else []


def _spec_location(meta: dict, out: Path) -> Path | None:
    """Where the spec that wrote a results folder lives, from its meta.json: ``spec_from_out``
    (relative to the folder, so it moves with a copied experiment), else ``spec_file``."""
    rel = meta.get("spec_from_out")
    if isinstance(rel, str):
        return (out / rel).resolve()
    file = meta.get("spec_file")
    return Path(file).resolve() if isinstance(file, str) else None


def spec_inputs(spec: Spec) -> dict[str, str]:
    """Every file a spec's cells read (relative to its folder) -> sha256 (meta.json)."""
    out: dict[str, str] = {}
    for ds in spec.datasets:
        out.update({rel: digest for _, rel, digest in ds.files})
    for a in spec.algorithms:
        out.update(dict(a.code))
    return dict(sorted(out.items()))


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
    baseline = BASELINE if spec.pipeline == "estimator" else None
    summary = results.summarise(runs, spec.metrics, baseline) if len(runs) else pd.DataFrame()
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


def verify_folder(
    folder: Path | str, complete: bool = True, tables=("runs.csv", "summary.csv")
) -> tuple[int, list[str]]:
    """Check a spec's results folder, or every spec folder (with a meta.json) under a
    results root: every cell of the spec verifies against its record, and runs.csv and
    summary.csv are exactly what its cells give. ``complete=False`` lets cells that were
    never written (failed, or not run yet) pass, so a partial run whose tables match its
    cells is consistent; ``tables`` names the tables compared (writing runs.csv again to
    compare it is half the time). Returns (folders checked, problems)."""

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
            problems += _loose_cell_problems(out)  # the cells still answer for themselves
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
            if not any(p.exists() for p in results.cell_paths(out, c.id)):
                if complete:
                    failed = results.failure_path(out, c.id)
                    problems.append(
                        f"{out}: cell {c.id} ({c.describe()}) "
                        + (f"failed (see {failed.name})" if failed.is_file() else "not run yet")
                        + "; rerun the spec"
                    )
                continue
            problem = results.verify_cell(out, c.id)
            if problem:
                problems.append(problem)
        runs, summary = _tables(sp, out, cells)
        for name, table in (("runs.csv", runs), ("summary.csv", summary)):
            if name in tables and (problem := _table_problem(out / name, table)):
                problems.append(problem)
        if problem := _nonfinite_problem(out, runs, sp.metrics):
            problems.append(problem)
    return len(folders), problems


def _nonfinite_problem(out: Path, runs: pd.DataFrame, metrics) -> str | None:
    """A verified cell can still hold a metric that is inf or NaN (a run that produced no
    number): the summary leaves it out of its statistics, so the folder's numbers rest on
    fewer runs than the spec asked for. Say so, naming the cells (None: every value is
    finite)."""
    present = [m for m in metrics if m in runs.columns]
    if not present or not len(runs):
        return None
    values = runs[present].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values).all(axis=1)
    if not bad.any():
        return None
    cells = sorted(set(runs.loc[bad, "cell"].astype(str))) if "cell" in runs.columns else []
    shown = ", ".join(cells[:3]) + (", …" if len(cells) > 3 else "")
    return (
        f"{out}: {int(bad.sum())} run(s) have an inf or NaN metric "
        f"({', '.join(present)}) in cell(s) {shown}; summary.csv leaves them out of its "
        "statistics (n_nonfinite)"
    )


def _loose_cell_problems(out: Path) -> list[str]:
    """Every cell file under ``out/cells`` checked against its own record, without the
    spec that lists the cells (a folder copied away from its spec and data)."""
    folder = out / "cells"
    if not folder.is_dir():
        return []
    ids = {
        p.name.split(".")[0]
        for p in folder.iterdir()
        if p.suffix in (".csv", ".json") and not p.name.endswith(".failed.json")
    }
    return [problem for i in sorted(ids) if (problem := results.verify_cell(out, i))]


def _table_problem(path: Path, table: pd.DataFrame) -> str | None:
    """What is wrong with the table file at ``path`` against ``table``, which its verified
    cells give (None: byte for byte the same)."""
    if not path.is_file():
        return f"{path}: missing"
    if path.read_bytes() != results.to_csv(table).encode():
        return f"{path}: differs from what the verified cells give"
    return None


def unverified_folders(root: Path | str) -> dict[str, str]:
    """Each spec folder under ``root`` with cells whose cells or summary.csv do not verify
    (cells never written aside: a partial run is consistent), as folder name -> its first
    problem (and how many more). What ``report`` flags and keeps out of the claims."""
    out = {}
    for folder in spec_folders(root):
        if (folder / "cells").is_dir():
            problems = verify_folder(folder, complete=False, tables=("summary.csv",))[1]
            if problems:
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                out[folder.name] = problems[0] + more
    return out


def saved_summary(sp: Spec, out: Path | str) -> pd.DataFrame:
    """The folder's summary.csv, for redrawing a figure, trusted only when it verifies: in a
    folder with cells it must be byte for byte what the verified cells give (else
    :class:`VerifyError`); a reference copy without cells (docs/results) is read as it is
    and needs the summary's columns. Errors name the file."""
    out = Path(out)
    table = out / "summary.csv"
    if not table.is_file():
        raise ResultsError(f"{table}: no saved summary; run `dpcluster run {sp.path}` first")
    if (out / "cells").is_dir():
        _, summary = _tables(sp, out, expand(sp))
        if problem := _table_problem(table, summary):
            raise VerifyError(
                f"{problem} (edited, or written for another version of the spec); "
                f"`dpcluster run {sp.path}` rewrites it"
            )
        return summary
    try:
        summary = results.read_table(table)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{table}: unreadable ({type(exc).__name__}: {exc})") from None
    missing = [c for c in ("dataset", "variant", "epsilon") if c not in summary.columns]
    if missing:
        raise ResultsError(f"{table}: not a summary table (no column {', '.join(missing)})")
    return summary
