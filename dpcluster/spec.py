"""YAML spec -> frozen, validated objects, once, at the edge.

Every problem raises :class:`SpecError` naming the file, the key path and the value, with
"did you mean" for unknown keys. Lists inside ``datasets[].params`` and
``algorithms[].params`` are sweeps: they expand into one entry per combination.

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
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from . import data
from .algorithms.init import INIT_METHODS
from .errors import DpclusterError, SpecError, did_you_mean
from .experiments import ALGORITHMS, Param, known_names, lookup
from .experiments.protocol import ParamError
from .experiments.registry import plugin_code
from .rng import canonical

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
}
REQUIRED = ("name", "seed", "datasets", "algorithms")
METRICS = (
    "nicv",
    "estimate",
    "mae",
    "rmse",
    "ari",
    "nmi",
    "ami",
    "homogeneity",
    "completeness",
    "v_measure",
    "silhouette",
)
PLOT_KINDS = (
    "nicv_vs_epsilon",
    "gap_vs_param",
    "nicv_vs_step",
    "nicv_vs_block",
    "time_vs_epsilon",
    "lines",
    "scatter",
    "table",
    "none",
)
PLOT_KEYS = {"kind", "log_y", "log_x", "x", "title", "xlabel"}


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

    @property
    def kwargs(self) -> dict:
        return dict(self.params)

    def _key(self, params: dict) -> str:
        if not params:
            return self.name
        return f"{self.name}({','.join(f'{k}={v}' for k, v in params.items())})"

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
        """The key that enters cell identities and random streams: as :attr:`key`, with
        each data file given by its sha256 instead of its path, so the same data give the
        same numbers in any folder, and edited data give new cells."""
        paths = {param for param, _, _ in self.files}
        return self._key({k: v for k, v in self.params if k not in paths})


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class PlotSpec:
    kind: str = "nicv_vs_epsilon"
    log_y: bool = True
    x: tuple[str, ...] = ()
    title: str = ""
    log_x: bool = False
    xlabel: str = ""


@dataclass(frozen=True)
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

    @property
    def hash(self) -> str:
        return hashlib.sha256(canonical(self.raw).encode()).hexdigest()

    @property
    def default_out(self) -> Path:
        """``results/<name>``; with overrides ``results/<name>--set-<hash>``, so that an
        overridden run never shares a folder (or its tables) with the file's own."""
        if not self.overrides:
            return Path("results") / self.name
        tag = hashlib.sha256(canonical(list(self.overrides)).encode()).hexdigest()[:8]
        return Path("results") / f"{self.name}--set-{tag}"


def _check_keys(file: str, where: str, mapping: dict, allowed: set[str]) -> None:
    for key in mapping:
        if key not in allowed:
            path = f"{where}.{key}" if where else str(key)
            raise SpecError(
                file, path, mapping[key], "unknown key", did_you_mean(str(key), allowed)
            )


def _mapping(file: str, where: str, value: Any) -> dict:
    if not isinstance(value, dict):
        raise SpecError(file, where, value, "must be a mapping (key: value)")
    return value


