"""What a report says about one run: per dataset, a method × ε table of the headline
metric, the methods named as the figure's legend names them.

Read from ``summary.csv`` only. A run of many datasets (Figure 2's 81 synthetic shapes)
gets no per-dataset tables: its summary holds them.
"""

from __future__ import annotations

import math

import pandas as pd

#: the most datasets a run may have for its report to show one table each
MAX_TABLES = 12
#: the column of the non-private rows (ε = ∞)
NON_PRIVATE = "non-private"


def _labels(summary: pd.DataFrame) -> pd.Series:
    """Each row's method as the figure's legend names it."""
    from ..plotting.common import series_labels

    return series_labels(summary, "epsilon")


def method_labels(summary: pd.DataFrame) -> pd.Series:
    """Each summary row's method as the legend names it, or its ``variant`` where the rows
    cannot be labelled (a plugin's summary may hold anything)."""
    try:
        return _labels(summary)
    except (KeyError, ValueError, TypeError):
        return summary["variant"].astype(str)


def _value(mean: float, ratio: float | None) -> str:
    if mean != mean:
        return "–"
    text = f"{mean:,.0f}" if 1e3 <= abs(mean) < 1e15 else f"{mean:.4g}"
    if ratio is not None and ratio == ratio and math.isfinite(ratio):
        text += f" ({ratio:.3g}×)"
    return text


def headline_tables(summary: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(dataset label, what the numbers are, method × ε table) per dataset; [] for a run
    of more than :data:`MAX_TABLES` datasets or a summary without the columns."""
    needed = {"dataset", "dataset_label", "algorithm", "params", "epsilon", "mean", "metric"}
    if summary.empty or not needed <= set(summary.columns):
        return []
    if summary["dataset"].nunique() > MAX_TABLES:
        return []
    s = summary.assign(method_label=method_labels(summary))
    has_ratio = "cost_ratio" in s.columns
    out = []
    for _, sub in s.groupby("dataset", sort=False):
        eps = sorted({float(e) for e in sub["epsilon"] if math.isfinite(float(e))})
        columns = [f"ε = {e:g}" for e in eps]
        if (~sub["epsilon"].astype(float).map(math.isfinite)).any():
            columns.append(NON_PRIVATE)
        rows = {}
        for r in sub.itertuples(index=False):
            e = float(r.epsilon)
            column = f"ε = {e:g}" if math.isfinite(e) else NON_PRIVATE
            ratio = getattr(r, "cost_ratio", None) if has_ratio else None
            rows.setdefault(r.method_label, {})[column] = _value(float(r.mean), ratio)
        table = pd.DataFrame.from_dict(rows, orient="index", columns=columns).fillna("")
        table.index.name = "method"
        metric = str(sub["metric"].iloc[0])
        what = f"mean {metric}" + (" (× the k-means baseline's)" if has_ratio else "")
        out.append((str(sub["dataset_label"].iloc[0]), what, table.reset_index()))
    return out


def markdown(table: pd.DataFrame) -> list[str]:
    """A table as Markdown lines (the same writer as Table III's ``table.md``)."""
    from ..plotting.table import markdown_lines

    return markdown_lines(table)
