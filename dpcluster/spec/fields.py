"""Small validators every section of a spec shares: mappings, allowed keys, integers, and
the expansion of parameter sweeps (lists) into one entry per combination."""

from __future__ import annotations

import itertools
from typing import Any

from ..errors import SpecError, did_you_mean
from ..experiments import Param
from ..experiments.protocol import ParamError


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
