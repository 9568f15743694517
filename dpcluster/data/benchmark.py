"""Labelled benchmark sets in the clustering-data-v1 layout (Gagolewski et al., SoftwareX
20 (2022) 101270), read from a folder the user gives.

A set ``<battery>/<name>`` is two gzip'd text files: ``<name>.data.gz``, one record per
line with whitespace-separated numbers, and ``<name>.labels0.gz``, one integer label per
record, where 0 marks a noise point. The reference k is the number of distinct non-zero
labels. The suite's own loader (``clustering-benchmarks``) is AGPL-3.0 and pulls in a
compiled package; two text files need neither.
"""

from __future__ import annotations

import functools
import gzip
import io
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DataError
from .schema import Dataset, check_finite, read_checked, scale

DATA_SUFFIX = ".data.gz"
LABELS_SUFFIX = ".labels0.gz"


@dataclass(frozen=True)
class BenchmarkSet:
    """One labelled set: ``X`` (N, d) float64 in the data's units, ``labels`` (N,) int64
    (0 = noise), ``name`` as ``family/set``."""

    name: str
    X: np.ndarray
    labels: np.ndarray

    @property
    def k(self) -> int:
        """The reference number of clusters: distinct labels other than noise (0)."""
        return int(np.unique(self.labels[self.labels > 0]).size)

    @property
    def clustered(self) -> np.ndarray:
        """(N,) bool: the records that belong to a reference cluster (label > 0)."""
        return self.labels > 0


def files(root: Path | str, name: str) -> tuple[Path, Path]:
    """The (data, labels) files of set ``name`` under ``root``."""
    base = Path(root) / name
    return base.with_name(base.name + DATA_SUFFIX), base.with_name(base.name + LABELS_SUFFIX)


def find(root: Path | str) -> list[str]:
    """The sets under ``root`` (``family/set``, sorted): every data file with its labels."""
    root = Path(root)
    if not root.is_dir():
        raise DataError(f"{root}: benchmark folder not found")
    out = []
    for path in root.rglob("*" + DATA_SUFFIX):
        name = path.relative_to(root).as_posix()[: -len(DATA_SUFFIX)]
        if files(root, name)[1].is_file():
            out.append(name)
    return sorted(out)


def _table(path: Path, sha256: str, integer: bool) -> np.ndarray:
    raw = read_checked(path, sha256)
    try:
        text = gzip.decompress(raw) if path.suffix == ".gz" else raw
        table = np.loadtxt(io.BytesIO(text), dtype=np.float64, ndmin=2)
    except (ValueError, OSError, EOFError, zlib.error) as exc:
        raise DataError(f"{path}: cannot read as numbers ({type(exc).__name__}: {exc})") from None
    if integer:
        if table.shape[1] != 1 or not np.all(table == np.round(table)):
            raise DataError(f"{path}: labels must be one integer per line")
        return table[:, 0].astype(np.int64)
    check_finite(table, str(path))
    return np.ascontiguousarray(table)


@functools.lru_cache(maxsize=32)
def _read(data_path: str, labels_path: str, data_sha: str, labels_sha: str, name: str):
    X = _table(Path(data_path), data_sha, integer=False)
    labels = _table(Path(labels_path), labels_sha, integer=True)
    if len(labels) != len(X):
        raise DataError(f"{labels_path}: {len(labels)} labels for {len(X)} records")
    if np.any(labels < 0):
        raise DataError(f"{labels_path}: labels must be >= 0 (0 = noise)")
    X.setflags(write=False)
    labels.setflags(write=False)
    return BenchmarkSet(name, X, labels)


def read(root: Path | str, name: str, data_sha: str = "", labels_sha: str = "") -> BenchmarkSet:
    """Set ``name`` (``family/set``) of the battery at ``root``; the optional sha256 of
    each file is checked. Raises :class:`~dpcluster.errors.DataError` naming the file."""
    data_path, labels_path = files(root, name)
    for path in (data_path, labels_path):
        if not path.is_file():
            raise DataError(f"{path}: benchmark file not found")
    return _read(str(data_path), str(labels_path), data_sha, labels_sha, name)


#: the ``benchmark`` dataset's parameters in a spec: name -> (default, what it is)
SPEC_PARAMS = {
    "battery": (None, "the battery folder (required); relative to the spec's folder"),
    "set": (None, "the set, family/name (required), e.g. sipu/a1"),
    "k": (None, "number of clusters (default: the reference k, distinct labels > 0)"),
}


def load_dataset(
    data: str,
    labels: str,
    set: str,
    k: int | None = None,
    data_sha256: str = "",
    labels_sha256: str = "",
    bounds: str = "data",
) -> Dataset:
    """The ``benchmark`` dataset as a :class:`~dpcluster.data.Dataset`: records scaled
    with the data's own bounds (the sets declare no public domain), the reference labels
    as ``classes`` (0 = noise), k the reference k unless given."""
    s = _read(data, labels, data_sha256, labels_sha256, set)
    raw = np.array(s.X)
    X, lo, hi, clipped = scale(raw, bounds, None, data)
    return Dataset(
        name="benchmark",
        X=X,
        k=int(k) if k is not None else s.k,
        label=set,
        lo=lo,
        hi=hi,
        standin=False,
        source=data,
        classes=np.array(s.labels),
        bounds=bounds,
        clipped=clipped,
        given=raw if clipped else None,
    )


class BenchmarkSource:
    """A labelled set in the clustering-data-v1 layout; the spec gives ``battery`` and
    ``set``, and resolves them to the two files and their digests (``data``, ``labels``,
    ``data_sha256``, ``labels_sha256``) that :func:`load_dataset` takes."""

    name = "benchmark"
    params = SPEC_PARAMS

    def load(self, **params) -> Dataset:
        return load_dataset(**params)

    def has_classes(self, params) -> bool:
        return True

    def describe(self) -> dict:
        return {
            "name": "benchmark",
            "k": "reference",
            "label": "a labelled set in the clustering-data-v1 layout (docs/datasets.md)",
            "source": "user folder (params.battery)",
            "params": ", ".join(SPEC_PARAMS),
        }
