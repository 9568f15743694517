"""``results/REPORT.md``: every figure, and the papers' qualitative claims checked from tables.

Each claim (:mod:`.paper_a`, :mod:`.paper_b`) is a function of its spec's ``summary.csv``
(Fig. 7: ``timing.csv``) that returns (holds, evidence), where evidence is the numbers it
compared. Rows are selected by algorithm and parsed parameters (:mod:`.tables`), never by
display label. Nothing is written by hand: a claim whose spec has not been run is "not
run", one whose rows are absent "no data", and one whose check raises an **error** with the
exception, never "no data".
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

from ..plotting.table import markdown_text
from ..results import atomic_write_text, read_json, read_table
from . import paper_a, paper_b
from .claim import Claim
from .drawn import DRAWINGS, usable
from .html import write_html
from .ldp import ldp_section
from .privacy import privacy_section
from .runs import headline_tables, markdown
from .tables import Verdict, select

CLAIMS: list[Claim] = [*paper_a.CLAIMS, *paper_b.CLAIMS]

#: the verdict of a claim whose check raised
ERROR = "error"
VERDICTS = {True: "holds", False: "does not hold", None: "—", ERROR: "error"}


#: the verdict text of a claim none of whose data is present
NOT_RUN = "not run"


def _folders_for(results_dir: Path, claim: Claim) -> list[Path]:
    """Where a claim's table may be: its spec's folder, then the folders of that spec's
    reduced or overridden runs (``fig1-s1``, ``fig1--set-…``), which hold part of its data."""
    own = Path(results_dir) / claim.spec
    others = sorted(
        p
        for p in Path(results_dir).glob(f"{claim.spec}-*")
        if p != own and (p / claim.table).is_file()
    )
    return [own, *others]


def is_paper_run(folder: Path) -> bool:
    """Whether ``folder`` holds a run of the papers' pipeline, so that the papers' claims
    may be judged on its tables: not a run whose spec says ``pipeline: estimator`` (its
    meta.json), nor one whose summary is the estimator pipeline's (a ``cost_ratio``
    column), whatever the folder is named."""
    meta = read_json(folder / "meta.json")
    spec = meta.get("spec") if isinstance(meta, dict) else None
    if isinstance(spec, dict) and spec.get("pipeline") == "estimator":
        return False
    summary = folder / "summary.csv"
    try:
        with open(summary, encoding="utf-8") as f:
            header = f.readline()
    except (OSError, UnicodeDecodeError):
        return True
    return "cost_ratio" not in header.strip().split(",")


def evaluate(
    results_dir: Path, unverified: dict[str, str] | None = None
) -> list[tuple[Claim, Verdict]]:
    """Each claim's verdict from the first folder (:func:`_folders_for`) whose table holds
    its data; "not run" only when no folder has the table. A folder named in
    ``unverified`` (folder name → what does not verify) gives an error verdict instead of
    one computed from numbers nothing vouches for."""
    unverified = unverified or {}
    out = []
    for claim in CLAIMS:
        found: Verdict | None = None
        for folder in _folders_for(results_dir, claim):
            path = folder / claim.table
            if not path.is_file() or not is_paper_run(folder):
                continue
            if folder.name in unverified:
                verdict = (ERROR, f"{folder.name} does not verify: {unverified[folder.name]}")
            else:
                try:
                    verdict = claim.check(read_table(path))
                except Exception as exc:  # noqa: BLE001 - an error verdict, never "no data"
                    verdict = (ERROR, f"{type(exc).__name__}: {exc}")
            if folder.name != claim.spec:
                verdict = (verdict[0], f"{verdict[1]} (from {folder.name}/{claim.table})")
            if found is None or verdict[0] is not None:
                found = verdict
            if verdict[0] is not None:
                break
        out.append((claim, found or (None, f"{NOT_RUN} (no {claim.spec}/{claim.table})")))
    return out


def _not_run(verdict: Verdict) -> bool:
    return verdict[0] is None and str(verdict[1]).startswith(NOT_RUN)


def _meta(folder: Path, key: str) -> str:
    """``key`` of the meta.json the run that wrote ``folder`` left, "" when unknown."""
    meta = read_json(folder / "meta.json")
    return str(meta.get(key, "")) if isinstance(meta, dict) else ""


def _finished(folder: Path) -> str:
    return _meta(folder, "finished")


def _paper_order(name: str) -> tuple:
    """A folder's place among one invocation's: the user's own runs first, then Paper A's
    figures in the paper's order, its numeric checks, and Paper B's figures and table."""
    import re

    if m := re.fullmatch(r"fig(\d+)(.*)", name):
        return (1, int(m.group(1)), m.group(2))
    if name == "numeric-checks":
        return (2, 0, "")
    if m := re.fullmatch(r"b-(fig|table)(\d+)(.*)", name):
        return (3, int(m.group(2)) + (100 if m.group(1) == "table" else 0), m.group(3))
    return (0, 0, name)


def run_folders(results_dir: Path) -> list[Path]:
    """Every folder with a summary.csv: the latest invocation's first (by its start time),
    and within one invocation the user's own, then the papers' in their order."""
    folders = sorted(p.parent for p in Path(results_dir).glob("*/summary.csv"))
    started = {f: _meta(f, "started") for f in folders}
    order = sorted(set(started.values()), reverse=True)
    return sorted(folders, key=lambda f: (order.index(started[f]), _paper_order(f.name)))


def runs_section(results_dir: Path, unverified: dict[str, str] | None = None) -> list[str]:
    """The runs present, most recent first, each with its summary size and drawing, and
    what does not verify in those named in ``unverified``."""
    unverified = unverified or {}
    lines = ["## Your runs", ""]
    folders = run_folders(results_dir)
    if not folders:
        return [*lines, f"No results under {markdown_text(results_dir.name)} yet.", ""]
    for folder in folders:
        drawn = [p for p in DRAWINGS if usable(folder, p)]
        link = f" — [{drawn[0]}]({quote(folder.name)}/{drawn[0]})" if drawn else ""
        when = f", finished {_finished(folder)}" if _finished(folder) else ""
        rows = len(read_table(folder / "summary.csv"))
        bad = (
            f" — **does not verify**: {markdown_text(unverified[folder.name])}"
            if folder.name in unverified
            else ""
        )
        lines.append(f"- **{markdown_text(folder.name)}**: {rows} summary rows{when}{link}{bad}")
    return [*lines, ""]


def write_report(
    results_dir: Path | str = "results",
    path: Path | str | None = None,
    unverified: dict[str, str] | None = None,
) -> Path:
    """Write ``results_dir/REPORT.md`` (or ``path``), and beside it the same as one
    self-contained page (``REPORT.html``: :mod:`.html`), from whatever results exist: the runs
    present (the user's own first) with their figures, then the papers' claims that their
    data decide, with those it cannot decide and those not run collapsed into a line
    each. ``unverified``: the folders whose tables do not verify against their cells
    (folder name → the first problem; the caller runs the check), flagged and kept out of
    the claims."""
    results_dir = Path(results_dir)
    unverified = unverified or {}
    verdicts = evaluate(results_dir, unverified)
    checked = [(c, v) for c, v in verdicts if v[0] is not None]
    # a claim whose spec ran only in part (fig1-s1 for fig1) and whose rows are not there
    undecided = [c for c, v in verdicts if v[0] is None and not _not_run(v)]
    missing = [c for c, v in verdicts if _not_run(v)]
    papers = len(missing) < len(verdicts)  # some paper spec ran: its claims are reported
    lines = [
        "# dpcluster — results report",
        "",
        *([verdict_line(verdicts), ""] if papers else []),
        "Generated by `dpcluster report` from the result tables"
        + (
            "; every verdict below is computed from `summary.csv`, not written by hand."
            if papers
            else "."
        ),
        "",
        *runs_section(results_dir, unverified),
        "## Figures",
        "",
    ]
    for folder in run_folders(results_dir):  # every run that drew something, latest first
        name, url = markdown_text(folder.name), quote(folder.name)
        if usable(folder, "figure.png"):
            lines += [f"### {name}", "", f"![{name}]({url}/figure.png)", ""]
        if usable(folder, "table.md"):
            lines += [f"### {name}", "", *_table_lines(folder), ""]
        if folder.name not in unverified:
            for label, what, table in headline_tables(read_table(folder / "summary.csv")):
                lines += [
                    f"**{markdown_text(label)}**: {markdown_text(what)}",
                    "",
                    *markdown(table),
                    "",
                ]
    if not papers:  # the user's own runs: no paper text
        lines += privacy_section(results_dir)
        return _write(results_dir, path, lines, verdicts, unverified)
    lines += ldp_section(results_dir)
    lines += ["## The papers' claims", ""]
    if checked:
        lines += ["| figure | claim | verdict | evidence |", "|---|---|---|---|"]
        for claim, (holds, evidence) in checked:
            lines.append(f"| {claim.spec} | {claim.text} | {VERDICTS[holds]} | {evidence} |")
        lines.append("")
    if undecided:
        specs = sorted({c.spec for c in undecided})
        lines += [
            f"Not decided: {len(undecided)} more claims of {', '.join(specs)}, whose rows "
            "these runs do not hold (a run of part of the spec); the full spec decides them.",
            "",
        ]
    if missing:
        specs = sorted({c.spec for c in missing})
        lines += [
            f"Not run: {len(missing)} of {len(verdicts)} claims, whose data none of "
            f"{', '.join(specs)} holds yet (`make reproduce-all` runs them all).",
            "",
        ]
    lines += [*baseline_section(results_dir), *gkm_scale_section(verdicts)]
    lines += privacy_section(results_dir)
    return _write(results_dir, path, lines, verdicts, unverified)


def _table_lines(folder: Path) -> list[str]:
    """A run's table as Markdown, rebuilt from its ``table.csv`` with every cell escaped
    (:func:`~..plotting.table.markdown_text`), never its ``table.md`` quoted: a folder may
    come from someone else."""
    try:
        return markdown(pd.read_csv(folder / "table.csv", dtype=str, keep_default_na=False))
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError, csv.Error):
        return ["(table.csv is missing or not a table: the table is left out)"]


def verdict_line(verdicts: list[tuple[Claim, Verdict]]) -> str:
    """The report's first line on the papers: how many claims hold of how many."""
    holds = sum(1 for _, v in verdicts if v[0] is True)
    fails = sum(1 for _, v in verdicts if v[0] is False)
    errors = sum(1 for _, v in verdicts if v[0] == ERROR)
    rest = len(verdicts) - holds - fails - errors
    parts = [f"**{holds} of {len(verdicts)} claims of the papers hold**", f"{fails} do not"]
    if errors:
        parts.append(f"{errors} could not be checked (error)")
    if rest:
        parts.append(f"{rest} have no data in these runs")
    return "; ".join(parts) + "."


def _write(results_dir: Path, path, lines: list[str], verdicts, unverified) -> Path:
    """REPORT.md from ``lines``, and REPORT.html beside it."""
    path = Path(path) if path is not None else results_dir / "REPORT.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    write_html(
        results_dir,
        path.with_suffix(".html"),
        run_folders(results_dir),
        verdicts,
        VERDICTS,
        unverified,
    )
    return path


