"""Scatter figures of 2-D clusterings (Paper B Figure 7): the data's points coloured by a
run's saved labels."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from .common import plt, save, series_labels


def _matched(labels: np.ndarray, reference: np.ndarray | None) -> np.ndarray:
    """``labels`` renumbered so that the cluster overlapping a reference class most takes
    that class's number (Hungarian matching on the contingency table), so the same group
    has the same colour in every panel; noise (-1) stays -1."""
    if reference is None:
        return labels
    from scipy.optimize import linear_sum_assignment

    ours = [c for c in np.unique(labels) if c >= 0]
    theirs = list(np.unique(reference))
    overlap = np.array([[np.sum((labels == a) & (reference == b)) for b in theirs] for a in ours])
    rows, cols = linear_sum_assignment(-overlap) if len(ours) else ([], [])
    new = {ours[r]: int(theirs[c]) for r, c in zip(rows, cols)}
    spare = iter(range(max(theirs, default=0) + 1, 10**6))
    out = np.array([-1 if v < 0 else new.get(v, -2) for v in labels])
    for a in ours:
        if a not in new:
            out[labels == a] = next(spare)
    return out


def scatter(
    runs: pd.DataFrame, out: Path, stem: str, title: str = "", datasets: dict | None = None
) -> list[Path]:
    """2-D datasets: one row of panels per dataset, one panel per variant (and ε), points
    coloured by the first run's labels (runs saved with ``save_labels``), matched to the
    data's classes so a group keeps its colour across panels; noise points grey. Points are
    reloaded through the spec's dataset entries (``datasets``: display key -> DatasetSpec)."""
    from .. import data

    datasets = datasets or {}
    runs = runs[runs["labels"].notna()] if "labels" in runs else runs.iloc[:0]
    firsts = runs.groupby(["dataset", "variant", "epsilon"], sort=False, dropna=False).head(1)
    firsts = firsts.assign(_series=series_labels(firsts, "save_labels"))
    rows = list(dict.fromkeys(firsts["dataset"])) or [""]
    ncols = max([int((firsts["dataset"] == r).sum()) for r in rows] + [1])
    fig, axes = plt.subplots(
        len(rows), ncols, figsize=(3.4 * ncols, 3.3 * len(rows)), squeeze=False
    )
    for ax in axes.flat:
        ax.set_visible(False)
    palette = plt.get_cmap("tab10")
    noise = False
    for r, key in enumerate(rows):
        panel = firsts[firsts["dataset"] == key]
        if not len(panel):
            continue
        ds = data.load(datasets[key].name, **datasets[key].kwargs)
        for ax, (_, row) in zip(axes[r], panel.iterrows()):
            ax.set_visible(True)
            lab = _matched(np.array(json.loads(row["labels"])), ds.classes)
            colours = [palette(v % 10) if v >= 0 else (0.7, 0.7, 0.7, 1.0) for v in lab]
            noise = noise or bool(np.any(lab < 0))
            ax.scatter(ds.raw[:, 0], ds.raw[:, 1], c=colours, s=6)
            eps = "" if not math.isfinite(row["epsilon"]) else f", ε={row['epsilon']:g}"
            ax.set_title(f"{row['_series']}{eps}", fontsize=8)
            ax.set_xticks([])
            ax.set_yticks([])
        axes[r][0].set_ylabel(panel["dataset_label"].iloc[0], fontsize=9)
    if noise:
        fig.text(0.5, 0.0, "grey: noise points (in no cluster)", ha="center", fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save(fig, out, stem)
