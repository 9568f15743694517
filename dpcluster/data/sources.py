"""The source protocol and the table of every source a spec can name.

A source is one kind of dataset. It declares its spec parameters and loads a
:class:`~.schema.Dataset` from them; ``dpcluster list`` rows, ground-truth availability and
loading all go through this one table, so adding a kind of data is one class and one line
in :data:`SOURCES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from ..errors import DataError
from .benchmark import BenchmarkSource
from .bundled import FILES, USER_FILES, BundledSource, UserFileSource
from .generators import GENERATORS, GeneratorSource
from .schema import BOUNDS, SCALINGS, Dataset, working_space
from .user_csv import CsvSource


class Source(Protocol):
    """One kind of dataset.

    name      the name a spec's ``datasets[].name`` gives
    params    spec parameter -> (default, what it is); ``bounds`` (the policy) is common to
              every source and not listed
    """

    name: str
    params: Mapping[str, tuple[Any, str]]

    def load(self, bounds: str = "data", **params) -> Dataset:
        """The dataset scaled under the bounds policy ``bounds``."""

    def has_classes(self, params: Mapping) -> bool:
        """Whether the dataset carries ground-truth classes (for ARI and friends)."""

    def describe(self) -> dict:
        """One ``dpcluster list`` row: name, k, label, source, params."""


#: every source by name, in the order ``dpcluster list`` shows them
SOURCES: dict[str, Source] = {
    **{name: BundledSource(name) for name in FILES},
    **{name: UserFileSource(name) for name in USER_FILES},
    **{name: GeneratorSource(name) for name in GENERATORS},
    "csv": CsvSource(),
    "benchmark": BenchmarkSource(),
}


def names() -> list[str]:
    """Every dataset name a spec may use, sorted."""
    return sorted(SOURCES)


def describe() -> list[dict]:
    """One row per source, for ``dpcluster list``."""
    return [source.describe() for source in SOURCES.values()]


def has_classes(name: str, params: Mapping) -> bool:
    """Whether dataset ``name`` with ``params`` carries ground-truth classes."""
    return SOURCES[name].has_classes(params)


def load(name: str, **params) -> Dataset:
    """Dataset ``name`` from its source's ``params``, the bounds policy ``bounds``
    (``"data"`` by default, or ``"public"``: docs/privacy.md) and the working space
    ``scaling`` (``"per_feature"`` by default, or ``"common"``: DPKMeans's)."""
    if name not in SOURCES:
        raise DataError(f"unknown dataset {name!r}; known: {', '.join(names())}")
    bounds = str(params.pop("bounds", "data"))
    if bounds not in BOUNDS:
        raise DataError(f"{name}: bounds {bounds!r} is not one of {', '.join(BOUNDS)}")
    scaling = str(params.pop("scaling", "per_feature"))
    if scaling not in SCALINGS:
        raise DataError(f"{name}: scaling {scaling!r} is not one of {', '.join(SCALINGS)}")
    ds = SOURCES[name].load(bounds=bounds, **params)
    if scaling == "per_feature" or ds.ball is not None:
        # a ball's records are (x - c)/R, one scale for every feature: DPKMeans(radius=R)
        # does the same whatever its scaling, so either scaling names this one space
        return ds
    return replace(ds, X=working_space(ds.X, ds.lo, ds.hi, scaling), scaling=scaling)