def _int(file: str, where: str, value: Any, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(file, where, value, "must be an integer")
    if minimum is not None and value < minimum:
        raise SpecError(file, where, value, f"must be >= {minimum}")
    return value


def _coerce(file: str, where: str, value: Any, p: Param) -> Any:
    try:
        return p.coerce(value)
    except ParamError as exc:
        raise SpecError(file, where, value, exc.problem, exc.hint) from None


def _expand(file: str, where: str, params: dict, table: dict[str, Param]) -> list[dict]:
    """Validate ``params`` against ``table`` and expand list values into a cartesian grid."""
    _check_keys(file, where, params, set(table))
    axes = []
    for key, value in params.items():
        values = value if isinstance(value, list) else [value]
        if not values:
            raise SpecError(file, f"{where}.{key}", value, "an empty sweep list")
        axes.append([(key, _coerce(file, f"{where}.{key}", v, table[key])) for v in values])
    return [dict(combo) for combo in itertools.product(*axes)] if axes else [{}]


def _datasets(file: str, raw: Any, bounds: str = "data") -> tuple[DatasetSpec, ...]:
    if not isinstance(raw, list) or not raw:
        raise SpecError(file, "datasets", raw, "must be a non-empty list")
    out: list[DatasetSpec] = []
    for n, entry in enumerate(raw):
        where = f"datasets[{n}]"
        entry = _mapping(file, where, entry)
        _check_keys(file, where, entry, {"name", "params"})
        name = entry.get("name")
        if name not in data.names():
            raise SpecError(
                file,
                f"{where}.name",
                name,
                "unknown dataset",
                did_you_mean(str(name), data.names()),
            )
        if name in ("csv", "benchmark"):
            read = _csv_dataset if name == "csv" else _benchmark_dataset
            out.append(read(file, where, entry, bounds))
            if out[-1] in out[:-1]:
                raise SpecError(
                    file, where, entry, f"repeats an earlier {name} dataset", "list it once"
                )
            continue
        if name in data.GENERATORS:
            table = {
                p: Param(
                    v,
                    type(v),
                    "",
                    minimum=None if isinstance(v, float) else (0 if p == "seed" else 1),
                )
                for p, v in data.GENERATORS[name][0].items()
            }
            if "k" in table:
                table["k"] = Param(table["k"].default, int, "", minimum=1)
        elif name in data.USER_FILES:
            table = {
                "k": Param(data.USER_FILES[name][0], int, "", minimum=2),
                "path": Param("", str, ""),
                "sha256": Param("", str, ""),
            }
        else:
            table = {"k": Param(data.FILES[name].k, int, "", minimum=2)}
        table["bounds"] = Param(bounds, str, "", choices=data.BOUNDS)
        params = _mapping(file, f"{where}.params", entry.get("params", {}) or {})
        if name in data.USER_FILES:
            path = params.get("path")
            if not path:
                raise SpecError(
                    file,
                    f"{where}.params.path",
                    path,
                    f"is required for {name} (no public copy is bundled)",
                    "see docs/datasets.md, TIGER",
                )
        for combo in _expand(file, f"{where}.params", params, table):
            if name in data.GENERATORS and (bad := data.generator_problem(name, combo)):
                key, problem = bad
                raise SpecError(file, f"{where}.params.{key}", combo.get(key), problem)
            files = ()
            if name in data.USER_FILES:
                combo["path"], shown, combo["sha256"] = _data_file(
                    file, f"{where}.params.path", combo["path"], combo.get("sha256", "")
                )
                files = (("path", shown, combo["sha256"]),)
            # bounds: data is the default and stays out of the key, so cell ids do not move
            combo.setdefault("bounds", bounds)
            if combo["bounds"] == "data":
                del combo["bounds"]
            ds = DatasetSpec(name, tuple(sorted(combo.items())), files)
            if ds in out:
                raise SpecError(
                    file,
                    where,
                    entry,
                    f"repeats dataset {ds.key}: every run would count twice in n and the CI",
                    "list it once",
                )
            out.append(ds)
    return tuple(out)


def _data_file(file: str, where: str, value: Any, expected: Any = "") -> tuple[str, str, str]:
    """A data file named in a spec: (absolute path, path relative to the spec's folder,
    sha256 of its bytes). A relative path resolves against the spec's folder; an
    ``expected`` sha256 (``params.sha256``) must match."""
    if not isinstance(value, str) or not value:
        raise SpecError(file, where, value, "must be a file path")
    folder = Path(file).parent.resolve()
    path = Path(value).expanduser()
    path = (path if path.is_absolute() else folder / path).resolve()
    if not path.is_file():
        raise SpecError(file, where, value, f"file not found (looked for {path})")
    try:
        digest = data.file_sha256(path)
    except OSError as exc:
        raise SpecError(file, where, value, f"cannot be read ({exc.strerror})") from None
    if expected not in ("", None):
        if not isinstance(expected, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", expected):
            raise SpecError(
                file, where.rsplit(".", 1)[0] + ".sha256", expected, "must be 64 hex digits"
            )
        if expected.lower() != digest:
            raise SpecError(
                file,
                where.rsplit(".", 1)[0] + ".sha256",
                expected,
                f"does not match the file {value}: its sha256 is {digest}",
            )
    return str(path), Path(os.path.relpath(path, folder)).as_posix(), digest


def _column_ref(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, int) and not isinstance(value, bool) and value >= 0
    )


def _bound(value: Any) -> bool:
    """A public bound: a finite number, or a non-empty list of finite numbers."""
    values = value if isinstance(value, list) else [value]
    return bool(values) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values
    )


