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
line and column. A ``.gz``, ``.bz2``, ``.xz`` or one-file ``.zip`` is read transparently.
"""

from __future__ import annotations

import bz2
import csv
import functools
import gzip
import io
import lzma
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ..errors import DataError
from .schema import Dataset, check_finite, freeze, read_checked, scale, scale_to_ball

#: the csv entry's parameters: name -> (default, what it is)
CSV_PARAMS = {
    "path": (None, "the file (required); relative to the spec's folder"),
    "columns": (None, "feature columns: names or 0-based indices (default: all)"),
    "k": (None, "number of clusters (required)"),
    "label": ("", "display label (default: the file stem)"),
    "classes": (None, "ground-truth class column (optional)"),
    "domain": (
        None,
        "public box [lo, hi] (scalars or one per column), or ball {radius, center}, for "
        "bounds: public",
    ),
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


def _check_named_once(p: Path, header: list[str], wanted) -> None:
    """A DataError when a column the spec names by its header name heads two columns:
    pandas would rename the second (``x.1``) and the name would silently mean the first."""
    for name in (w for w in wanted if isinstance(w, str)):
        at = [i for i, h in enumerate(header) if h == name]
        if len(at) > 1:
            raise DataError(
                f"{p}: columns {', '.join(map(str, at))} (0-based) are all headed {name!r}; "
                "rename one, or give the columns by index"
            )


#: compressed files, by suffix: the function from the file's bytes to the csv's text
_DECOMPRESS = {".gz": gzip.decompress, ".bz2": bz2.decompress, ".xz": lzma.decompress}


def _text_bytes(p: Path, blob: bytes) -> bytes:
    """The csv's text: ``blob`` itself, or decompressed by the file's suffix (.gz, .bz2,
    .xz, or a .zip holding one file). Parsing these bytes, not the path a second time,
    ties the numbers to the bytes whose sha256 was checked."""
    suffix = p.suffix.lower()
    try:
        if suffix in _DECOMPRESS:
            return _DECOMPRESS[suffix](blob)
        if suffix == ".zip":
            with zipfile.ZipFile(io.BytesIO(blob)) as archive:
                files = [n for n in archive.namelist() if not n.endswith("/")]
                if len(files) != 1:
                    raise DataError(f"{p}: a .zip must hold one file; this one holds {len(files)}")
                return archive.read(files[0])
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError, zipfile.BadZipFile) as exc:
        # ValueError: a truncated .bz2 ("end-of-stream marker was not found")
        raise DataError(f"{p}: cannot read as csv ({type(exc).__name__}: {exc})") from None
    return blob


#: the longest first line (the header, or the first record) read before any parsing: a
#: wider file is refused at once, not after pandas has spent minutes and memory on it
MAX_FIRST_LINE = 1 << 20


def _check_first_line(p: Path, text: bytes) -> None:
    end = text.find(b"\n", 0, MAX_FIRST_LINE + 1)
    if end < 0 and len(text) > MAX_FIRST_LINE:
        raise DataError(
            f"{p}: the first line is longer than {MAX_FIRST_LINE:,} bytes; a csv of "
            "records needs a header of at most that (about 100,000 columns)"
        )


def _records(text: bytes, delimiter: str, p: Path | str = "csv"):
    """(first line, fields) of each record as pandas reads them, the header included:
    blank and whitespace-only lines are skipped as pandas skips them, and a quoted field
    may span lines. Decoded as it is read: the header costs one line, and only the error
    paths read further."""
    stream = io.TextIOWrapper(io.BytesIO(text), "utf-8-sig", errors="replace", newline="")
    reader = csv.reader(stream, delimiter=delimiter, skipinitialspace=True)
    line = 1
    try:
        for fields in reader:
            if len(fields) > 1 or any(f.strip() for f in fields):
                yield line, fields
            line = reader.line_num + 1
    except csv.Error as exc:  # a field past the csv module's limit (131,072 characters)
        raise DataError(f"{p}: line {reader.line_num}: {exc}") from None


def _ragged(p: Path, text: bytes, delimiter: str, header: bool) -> DataError | None:
    """A DataError naming the first record whose field count is not the first record's."""
    records = _records(text, delimiter, p)
    first_line, first = next(records, (0, []))
    for line, fields in records:
        if len(fields) != len(first):
            head = "the header" if header else f"line {first_line}"
            return DataError(
                f"{p}: line {line} has {_fields(len(fields))} where {head} has "
                f"{_fields(len(first))}; every record needs one value per column"
            )
    return None


def _fields(n: int) -> str:
    return f"{n} field" if n == 1 else f"{n} fields"