def baseline_section(results_dir: Path, spec: str = "fig1") -> list[str]:
    """Both baselines per dataset of Figure 1: Lloyd from the shared uniform init sets (the
    paper's protocol; every gap in this report uses it) and Lloyd from data-point starts,
    with the lowest private mean beside them."""
    path = Path(results_dir) / spec / "summary.csv"
    if not path.is_file():
        return []
    s = read_table(path)
    if not {"algorithm", "dataset", "epsilon", "mean", "min", "variant"} <= set(s.columns):
        return ["## Baselines", "", f"error: {spec}/summary.csv lacks the summary columns", ""]
    paper = select(s, "lloyd", init="spec").groupby("dataset")["min"].min()
    points = select(s, "lloyd", init="points").groupby("dataset")["min"].min()
    private = s[np.isfinite(s["epsilon"].astype(float))]
    rows = []
    for ds in paper.index:
        pts = points.get(ds, math.nan)
        low = private[private["dataset"] == ds].sort_values("mean").head(1)
        below = (
            f"{low['mean'].iloc[0]:.5g} ({low['variant'].iloc[0]}, ε = {low['epsilon'].iloc[0]:g})"
            if len(low)
            else "–"
        )
        rows.append(f"| {ds} | {paper[ds]:.5g} | {pts:.5g} | {below} |")
    return [
        "## Baselines",
        "",
        "Every gap in this report is measured from the paper's baseline: the best NICV of "
        "Lloyd from the shared uniform init sets. Lloyd from data-point starts (`lloyd` with "
        "`init: points`) is a reference line; where it is lower, the paper's baseline is "
        "not a lower bound, and a private method's mean can sit below it.",
        "",
        f"| dataset ({spec}) | paper's baseline (uniform sets) | data-point starts | "
        "lowest private mean |",
        "|---|---|---|---|",
        *rows,
        "",
    ]