def _check_csv_types(file: str, where: str, params: dict, box_key: str = "domain") -> None:
    """Each csv parameter has the type docs/plugins.md gives it (one line naming it)."""
    columns = params.get("columns")
    if columns is not None and not (
        isinstance(columns, list) and columns and all(_column_ref(c) for c in columns)
    ):
        raise SpecError(
            file,
            f"{where}.columns",
            columns,
            "must be a non-empty list of column names or 0-based indices",
        )
    if isinstance(columns, list) and len(set(map(str, columns))) != len(columns):
        raise SpecError(file, f"{where}.columns", columns, "names a column twice")
    if params.get("classes") is not None and not _column_ref(params["classes"]):
        raise SpecError(
            file, f"{where}.classes", params["classes"], "must be a column name or 0-based index"
        )
    if not isinstance(params.get("label", ""), str):
        raise SpecError(file, f"{where}.label", params["label"], "must be a string")
    delimiter = params.get("delimiter", ",")
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\n\r':
        raise SpecError(
            file, f"{where}.delimiter", delimiter, "must be one character, such as , ; or a tab"
        )
    if not isinstance(params.get("header", True), bool):
        raise SpecError(file, f"{where}.header", params["header"], "must be true or false")
    bounds = params.get("domain")
    if bounds is not None and not isinstance(bounds, str):
        if not (isinstance(bounds, list) and len(bounds) == 2 and all(map(_bound, bounds))):
            raise SpecError(
                file,
                f"{where}.{box_key}",
                bounds,
                "must be [lo, hi]: two finite numbers, or two lists of one per column",
            )
        lo, hi = (np.atleast_1d(np.asarray(b, dtype=float)) for b in bounds)
        if lo.shape != hi.shape and min(lo.size, hi.size) > 1:
            raise SpecError(file, f"{where}.{box_key}", bounds, "lo and hi differ in length")
        if np.any(np.broadcast_to(lo, np.broadcast_shapes(lo.shape, hi.shape)) >= hi):
            raise SpecError(file, f"{where}.{box_key}", bounds, "needs lo < hi for every column")
        if not np.all(np.isfinite(2.0 * (hi - lo))):
            raise SpecError(file, f"{where}.{box_key}", bounds, "hi - lo overflows a float")


def _csv_dataset(file: str, where: str, entry: dict, bounds: str) -> DatasetSpec:
    """The ``csv`` dataset (dpcluster/data/user_csv.py): no sweeps; a relative path resolves
    against the spec's folder; the file is read here so that its errors come first.
    ``params.bounds`` is read as the policy when it is a word and as ``params.domain`` when
    it is a box, as older specs wrote it."""
    params = dict(_mapping(file, f"{where}.params", entry.get("params", {}) or {}))
    _check_keys(file, f"{where}.params", params, set(data.user_csv.CSV_PARAMS) | {"bounds"})
    if isinstance(params.get("bounds"), list):
        if "domain" in params:
            raise SpecError(
                file, f"{where}.params.bounds", params["bounds"], "repeats params.domain"
            )
        params["domain"] = params.pop("bounds")
        box_key = "bounds"
    else:
        box_key = "domain"
    for key in ("path", "k"):
        if params.get(key) in (None, ""):
            raise SpecError(
                file, f"{where}.params.{key}", params.get(key), "is required for a csv dataset"
            )
    if problem := data.check_k(params["k"]):
        raise SpecError(file, f"{where}.params.k", params["k"], problem)
    _check_csv_types(file, f"{where}.params", params, box_key)
    path, shown, digest = _data_file(
        file, f"{where}.params.path", params["path"], params.get("sha256", "")
    )
    params["path"], params["sha256"] = path, digest
    policy = params.pop("bounds", bounds)
    if policy not in data.BOUNDS:
        raise SpecError(file, f"{where}.params.bounds", policy, "is not data, public or [lo, hi]")
    frozen = {key: data.freeze(v) for key, v in params.items()}
    if policy == "public":
        if params.get("domain") is None:
            raise SpecError(
                file,
                f"{where}.params.domain",
                None,
                "bounds: public needs the csv dataset's public box: params.domain: [lo, hi]",
            )
        frozen["bounds"] = "public"
    try:
        data.load("csv", **frozen)
    except DpclusterError as exc:
        raise SpecError(file, where, shown, str(exc)) from None
    return DatasetSpec("csv", tuple(sorted(frozen.items())), (("path", shown, digest),))