def _line_of(text: bytes, delimiter: str, header: bool, record: int) -> int:
    """The file line (1-based) on which data record ``record`` (0-based) starts."""
    for i, (line, _) in enumerate(_records(text, delimiter)):
        if i == record + header:
            return line
    return record + 1 + header


def _parse(p: Path, text: bytes, delimiter: str, header: bool):
    """The csv as a DataFrame; a DataError for a record longer than the header (pandas
    would make the first column an index and shift the rest by one) or any other record
    pandas cannot split."""
    import pandas as pd

    try:
        with warnings.catch_warnings():
            # index_col=False keeps pandas from indexing by the first column; it then
            # warns that a longer record loses fields, and that warning is an error here
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(
                io.BytesIO(text),
                sep=delimiter,
                header=0 if header else None,
                index_col=False,
                skipinitialspace=True,
                encoding="utf-8-sig",
            )
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        raise _ragged(p, text, delimiter, header) or DataError(
            f"{p}: cannot read as csv ({type(exc).__name__}: {exc})"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{p}: cannot read as csv ({type(exc).__name__}: {exc})") from None


@functools.lru_cache(maxsize=16)
def read_csv(
    path: str, columns, classes, delimiter: str, header: bool, sha256: str
) -> tuple[np.ndarray, np.ndarray | None, tuple[str, ...]]:
    """(X (N, d) float64, classes (N,) or None, the feature columns' names).

    Errors name the record's line in the file (1-based, the header's line counted, so it
    is the row a spreadsheet shows): a text or non-finite value, an empty class, or a
    record with more or fewer fields than the header."""
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: csv dataset file not found")
    text = _text_bytes(p, read_checked(p, sha256))
    _check_first_line(p, text)
    frame = _parse(p, text, delimiter, header)
    names = [str(c) for c in frame.columns]
    if header:
        first = next(_records(text, delimiter, p), (0, []))[1]
        _check_named_once(p, first, [c for c in (*(columns or ()), classes) if c is not None])

    def line(record: int) -> int:
        return _line_of(text, delimiter, header, record)

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
        text_values = numeric.isna() & col.notna()
        if text_values.any():
            row = int(np.flatnonzero(text_values.to_numpy())[0])
            value = str(col.iloc[row])
            hint = next(
                (
                    f"; is the delimiter {s!r}? (params.delimiter)"
                    for s in ";\t|"
                    if s in value and s != delimiter
                ),
                "; choose numeric columns with params.columns",
            )
            raise DataError(f"{p}: column {names[i]!r} is text (line {line(row)}: {value!r}){hint}")
        X[:, j] = numeric.to_numpy(dtype=np.float64)
    if frame.isna().to_numpy().any():
        # pandas fills a short record with NaN: name its line, not an "empty" value
        ragged = _ragged(p, text, delimiter, header)
        if ragged is not None:
            raise ragged
        empty = [names[i] for j, i in enumerate(idx) if np.isnan(X[:, j]).all()]
        if empty:
            raise DataError(
                f"{p}: column {empty[0]!r} is empty on every line (a delimiter at the end "
                "of each line?); choose the columns with params.columns"
            )
    check_finite(X, str(p), names=[names[i] for i in idx], row_label=lambda r: f"line {line(r)}")
    y = None
    if classes is not None:
        labels = frame.iloc[:, _column_index(classes, names, p)]
        if labels.isna().any():
            row = int(np.flatnonzero(labels.isna().to_numpy())[0])
            raise DataError(
                f"{p}: line {line(row)}, class column {labels.name!r}: empty; every "
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
    (``domain`` is the declared public box it needs for ``bounds: public``, or a ball
    ``("ball", R, center)``: :func:`~.schema.scale_to_ball`)."""
    raw, y, names = read_csv(str(path), freeze(columns), classes, delimiter, bool(header), sha256)
    if len(raw) < 2:
        raise DataError(f"{path}: needs at least 2 records, found {len(raw)}")
    domain, ball = freeze(domain), None
    if isinstance(domain, tuple) and domain and domain[0] == "ball":
        X, lo, hi, clipped = scale_to_ball(raw, bounds, domain[1], domain[2], str(path))
        ball = 1.0 if bounds == "public" else None
    else:
        d = raw.shape[1]
        if domain is not None and (
            len(domain) != 2 or any(not (np.ndim(b) == 0 or np.shape(b) == (d,)) for b in domain)
        ):
            raise DataError(
                f"{path}: domain must be [lo, hi], each a number or a list of one value per "
                f"column ({d} columns), got {domain!r}"
            )
        X, lo, hi, clipped = scale(raw, bounds, domain, str(path))
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
        ball=ball,
        given=raw if clipped else None,
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
