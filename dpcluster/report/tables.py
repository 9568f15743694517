"""Selecting rows of a ``summary.csv`` by algorithm and parsed parameters (never by label).

A summary row's ``params`` column is the JSON of the run's parameters. A parameter a row
does not carry (a table written before the parameter existed) takes the registry default.
A selection that still matches more than one variant raises: a claim never silently picks
one of several.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from ..experiments import ALGORITHMS

#: (holds: True / False / None for "no data", evidence)
Verdict = tuple[bool | None, str]


def _default(algorithm: str, key: str):
    info = ALGORITHMS.get(algorithm)
    return info.params[key].default if info is not None and key in info.params else None


def param(s: pd.DataFrame, key: str) -> pd.Series:
    """Parameter ``key`` of every row, the registry default where a row lacks it."""

    def one(row) -> object:
        raw = row.get("params")
        value = json.loads(raw).get(key) if isinstance(raw, str) else None
        return _default(row["algorithm"], key) if value is None else value

    if s.empty:
        return pd.Series(dtype=object)
    return s.apply(one, axis=1)


def select(s: pd.DataFrame, algorithm: str, **fixed) -> pd.DataFrame:
    """Rows of ``algorithm`` whose parameters equal ``fixed``. A registry parameter that
    varies between the rows and is not named takes its default, so a claim about "GkM"
    reads GkM's default variant unless it names another; ``name=None`` keeps every value."""
    sub = s[s["algorithm"] == algorithm]
    if sub.empty:
        return sub
    info = ALGORITHMS.get(algorithm)
    wanted = {k: p.default for k, p in info.params.items()} if info is not None else {}
    wanted = {k: v for k, v in wanted.items() if k in _named_or_swept(sub)}
    wanted.update(fixed)
    for key, value in wanted.items():
        if value is not None:
            sub = sub[param(sub, key) == value]
    return sub


def _named_or_swept(sub: pd.DataFrame) -> set[str]:
    """The parameters that differ between the rows: only those must match the default."""
    keys: set[str] = set()
    if "params" not in sub:
        return keys
    parsed = [json.loads(p) for p in sub["params"].drop_duplicates()]
    for key in {k for p in parsed for k in p}:
        if len({json.dumps(p.get(key)) for p in parsed}) > 1:
            keys.add(key)
    return keys


def one_variant(sub: pd.DataFrame) -> pd.DataFrame:
    """``sub`` itself when its rows are of one variant; raises when they are of several."""
    if "params" in sub and sub["params"].nunique() > 1:
        raise ValueError(f"ambiguous selection: variants {sorted(set(sub['variant']))}")
    return sub


def means(
    s: pd.DataFrame, algorithm: str, dataset: str | None = None, column: str = "mean", **fixed
) -> pd.Series:
    """Mean metric (or another summary ``column``, e.g. ``ci95_high``) indexed by ε for
    one variant of ``algorithm`` (finite ε only)."""
    sub = s if dataset is None else s[s["dataset"] == dataset]
    sub = select(sub, algorithm, **fixed)
    sub = one_variant(sub[np.isfinite(sub["epsilon"].astype(float))])
    if sub.empty:
        return pd.Series(dtype=float)
    return sub.set_index("epsilon")[column].sort_index()


def datasets(s: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(s["dataset"]))


def fraction_better(s, a: str, b: str, ds: str, eps_max=math.inf) -> tuple[float, int]:
    """Share of the common ε ≤ ``eps_max`` at which ``a``'s mean is below ``b``'s."""
    x, y = means(s, a, ds), means(s, b, ds)
    common = [e for e in x.index if e in y.index and e <= eps_max]
    if not common:
        return math.nan, 0
    return float(sum(bool(x[e] < y[e]) for e in common)) / len(common), len(common)


def each_dataset(s: pd.DataFrame, check, names=None) -> Verdict:
    """Apply ``check(rows of one dataset, name) -> (ok, text) | None`` to every dataset
    (or the named ones); holds when every checked dataset holds, "no data" when none could
    be checked."""
    parts, ok, any_ = [], True, False
    for ds in names or datasets(s):
        got = check(s[s["dataset"] == ds], ds)
        if got is not None:
            any_ = True
            ok &= bool(got[0])
            parts.append(got[1])
    return (ok if any_ else None), "; ".join(parts) if parts else "no data"


def gap(s: pd.DataFrame, algorithm: str, x: str, **fixed) -> pd.Series:
    """Mean gap to the paper's baseline (best NICV of Lloyd from the shared init sets, not
    from data points), averaged over the rows at each value of ``x`` (k or d)."""
    base = select(s, "lloyd", init="spec").groupby("dataset")["min"].min()
    sub = select(s, algorithm, **fixed)
    sub = sub[np.isfinite(sub["epsilon"].astype(float)) & sub["dataset"].isin(base.index)]
    g = sub["mean"] - sub["dataset"].map(base)
    return g.groupby(sub[x]).mean().sort_index()


def value(s: pd.DataFrame, algorithm: str, metric: str = "ari", **fixed) -> float:
    """The single ``<metric>_mean`` of one variant (a table row), NaN when absent."""
    sub = select(s, algorithm, **fixed)
    return float(one_variant(sub)[f"{metric}_mean"].iloc[0]) if len(sub) else math.nan