def _benchmark_dataset(file: str, where: str, entry: dict, bounds: str) -> DatasetSpec:
    """A ``benchmark`` set (dpcluster/data/benchmark.py): ``battery`` (a folder, relative to
    the spec's folder) and ``set`` name its two files, whose digests enter the identity."""
    params = dict(_mapping(file, f"{where}.params", entry.get("params", {}) or {}))
    _check_keys(file, f"{where}.params", params, set(data.benchmark.SPEC_PARAMS))
    for key in ("battery", "set"):
        if not isinstance(params.get(key), str) or not params[key]:
            raise SpecError(file, f"{where}.params.{key}", params.get(key), "is required: a string")
    name = params["set"]
    if not re.fullmatch(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*", name) or ".." in name.split("/"):
        raise SpecError(file, f"{where}.params.set", name, "must be family/name, e.g. sipu/a1")
    if params.get("k") is not None and (problem := data.check_k(params["k"])):
        raise SpecError(file, f"{where}.params.k", params["k"], problem)
    if bounds != "data":
        raise SpecError(
            file, "bounds", bounds, "a benchmark set declares no public domain; use bounds: data"
        )
    folder = (Path(file).parent / Path(params["battery"]).expanduser()).resolve()
    resolved = {
        role: _data_file(file, f"{where}.params.set", str(path))
        for role, path in zip(("data", "labels"), data.benchmark.files(folder, name), strict=True)
    }
    frozen = {"set": name, **({"k": params["k"]} if params.get("k") is not None else {})}
    for role, (absolute, _, digest) in resolved.items():
        frozen[role], frozen[f"{role}_sha256"] = absolute, digest
    try:
        data.load("benchmark", **frozen)
    except DpclusterError as exc:
        raise SpecError(file, where, name, str(exc)) from None
    return DatasetSpec(
        "benchmark",
        tuple(sorted(frozen.items())),
        tuple((role, shown, digest) for role, (_, shown, digest) in resolved.items()),
    )


def _algorithms(file: str, raw: Any) -> tuple[AlgorithmSpec, ...]:
    if not isinstance(raw, list) or not raw:
        raise SpecError(file, "algorithms", raw, "must be a non-empty list")
    out: list[AlgorithmSpec] = []
    for n, entry in enumerate(raw):
        where = f"algorithms[{n}]"
        entry = _mapping(file, where, entry)
        _check_keys(file, where, entry, {"name", "params", "repeat"})
        name = entry.get("name")
        source = str(Path(file).parent.resolve()) if isinstance(name, str) and ":" in name else ""
        try:
            info = lookup(str(name), source)
        except KeyError as exc:
            hint = (
                did_you_mean(str(name), known_names())
                if ":" not in str(name)
                else "a plugin is 'module:attribute', importable from the spec's folder"
            )
            raise SpecError(
                file,
                f"{where}.name",
                name,
                "unknown algorithm" if exc.args[0] == str(name) else str(exc.args[0]),
                hint,
            ) from None
        except TypeError as exc:
            raise SpecError(file, f"{where}.name", name, str(exc)) from None
        code = plugin_code(str(name), source)
        repeat = _int(file, f"{where}.repeat", entry.get("repeat", info.repeat_default), 1)
        params = _mapping(file, f"{where}.params", entry.get("params", {}) or {})
        for combo in _expand(file, f"{where}.params", params, info.params):
            full = {p: combo.get(p, spec.default) for p, spec in info.params.items()}
            alg = AlgorithmSpec(
                name, tuple(sorted(full.items())), repeat, tuple(sorted(combo)), source, code
            )
            if any(a.name == name and a.params == alg.params for a in out):
                raise SpecError(
                    file,
                    where,
                    entry,
                    f"repeats algorithm {alg.variant} with the "
                    "same parameters: every run would count twice in n and the CI",
                    "list it once",
                )
            out.append(alg)
    return tuple(out)


def _epsilons(file: str, raw: Any, needed: bool) -> tuple[float, ...]:
    if raw is None:
        if needed:
            raise SpecError(file, "epsilon", raw, "is required when a private algorithm runs")
        return ()
    values = raw if isinstance(raw, list) else [raw]
    if not values:
        raise SpecError(
            file,
            "epsilon",
            raw,
            "is an empty list: no private algorithm would run",
            "give at least one value",
        )
    out = []
    for n, v in enumerate(values):
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or not (v > 0 and math.isfinite(v))
        ):
            raise SpecError(file, f"epsilon[{n}]", v, "must be a positive finite number")
        out.append(float(v))
    if len(set(out)) != len(out):
        raise SpecError(file, "epsilon", raw, "has duplicate values")
    return tuple(out)


