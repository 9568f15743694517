"""The bundled data files (``datasets/``, checksummed) and the datasets whose file the
user supplies (TIGER): one :class:`FileSource` entry each, exposed as sources
(:mod:`.sources`)."""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..errors import DataError
from .schema import Dataset, check_finite, read_checked, scale

DATA_DIR = Path(__file__).resolve().parents[2] / "datasets"


@dataclass(frozen=True)
class FileSource:
    """A bundled data file, verified by sha256 of the stored (.gz) bytes before parsing."""

    file: str
    sha256: str
    k: int
    label: str
    columns: tuple[int, int] | None = None  # (start, stop) of the feature columns
    delimiter: str | None = ","
    skip_header: int = 0
    standin: bool = False
    note: str = ""
    class_column: int | None = None  # ground-truth label column, if any
    #: the declared public box (lo, hi), scalars or one value per attribute, that
    #: ``bounds: public`` scales with; where each comes from is in datasets/PROVENANCE.md
    domain: tuple | None = None
    #: the public attribute interval of Paper B's encodings, when it differs from lo, hi
    encoding: tuple[float, float] | None = None

    def load(self, path: Path | None = None) -> np.ndarray:
        path = path or DATA_DIR / self.file
        if not path.is_file():
            raise DataError(f"{path}: dataset file is missing (expected sha256 {self.sha256})")
        blob = path.read_bytes()
        digest = hashlib.sha256(blob).hexdigest()
        if digest != self.sha256:
            raise DataError(
                f"{path}: checksum mismatch: sha256 is {digest}, expected {self.sha256}. "
                "The file is corrupt or not the one in datasets/PROVENANCE.md"
            )
        text = gzip.decompress(blob).decode()
        try:
            raw = np.loadtxt(
                io.StringIO(text), delimiter=self.delimiter, skiprows=self.skip_header, ndmin=2
            )
        except ValueError as exc:
            raise DataError(f"{path}: cannot parse as numbers: {exc}") from None
        check_finite(raw, str(path), 1 + self.skip_header)
        return raw

    def features(self, raw: np.ndarray) -> np.ndarray:
        cols = slice(*self.columns) if self.columns else slice(None)
        return np.ascontiguousarray(raw[:, cols], dtype=np.float64)


#: Bundled files (checksums from datasets/PROVENANCE.md; k from docs/methods.md Table 1).
FILES: dict[str, FileSource] = {
    "s1": FileSource(
        "s1.csv.gz",
        "9564c3a4dd94f47d5f470a11bc9ae1a530e732d2273ccd56ec7d30dd263d5d5b",
        k=15,
        label="S1",
        columns=(0, 2),
        skip_header=1,
        domain=(0.0, 1_000_000.0),
    ),
    "image": FileSource(
        "house_rgb_1837.txt.gz",
        "e4cb8bb1455824b4381f677de9333dcb7212bbaae54e80bd8a807270f5600eee",
        k=3,
        label="Image (stand-in: 1,837-row house)",
        delimiter=None,
        standin=True,
        note="paper: 34,112 RGB vectors; this 1,837-row quantised file is a stand-in",
        domain=(0.0, 255.0),
    ),
    "adult": FileSource(
        "adult_numeric6.csv.gz",
        "de2fb973b1a702fe5da6ba99421e7defe96d65165c2ed6f1483e274c3278eedf",
        k=5,
        label="Adult-num",
        skip_header=1,
        # age, fnlwgt, education-num, capital-gain, capital-loss, hours-per-week
        domain=(
            (17.0, 0.0, 1.0, 0.0, 0.0, 1.0),
            (90.0, 1_500_000.0, 16.0, 99_999.0, 5_000.0, 99.0),
        ),
    ),
    "lifesci": FileSource(
        "lifesci_ds1.10.csv.gz",
        "7f5d9ebcdc319d246cbe3e3c8b5eaa7a863da243bde073541ba1859a1814f2aa",
        k=3,
        label="Lifesci",
        columns=(0, 10),
        domain=(-15.0, 15.0),
    ),
    "gowalla": FileSource(
        "gowalla_subset_liu2017_unique_latlon.csv.gz",
        "e6a61b6380d3c86b60eb4ac3f00ae33b2d5dcc2f728eb76af28430979fe39767",
        k=5,
        label="Gowalla (stand-in: 32,229-row subset)",
        skip_header=1,
        standin=True,
        note="paper: 107,091 unique SNAP locations; this Liu et al. 2017 subset is a stand-in",
        domain=((-90.0, -180.0), (90.0, 180.0)),  # latitude, longitude
    ),
    "digits": FileSource(
        "digits.csv.gz",
        "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22",
        k=10,
        label="Digits (8x8)",
        columns=(0, 64),
        class_column=64,
        encoding=(0.0, 16.0),
        domain=(0.0, 16.0),
    ),
}

