"""The one dataset schema: :class:`Dataset`, the scaling every source applies
(:func:`scale`), and the checks every source's records pass.

Every dataset resolves to a :class:`Dataset` whose ``X`` is normalised to ``[-1, 1]^d``
(docs/methods.md A0: ``x' = 2 (x − lo)/(hi − lo) − 1``). Where ``lo, hi`` come from is the
*bounds policy* (docs/privacy.md), called ``bounds`` everywhere:

* ``bounds="data"`` (the papers' setting, the default of the figure specs): the data's own
  per-attribute min and max. Every ε of a central algorithm then assumes these bounds are
  public, which they are not: one outlier moves every scaled record.
* ``bounds="public"``: the source's declared *domain*, a box independent of the records
  (sources in datasets/PROVENANCE.md). Records are clipped into it, then scaled.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..errors import DataError

#: the bounds policies: where the scaling's lo, hi come from
BOUNDS = ("data", "public")
#: how records map into the working space: each feature's range onto [-1, 1] (the papers'
#: normalisation), or every feature by one factor, half the widest range (DPKMeans's
#: default: distances in the working space are distances in data units over that factor)
SCALINGS = ("per_feature", "common")
#: above this share of records outside the public bounds, a dataset or a fit warns that
#: they were clipped
CLIPPED_WARN_SHARE = 0.02


class DataBoundsWarning(UserWarning):
    """Scaling bounds were computed from the data, so no ε that follows is private."""


#: the Dataset fields that hold arrays: what an algorithm reads besides k and the bounds
ARRAY_FIELDS = ("X", "lo", "hi", "classes", "domain_lo", "domain_hi")


@dataclass(frozen=True, kw_only=True)
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
    #: with a public L2-ball domain: the ball's radius in X's units (1.0, about the origin;
    #: X then lies in it and in [-1, 1]^d), which the fits' sensitivities may use; else None
    ball: float | None = None
    #: the working space X lives in (:data:`SCALINGS`, :func:`working_space`)
    scaling: str = "per_feature"
    #: (N, d) the records in their original units as given, where the public domain clipped
    #: or projected some of them (``clipped`` > 0), else None (:attr:`raw` is then the
    #: same): the metrics read it (a spec's ``cost``, the k-means baseline), never a fit
    given: np.ndarray | None = None

    @property
    def raw(self) -> np.ndarray:
        """The records in their original units (N, d): ``lo + (X + 1)(hi − lo)/2``, or
        ``(lo + hi)/2 + X·unit`` in the common scaling."""
        if self.scaling == "common":
            return (self.lo + self.hi) / 2.0 + self.X * self.unit
        return self.lo + (self.X + 1.0) * (self.hi - self.lo) / 2.0

    @property
    def as_given(self) -> np.ndarray:
        """(N, d) the records in their original units as given: :attr:`given`, or
        :attr:`raw` where nothing was clipped."""
        return self.raw if self.given is None else self.given

    def to_data_units(self, P: np.ndarray) -> np.ndarray:
        """Points P (m, d) of X's space in the data's original units (as :attr:`raw`)."""
        P = np.asarray(P, dtype=np.float64)
        if self.scaling == "common":
            return (self.lo + self.hi) / 2.0 + P * self.unit
        return self.lo + (P + 1.0) * (self.hi - self.lo) / 2.0

    @property
    def box_radius(self) -> np.ndarray:
        """(d,) half-widths r_j of the public box ∏ [-r_j, r_j] that X lies in."""
        return scaling_factors(self.lo, self.hi, self.scaling)[0]

    @property
    def unit(self) -> np.ndarray:
        """(d,) data units per unit of X along each feature (a distance in X times this is
        one in the data's units)."""
        return scaling_factors(self.lo, self.hi, self.scaling)[1]

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

    def read_only(self) -> Dataset:
        """This dataset with read-only views of its arrays (no copy). A loaded dataset is
        cached per process and shared by every cell a worker runs, so code handed one it did
        not write (a plugin's cell) gets this: writing into its input raises at once instead
        of changing the data of whichever cell the worker runs next."""

        def view(a):
            if a is None:
                return None
            v = np.asarray(a).view()
            v.flags.writeable = False
            return v

        return replace(self, **{f: view(getattr(self, f)) for f in (*ARRAY_FIELDS, "given")})

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


def scaling_factors(lo, hi, scaling: str) -> tuple[np.ndarray, np.ndarray]:
    """(radius (d,), unit (d,)) of the working space of ``scaling`` over the box [lo, hi]:
    the box maps onto ∏ [-radius_j, radius_j], and one unit of feature j there is unit_j data
    units. ``per_feature``: radius 1 and unit (hi − lo)/2 (radius 0 and unit 1 for a
    constant feature); ``common``: unit H = half the widest range for every feature and
    radius (hi − lo)/(2H)."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    span = np.where(hi > lo, hi - lo, 0.0)
    if scaling == "common":
        half = max(float(span.max(initial=0.0)) / 2.0, np.finfo(float).tiny)
        return span / 2.0 / half, np.full_like(span, half)
    return np.where(span > 0, 1.0, 0.0), np.where(span > 0, span / 2.0, 1.0)


def working_space(X: np.ndarray, lo, hi, scaling: str) -> np.ndarray:
    """The records X (N, d), already :func:`normalise`-d onto [-1, 1]^d over [lo, hi], in
    the working space of ``scaling``: X itself (``per_feature``), or X_j·radius_j
    (``common``), so that the spec's datasets and :class:`~dpcluster.DPKMeans` compute
    the same numbers from the same normalised records."""
    if scaling == "per_feature":
        return X
    radius, _ = scaling_factors(lo, hi, scaling)
    return np.ascontiguousarray(X * radius)


def check_range(lo: np.ndarray, hi: np.ndarray, what: str) -> None:
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


def scale(raw: np.ndarray, bounds: str, domain: tuple | None, what: str):
    """(X (N, d) in [-1, 1]^d, lo (d,), hi (d,), records clipped) of raw (N, d) under the
    bounds policy ``bounds``; ``domain`` is the source's declared public box (lo, hi),
    scalars or one value per column, or None. ``what`` names the data in errors."""
    if bounds == "data":
        if len(raw):
            check_range(raw.min(axis=0), raw.max(axis=0), what)
        return (*normalise(raw, "data"), 0)
    if domain is None:
        raise DataError(
            f"{what}: no public bounds are declared for this dataset; use "
            "bounds: data or declare its domain (docs/datasets.md)"
        )
    try:
        lo, hi = (np.broadcast_to(np.asarray(b, float), raw.shape[1:]) for b in domain)
    except ValueError:
        raise DataError(
            f"{what}: public bounds {domain!r} give neither one value nor one per column "
            f"({raw.shape[1]} columns)"
        ) from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))) or np.any(lo >= hi):
        raise DataError(f"{what}: public bounds {domain!r} need finite lo < hi per column")
    check_range(lo, hi, what)
    clipped = int(np.any((raw < lo) | (raw > hi), axis=1).sum())
    return (*normalise(raw, (lo, hi)), clipped)


def scale_to_ball(raw: np.ndarray, bounds: str, radius: float, center, what: str):
    """(X, lo, hi, records projected) of raw (N, d) for a public L2-ball domain of
    ``radius`` about ``center`` (a number or one per column), under ``bounds: public``:
    X = (raw − center)/radius, each record outside the unit ball projected onto it (its
    norm set to 1), so X lies in the unit ball and in [-1, 1]^d; lo, hi = center ∓ radius,
    the ball's box, so that ``Dataset.raw`` is center + radius·X. Under ``bounds: data``
    the ball is not used (the papers' per-attribute scaling)."""
    if bounds == "data":
        return scale(raw, "data", None, what)
    try:
        c = np.broadcast_to(np.asarray(center, float), raw.shape[1:]).copy()
    except ValueError:
        raise DataError(
            f"{what}: the ball's center {center!r} is neither one value nor one per column "
            f"({raw.shape[1]} columns)"
        ) from None
    lo, hi = c - radius, c + radius
    check_range(lo, hi, what)
    X = (raw - c) / radius
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    outside = norms > 1.0
    X[outside] /= norms[outside, None]
    return np.ascontiguousarray(np.clip(X, -1.0, 1.0)), lo, hi, int(outside.sum())


def check_finite(
    raw: np.ndarray, where: str, first_row: int = 1, names=None, row_label=None
) -> None:
    """A DataError naming the first non-finite value's row and column (its name from
    ``names``, else its 1-based index). The row is ``row_label(r)`` for the 0-based record
    r when given (a csv names the file's line), else "row r + first_row"."""
    bad = ~np.isfinite(raw)
    if bad.any():
        r, c = (int(i) for i in np.argwhere(bad)[0])
        row = row_label(r) if row_label is not None else f"row {r + first_row}"
        column = repr(names[c]) if names is not None else str(c + 1)
        value = float(raw[r, c])
        shown = "empty or NaN (nan)" if np.isnan(value) else repr(value)
        raise DataError(f"{where}: {row}, column {column}: {shown} is not a finite number")


def content_digest(ds: Dataset) -> str:
    """The sha256 of what a dataset gives the algorithms: k, the bounds policy, the scaled
    records X, their scaling bounds lo and hi, the classes and the declared domain, each
    with its shape. Names, labels and how the file was spelled or read (column names or
    indices, delimiter, compression) do not enter, so the same numbers have one identity."""
    h = hashlib.sha256(f"k={ds.k};bounds={ds.bounds}".encode())
    if ds.ball is not None:
        h.update(f";ball={ds.ball!r}".encode())
    for field in ARRAY_FIELDS:
        value = getattr(ds, field)
        if value is None:
            h.update(f";{field}=None".encode())
            continue
        a = np.ascontiguousarray(value)
        a = a.astype(np.int64 if a.dtype.kind in "iub" else np.float64, copy=False)
        h.update(f";{field}={a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    if ds.given is not None:  # the records as given enter the metrics: so the identity too
        a = np.ascontiguousarray(ds.given, dtype=np.float64)  # (unclipped data: no change)
        h.update(f";given={a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


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
    records than clusters, more than :data:`CLIPPED_WARN_SHARE` of the records outside the
    public bounds (the data holder's own count, not a release). Recorded in meta.json."""
    out = []
    constant = np.flatnonzero(np.ptp(ds.X, axis=0) == 0)
    if len(constant):
        columns = ", ".join(str(int(c) + 1) for c in constant)
        out.append(f"{ds.label}: constant column(s) {columns} (1-based), scaled to 0")
    distinct = len(np.unique(ds.X, axis=0))
    if distinct < ds.k:
        out.append(f"{ds.label}: only {distinct} distinct records for k = {ds.k} clusters")
    if ds.clipped > CLIPPED_WARN_SHARE * ds.N:
        out.append(
            f"{ds.label}: {ds.clipped} of {ds.N} records ({ds.clipped / ds.N:.0%}) lie outside "
            "the public bounds and were clipped into them; check the bounds"
        )
    return out


def freeze(value):
    """Lists (from YAML) as nested tuples, so a dataset's params are hashable."""
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def span_overflows(lo, hi) -> bool:
    """Whether some ``2·(hi − lo)`` (the width of a box [lo, hi] doubled, as scaling into
    [-1, 1] computes it) is not a finite float; arrays broadcast, and an overflow is the
    answer, not a warning."""
    with np.errstate(over="ignore", invalid="ignore"):
        spans = 2.0 * (np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float))
    return not bool(np.all(np.isfinite(spans)))


def check_k(k) -> str | None:
    """What is wrong with a number of clusters ``k``, or None."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        return "must be an integer >= 1"
    return None
