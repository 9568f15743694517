"""YAML spec -> frozen, validated :class:`~.model.Spec`, once, at the edge.

Every problem raises :class:`SpecError` naming the file, the key path and the value, with
"did you mean" for unknown keys. Lists inside ``datasets[].params`` and
``algorithms[].params`` are sweeps: they expand into one entry per combination.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import yaml

from .. import data
from ..algorithms.init import INIT_METHODS
from ..errors import SpecError, did_you_mean
from ..experiments.pipeline import PIPELINES
from .datasets import _datasets
from .document import _load_yaml, apply_overrides
from .entries import _algorithms, _epsilons, _metrics, entry_of
from .fields import _check_keys, _int, _mapping
from .model import REQUIRED, TOP_KEYS, InitSpec, Spec
from .plot import _undrawable, parse_plot


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
            "must be a plain folder name: ASCII letters, digits, '.', '_' or '-', starting with "
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
    pipeline, scaling, seeds = _pipeline(file, raw)
    datasets = _datasets(file, raw["datasets"], bounds, scaling)
    algorithms = _algorithms(file, raw["algorithms"], pipeline, seeds)
    epsilon = _epsilons(file, raw.get("epsilon"), any(entry_of(a).private for a in algorithms))
    delta = _delta(file, raw.get("delta", 0.0))
    if "init" in raw and pipeline == "estimator":
        raise SpecError(
            file,
            "init",
            raw["init"],
            "belongs to the papers' pipeline (their shared initial sets); the estimator "
            "pipeline's fits start as DPKMeans's do (a method's own `init` parameter, if it "
            "has one, goes in its params)",
        )
    init_raw = _mapping(file, "init", raw.get("init", {}) or {})
    _check_keys(file, "init", init_raw, {"sets", "method"})
    init = InitSpec(
        _int(file, "init.sets", init_raw.get("sets", InitSpec.sets), 1),
        init_raw.get("method", InitSpec.method),
    )
    if init.method not in INIT_METHODS:
        raise SpecError(
            file,
            "init.method",
            init.method,
            "unknown init method",
            did_you_mean(str(init.method), INIT_METHODS),
        )
    default_metrics = ["cost"] if pipeline == "estimator" else ["nicv"]
    metrics = _metrics(file, raw.get("metrics", default_metrics), algorithms, datasets)
    for ds in datasets:
        label = ds.kwargs.get("label", "")
        if problem := _undrawable(str(label)):
            raise SpecError(file, "datasets[].params.label", label, problem)
    plot = parse_plot(file, raw.get("plot", {}), algorithms, datasets)
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise SpecError(file, "description", description, "must be a string")
    return Spec(
        name=name,
        seed=seed,
        description=description,
        datasets=datasets,
        algorithms=algorithms,
        epsilon=epsilon,
        delta=delta,
        pipeline=pipeline,
        scaling=scaling,
        seeds=seeds,
        init=init,
        metrics=tuple(metrics),
        plot=plot,
        path=file,
        raw=raw,
    )


def _pipeline(file: str, raw: dict) -> tuple[str, str, tuple[int, ...]]:
    """(pipeline, scaling, seeds): ``scaling`` and ``seeds`` belong to the estimator
    pipeline, whose scaling is DPKMeans's default, ``common``."""
    pipeline = raw.get("pipeline", "paper")
    if pipeline not in PIPELINES:
        raise SpecError(
            file,
            "pipeline",
            pipeline,
            "is not an allowed value",
            did_you_mean(str(pipeline), PIPELINES),
        )
    for key in ("scaling", "seeds"):
        if key in raw and pipeline != "estimator":
            raise SpecError(
                file,
                key,
                raw[key],
                "belongs to pipeline: estimator (the papers' pipeline scales each feature "
                "and draws from the runs' identity streams)",
            )
    scaling = raw.get("scaling", "common" if pipeline == "estimator" else "per_feature")
    if scaling not in data.SCALINGS:
        raise SpecError(
            file,
            "scaling",
            scaling,
            "is not an allowed value",
            did_you_mean(str(scaling), data.SCALINGS),
        )
    seeds = raw.get("seeds", [])
    if not isinstance(seeds, list) or "seeds" in raw and not seeds:
        raise SpecError(file, "seeds", seeds, "must be a non-empty list of integers")
    for n, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise SpecError(file, f"seeds[{n}]", s, "must be an integer >= 0 (a random_state)")
    if len(set(seeds)) != len(seeds):
        raise SpecError(file, "seeds", seeds, "has duplicate values: runs would repeat")
    return pipeline, scaling, tuple(seeds)


def _delta(file: str, raw) -> float:
    """The spec's δ: a number in [0, 1); 0 keeps every method pure ε."""
    ok = isinstance(raw, int | float) and not isinstance(raw, bool) and 0 <= raw < 1
    if not ok:
        raise SpecError(file, "delta", raw, "must be a number in [0, 1) (0: pure ε)")
    return float(raw)


def load(path: str | Path, overrides=()) -> Spec:
    """Read and validate a spec file, with ``--set`` overrides applied (see
    :func:`apply_overrides`)."""
    path = Path(path)
    file = str(path)
    if not path.is_file():
        what = "is not a regular file" if path.exists() else "spec file not found"
        raise SpecError(file, "(file)", file, what)
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