#: metrics computed against the data's ground-truth classes
CLASS_METRICS = ("ari", "nmi", "ami", "homogeneity", "completeness", "v_measure")


def _metrics(file: str, raw: Any, algorithms, datasets) -> list[str]:
    """Every listed metric is known, listed once, and reported by every algorithm (a
    plugin's ``metrics`` declare its own); class-based metrics need datasets with classes."""
    if not isinstance(raw, list) or not raw:
        raise SpecError(file, "metrics", raw, "must be a non-empty list of metric names")
    known = set(METRICS)
    for a in algorithms:
        known |= set(lookup(a.name, a.source).metrics)
    for n, m in enumerate(raw):
        if not isinstance(m, str) or m not in known:
            raise SpecError(
                file, f"metrics[{n}]", m, "unknown metric", did_you_mean(str(m), sorted(known))
            )
        if m in raw[:n]:
            raise SpecError(file, f"metrics[{n}]", m, "is listed twice")
        for a in algorithms:
            produced = lookup(a.name, a.source).metrics
            if m not in produced:
                raise SpecError(
                    file,
                    f"metrics[{n}]",
                    m,
                    f"is not reported by algorithm '{a.name}' (it reports {', '.join(produced)})",
                )
        if m in CLASS_METRICS:
            for ds in datasets:
                if not data.has_classes(ds.name, ds.kwargs):
                    raise SpecError(
                        file,
                        f"metrics[{n}]",
                        m,
                        f"needs ground-truth classes, and dataset {ds.key} has none",
                        "a csv dataset names its class column with params.classes",
                    )
    return list(raw)


#: plot kind -> (the built-in entries whose rows it draws, what those rows carry); a
#: plugin may carry them too, so a spec with a plugin is not refused
PLOT_FEEDS = {
    "nicv_vs_step": (("lloyd_steps", "gene"), "a row per iteration (step)"),
    "nicv_vs_block": (("gkm", "gkm_3k", "gkm_sag", "gkm_noise"), "a block size"),
}
#: run columns a ``lines`` plot can put on its x axis besides the parameters
LINE_COLUMNS = ("epsilon", "step", "N", "d", "k")


