"""``algorithms``, ``epsilon`` and ``metrics``: registry entries (built-in or plugin) with
their parameters, the privacy budgets, and the metrics every entry reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import data
from ..errors import SpecError, did_you_mean
from ..experiments import CLASS_METRICS, known_metrics, known_names
from ..experiments.pipeline import resolve
from ..experiments.registry import plugin_code
from ..privacy import check_user_epsilon
from .fields import _check_keys, _expand, _int, _mapping
from .model import AlgorithmSpec


def entry_of(alg: AlgorithmSpec):
    """The registry entry a spec's algorithm runs, under the spec's pipeline."""
    return resolve(alg.name, alg.source, alg.pipeline)


def _algorithms(
    file: str, raw: Any, pipeline: str = "paper", seeds: tuple[int, ...] = ()
) -> tuple[AlgorithmSpec, ...]:
    """The spec's algorithms; under ``seeds`` each runs once per seed."""
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
            info = resolve(str(name), source, pipeline)
        except KeyError as exc:
            if ":" in str(name):
                hint = "a plugin is 'module:attribute', importable from the spec's folder"
            elif exc.args[0] == str(name):
                hint = did_you_mean(str(name), known_names())
            else:  # a known entry this pipeline cannot run: the message says which can
                hint = ""
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
        repeat = _int(
            file, f"{where}.repeat", entry.get("repeat", len(seeds) or info.repeat_default), 1
        )
        if seeds and repeat != len(seeds):
            raise SpecError(
                file,
                f"{where}.repeat",
                repeat,
                f"differs from the {len(seeds)} seeds: one run per seed",
            )
        params = _mapping(file, f"{where}.params", entry.get("params", {}) or {})
        for combo in _expand(file, f"{where}.params", params, info.params):
            full = {p: combo.get(p, spec.default) for p, spec in info.params.items()}
            alg = AlgorithmSpec(
                name=name,
                params=tuple(sorted(full.items())),
                repeat=repeat,
                defaults_overridden=tuple(sorted(combo)),
                source=source,
                code=code,
                pipeline=pipeline,
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
        if problem := check_user_epsilon(v):
            raise SpecError(file, f"epsilon[{n}]", v, problem)
        out.append(float(v))
    if len(set(out)) != len(out):
        raise SpecError(file, "epsilon", raw, "has duplicate values")
    return tuple(out)


def _metrics(file: str, raw: Any, algorithms, datasets) -> list[str]:
    """Every listed metric is known, listed once, and reported by every algorithm (a
    plugin's ``metrics`` declare its own); class-based metrics need datasets with classes."""
    if not isinstance(raw, list) or not raw:
        raise SpecError(file, "metrics", raw, "must be a non-empty list of metric names")
    known = known_metrics(entry_of(a) for a in algorithms)
    for n, m in enumerate(raw):
        if m == "cost" and "cost" not in known:
            raise SpecError(
                file,
                f"metrics[{n}]",
                m,
                "belongs to pipeline: estimator (the k-means cost in data units of DPKMeans's "
                "fits); the papers' pipeline reports nicv",
            )
        if not isinstance(m, str) or m not in known:
            raise SpecError(
                file, f"metrics[{n}]", m, "unknown metric", did_you_mean(str(m), sorted(known))
            )
        if m in raw[:n]:
            raise SpecError(file, f"metrics[{n}]", m, "is listed twice")
        for a in algorithms:
            produced = entry_of(a).metrics
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
