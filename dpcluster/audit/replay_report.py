"""The replay audit's tables: replay.csv and replay.md, the verdict lines and the exit
status of ``dpcluster audit --replay`` (docs/audit.md, "Replay")."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from .replay import replay_target
from .target import Target

#: ε of ``dpcluster audit --replay`` without --epsilon: the statistical audit's grid
REPLAY_EPSILONS = (0.5, 1.0, 2.0)
VERDICTS = ("clean", "books ∞", "not replayable", "violation")
COLUMNS = [
    "algorithm",
    "covers",
    "epsilon",
    "epsilon_provable",
    "verdict",
    "pairs",
    "releases",
    "worst_ratio",
    "worst_release",
    "finding",
    "seconds",
]


def run_replay(
    targets: list[Target], epsilons, seed: int = 20261207, jobs: int = 1
) -> pd.DataFrame:
    """replay.csv as a table: one row per (target, ε)."""
    tasks = [(t, float(e)) for t in targets for e in epsilons]
    if jobs > 1 and len(tasks) > 1:
        from joblib import Parallel, delayed

        rows = Parallel(n_jobs=jobs)(delayed(replay_target)(t, e, seed) for t, e in tasks)
    else:
        rows = [replay_target(t, e, seed) for t, e in tasks]
    return pd.DataFrame(rows, columns=COLUMNS)


def replay_markdown(table: pd.DataFrame) -> str:
    """replay.md: the verdicts, then every finding."""
    lines = [
        "# Replay audit",
        "",
        "Each target runs on neighbours with the same randomness and the same released values",
        '(docs/audit.md, "Replay").',
        "",
        "| algorithm | ε | verdict | pairs | releases | largest measured/declared | finding |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        finding = str(r.finding).replace("|", "\\|")
        lines.append(
            f"| {r.algorithm} | {r.epsilon:g} | {r.verdict} | {r.pairs} | {r.releases} | "
            f"{r.worst_ratio:.3g} | {finding} |"
        )
    return "\n".join(lines) + "\n"


def replay_exit(table: pd.DataFrame) -> int:
    """0 when no target is in violation; 4 when one whose ledger proves a finite ε is (a
    bug in dpcluster, or in the plugin named); else 3 (only targets whose ledger books ∞,
    such as diffprivlib's, are)."""
    from ..exits import Exit

    bad = table[table["verdict"] == "violation"]
    if bad.empty:
        return int(Exit.OK)
    if (bad["epsilon_provable"].astype(float) < math.inf).any():
        return int(Exit.PROVABLE_VIOLATED)
    return int(Exit.CLAIM_VIOLATED)


def verdict_lines(table: pd.DataFrame) -> list[str]:
    """One line per verdict count, then one per violation with its finding."""
    counts = table["verdict"].value_counts()
    lines = ["replay: " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v in counts)]
    for r in table[table["verdict"] == "violation"].itertuples():
        lines.append(f"replay: {r.algorithm} at ε = {r.epsilon:g}: {r.finding}")
    return lines


def write_replay(table: pd.DataFrame, out) -> list[Path]:
    """replay.csv and replay.md under ``out`` (atomic writes)."""
    from ..results import atomic_write_text, to_csv

    out = Path(out)
    atomic_write_text(out / "replay.csv", to_csv(table))
    atomic_write_text(out / "replay.md", replay_markdown(table))
    return [out / "replay.csv", out / "replay.md"]
