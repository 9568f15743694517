"""Table figures (Paper B Table III): mean ± std of every metric as CSV and Markdown."""

from __future__ import annotations

import html
import math
import re
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


#: the characters with which Markdown forms a link or an image (``[text](url)``), an escape
#: or a table cell; emphasis and code spans are harmless and left as they are
_MARKDOWN_SPECIAL = re.compile(r"([\\\[\]|])")


def markdown_text(value) -> str:
    """``value`` as inert Markdown text: HTML's ``& < >`` as entities (so no tag, handler
    or autolink survives a renderer that passes HTML through, as mkdocs does) and the
    characters that form links, images and table cells backslash-escaped (so no link, such
    as a ``javascript:`` one, is formed); line breaks become spaces."""
    text = html.escape(str(value), quote=False).replace("\r", " ").replace("\n", " ")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def markdown_lines(df: pd.DataFrame) -> list[str]:
    """A table as Markdown lines: its header, the rule, one line per row; every cell is
    :func:`markdown_text` (a summary's labels come from user input)."""
    head = "| " + " | ".join(markdown_text(c) for c in df.columns) + " |"
    sep = "|" + "---|" * len(df.columns)
    body = [
        "| " + " | ".join(markdown_text(v) for v in row) + " |"
        for row in df.itertuples(index=False)
    ]
    return [head, sep, *body]
