"""Dataset registry: checksummed loaders, synthetic generators and normalisation.

Every dataset resolves to a :class:`Dataset` whose ``X`` is normalised to ``[-1, 1]^d``
(docs/methods.md A0: ``x' = 2 (x − lo)/(hi − lo) − 1``). Where ``lo, hi`` come from is the *bounds
policy* (docs/privacy.md):

* ``bounds="data"`` (the papers' setting, the default of the figure specs): the data's own
  per-attribute min and max. Every ε of a central algorithm then assumes these bounds are
  public, which they are not: one outlier moves every scaled record.
* ``bounds="public"``: a domain declared per dataset in this registry, independent of the
  records (sources in datasets/PROVENANCE.md). Records are clipped into it, then scaled.

Adding a dataset is one :class:`FileSource` (or generator) entry.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import io
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import DataError
from .rng import stream

DATA_DIR = Path(__file__).resolve().parent.parent / "datasets"
BOUNDS = ("data", "public")


class DataBoundsWarning(UserWarning):
    """Scaling bounds were computed from the data, so no ε that follows is private."""


@dataclass(frozen=True)
class Dataset:
    """A normalised dataset.

    X       (N, d) float64 in [-1, 1]^d
    lo, hi  (d,) raw per-attribute bounds used for the normalisation
    k       the number of clusters the papers use for it
    label   display name; stand-ins say so (e.g. "Image (stand-in: 1,837-row house)")
    """

    name: str
    X: np.ndarray
    k: int
    label: str
    lo: np.ndarray
    hi: np.ndarray
    standin: bool = False
    source: str = ""
    #: (N,) int ground-truth classes where the data has them (digits, blobs, moons)
    classes: np.ndarray | None = None
    #: (d,) public interval per attribute for Paper B's encodings; default lo, hi
    domain_lo: np.ndarray | None = None
    domain_hi: np.ndarray | None = None
    #: where lo, hi came from: "data" (the records' own min/max) or "public" (declared)
    bounds: str = "data"
    #: records that lay outside the public bounds and were clipped into them
    clipped: int = 0

    @property
    def raw(self) -> np.ndarray:
        """The records in their original units (N, d): ``lo + (X + 1)(hi − lo)/2``."""
        return self.lo + (self.X + 1.0) * (self.hi - self.lo) / 2.0

    @property
    def domain(self) -> tuple[np.ndarray, np.ndarray]:
        """Public per-attribute interval [L, U] (Paper B); the data bounds unless declared."""
        lo = self.lo if self.domain_lo is None else self.domain_lo
        hi = self.hi if self.domain_hi is None else self.domain_hi
        return (
            np.broadcast_to(lo, (self.d,)).astype(float),
            np.broadcast_to(hi, (self.d,)).astype(float),
        )

    @property
    def N(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])


def normalise(raw: np.ndarray, bounds=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rescale each column of raw (N, d) to [-1, 1]. Returns (X, lo, hi).

    bounds  ``(lo, hi)``, scalars or (d,) arrays: public bounds; records are clipped into
            them first. ``"data"``: the columns' own min and max (the papers' setting; any ε
            computed on X then assumes these are public). ``None``: as ``"data"``, with a
            :class:`DataBoundsWarning` (shown once) that this is not private.
    Constant columns (hi = lo) map to 0.
    """
    raw = np.asarray(raw, dtype=np.float64)
    if bounds is None or (isinstance(bounds, str) and bounds == "data"):
        if bounds is None:
            warnings.warn(
                "scaling bounds computed from the data: no ε computed on the "
                "result is private; pass bounds=(lo, hi) from a public domain",
                DataBoundsWarning,
                stacklevel=2,
            )
        lo, hi = raw.min(axis=0), raw.max(axis=0)
    else:
        lo, hi = (np.broadcast_to(np.asarray(b, float), raw.shape[1:]).copy() for b in bounds)
        if np.any(hi < lo):
            raise ValueError(f"bounds need lo <= hi per attribute, got lo={lo}, hi={hi}")
    span = np.where(hi > lo, hi - lo, 1.0)
    X = 2.0 * (np.clip(raw, lo, hi) - lo) / span - 1.0
    X[:, hi <= lo] = 0.0
    return np.ascontiguousarray(np.clip(X, -1.0, 1.0)), lo, hi