GUPT = " (GUPT's noise scale)"


def gkm_scale_section(verdicts: list[tuple[Claim, Verdict]]) -> list[str]:
    """Which GkM noise scale (docs/methods.md A4) reproduces the paper's GkM statements: the
    claims checked at both scales, counted."""
    by_text = {c.text: v[0] for c, v in verdicts}
    pairs = [(t[: -len(GUPT)], t) for t in by_text if t.endswith(GUPT)]
    decided = [(by_text.get(a), by_text[b]) for a, b in pairs]
    decided = [(a, b) for a, b in decided if a in (True, False) and b in (True, False)]
    if not decided:
        return []
    eq3, gupt = sum(a for a, _ in decided), sum(b for _, b in decided)
    if eq3 == gupt:
        verdict = (
            "both scales reproduce the same statements, and the paper gives no GkM number, "
            "so its text cannot tell them apart"
        )
    else:
        verdict = f"the {'Eq. 3' if eq3 > gupt else 'GUPT'} scale reproduces more of them"
    return [
        "## GkM's noise scale",
        "",
        f"GkM's statements checked at both noise scales (Eq. 3, and the public GUPT code's "
        f"three times larger): Eq. 3 reproduces {eq3} of {len(decided)}, GUPT's {gupt} of "
        f"{len(decided)}; {verdict}.",
        "",
    ]


__all__ = [
    "CLAIMS",
    "ERROR",
    "NOT_RUN",
    "VERDICTS",
    "Claim",
    "evaluate",
    "privacy_section",
    "write_report",
]
