"""Table figures (Paper B Table III): mean ± std of every metric as CSV and Markdown."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd


def table(summary: pd.DataFrame, out: Path, stem: str, metrics: tuple[str, ...]) -> list[Path]:
    """Table III: one row per dataset × variant × ε, ``mean ± std`` of every metric;
    written as ``<stem>.csv`` and ``<stem>.md``."""
    from ..results import atomic_write_text, to_csv

    present = [m for m in metrics if f"{m}_mean" in summary.columns]
    rows = []
    for _, r in summary.iterrows():
        eps = "" if not math.isfinite(r["epsilon"]) else f"{r['epsilon']:g}"
        rows.append(
            {
                "dataset": r["dataset_label"],
                "method": r["variant"],
                "epsilon": eps,
                "n": int(r["n"]),
                **{m: f"{r[f'{m}_mean']:.3f} ± {r[f'{m}_std']:.3f}" for m in present},
            }
        )
    df = pd.DataFrame(rows)
    paths = [out / f"{stem}.csv", out / f"{stem}.md"]
    atomic_write_text(paths[0], to_csv(df))
    atomic_write_text(paths[1], "\n".join(markdown_lines(df)) + "\n")
    return paths


def markdown_lines(df: pd.DataFrame) -> list[str]:
    """A table as Markdown lines: its header, the rule, one line per row."""
    head = "| " + " | ".join(str(c) for c in df.columns) + " |"
    sep = "|" + "---|" * len(df.columns)
    body = ["| " + " | ".join(str(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return [head, sep, *body]