def _check_range(lo: np.ndarray, hi: np.ndarray, what: str) -> None:
    """A DataError naming the first column whose range hi - lo (doubled, as the scaling
    computes it) overflows a float: its records would scale to NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        wide = ~np.isfinite(2.0 * (np.asarray(hi, float) - np.asarray(lo, float)))
    if np.any(wide):
        c = int(np.flatnonzero(np.broadcast_to(wide, np.shape(wide) or (1,)))[0])
        raise DataError(
            f"{what}: column {c + 1}: the range {float(np.ravel(lo)[c])!r} .. "
            f"{float(np.ravel(hi)[c])!r} overflows a float when scaled; rescale the data"
        )


def _scaled(raw: np.ndarray, bounds: str, public: tuple | None, what: str):
    """(X, lo, hi, clipped) under a bounds policy; ``public`` is the declared (lo, hi)."""
    if bounds == "data":
        if len(raw):
            _check_range(raw.min(axis=0), raw.max(axis=0), what)
        return (*normalise(raw, "data"), 0)
    if public is None:
        raise DataError(
            f"{what}: no public bounds are declared for this dataset; use "
            "bounds: data or declare them in dpcluster/data.py"
        )
    try:
        lo, hi = (np.broadcast_to(np.asarray(b, float), raw.shape[1:]) for b in public)
    except ValueError:
        raise DataError(
            f"{what}: public bounds {public!r} give neither one value nor one per column "
            f"({raw.shape[1]} columns)"
        ) from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))) or np.any(lo >= hi):
        raise DataError(f"{what}: public bounds {public!r} need finite lo < hi per column")
    _check_range(lo, hi, what)
    clipped = int(np.any((raw < lo) | (raw > hi), axis=1).sum())
    return (*normalise(raw, (lo, hi)), clipped)


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
    domain: tuple[float, float] | None = None  # public attribute interval (Paper B)
    #: declared public bounds (lo, hi), scalars or one value per attribute, for
    #: ``bounds: public``; where each comes from is in datasets/PROVENANCE.md
    public: tuple | None = None

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


def check_finite(raw: np.ndarray, where: str, first_row: int = 1, names=None) -> None:
    """A DataError naming the first non-finite value's row (1-based, counting data rows
    from ``first_row``) and column (its name from ``names``, else its 1-based index)."""
    bad = ~np.isfinite(raw)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        column = repr(names[c]) if names is not None else str(int(c) + 1)
        raise DataError(
            f"{where}: row {int(r) + first_row}, column {column}: "
            f"{float(raw[r, c])!r} is not a finite number"
        )


def file_sha256(path: Path | str) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def read_checked(path: Path, sha256: str = "") -> bytes:
    """A file's bytes, after checking them against ``sha256`` when one is given."""
    blob = path.read_bytes()
    digest = hashlib.sha256(blob).hexdigest()
    if sha256 and digest != sha256.lower():
        raise DataError(
            f"{path}: checksum mismatch: sha256 is {digest}, expected {sha256} (the file "
            "changed since the spec was read, or is not the one its params.sha256 names)"
        )
    return blob


def warnings_for(ds: Dataset) -> list[str]:
    """What is legal but suspicious about a dataset: constant columns, fewer distinct
    records than clusters. Recorded in meta.json."""
    out = []
    constant = np.flatnonzero(np.ptp(ds.X, axis=0) == 0)
    if len(constant):
        out.append(f"{ds.name}: constant column(s) {[int(c) + 1 for c in constant]}")
    distinct = len(np.unique(ds.X, axis=0))
    if distinct < ds.k:
        out.append(f"{ds.name}: only {distinct} distinct records for k = {ds.k} clusters")
    return out


