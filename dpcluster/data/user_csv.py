"""Your own data: the ``csv`` dataset.

A spec entry::

    datasets:
      - name: csv
        params:
          path: data/points.csv        # relative paths resolve against the spec's folder
          columns: [x, y]              # names or 0-based indices; default: every column
          k: 4
          label: My points             # shown in tables and figures; default: the file stem
          classes: cluster             # optional ground-truth column (ARI and friends)
          domain: [[0, 0], [10, 10]]   # optional public box (lo, hi) for bounds: public
          delimiter: ","               # default ","
          header: true                 # default true; false: columns are indices
          sha256: <hex>                # optional checksum of the file's bytes

Text columns are an error naming the column; non-finite values are an error naming the
row and column. A ``.gz`` file is read transparently.
"""

from __future__ import annotations

import functools
import zlib
from pathlib import Path

import numpy as np

from ..errors import DataError
from .schema import Dataset, check_finite, freeze, read_checked, scale

#: the csv entry's parameters: name -> (default, what it is)
CSV_PARAMS = {
    "path": (None, "the file (required); relative to the spec's folder"),
    "columns": (None, "feature columns: names or 0-based indices (default: all)"),
    "k": (None, "number of clusters (required)"),
    "label": ("", "display label (default: the file stem)"),
    "classes": (None, "ground-truth class column (optional)"),
    "domain": (None, "public box [lo, hi] (scalars or one per column), for bounds: public"),
    "delimiter": (",", "field separator"),
    "header": (True, "the first line names the columns"),
    "sha256": ("", "expected sha256 of the file's bytes (optional)"),
}


def _column_index(spec, names: list[str], path: Path) -> int:
    if isinstance(spec, int) and not isinstance(spec, bool):
        if not 0 <= spec < len(names):
            raise DataError(f"{path}: column index {spec} is outside 0..{len(names) - 1}")
        return spec
    if spec not in names:
        raise DataError(f"{path}: no column named {spec!r}; columns: {', '.join(names)}")
    return names.index(spec)


def _check_named_once(p: Path, delimiter: str, wanted) -> None:
    """A DataError when a column the spec names by its header name heads two columns:
    pandas would rename the second (``x.1``) and the name would silently mean the first."""
    import pandas as pd

    wanted = [w for w in wanted if isinstance(w, str)]
    if not wanted:
        return
    first = pd.read_csv(
        p,
        sep=delimiter,
        header=None,
        nrows=1,
        compression="infer",
        dtype=str,
        skipinitialspace=True,
        keep_default_na=False,
    )
    header = [str(v) for v in first.iloc[0]]
    for name in wanted:
        at = [i for i, h in enumerate(header) if h == name]
        if len(at) > 1:
            raise DataError(
                f"{p}: columns {', '.join(map(str, at))} (0-based) are all headed {name!r}; "
                "rename one, or give the columns by index"
            )


@functools.lru_cache(maxsize=16)
def read_csv(
    path: str, columns, classes, delimiter: str, header: bool, sha256: str
) -> tuple[np.ndarray, np.ndarray | None, tuple[str, ...]]:
    """(X (N, d) float64, classes (N,) or None, the feature columns' names)."""
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: csv dataset file not found")
    read_checked(p, sha256)
    try:
        frame = pd.read_csv(
            p,
            sep=delimiter,
            header=0 if header else None,
            compression="infer",
            skipinitialspace=True,
        )
    except (ValueError, OSError, UnicodeDecodeError, EOFError, zlib.error) as exc:
        raise DataError(f"{p}: cannot read as csv ({type(exc).__name__}: {exc})") from None
    names = [str(c) for c in frame.columns]
    if header:
        _check_named_once(p, delimiter, [c for c in (*(columns or ()), classes) if c is not None])
    idx = (
        [_column_index(c, names, p) for c in columns]
        if columns
        else [
            i for i in range(len(names)) if classes is None or i != _column_index(classes, names, p)
        ]
    )
    if not idx:
        raise DataError(f"{p}: no feature columns")
    X = np.empty((len(frame), len(idx)))
    for j, i in enumerate(idx):
        col = frame.iloc[:, i]
        numeric = pd.to_numeric(col, errors="coerce")
        text = numeric.isna() & col.notna()
        if text.any():
            row = int(np.flatnonzero(text.to_numpy())[0])
            raise DataError(
                f"{p}: column {names[i]!r} is text (row {row + 1 + header}: "
                f"{col.iloc[row]!r}); choose numeric columns with params.columns"
            )
        X[:, j] = numeric.to_numpy(dtype=np.float64)
    check_finite(X, str(p), 1 + header, [names[i] for i in idx])
    y = None
    if classes is not None:
        labels = frame.iloc[:, _column_index(classes, names, p)]
        if labels.isna().any():
            row = int(np.flatnonzero(labels.isna().to_numpy())[0])
            raise DataError(
                f"{p}: row {row + 1 + header}, class column {labels.name!r}: empty; every "
                "record needs its class for ARI and the other class-based metrics"
            )
        y = labels.astype("category").cat.codes.to_numpy(dtype=np.int64)
    return np.ascontiguousarray(X), y, tuple(names[i] for i in idx)


def load_csv(
    path: str,
    k: int,
    columns=None,
    label: str = "",
    classes=None,
    domain=None,
    delimiter: str = ",",
    header: bool = True,
    sha256: str = "",
    bounds: str = "data",
) -> Dataset:
    """The ``csv`` dataset: the file's feature columns scaled under the policy ``bounds``
    (``domain`` is the declared public box it needs for ``bounds: public``)."""
    raw, y, names = read_csv(str(path), freeze(columns), classes, delimiter, bool(header), sha256)
    if len(raw) < 2:
        raise DataError(f"{path}: needs at least 2 records, found {len(raw)}")
    box = None
    if domain is not None:
        box = freeze(domain)
        d = raw.shape[1]
        if len(box) != 2 or any(not (np.ndim(b) == 0 or np.shape(b) == (d,)) for b in box):
            raise DataError(
                f"{path}: domain must be [lo, hi], each a number or a list of one value per "
                f"column ({d} columns), got {domain!r}"
            )
    X, lo, hi, clipped = scale(raw, bounds, box, str(path))
    stem = Path(path).name.split(".")[0]
    return Dataset(
        name="csv",
        X=X,
        k=int(k),
        label=label or stem,
        lo=lo,
        hi=hi,
        standin=False,
        source=str(path),
        classes=y,
        bounds=bounds,
        clipped=clipped,
    )


class CsvSource:
    """The user's own csv file (module docstring)."""

    name = "csv"
    params = CSV_PARAMS

    def load(self, **params) -> Dataset:
        return load_csv(**params)

    def has_classes(self, params) -> bool:
        return params.get("classes") is not None

    def describe(self) -> dict:
        return {
            "name": "csv",
            "k": "param",
            "label": "your own csv file (docs/datasets.md)",
            "source": "user file (params.path)",
            "params": ", ".join(CSV_PARAMS),
        }
