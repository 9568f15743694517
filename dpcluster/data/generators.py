"""The generated datasets: Paper A's Gaussian clusters (A0), Paper B's uniform records,
scikit-learn's blobs and moons. Each is a :class:`GeneratorSource` whose parameters are
its builder's, typed by their defaults."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, replace

import numpy as np

from ..errors import DataError
from ..rng import stream
from .schema import Dataset, normalise, scale, span_overflows


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
        name=f"synthetic(N={N},k={k},d={d},seed={seed})",
        X=X,
        k=k,
        label=f"Synthetic k={k} d={d}",
        lo=-ones,
        hi=ones,
        source="generator, docs/methods.md A0",
    )


def uniform(N: int, d: int, lo: float, hi: float, k: int, seed: int) -> Dataset:
    """N records i.i.d. uniform on [lo, hi]^d (Paper B distance experiments). The interval
    is the public domain; ``k`` only matters if something clusters it."""
    rng = stream(seed, "uniform", N, d, lo, hi)
    raw = rng.uniform(lo, hi, size=(N, d))
    X, lo_v, hi_v = normalise(raw, (float(lo), float(hi)))
    return Dataset(
        name=f"uniform(N={N},d={d},lo={lo:g},hi={hi:g},seed={seed})",
        X=X,
        k=k,
        label=f"Uniform [{lo:g}, {hi:g}]^{d}",
        lo=lo_v,
        hi=hi_v,
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
        domain = (-10.0 - 4 * spread, 10.0 + 4 * spread)
    else:
        raw, y = make_moons(n_samples=N, noise=spread, random_state=state)
        k = 2
        # the noiseless moons span x in [-1, 2], y in [-0.5, 1]
        domain = ((-1.0 - 4 * spread, -0.5 - 4 * spread), (2.0 + 4 * spread, 1.0 + 4 * spread))
    X, lo, hi, clipped = scale(raw, bounds, domain, kind)
    return Dataset(
        name=f"{kind}(N={N},k={k},spread={spread:g},seed={seed})",
        X=X,
        k=k,
        label=f"{kind.capitalize()} (scikit-learn, N={N})",
        lo=lo,
        hi=hi,
        source="generator",
        classes=y.astype(np.int64),
        bounds=bounds,
        clipped=clipped,
        given=raw if clipped else None,
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
        if span_overflows(lo, hi):
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


@functools.lru_cache(maxsize=128)
def _generated(name: str, params: tuple, bounds: str) -> Dataset:
    p = dict(params)
    if name in ("blobs", "moons"):
        return GENERATORS[name][1](**p, bounds=bounds)
    ds = GENERATORS[name][1](**p)  # synthetic and uniform: their box is the public domain
    return replace(ds, bounds=bounds)


@dataclass(frozen=True)
class GeneratorSource:
    """A generator as a source: its parameters are :data:`GENERATORS`' defaults."""

    name: str

    @property
    def params(self) -> dict:
        return {p: (v, "") for p, v in GENERATORS[self.name][0].items()}

    def load(self, bounds: str = "data", **params) -> Dataset:
        defaults = GENERATORS[self.name][0]
        unknown = set(params) - set(defaults)
        if unknown:
            raise DataError(
                f"{self.name}: unknown parameter(s) {sorted(unknown)}; known: {sorted(defaults)}"
            )
        p = {key: type(v)(params.get(key, v)) for key, v in defaults.items()}
        return _generated(self.name, tuple(sorted(p.items())), bounds)

    def has_classes(self, params) -> bool:
        return self.name in ("blobs", "moons")

    def describe(self) -> dict:
        defaults, _, label = GENERATORS[self.name]
        return {
            "name": self.name,
            "k": "param",
            "label": label,
            "source": "generator",
            "params": ", ".join(f"{p}={v}" for p, v in defaults.items()),
        }
