"""``REPORT.html``: one self-contained page of a results root that a reader opens in any
browser, without Python: each run's figure (inlined), its summary table with the
privacy columns, the papers' claims, and the audit's verdicts.

Everything on the page is read from the files :func:`~dpcluster.report.write_report`
reads; nothing is computed that the tables do not hold.
"""

from __future__ import annotations

import base64
import html
import io
import math
from pathlib import Path

import pandas as pd

from ..errors import DpclusterError
from ..results import read_json, read_table
from .drawn import usable
from .privacy import AUDIT_COLUMNS, claims_table
from .runs import headline_tables, method_labels

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
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 13px; margin: .5em 0 1em; display: block;
        max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
table.text td, table.text th { text-align: left; }
img { max-width: 100%; border: 1px solid #eee; }
details { margin: .3em 0 1em; } summary { cursor: pointer; color: #245; }
.holds { color: #176117; } .fails { color: #a31515; } .muted { color: #777; }
.run { margin-bottom: 2.5em; }
"""


#: the most summary rows a run's collapsed table shows (Figure 2 has 2,000: its file has them)
MAX_SUMMARY_ROWS = 200

#: every figure is drawn at 150 dpi; the page shows each at this share of its pixels, one
#: scale for all (75 dpi, a figure's own size on a screen), which also keeps the page small
PAGE_SCALE = 0.5


def _png(path: Path) -> str:
    """The figure as an inline image at :data:`PAGE_SCALE` of its pixels; the caller has
    checked it (:func:`.drawn.usable`). Pillow (matplotlib's own dependency) resamples it;
    a file it cannot read is inlined as it is."""
    raw = path.read_bytes()
    try:
        from PIL import Image

        with Image.open(io.BytesIO(raw)) as image:
            size = (
                max(1, round(image.width * PAGE_SCALE)),
                max(1, round(image.height * PAGE_SCALE)),
            )
            small = image.convert("RGB").resize(size, Image.Resampling.LANCZOS)
            buffer = io.BytesIO()
            # a plot has few colours: a 256-colour palette keeps it sharp at a third the bytes
            small.quantize(256).save(buffer, format="PNG", optimize=True)
            raw = buffer.getvalue()
    except (ImportError, OSError, ValueError):
        pass
    data = base64.b64encode(raw).decode("ascii")
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


def _title(name: str) -> str:
    """A registry entry's display title (its legend's name), else ``name``."""
    from ..experiments import lookup

    try:
        return lookup(str(name)).title or str(name)
    except (KeyError, TypeError, ValueError):
        return str(name)


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
    if not problem:
        for label, what, table in headline_tables(summary):
            parts += [f"<p><b>{html.escape(label)}</b>: {html.escape(what)}</p>", _table(table)]
    shown = [c for c in SUMMARY_COLUMNS if c in summary.columns]
    if len(summary) > MAX_SUMMARY_ROWS:
        parts += [
            f'<p class="muted">summary.csv: {len(summary)} rows, too many for this page '
            f"(it shows up to {MAX_SUMMARY_ROWS}); the file holds them with the ε columns.</p>",
            "</div>",
        ]
        return parts
    table = summary[shown]
    if "dataset" in table.columns and "dataset_label" in summary.columns:
        # the display label, not the identity string (a csv's whole domain is in that)
        table = table.assign(dataset=summary["dataset_label"])
    if "variant" in table.columns:  # the legend's label, not the identity string
        table = table.assign(variant=method_labels(summary)).rename(columns={"variant": "method"})
    parts += [
        f"<details><summary>summary table ({len(summary)} rows; ε columns: the paper's "
        "claim and what provably holds)</summary>",
        _table(table) if shown else "<p>(no summary columns)</p>",
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
    holds = sum(1 for _, v in verdicts if v[0] is True)
    fails = sum(1 for _, v in checked if v[0] is False)
    verdict = (
        f'<p><b class="holds">{holds} of {len(verdicts)} claims of the papers hold</b>; '
        f'<span class="fails">{fails} do not</span>'
        + (f"; {untried} have no data here" if untried else "")
        + ' (<a href="#claims">the claims</a>).</p>'
        if checked
        else ""
    )
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>dpcluster results: {html.escape(Path(results_dir).name)}</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>dpcluster results</h1>",
        verdict,
        f'<p class="muted">{html.escape(Path(results_dir).name)}: {len(folders)} run(s). Written '
        "by <code>dpcluster report</code> from the result tables; open it anywhere.</p>",
        "<h2>Runs</h2>",
        "<ul>",
        *(f'<li><a href="#{html.escape(f.name)}">{html.escape(f.name)}</a></li>' for f in folders),
        "</ul>",
    ]
    for folder in folders:
        parts += _run(folder, unverified.get(folder.name))
    if checked:  # a user's own runs get no paper text
        parts += ['<h2 id="claims">The papers\' claims</h2>', *_claims(checked, labels)]
        if untried:
            parts.append(
                f'<p class="muted">{untried} claim(s) have no data here '
                "(<code>make reproduce-all</code> runs them all).</p>"
            )
    claims = claims_table(Path(results_dir))
    if len(claims):  # the methods as the legends name them
        claims = claims.assign(algorithm=claims["algorithm"].map(_title)).rename(
            columns={"algorithm": "method"}
        )
        parts += [
            '<h2 id="privacy">Privacy: claimed and provable ε</h2>',
            "<p>Per run and private method, as booked in its tables: the ε and δ claimed for "
            "it and what dpcluster's ledger proves (docs/privacy.md).</p>",
            _table(claims),
        ]
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