def _check_plot_feeds(file: str, kind: str, x, algorithms, datasets) -> None:
    """Refuse a plot kind that none of the spec's algorithms can feed, and a ``lines`` x
    that is neither a parameter nor a run column: the figure would fail after all the work."""
    plugins = any(a.name not in ALGORITHMS for a in algorithms)
    if kind in PLOT_FEEDS and not plugins:
        feeders, what = PLOT_FEEDS[kind]
        if not any(a.name in feeders for a in algorithms):
            raise SpecError(
                file,
                "plot.kind",
                kind,
                f"draws {what}, which only {', '.join(feeders)} report; "
                "none of the spec's algorithms does",
            )
    if kind == "lines" and not plugins:
        known = set(LINE_COLUMNS)
        for a in algorithms:
            known |= set(a.kwargs)
        for ds in datasets:
            known |= set(ds.kwargs)
        if x[0] not in known:
            raise SpecError(
                file,
                "plot.x",
                x[0],
                "is no parameter or run column of this spec",
                did_you_mean(str(x[0]), sorted(known)),
            )


def _undrawable(text: str) -> str | None:
    """Why matplotlib cannot draw ``text`` (a pair of ``$`` starts mathtext), or None."""
    if "$" not in text:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure()
    canvas = FigureCanvasAgg(fig)
    fig.text(0, 0, text)
    try:
        canvas.draw()
    except ValueError as exc:
        return f"cannot be drawn: matplotlib reads $…$ as math ({str(exc).splitlines()[-1]})"
    return None


def parse(raw: Any, file: str = "<spec>") -> Spec:
    """Validate a loaded YAML document into a :class:`Spec`."""
    raw = _mapping(file, "(top level)", raw)
    _check_keys(file, "", raw, TOP_KEYS)
    for key in REQUIRED:
        if key not in raw:
            raise SpecError(file, key, None, "is required")
    name = raw["name"]
    if (
        not isinstance(name, str)
        or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name)
        or len(name) > 128
    ):
        raise SpecError(
            file,
            "name",
            name,
            "must be a plain folder name: letters, digits, '.', '_' or '-', starting with "
            "a letter or digit, at most 128 characters (it names the results folder)",
        )
    seed = _int(file, "seed", raw["seed"], 0)
    bounds = raw.get("bounds", "data")
    if bounds not in data.BOUNDS:
        raise SpecError(
            file,
            "bounds",
            bounds,
            "is not an allowed value",
            did_you_mean(str(bounds), data.BOUNDS),
        )
    datasets = _datasets(file, raw["datasets"], bounds)
    algorithms = _algorithms(file, raw["algorithms"])
    epsilon = _epsilons(
        file, raw.get("epsilon"), any(lookup(a.name, a.source).private for a in algorithms)
    )
    init_raw = _mapping(file, "init", raw.get("init", {}) or {})
    _check_keys(file, "init", init_raw, {"sets", "method"})
    init = InitSpec(
        _int(file, "init.sets", init_raw.get("sets", 30), 1), init_raw.get("method", "uniform")
    )
    if init.method not in INIT_METHODS:
        raise SpecError(
            file,
            "init.method",
            init.method,
            "unknown init method",
            did_you_mean(str(init.method), INIT_METHODS),
        )
    metrics = _metrics(file, raw.get("metrics", ["nicv"]), algorithms, datasets)
    plot_raw = _mapping(file, "plot", raw.get("plot", {}) or {})
    _check_keys(file, "plot", plot_raw, PLOT_KEYS)
    kind = plot_raw.get("kind", "nicv_vs_epsilon")
    if kind not in PLOT_KINDS:
        raise SpecError(
            file, "plot.kind", kind, "unknown plot kind", did_you_mean(str(kind), PLOT_KINDS)
        )
    x = plot_raw.get("x", [])
    x = [x] if isinstance(x, str) else x
    if kind == "gap_vs_param" and (not x or any(v not in ("k", "d") for v in x)):
        raise SpecError(
            file,
            "plot.x",
            plot_raw.get("x"),
            "gap_vs_param needs x: a list of dataset parameters among 'k', 'd'",
        )
    if kind == "lines" and len(x) != 1:
        raise SpecError(
            file,
            "plot.x",
            plot_raw.get("x"),
            "lines needs x: one algorithm "
            "parameter, dataset parameter or run column (e.g. s, d, epsilon, step)",
        )
    _check_plot_feeds(file, kind, x, algorithms, datasets)
    log_y = plot_raw.get("log_y", True)
    if not isinstance(log_y, bool):
        raise SpecError(file, "plot.log_y", log_y, "must be true or false")
    log_x = plot_raw.get("log_x", False)
    if not isinstance(log_x, bool):
        raise SpecError(file, "plot.log_x", log_x, "must be true or false")
    for key in ("title", "xlabel"):
        text = plot_raw.get(key, "")
        if not isinstance(text, str):
            raise SpecError(file, f"plot.{key}", text, "must be a string")
        if problem := _undrawable(text):
            raise SpecError(file, f"plot.{key}", text, problem, "write \\$ for a dollar sign")
    for ds in datasets:
        label = ds.kwargs.get("label", "")
        if problem := _undrawable(str(label)):
            raise SpecError(file, "datasets[].params.label", label, problem)
    plot = PlotSpec(
        kind,
        log_y,
        tuple(x),
        str(plot_raw.get("title", "")),
        log_x,
        str(plot_raw.get("xlabel", "")),
    )
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise SpecError(file, "description", description, "must be a string")
    return Spec(
        name,
        seed,
        description,
        datasets,
        algorithms,
        epsilon,
        init,
        tuple(metrics),
        plot,
        file,
        raw,
    )


