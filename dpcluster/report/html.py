"""``REPORT.html``: one self-contained page of a results root that a reader opens in any
browser, without Python: each run's figure (inlined), its summary table with the
privacy columns, the papers' claims, and the audit's verdicts.

Everything on the page is read from the files :func:`~dpcluster.report.write_report`
reads; nothing is computed that the tables do not hold.
"""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path

import pandas as pd

from ..errors import DpclusterError
from ..results import read_json, read_table
from .drawn import usable
from .privacy import AUDIT_COLUMNS

#: summary columns shown per run, in this order, when present
SUMMARY_COLUMNS = (
    "dataset",
    "variant",
    "epsilon",
    "metric",
    "n",
    "mean",
    "ci95_low",
    "ci95_high",
    "epsilon_claimed_max",
    "epsilon_provable_max",
    "delta_provable_max",
    "bounds",
)

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 13px; margin: .5em 0 1em; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
table.text td, table.text th { text-align: left; }
img { max-width: 100%; border: 1px solid #eee; }
details { margin: .3em 0 1em; } summary { cursor: pointer; color: #245; }
.holds { color: #176117; } .fails { color: #a31515; } .muted { color: #777; }
.run { margin-bottom: 2.5em; }
"""


def _png(path: Path) -> str:
    """The figure as an inline image; the caller has checked it (:func:`.drawn.usable`)."""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(path.parent.name)}" src="data:image/png;base64,{data}">'


def _cell(v):
    """A table value as the reader sees it: 4 significant digits, ∞ for a non-private ε,
    and a dash where there is no value (NaN)."""
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        return ("∞" if v > 0 else "−∞") if math.isinf(v) else f"{v:.4g}"
    return v


def _table(frame: pd.DataFrame) -> str:
    return frame.map(_cell).to_html(index=False, border=0, escape=True, na_rep="–")


def _meta(folder: Path) -> dict:
    meta = read_json(folder / "meta.json")
    return meta if isinstance(meta, dict) else {}


def _run(folder: Path, problem: str | None = None) -> list[str]:
    meta = _meta(folder)
    summary = read_table(folder / "summary.csv")
    what = [f"{len(summary)} summary rows"]
    if meta.get("spec_file"):
        what.append(f"spec {meta['spec_file']}")
    if meta.get("finished"):
        what.append(f"finished {meta['finished']}")
    parts = [
        '<div class="run">',
        f'<h3 id="{html.escape(folder.name)}">{html.escape(folder.name)}</h3>',
        f'<p class="muted">{html.escape("; ".join(what))}</p>',
    ]
    if problem:
        parts.append(f'<p class="fails">Does not verify: {html.escape(problem)}</p>')
    if usable(folder, "figure.png"):
        parts.append(_png(folder / "figure.png"))
    shown = [c for c in SUMMARY_COLUMNS if c in summary.columns]
    parts += [
        f"<details><summary>summary table ({len(summary)} rows; ε columns: the paper's "
        "claim and what provably holds)</summary>",
        _table(summary[shown]) if shown else "<p>(no summary columns)</p>",
        "</details>",
        "</div>",
    ]
    return parts


def _claims(verdicts, labels: dict) -> list[str]:
    rows = []
    for claim, (holds, evidence) in verdicts:
        css = "holds" if holds is True else "fails" if holds is False else "muted"
        rows.append(
            f"<tr><td>{html.escape(claim.spec)}</td><td>{html.escape(claim.text)}</td>"
            f'<td class="{css}">{html.escape(labels[holds])}</td>'
            f"<td>{html.escape(str(evidence))}</td></tr>"
        )
    return [
        '<table class="text"><tr><th>figure</th><th>claim</th><th>verdict</th>'
        "<th>evidence</th></tr>",
        *rows,
        "</table>",
    ]


def write_html(
    results_dir: Path, path: Path, folders, verdicts, labels: dict, unverified=None
) -> Path:
    """Write the page for ``folders`` (runs, in order) and the claims' ``verdicts``
    (``labels``: verdict -> its text) into ``path``; ``unverified`` (folder name -> problem)
    flags the runs whose tables do not verify. Returns ``path``."""
    unverified = unverified or {}
    from ..results import atomic_write_text

    checked = [(c, v) for c, v in verdicts if v[0] is not None]
    untried = len(verdicts) - len(checked)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>dpcluster results: {html.escape(str(results_dir))}</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>dpcluster results</h1>",
        f'<p class="muted">{html.escape(str(results_dir))}: {len(folders)} run(s). Written '
        "by <code>dpcluster report</code> from the result tables; open it anywhere.</p>",
        "<h2>Runs</h2>",
        "<ul>",
        *(f'<li><a href="#{html.escape(f.name)}">{html.escape(f.name)}</a></li>' for f in folders),
        "</ul>",
    ]
    for folder in folders:
        parts += _run(folder, unverified.get(folder.name))
    parts.append("<h2>The papers' claims</h2>")
    if checked:
        parts += _claims(checked, labels)
    if untried:
        parts.append(
            f'<p class="muted">{untried} claim(s) have no data here '
            "(<code>make reproduce-all</code> runs them all).</p>"
        )
    audit = Path(results_dir) / "audit" / "audit.csv"
    try:
        table = read_table(audit) if audit.is_file() else None
    except DpclusterError:
        table = None  # not a table: the Markdown report says so
    if table is not None and "verdict" in table.columns:
        shown = [c for c in AUDIT_COLUMNS if c in table.columns]
        parts += [
            "<h2>Privacy audit</h2>",
            "<p>95 % lower bounds on ε from <code>dpcluster audit</code> (docs/audit.md), "
            "against the claimed and the provable ε. <b>consistent</b>: no bound exceeds "
            "either; <b>violation</b>: a bound exceeds the ε the paper claims, not what "
            "dpcluster proves; <b>violation of provable ε</b>: a bound exceeds the ledger's "
            "ε, a fault in dpcluster. Not-private rows have no ε (–).</p>",
            _table(table[shown]),
        ]
    parts.append("</body></html>")
    atomic_write_text(path, "\n".join(parts) + "\n")
    return path
