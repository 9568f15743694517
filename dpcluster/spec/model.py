"""The validated spec: frozen dataclasses, built once at the edge by :mod:`.parse`.

Example::

    name: fig1-s1
    seed: 20150422
    datasets: [{name: s1}]
    epsilon: [0.05, 0.1, 0.5, 1.0]
    init: {sets: 30, method: uniform}
    algorithms:
      - {name: lloyd}
      - {name: dplloyd, repeat: 100, params: {iterations: 5}}
      - {name: eugkm, repeat: 10, params: {theta: 10}}
    metrics: [nicv]
    plot: {kind: nicv_vs_epsilon, log_y: true}
    bounds: data        # or public: scale by each dataset's declared domain (docs/privacy.md)
    delta: 1.0e-6       # optional: every ε of the grid becomes (ε, δ) (docs/privacy.md)
    pipeline: paper     # or estimator: run each method as DPKMeans does (docs/specs.md)

A key left out takes the default of its dataclass field.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..rng import canonical

TOP_KEYS = {
    "name",
    "seed",
    "description",
    "datasets",
    "algorithms",
    "epsilon",
    "init",
    "metrics",
    "plot",
    "bounds",
    "delta",
    "pipeline",
    "scaling",
    "seeds",
}

REQUIRED = ("name", "seed", "datasets", "algorithms")


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset entry after validation.

    ``params`` are what the loader takes: a data file's absolute ``path`` and its
    ``sha256``, the digest of its bytes when the spec was read (the loader checks it, so a
    file edited after validation is refused, not silently read). ``files`` names each such
    file as ``(parameter, path relative to the spec's folder, sha256)``: tables show that
    relative path, and a cell's identity holds the digest and never the path.
    """

    name: str
    params: tuple[tuple[str, Any], ...] = ()
    files: tuple[tuple[str, str, str], ...] = ()
    #: for a dataset read from files: the sha256 of the numbers it gives
    #: (:func:`dpcluster.data.content_digest`), taken when the spec is read
    content: str = ""

    @property
    def kwargs(self) -> dict:
        return dict(self.params)

    def _key(self, params: dict) -> str:
        if not params:
            return self.name
        return f"{self.name}({','.join(f'{k}={v}' for k, v in params.items())})"

    @property
    def brief_key(self) -> str:
        """:attr:`key` with every value longer than 24 characters (a csv's per-feature
        domain) shown as ``…``: one short line per cell in ``run --dry-run``."""
        shown = dict(self.params)
        for param, rel, _ in self.files:
            shown[param] = rel
        shown = {
            k: (v if len(str(v)) <= 24 or k in dict((f[0], 0) for f in self.files) else "…")
            for k, v in shown.items()
            if not k.endswith("sha256")
        }
        return self._key(shown)

    @property
    def key(self) -> str:
        """Display key, e.g. ``s1``, ``synthetic(N=2000,d=3,k=4)`` or
        ``csv(…,path=data/points.csv)`` (the path relative to the spec's folder)."""
        shown = dict(self.params)
        for param, rel, _ in self.files:
            shown[param] = rel
        shown = {k: v for k, v in shown.items() if not k.endswith("sha256")}
        return self._key(shown)

    @property
    def identity_key(self) -> str:
        """The key that enters cell identities and random streams. A dataset read from files
        is its :attr:`content`, the digest of the numbers it gives: the same data give the
        same numbers in any folder, under any label, file name or spelling of its columns,
        and edited numbers give new cells. Other datasets are their name and parameters."""
        if self.content:
            return f"{self.name}(content={self.content})"
        return self._key(dict(self.params))


@dataclass(frozen=True, kw_only=True)
class AlgorithmSpec:
    name: str
    params: tuple[tuple[str, Any], ...]
    repeat: int
    defaults_overridden: tuple[str, ...] = ()
    #: the folder a plugin ("module:attribute") is imported from; "" for built-ins
    source: str = ""
    #: a plugin's code identity: (file relative to ``source``, sha256) of its module and
    #: of every module of that folder it imports (experiments.registry.plugin_code)
    code: tuple[tuple[str, str], ...] = ()
    #: the spec's pipeline (dpcluster/experiments/pipeline.py): which of the entry's
    #: runners, parameters and metrics apply
    pipeline: str = "paper"

    @property
    def kwargs(self) -> dict:
        return dict(self.params)

    @property
    def variant(self) -> str:
        """Display label: the name plus the parameters the spec set explicitly."""
        kw = self.kwargs
        shown = ", ".join(f"{p}={kw[p]}" for p in self.defaults_overridden)
        return f"{self.name}({shown})" if shown else self.name


@dataclass(frozen=True)
class InitSpec:
    sets: int = 30
    method: str = "uniform"


@dataclass(frozen=True, kw_only=True)
class PlotSpec:
    kind: str = "nicv_vs_epsilon"
    log_y: bool = True
    x: tuple[str, ...] = ()
    title: str = ""
    log_x: bool = False
    xlabel: str = ""


@dataclass(frozen=True, kw_only=True)
class Spec:
    name: str
    seed: int
    description: str
    datasets: tuple[DatasetSpec, ...]
    algorithms: tuple[AlgorithmSpec, ...]
    epsilon: tuple[float, ...]
    init: InitSpec
    metrics: tuple[str, ...]
    plot: PlotSpec
    path: str
    raw: dict
    #: ``--set`` overrides applied to the file, as (dotted key, YAML value text)
    overrides: tuple[tuple[str, str], ...] = ()
    #: δ of every ε in the grid; 0 (the default) is pure ε
    delta: float = 0.0
    #: ``paper`` or ``estimator`` (dpcluster/experiments/pipeline.py)
    pipeline: str = "paper"
    #: the estimator pipeline's working space (:data:`dpcluster.data.SCALINGS`)
    scaling: str = "per_feature"
    #: run i of every cell draws from ``numpy.random.default_rng(seeds[i])``; () for the
    #: identity streams
    seeds: tuple[int, ...] = ()

    @property
    def hash(self) -> str:
        """sha256 of the spec's document; ``pipeline: paper``, the default, does not enter
        (the papers' specs state it, and their hashes are those they had before the key)."""
        raw = {k: v for k, v in self.raw.items() if not (k == "pipeline" and v == "paper")}
        return hashlib.sha256(canonical(raw).encode()).hexdigest()

    @property
    def default_out(self) -> Path:
        """``results/<name>``; with overrides ``results/<name>--set-<hash>``, so that an
        overridden run never shares a folder (or its tables) with the file's own."""
        if not self.overrides:
            return Path("results") / self.name
        tag = hashlib.sha256(canonical(list(self.overrides)).encode()).hexdigest()[:8]
        return Path("results") / f"{self.name}--set-{tag}"
