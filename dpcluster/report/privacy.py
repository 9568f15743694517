"""The report's 'Privacy claims' section: the audit's bounds, and per spec the claimed and
the provable ε side by side."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DpclusterError
from ..plotting.table import markdown_lines, markdown_text
from ..results import read_table

THEOREM4 = (
    "Sun et al.'s Theorem 4 claims that DPBV is (ε, p^s − e^ε q^s)-LDP per attribute. "
    "It is not: two values whose clean encodings differ in m bits have a "
    "log-likelihood ratio of exactly ε(2A − m), so one attribute's report is only "
    "pure m_max·ε-LDP (docs/privacy.md). Paper-B figures keep the paper's ε on their "
    "x-axis; read it as the claimed ε."
)


#: the entries that release DPBV encodings, whose ε Theorem 4 misstates
DPBV_ENTRIES = ("dpbv_error", "vertical_error", "dp_kcluster", "dp_dbscan", "dp_agglomerative")


def _range(values: pd.Series) -> str:
    v = pd.to_numeric(values, errors="coerce")
    if not v.empty and np.isposinf(v).all():
        return "∞"
    v = v[np.isfinite(v)]
    if v.empty:
        return "–"
    lo, hi = float(v.min()), float(v.max())
    return f"{lo:.4g}" if lo == hi else f"{lo:.4g}–{hi:.4g}"


#: the columns both pages read from audit.csv, in the order the HTML page shows them
AUDIT_COLUMNS = (
    "algorithm",
    "epsilon",
    "epsilon_claimed",
    "epsilon_provable",
    "epsilon_lb_blackbox",
    "epsilon_lb_whitebox",
    "verdict",
)


def privacy_section(results_dir: Path) -> list[str]:
    """'Privacy claims': the audit's bounds per algorithm, then per spec the claimed and the
    provable ε side by side, read from audit.csv and the summaries."""
    summaries = [read_table(p) for p in sorted(results_dir.glob("*/summary.csv"))]
    dpbv = any(
        "algorithm" in s.columns and s["algorithm"].isin(DPBV_ENTRIES).any() for s in summaries
    )
    lines = ["## Privacy claims", "", *([THEOREM4, ""] if dpbv else [])]
    audit = results_dir / "audit" / "audit.csv"
    try:
        a = read_table(audit) if audit.is_file() else None
    except DpclusterError:
        a = pd.DataFrame()  # not a table: reported below as lacking every column
    missing = sorted(set(AUDIT_COLUMNS) - set(a.columns)) if a is not None else []
    if a is not None and missing:
        lines.append(
            f"Audit: {markdown_text(audit.relative_to(results_dir))} is not an audit table "
            f"(no column {markdown_text(', '.join(missing))}): left out."
        )
    elif a is not None:
        a = a[pd.to_numeric(a["epsilon"], errors="coerce").isin([0.5, 1.0, 2.0])]
        lines += [
            "Audited with `dpcluster audit` (95 % lower bounds; docs/audit.md):",
            "",
            "| algorithm | ε | claimed ε | provable ε | ε_lb (larger bound) | verdict |",
            "|---|---|---|---|---|---|",
        ]
        for r in a.itertuples(index=False):
            disc = getattr(r, "epsilon_lb_discrete", np.nan)
            lb = np.nanmax([r.epsilon_lb_blackbox, r.epsilon_lb_whitebox, disc])
            lines.append(
                f"| {markdown_text(r.algorithm)} | {r.epsilon:g} | {r.epsilon_claimed:.4g} | "
                f"{r.epsilon_provable:.4g} | {lb:.3g} | {markdown_text(r.verdict)} |"
            )
    else:
        lines.append("Audit: not run (`dpcluster audit` writes results/audit/audit.csv).")
    table = claims_table(results_dir)
    if len(table):
        lines += [
            "",
            "Per run, as booked in each figure's tables"
            + (" (Paper B: per record, over the attributes it encodes):" if dpbv else ":"),
            "",
            *markdown_lines(table),
        ]
    return lines


def claims_table(results_dir: Path) -> pd.DataFrame:
    """Per run and private algorithm: the claimed and the provable ε and δ (ranges over its
    rows), whether every claim holds, and the bounds policy, from each summary.csv."""
    rows = []
    for summary in sorted(Path(results_dir).glob("*/summary.csv")):
        try:
            s = read_table(summary)
        except DpclusterError:
            continue  # the folder is flagged by the runs' section
        if not {"epsilon_claimed_max", "epsilon_provable_max"} <= set(s.columns):
            continue
        # a private row claims a finite ε; its provable ε may be ∞ (an exact read of N)
        private = s[np.isfinite(pd.to_numeric(s["epsilon_claimed_max"], errors="coerce"))]
        for alg, g in private.groupby("algorithm", sort=False):
            claimed, provable = _range(g["epsilon_claimed_max"]), _range(g["epsilon_provable_max"])
            if "noise_epsilon_mean" in g.columns and g["noise_epsilon_mean"].notna().any():
                provable += f" (its noise alone: {_range(g['noise_epsilon_mean'])})"
            holds = (g["epsilon_claimed_max"] == g["epsilon_provable_max"]).all()
            deltas = ["0", "0"]  # tables written before the δ columns: pure ε throughout
            if {"delta_claimed_max", "delta_provable_max"} <= set(g.columns):
                deltas = [_range(g["delta_claimed_max"]), _range(g["delta_provable_max"])]
                holds = holds and (g["delta_claimed_max"] == g["delta_provable_max"]).all()
            bounds = ",".join(sorted(set(g.get("bounds", pd.Series(["data"])).astype(str))))
            rows.append(
                {
                    "spec": summary.parent.name,
                    "algorithm": alg,
                    "claimed ε": claimed,
                    "provable ε": provable,
                    "claimed δ": deltas[0],
                    "provable δ": deltas[1],
                    "claim holds": "yes" if holds else "no",
                    "bounds": bounds,
                }
            )
    return pd.DataFrame(rows)