#: limits of a spec document (and of one ``--set`` value): bytes of text, nesting depth,
#: aliases, and nodes once every alias is expanded. A real spec is a few hundred bytes,
#: depth 5 and a few hundred nodes; an "alias bomb" of 500 bytes expands to 10^9 nodes.
MAX_SPEC_BYTES = 1 << 20
MAX_DEPTH = 32
MAX_ALIASES = 100
MAX_NODES = 100_000


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses duplicate keys (PyYAML silently keeps the last one), and
    documents nested deeper than :data:`MAX_DEPTH`, with more than :data:`MAX_ALIASES`
    aliases or more than :data:`MAX_NODES` nodes once aliases are expanded, before any
    Python object is built (see :func:`_load_yaml`)."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def _refuse(self, value: str, problem: str) -> SpecError:
        """A SpecError at the line of the next YAML event."""
        mark = self.peek_event().start_mark
        return SpecError(self.name, f"line {mark.line + 1}", value, problem)

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise self._refuse(
                    f"{self._aliases} aliases",
                    f"has more than {MAX_ALIASES} YAML aliases (*name); a spec needs few",
                )
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise self._refuse(f"depth {self._depth}", f"nests deeper than {MAX_DEPTH} levels")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _expanded_size(node, memo: dict) -> int:
    """Nodes of a composed YAML graph with every alias expanded (memoised per node, so a
    shared subtree is counted as often as it is referenced without walking it again)."""
    key = id(node)
    if key in memo and memo[key] is None:
        raise ValueError(f"line {node.start_mark.line + 1}")
    if key not in memo:
        memo[key] = None  # in progress: meeting it again below is a recursive alias
        size = 1
        if isinstance(node, yaml.SequenceNode):
            size += sum(_expanded_size(n, memo) for n in node.value)
        elif isinstance(node, yaml.MappingNode):
            size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
        memo[key] = size
    return memo[key]