#: Bundled files (checksums from datasets/PROVENANCE.md; k from docs/methods.md Table 1).
FILES: dict[str, FileSource] = {
    "s1": FileSource(
        "s1.csv.gz",
        "9564c3a4dd94f47d5f470a11bc9ae1a530e732d2273ccd56ec7d30dd263d5d5b",
        k=15,
        label="S1",
        columns=(0, 2),
        skip_header=1,
        public=(0.0, 1_000_000.0),
    ),
    "image": FileSource(
        "house_rgb_1837.txt.gz",
        "e4cb8bb1455824b4381f677de9333dcb7212bbaae54e80bd8a807270f5600eee",
        k=3,
        label="Image (stand-in: 1,837-row house)",
        delimiter=None,
        standin=True,
        note="paper: 34,112 RGB vectors; this 1,837-row quantised file is a stand-in",
        public=(0.0, 255.0),
    ),
    "adult": FileSource(
        "adult_numeric6.csv.gz",
        "de2fb973b1a702fe5da6ba99421e7defe96d65165c2ed6f1483e274c3278eedf",
        k=5,
        label="Adult-num",
        skip_header=1,
        # age, fnlwgt, education-num, capital-gain, capital-loss, hours-per-week
        public=(
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
        public=(-15.0, 15.0),
    ),
    "gowalla": FileSource(
        "gowalla_subset_liu2017_unique_latlon.csv.gz",
        "e6a61b6380d3c86b60eb4ac3f00ae33b2d5dcc2f728eb76af28430979fe39767",
        k=5,
        label="Gowalla (stand-in: 32,229-row subset)",
        skip_header=1,
        standin=True,
        note="paper: 107,091 unique SNAP locations; this Liu et al. 2017 subset is a stand-in",
        public=((-90.0, -180.0), (90.0, 180.0)),  # latitude, longitude
    ),
    "digits": FileSource(
        "digits.csv.gz",
        "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22",
        k=10,
        label="Digits (8x8)",
        columns=(0, 64),
        class_column=64,
        domain=(0.0, 16.0),
        public=(0.0, 16.0),
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


#: declared public bounds of the user-file datasets: longitude, latitude
USER_PUBLIC = {"tiger": ((-180.0, -90.0), (180.0, 90.0))}


@functools.lru_cache(maxsize=8)
def _user_file_cached(name: str, path: str, sha256: str, bounds: str = "data") -> Dataset:
    k, label, _ = USER_FILES[name]
    X, lo, hi, clipped = _scaled(
        load_user_file(name, path, sha256), bounds, USER_PUBLIC.get(name), name
    )
    return Dataset(name, X, k, label, lo, hi, False, str(path), bounds=bounds, clipped=clipped)


def sphere_packing(
    k: int, d: int, rng: np.random.Generator, r: float = 1.0, max_rejections: int = 100
) -> tuple[np.ndarray, float]:
    """k centres in [-r, r]^d pairwise ≥ 2a apart (docs/methods.md A0; diffprivlib's
    ``_init_centers``).

    Start with ``a = r``; draw candidates uniformly in ``[-r + a, r − a]^d``; accept one if it
    is ≥ 2a from every accepted centre; after ``max_rejections`` consecutive rejections halve
    ``a`` and restart. Returns (centres (k, d), final a). Data-independent, so free.
    """
    a = r
    while True:
        centres: list[np.ndarray] = []
        rejections = 0
        while len(centres) < k and rejections < max_rejections:
            cand = rng.uniform(-r + a, r - a, size=d)
            if all(np.linalg.norm(cand - c) >= 2 * a for c in centres):
                centres.append(cand)
                rejections = 0
            else:
                rejections += 1
        if len(centres) == k:
            return np.array(centres), a
        a /= 2.0


def synthetic(N: int, k: int, d: int, seed: int) -> Dataset:
    """k equal-size isotropic Gaussian clusters in [-1, 1]^d (docs/methods.md A0 generator).

    Means from :func:`sphere_packing` (final radius ``a``), per-coordinate standard deviation
    ``σ = a / (3√d)``, points clipped into the domain. Already in [-1, 1]^d, so not rescaled.
    """
    rng = stream(seed, "synthetic", N, k, d)
    means, a = sphere_packing(k, d, rng)
    sigma = a / (3.0 * np.sqrt(d))
    sizes = np.full(k, N // k)
    sizes[: N - sizes.sum()] += 1
    X = np.concatenate([rng.normal(means[j], sigma, size=(sizes[j], d)) for j in range(k)])
    X = np.ascontiguousarray(np.clip(X, -1.0, 1.0))
    ones = np.ones(d)
    return Dataset(
        f"synthetic(N={N},k={k},d={d},seed={seed})",
        X,
        k,
        f"Synthetic k={k} d={d}",
        -ones,
        ones,
        source="generator, docs/methods.md A0",
    )


def uniform(N: int, d: int, lo: float, hi: float, k: int, seed: int) -> Dataset:
    """N records i.i.d. uniform on [lo, hi]^d (Paper B distance experiments). The interval
    is the public domain; ``k`` only matters if something clusters it."""
    rng = stream(seed, "uniform", N, d, lo, hi)
    raw = rng.uniform(lo, hi, size=(N, d))
    lo_v, hi_v = np.full(d, float(lo)), np.full(d, float(hi))
    X = np.ascontiguousarray(2.0 * (raw - lo_v) / (hi_v - lo_v) - 1.0)
    return Dataset(
        f"uniform(N={N},d={d},lo={lo:g},hi={hi:g},seed={seed})",
        X,
        k,
        f"Uniform [{lo:g}, {hi:g}]^{d}",
        lo_v,
        hi_v,
        source="generator",
    )


def _sklearn_2d(
    kind: str, N: int, k: int, spread: float, seed: int, bounds: str = "data"
) -> Dataset:
    """scikit-learn's ``make_blobs`` (k centres, cluster std ``spread``) or ``make_moons``
    (noise ``spread``), seeded from the spec's stream; ground-truth classes kept."""
    from sklearn.datasets import make_blobs, make_moons

    state = int(stream(seed, kind, N, k, spread).integers(2**31 - 1))
    if kind == "blobs":
        raw, y = make_blobs(n_samples=N, centers=k, cluster_std=spread, random_state=state)
        # centres lie in make_blobs' default center_box (-10, 10); noise beyond 4 sd is clipped
        public = (-10.0 - 4 * spread, 10.0 + 4 * spread)
    else:
        raw, y = make_moons(n_samples=N, noise=spread, random_state=state)
        k = 2
        # the noiseless moons span x in [-1, 2], y in [-0.5, 1]
        public = ((-1.0 - 4 * spread, -0.5 - 4 * spread), (2.0 + 4 * spread, 1.0 + 4 * spread))
    X, lo, hi, clipped = _scaled(raw, bounds, public, kind)
    return Dataset(
        f"{kind}(N={N},k={k},spread={spread:g},seed={seed})",
        X,
        k,
        f"{kind.capitalize()} (scikit-learn, N={N})",
        lo,
        hi,
        source="generator",
        classes=y.astype(np.int64),
        bounds=bounds,
        clipped=clipped,
    )


#: name -> (parameter defaults, builder, description). Parameter types follow the defaults.
GENERATORS = {
    "synthetic": (
        {"N": 10_000, "k": 5, "d": 2, "seed": 0},
        synthetic,
        "k Gaussian clusters in [-1, 1]^d (docs/methods.md A0)",
    ),
    "uniform": (
        {"N": 2000, "d": 1, "lo": 0.0, "hi": 25.0, "k": 2, "seed": 0},
        uniform,
        "i.i.d. uniform on [lo, hi]^d (Paper B distances)",
    ),
    "blobs": (
        {"N": 500, "k": 4, "spread": 1.0, "seed": 0},
        lambda N, k, spread, seed, bounds="data": _sklearn_2d("blobs", N, k, spread, seed, bounds),
        "scikit-learn make_blobs, cluster std = spread (Paper B Fig. 7)",
    ),
    "moons": (
        {"N": 500, "k": 2, "spread": 0.06, "seed": 0},
        lambda N, k, spread, seed, bounds="data": _sklearn_2d("moons", N, k, spread, seed, bounds),
        "scikit-learn make_moons, noise = spread (Paper B Fig. 7)",
    ),
}


def generator_problem(name: str, params: dict) -> tuple[str, str] | None:
    """(parameter, what is wrong) when a generator's parameters would make non-finite or
    constant data, else None; checked at validation, before any work."""
    defaults = GENERATORS[name][0]
    p = {**defaults, **params}
    if "k" in p and p["k"] > p["N"]:
        return "k", f"is more than N = {p['N']}: k clusters need at least k records"
    values = p["N"] * p.get("d", 2)
    if values * 8 * 4 > physical_memory() // 2:  # X, its raw copy and the scaling's temporaries
        return "N", (
            f"gives {values:,} values (N·d), more than half this machine's "
            f"{physical_memory() / 2**30:.1f} GiB holds"
        )
    if name == "uniform":
        lo, hi = p["lo"], p["hi"]
        if not lo < hi:
            return "hi", f"must be above lo = {lo:g}: uniform on [lo, hi] needs lo < hi"
        with np.errstate(over="ignore"):
            if not np.isfinite(2.0 * (hi - lo)):
                return "hi", f"with lo = {lo:g}, the range hi - lo overflows a float"
    if name in ("blobs", "moons"):
        spread = params.get("spread", 0.0)
        if not 0 <= spread <= 1e6:
            return "spread", "must be a standard deviation between 0 and 1e6"
    return None


def physical_memory() -> int:
    """This machine's physical memory in bytes (8 GiB when it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def has_classes(name: str, params: dict) -> bool:
    """Whether a registry dataset carries ground-truth classes (for ARI and friends)."""
    if name in FILES:
        return FILES[name].class_column is not None
    if name == "csv":
        return params.get("classes") is not None
    return name in ("blobs", "moons", "benchmark")


def names() -> list[str]:
    return sorted([*FILES, *USER_FILES, *GENERATORS, "csv", "benchmark"])


def describe() -> list[dict]:
    """One row per registry entry, for ``dpcluster list``."""
    rows = [
        {
            "name": n,
            "k": f.k,
            "label": f.label,
            "source": f"datasets/{f.file}",
            "params": "k (override)",
        }
        for n, f in FILES.items()
    ]
    rows += [
        {
            "name": n,
            "k": k,
            "label": label,
            "source": "user file (params.path)",
            "params": "path (required), sha256, k",
        }
        for n, (k, label, _) in USER_FILES.items()
    ]
    for n, (defaults, _, label) in GENERATORS.items():
        rows.append(
            {
                "name": n,
                "k": "param",
                "label": label,
                "source": "generator",
                "params": ", ".join(f"{p}={v}" for p, v in defaults.items()),
            }
        )
    from .userdata import CSV_PARAMS

    rows.append(
        {
            "name": "csv",
            "k": "param",
            "label": "your own csv file (docs/datasets.md)",
            "source": "user file (params.path)",
            "params": ", ".join(CSV_PARAMS),
        }
    )
    from .battery import SPEC_PARAMS

    rows.append(
        {
            "name": "benchmark",
            "k": "reference",
            "label": "a labelled set in the clustering-data-v1 layout (docs/datasets.md)",
            "source": "user folder (params.battery)",
            "params": ", ".join(SPEC_PARAMS),
        }
    )
    return rows


@functools.lru_cache(maxsize=32)
def _load_file_cached(name: str, bounds: str = "data") -> Dataset:
    src = FILES[name]
    table = src.load()
    X, lo, hi, clipped = _scaled(src.features(table), bounds, src.public, name)
    classes = table[:, src.class_column].astype(np.int64) if src.class_column is not None else None
    dom = (
        (np.full(X.shape[1], src.domain[0]), np.full(X.shape[1], src.domain[1]))
        if src.domain
        else (None, None)
    )
    return Dataset(
        name,
        X,
        src.k,
        src.label,
        lo,
        hi,
        src.standin,
        f"datasets/{src.file}",
        classes,
        *dom,
        bounds=bounds,
        clipped=clipped,
    )


@functools.lru_cache(maxsize=128)
def _generated_cached(name: str, params: tuple) -> Dataset:
    p = dict(params)
    bounds = p.pop("bounds", "data")
    if name in ("blobs", "moons"):
        return GENERATORS[name][1](**p, bounds=bounds)
    ds = GENERATORS[name][1](**p)  # synthetic and uniform: their box is the public domain
    return dataclasses.replace(ds, bounds=bounds)


def load(name: str, **params) -> Dataset:
    """Load a registry dataset by name.

    ``params``: ``k`` override, or a generator's parameters (synthetic's N/k/d/seed, …), and
    ``bounds``: ``"data"`` (default) or ``"public"`` (module docstring).
    """
    if name == "csv":  # its "bounds" is the public domain; the policy is "bounds_policy"
        from .userdata import load_csv

        return load_csv(**params)
    if name == "benchmark":
        from .battery import load_dataset

        return load_dataset(**params)
    bounds = str(params.pop("bounds", "data"))
    if bounds not in BOUNDS:
        raise DataError(f"{name}: bounds {bounds!r} is not one of {', '.join(BOUNDS)}")
    if name in GENERATORS:
        defaults = GENERATORS[name][0]
        unknown = set(params) - set(defaults)
        if unknown:
            raise DataError(
                f"{name}: unknown parameter(s) {sorted(unknown)}; known: {sorted(defaults)}"
            )
        p = {key: type(v)(params.get(key, v)) for key, v in defaults.items()}
        return _generated_cached(name, tuple(sorted({**p, "bounds": bounds}.items())))
    if name in USER_FILES:
        ds = _user_file_cached(
            name, str(params.get("path", "")), str(params.get("sha256", "")), bounds
        )
    elif name in FILES:
        ds = _load_file_cached(name, bounds)
    else:
        raise DataError(f"unknown dataset {name!r}; known: {', '.join(names())}")
    if "k" in params and int(params["k"]) != ds.k:
        ds = dataclasses.replace(ds, k=int(params["k"]))
    return ds
