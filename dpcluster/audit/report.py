"""audit.md and audit.png from an audit table (presentation only, no computation)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd


def _num(v: float, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if math.isinf(v):
        return "∞"
    return f"{v:.{digits}g}"


def audit_markdown(table: pd.DataFrame) -> str:
    """A markdown table of every row plus a legend of the columns and verdicts."""
    lines = [
        "# Privacy audit",
        "",
        "ε_lb are 95 % lower bounds on the ε that the mechanism actually has "
        "(docs/audit.md). *claimed*: what the papers say; *provable*: what dpcluster's "
        "ledger proves. A bound above the claimed ε is a `violation`; above the provable "
        "ε it would be a bug in dpcluster (`violation of provable ε`).",
        "",
        "| algorithm | ε | claimed ε | provable ε | trials | ε_lb black-box (ceiling) "
        "| ε_lb white-box | ε_lb discrete | verdict | note |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples(index=False):
        if r.verdict == "not private":
            lines.append(f"| {r.algorithm} | – | – | – | – | – | – | – | not private | {r.note} |")
            continue
        lines.append(
            f"| {r.algorithm} | {_num(r.epsilon)} | {_num(r.epsilon_claimed)} "
            f"| {_num(r.epsilon_provable)} | {int(r.trials):,} "
            f"| {_num(r.epsilon_lb_blackbox)} ({_num(r.blackbox_ceiling)}) "
            f"| {_num(r.epsilon_lb_whitebox)} "
            f"| {_num(getattr(r, 'epsilon_lb_discrete', float('nan')))} | {r.verdict} | {r.note} |"
        )
    lines += [
        "",
        "Covers: "
        + "; ".join(
            f"{r.algorithm} → {r.covers}"
            for r in table.drop_duplicates("algorithm").itertuples(index=False)
            if r.verdict != "not private"
        ),
        "",
    ]
    return "\n".join(lines)


def audit_figure(table: pd.DataFrame, path: Path) -> Path:
    """ε_lb (the larger bound) against the claimed ε, one marker series per target, with
    the line ε_lb = claimed ε: points above it are violations of the claim."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = table[table["epsilon"].notna()].copy()
    bounds = ["epsilon_lb_blackbox", "epsilon_lb_whitebox", "epsilon_lb_discrete"]
    rows["lb"] = rows[[c for c in bounds if c in rows.columns]].max(axis=1)
    fig, ax = plt.subplots(figsize=(11, 5.5))
    floor = 1e-3
    violated = rows["verdict"].astype(str).str.startswith("violation")
    for name, g in rows.groupby("algorithm", sort=False):
        faint = not violated[g.index].any()  # consistent targets recede; violations stand out
        ax.plot(
            g["epsilon_claimed"],
            g["lb"].clip(lower=floor),
            "o-",
            label=name,
            alpha=0.35 if faint else 1.0,
            lw=1 if faint else 2.2,
            ms=4 if faint else 8,
            zorder=2 if faint else 3,
        )
    lo = max(floor, float(rows["epsilon_claimed"].min()) / 2)
    hi = float(max(rows["epsilon_claimed"].max(), rows["lb"].max())) * 2
    ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="ε_lb = claimed ε")
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for axis, subs in ((ax.xaxis, (1.0, 3.0)), (ax.yaxis, (1.0, 2.0, 5.0))):
        # 0.5, 1, 2 rather than 5×10^-1, 10^0, 2×10^0
        axis.set_major_locator(LogLocator(base=10, subs=subs))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("claimed ε (per run; Paper B: per attribute or record)")
    ax.set_ylabel(f"audited ε_lb (95 %, floor {floor:g})")
    ax.set_title("dpcluster audit: lower bounds on ε against the claims")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    tmp.replace(path)
    return path
