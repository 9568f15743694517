"""Figures drawn from ``summary.csv`` only — no computation, so ``dpcluster plot`` can redraw.

Kinds:
* ``nicv_vs_epsilon``: one panel per dataset, NICV (mean, 95% CI band) vs ε on a log x
  axis, one line per private variant, the Lloyd baseline (min over init sets) as a dashed
  horizontal line. Stand-in datasets carry "(stand-in …)" in the panel title.
* ``gap_vs_param``: one panel per dataset parameter in ``plot.x`` (k, d): the mean of
  NICV(method) − NICV(baseline of the same dataset), averaged over the other parameters.
* ``nicv_vs_step`` (Fig. 4), ``nicv_vs_block`` (Fig. 3), ``time_vs_epsilon`` (Fig. 7):
  one panel per dataset, x = iteration / block size / ε.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .results import atomic_write_bytes  # noqa: E402


def _baseline(summary: pd.DataFrame) -> pd.Series:
    """Per dataset: the min NICV of the non-private Lloyd runs (METHODS A0 baseline)."""
    base = summary[summary["algorithm"] == "lloyd"]
    return base.groupby("dataset")["min"].min()


def _save(fig, out: Path, stem: str) -> list[Path]:
    import io

    paths = []
    for ext in ("png", "pdf"):
        buf = io.BytesIO()
        meta = {"CreationDate": None} if ext == "pdf" else {"Software": None}
        fig.savefig(buf, format=ext, dpi=150, bbox_inches="tight", metadata=meta)
        path = out / f"{stem}.{ext}"
        atomic_write_bytes(path, buf.getvalue())
        paths.append(path)
    plt.close(fig)
    return paths


def nicv_vs_epsilon(summary: pd.DataFrame, out: Path, stem: str, title: str = "",
                    log_y: bool = True) -> list[Path]:
    datasets = list(dict.fromkeys(summary["dataset"]))
    base = _baseline(summary)
    ncols = min(3, len(datasets))
    nrows = math.ceil(len(datasets) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), squeeze=False)
    for ax, ds in zip(axes.flat, datasets):
        sub = summary[(summary["dataset"] == ds) & np.isfinite(summary["epsilon"])]
        for variant, g in sub.groupby("variant", sort=False):
            g = g.sort_values("epsilon")
            ax.plot(g["epsilon"], g["mean"], marker="o", ms=3, label=variant)
            ax.fill_between(g["epsilon"], g["ci95_low"], g["ci95_high"], alpha=0.2)
        if ds in base.index:
            ax.axhline(base[ds], color="k", ls="--", lw=1, label="baseline (Lloyd, min)")
        label = summary.loc[summary["dataset"] == ds, "dataset_label"].iloc[0]
        ax.set_title(label, fontsize=10)
        ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel("NICV")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(datasets):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, out, stem)


def gap_vs_param(summary: pd.DataFrame, out: Path, stem: str, xs: tuple[str, ...],
                 title: str = "", log_y: bool = False) -> list[Path]:
    base = _baseline(summary)
    priv = summary[np.isfinite(summary["epsilon"]) & summary["dataset"].isin(base.index)].copy()
    priv["gap"] = priv["mean"] - priv["dataset"].map(base)
    fig, axes = plt.subplots(1, len(xs), figsize=(5 * len(xs), 3.8), squeeze=False)
    for ax, x in zip(axes.flat, xs):
        for (variant, eps), g in priv.groupby(["variant", "epsilon"], sort=False):
            m = g.groupby(x)["gap"].mean().sort_index()
            ax.plot(m.index, m.values, marker="o", ms=3, label=f"{variant}, ε={eps:g}")
        ax.set_xlabel(x)
        ax.set_ylabel("NICV − baseline")
        if log_y:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, out, stem)


def _panels(summary: pd.DataFrame, ylabel: str, title: str):
    """A grid of one panel per dataset; yields (axes, dataset, its rows)."""
    datasets = list(dict.fromkeys(summary["dataset"]))
    ncols = min(3, len(datasets))
    nrows = math.ceil(len(datasets) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), squeeze=False)
    for ax in list(axes.flat)[len(datasets):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    panels = []
    for ax, ds in zip(axes.flat, datasets):
        sub = summary[summary["dataset"] == ds]
        ax.set_title(sub["dataset_label"].iloc[0], fontsize=10)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
        panels.append((ax, ds, sub))
    return fig, panels


def nicv_vs_step(summary: pd.DataFrame, out: Path, stem: str, title: str = "",
                 log_y: bool = True) -> list[Path]:
    """Figure 4: mean NICV after each iteration (Lloyd over init sets, Gene over runs)."""
    base = _baseline(summary)
    traced = summary[summary["step"].notna()] if "step" in summary else summary.iloc[:0]
    fig, panels = _panels(traced, "NICV", title)
    for ax, ds, sub in panels:
        for variant, g in sub.groupby("variant", sort=False):
            g = g.sort_values("step")
            ax.plot(g["step"], g["mean"], marker="o", ms=2, label=variant)
        if ds in base.index:
            ax.axhline(base[ds], color="k", ls="--", lw=1, label="baseline (Lloyd, min)")
        ax.set_xlabel("iteration")
        if log_y:
            ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, out, stem)


def nicv_vs_block(summary: pd.DataFrame, out: Path, stem: str, title: str = "",
                  log_y: bool = True) -> list[Path]:
    """Figure 3: mean NICV vs block size (log x) for GkM, SAG and Noise."""
    base = _baseline(summary)
    blocks = summary[summary["block_size_mean"].notna()]
    fig, panels = _panels(blocks, "NICV", title)
    for ax, ds, sub in panels:
        for alg, g in sub.groupby("algorithm", sort=False):
            g = g.sort_values("block_size_mean")
            ax.plot(g["block_size_mean"], g["mean"], marker="o", ms=3, label=alg)
        if ds in base.index:
            ax.axhline(base[ds], color="k", ls="--", lw=1, label="baseline (Lloyd, min)")
        ax.set_xscale("log")
        ax.set_xlabel("block size (records)")
        if log_y:
            ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, out, stem)


def time_vs_epsilon(summary: pd.DataFrame, out: Path, stem: str, title: str = "",
                    log_y: bool = True) -> list[Path]:
    """Figure 7: mean wall-clock seconds per run vs ε (log x, log y), from ``timing.csv``."""
    timed = pd.read_csv(out / "timing.csv")
    timed = timed[np.isfinite(timed["epsilon"])]
    fig, panels = _panels(timed, "seconds per run", title)
    for ax, _ds, sub in panels:
        for variant, g in sub.groupby("variant", sort=False):
            g = g.sort_values("epsilon")
            ax.plot(g["epsilon"], g["wall_time_s_mean"], marker="o", ms=3, label=variant)
        ax.set_xscale("log")
        ax.set_xlabel("ε")
        if log_y:
            ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, out, stem)


KINDS = {"nicv_vs_step": nicv_vs_step, "nicv_vs_block": nicv_vs_block,
         "time_vs_epsilon": time_vs_epsilon}


def render(spec, summary: pd.DataFrame, out: Path) -> list[Path]:
    """Draw the spec's figure from its summary table into ``out/figure.{png,pdf}``."""
    kind = spec.plot.kind
    title = spec.plot.title or spec.name
    if kind == "nicv_vs_epsilon":
        return nicv_vs_epsilon(summary, out, "figure", title, spec.plot.log_y)
    if kind == "gap_vs_param":
        return gap_vs_param(summary, out, "figure", spec.plot.x, title, spec.plot.log_y)
    if kind in KINDS:
        return KINDS[kind](summary, out, "figure", title, spec.plot.log_y)
    return []
