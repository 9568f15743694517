"""``datasets``: each entry names a source (dpcluster/data/sources.py) and its parameters;
data files are resolved against the spec's folder and enter the identity by sha256."""

from __future__ import annotations

import math
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import data
from ..errors import DpclusterError, SpecError, did_you_mean
from ..experiments import Param
from .fields import _check_keys, _expand, _mapping
from .model import DatasetSpec


def _datasets(
    file: str, raw: Any, bounds: str = "data", scaling: str = "per_feature"
) -> tuple[DatasetSpec, ...]:
    """The spec's datasets under the bounds policy and the working space ``scaling``
    (:data:`~dpcluster.data.SCALINGS`; ``per_feature``, the default, stays out of every
    key, so the papers' cell ids do not move)."""
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
            for one in _k_sweep(file, where, entry):
                out.append(read(file, where, one, bounds, scaling))
                if out[-1].identity_key in [d.identity_key for d in out[:-1]]:
                    raise SpecError(
                        file,
                        where,
                        entry,
                        f"gives the same numbers as an earlier {name} dataset: every run "
                        "would count twice",
                        "list it once",
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
            if scaling != "per_feature":
                combo["scaling"] = scaling
            ds = DatasetSpec(name, tuple(sorted(combo.items())), files)
            if files:
                ds = _with_content(file, where, ds, files[0][1])
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


def _k_sweep(file: str, where: str, entry: dict) -> list[dict]:
    """A file dataset's entry once per value of ``params.k`` when it lists several (a sweep,
    as the generators' lists are); the entry itself otherwise."""
    params = entry.get("params")
    k = params.get("k") if isinstance(params, dict) else None
    if not isinstance(k, list):
        return [entry]
    if not k:
        raise SpecError(file, f"{where}.params.k", k, "is an empty list; give k or a list of k")
    return [{**entry, "params": {**params, "k": value}} for value in k]


def _resolved(file: str, where: str, value: Any, path: Path) -> Path:
    """``path`` resolved, or a SpecError for a link loop (Python 3.11 raises RuntimeError)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        raise SpecError(file, where, value, "is a loop of symbolic links") from None


def _data_file(file: str, where: str, value: Any, expected: Any = "") -> tuple[str, str, str]:
    """A data file named in a spec: (absolute path, path relative to the spec's folder,
    sha256 of its bytes). A relative path resolves against the spec's folder; an
    ``expected`` sha256 (``params.sha256``) must match."""
    if not isinstance(value, str) or not value:
        raise SpecError(file, where, value, "must be a file path")
    folder = Path(file).parent.resolve()
    path = Path(value).expanduser()
    path = _resolved(file, where, value, path if path.is_absolute() else folder / path)
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
    if isinstance(bounds, dict):
        params["domain"] = _ball_domain(file, f"{where}.{box_key}", bounds)
        return
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
        if data.span_overflows(lo, hi):
            raise SpecError(file, f"{where}.{box_key}", bounds, "hi - lo overflows a float")


def _ball_domain(file: str, where: str, ball: dict) -> tuple:
    """A public L2-ball domain ``{radius: R, center: c}`` (c a number or one per column,
    default 0) as the loader takes it: ``("ball", R, c)``."""
    _check_keys(file, where, ball, {"radius", "center"})
    radius, center = ball.get("radius"), ball.get("center", 0.0)
    ok = isinstance(radius, int | float) and not isinstance(radius, bool)
    if not (ok and math.isfinite(radius) and radius > 0) or data.span_overflows(0.0, radius):
        raise SpecError(file, f"{where}.radius", radius, "must be a positive finite number")
    if not _bound(center):
        raise SpecError(
            file, f"{where}.center", center, "must be a finite number or one per column"
        )
    return ("ball", float(radius), data.freeze(center))


def _csv_dataset(
    file: str, where: str, entry: dict, bounds: str, scaling: str = "per_feature"
) -> DatasetSpec:
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
    if scaling != "per_feature":
        frozen["scaling"] = scaling
    ds = DatasetSpec("csv", tuple(sorted(frozen.items())), (("path", shown, digest),))
    return _with_content(file, where, ds, shown)


def _with_content(file: str, where: str, ds: DatasetSpec, shown: str) -> DatasetSpec:
    """``ds`` with its :attr:`~DatasetSpec.content` digest, from loading it now, so that a
    file's errors come first (one line naming ``shown``)."""
    try:
        loaded = data.load(ds.name, **ds.kwargs)
    except DpclusterError as exc:
        raise SpecError(file, where, shown, str(exc)) from None
    return replace(ds, content=data.content_digest(loaded))


def _benchmark_dataset(
    file: str, where: str, entry: dict, bounds: str, scaling: str = "per_feature"
) -> DatasetSpec:
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
    folder = _resolved(
        file,
        f"{where}.params.battery",
        params["battery"],
        Path(file).parent / Path(params["battery"]).expanduser(),
    )
    resolved = {
        role: _data_file(file, f"{where}.params.set", str(path))
        for role, path in zip(("data", "labels"), data.benchmark.files(folder, name), strict=True)
    }
    frozen = {"set": name, **({"k": params["k"]} if params.get("k") is not None else {})}
    if scaling != "per_feature":
        frozen["scaling"] = scaling
    for role, (absolute, _, digest) in resolved.items():
        frozen[role], frozen[f"{role}_sha256"] = absolute, digest
    ds = DatasetSpec(
        "benchmark",
        tuple(sorted(frozen.items())),
        tuple((role, shown, digest) for role, (_, shown, digest) in resolved.items()),
    )
    return _with_content(file, where, ds, name)