def _load_yaml(text: str, file: str, where: str = "(file)"):
    """One YAML document under the limits above; a SpecError naming ``file`` otherwise."""
    if len(text) > MAX_SPEC_BYTES:
        raise SpecError(
            file, where, f"{len(text):,} characters", f"is longer than {MAX_SPEC_BYTES:,}"
        )
    loader = _UniqueKeyLoader(text)
    loader.name = file
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            size = _expanded_size(node, {})
        except ValueError as exc:
            raise SpecError(
                file, str(exc), "a recursive alias", "refers to itself (an endless document)"
            ) from None
        if size > MAX_NODES:
            raise SpecError(
                file,
                where,
                f"{size:,} nodes",
                f"expands (through its aliases) to more than {MAX_NODES:,} YAML nodes",
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _mapping_without_duplicates(loader, node, deep=False):
    seen = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            raise SpecError(
                loader.name,
                f"line {key_node.start_mark.line + 1}",
                key,
                "is not a valid key (a list or mapping cannot be a key)",
            ) from None
        if key in seen:
            raise SpecError(
                loader.name,
                str(key),
                key,
                f"is given twice (lines "
                f"{seen[key] + 1} and {key_node.start_mark.line + 1}); YAML would "
                "silently keep the last",
            )
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates
)


def apply_overrides(raw: Any, overrides, file: str) -> Any:
    """Apply ``--set key=value`` overrides to a loaded spec document.

    ``key`` is a dotted path: mapping keys, list indices (``datasets.0.params.N``) or, in a
    list of entries, an entry's ``name`` (``algorithms.dplloyd.repeat`` sets it on every
    entry of that name). ``value`` is YAML (``[0.5, 1]``, ``3``, ``public``). Missing
    mapping keys are created; everything is validated afterwards like the file itself.
    """
    raw = copy.deepcopy(raw) if raw is not None else {}
    for key, text in overrides:
        where = f"--set {key}"
        try:
            value = _load_yaml(text, file, where)
        except yaml.YAMLError:
            raise SpecError(file, where, text, "is not a YAML value") from None
        parts = [p for p in key.split(".") if p]
        if not parts:
            raise SpecError(file, where, text, "needs a key: --set key=value")
        targets = [raw]
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            nxt = []
            for node in targets:
                if isinstance(node, dict):
                    if last:
                        node[part] = value
                    else:
                        nxt.append(node.setdefault(part, {}))
                elif isinstance(node, list):
                    if part.lstrip("-").isdigit():
                        idx = int(part)
                        if not -len(node) <= idx < len(node):
                            raise SpecError(
                                file,
                                where,
                                text,
                                f"index {idx} is outside the list of {len(node)} entries",
                            )
                        if last:
                            node[idx] = value
                        else:
                            nxt.append(node[idx])
                    else:
                        named = [e for e in node if isinstance(e, dict) and e.get("name") == part]
                        if not named:
                            raise SpecError(
                                file,
                                where,
                                text,
                                f"no entry named {part!r}",
                                did_you_mean(
                                    part, [str(e.get("name")) for e in node if isinstance(e, dict)]
                                ),
                            )
                        if last:
                            raise SpecError(
                                file,
                                where,
                                text,
                                "names an entry; set one of "
                                "its keys, e.g. .repeat or .params.<name>",
                            )
                        nxt += named
                else:
                    raise SpecError(
                        file, where, text, f"{'.'.join(parts[:i])} is not a mapping or a list"
                    )
            targets = nxt
    return raw


def parse_overrides(items) -> tuple[tuple[str, str], ...]:
    """``["a.b=1", …]`` -> ``(("a.b", "1"), …)``; a SpecError for an item without '='."""
    out = []
    for item in items:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise SpecError("--set", str(item), item, "must look like key=value")
        out.append((key.strip(), value))
    return tuple(out)


def load(path: str | Path, overrides=()) -> Spec:
    """Read and validate a spec file, with ``--set`` overrides applied (see
    :func:`apply_overrides`)."""
    path = Path(path)
    file = str(path)
    if not path.is_file():
        raise SpecError(file, "(file)", file, "spec file not found")
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise SpecError(file, "(file)", file, f"cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise SpecError(file, "(file)", f"byte {exc.start}", "is not UTF-8 text") from None
    try:
        raw = _load_yaml(text, file)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(parse)"
        raise SpecError(
            file, where, getattr(exc, "problem", str(exc)), "is not valid YAML"
        ) from None
    if overrides:
        parsed = parse(apply_overrides(raw, overrides, file), file)
        return dataclasses.replace(parsed, overrides=tuple(overrides))
    return parse(raw, file)