#: Datasets with no public copy: the user supplies the file (path in the spec).
#: name -> (k, label, what the file holds)
USER_FILES: dict[str, tuple[int, str, str]] = {
    "tiger": (
        2,
        "TIGER (user file)",
        "2006 TIGER/Line road intersections (WA + NM, 1% sample): text or .gz, one "
        "record per line, the first two numeric columns (longitude, latitude), comma- "
        "or whitespace-separated; a non-numeric header line is skipped",
    ),
}


def load_user_file(name: str, path: str, sha256: str = "") -> np.ndarray:
    """Read a user-supplied dataset file (format in :data:`USER_FILES`); (N, 2) float64."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise DataError(
            f"{p}: {name} file not found. TIGER has no public copy in datasets/; "
            f"supply one ({USER_FILES[name][2]}) and set datasets[].params.path"
        )
    blob = read_checked(p, sha256)
    try:
        text = (gzip.decompress(blob) if blob[:2] == b"\x1f\x8b" else blob).decode(errors="replace")
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise DataError(f"{p}: not a readable gzip file ({type(exc).__name__}: {exc})") from None
    lines = text.splitlines()
    delimiter = "," if "," in (lines[1] if len(lines) > 1 else text) else None
    try:
        raw = np.loadtxt(io.StringIO(text), delimiter=delimiter, ndmin=2, usecols=(0, 1))
    except ValueError:
        try:
            raw = np.loadtxt(
                io.StringIO(text), delimiter=delimiter, ndmin=2, usecols=(0, 1), skiprows=1
            )
        except ValueError as exc:
            raise DataError(f"{p}: cannot read two numeric columns: {exc}") from None
    if len(raw) < 2:
        raise DataError(f"{p}: needs at least 2 records, found {len(raw)}")
    check_finite(raw, str(p))
    return np.ascontiguousarray(raw, dtype=np.float64)


#: the declared public box of the user-file datasets: longitude, latitude
USER_DOMAIN = {"tiger": ((-180.0, -90.0), (180.0, 90.0))}


@functools.lru_cache(maxsize=32)
def _bundled(name: str, bounds: str) -> Dataset:
    src = FILES[name]
    table = src.load()
    raw = src.features(table)
    X, lo, hi, clipped = scale(raw, bounds, src.domain, name)
    classes = table[:, src.class_column].astype(np.int64) if src.class_column is not None else None
    enc = (
        (np.full(X.shape[1], src.encoding[0]), np.full(X.shape[1], src.encoding[1]))
        if src.encoding
        else (None, None)
    )
    return Dataset(
        name=name,
        X=X,
        k=src.k,
        label=src.label,
        lo=lo,
        hi=hi,
        standin=src.standin,
        source=f"datasets/{src.file}",
        classes=classes,
        domain_lo=enc[0],
        domain_hi=enc[1],
        bounds=bounds,
        clipped=clipped,
        given=np.asarray(raw, dtype=np.float64) if clipped else None,
    )


@functools.lru_cache(maxsize=8)
def _user_file(name: str, path: str, sha256: str, bounds: str) -> Dataset:
    k, label, _ = USER_FILES[name]
    raw = load_user_file(name, path, sha256)
    X, lo, hi, clipped = scale(raw, bounds, USER_DOMAIN.get(name), name)
    return Dataset(
        name=name,
        X=X,
        k=k,
        label=label,
        lo=lo,
        hi=hi,
        standin=False,
        source=str(path),
        bounds=bounds,
        clipped=clipped,
        given=np.asarray(raw, dtype=np.float64) if clipped else None,
    )


def _with_k(ds: Dataset, k) -> Dataset:
    return ds if k is None or int(k) == ds.k else replace(ds, k=int(k))


@dataclass(frozen=True)
class BundledSource:
    """A bundled file as a source: ``k`` overrides the papers' k."""

    name: str

    @property
    def params(self) -> dict:
        return {"k": (FILES[self.name].k, "number of clusters (override)")}

    def load(self, bounds: str = "data", k=None) -> Dataset:
        return _with_k(_bundled(self.name, bounds), k)

    def has_classes(self, params) -> bool:
        return FILES[self.name].class_column is not None

    def describe(self) -> dict:
        f = FILES[self.name]
        return {
            "name": self.name,
            "k": f.k,
            "label": f.label,
            "source": f"datasets/{f.file}",
            "params": "k (override)",
        }


@dataclass(frozen=True)
class UserFileSource:
    """A dataset with no public copy: the user's file at ``path`` (format in
    :data:`USER_FILES`), optionally checked against ``sha256``."""

    name: str

    @property
    def params(self) -> dict:
        return {
            "k": (USER_FILES[self.name][0], "number of clusters"),
            "path": ("", "the file (required)"),
            "sha256": ("", "expected sha256 of the file's bytes (optional)"),
        }

    def load(self, bounds: str = "data", path: str = "", sha256: str = "", k=None) -> Dataset:
        return _with_k(_user_file(self.name, str(path), str(sha256), bounds), k)

    def has_classes(self, params) -> bool:
        return False

    def describe(self) -> dict:
        k, label, _ = USER_FILES[self.name]
        return {
            "name": self.name,
            "k": k,
            "label": label,
            "source": "user file (params.path)",
            "params": "path (required), sha256, k",
        }
