"""Figures drawn from ``summary.csv`` only — no computation, so ``dpcluster plot`` can redraw.

Kinds:
* ``nicv_vs_epsilon``: one panel per dataset, NICV (mean, 95% CI band) vs ε on a log x
  axis, one line per private variant, the Lloyd baseline (min over init sets) as a dashed
  horizontal line. Stand-in datasets carry "(stand-in …)" in the panel title.
* ``gap_vs_param``: one panel per dataset parameter in ``plot.x`` (k, d): the mean of
  NICV(method) − NICV(baseline of the same dataset), averaged over the other parameters
  (each panel's title names them); ε is in a series' name only when it varies.
* ``nicv_vs_step`` (Fig. 4), ``nicv_vs_block`` (Fig. 3), ``time_vs_epsilon`` (Fig. 7):
  one panel per dataset, x = iteration / block size / ε.
* ``lines`` (Paper B Figs. 3, 5, 6, 8): the primary metric vs ``plot.x``, a parameter or
  column; ``scatter`` (B Fig. 7): 2-D points coloured by saved labels; ``table`` (Table
  III): mean ± std of every metric as CSV and Markdown.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from ..errors import ResultsError
from .common import (
    ci_band,
    figure_legend,
    label_within_a_decade,
    log_ticks,
    metric_label,
    plt,
    save,
    series_labels,
    styles,
    x_values,
)
from .points import scatter
from .table import table

#: axis labels for the summary's own column names
AXIS_NAMES = {"epsilon": "ε"}


def _lloyd_from_points(summary: pd.DataFrame) -> pd.Series:
    """Rows of Lloyd started from data points (``init: points``), not the shared sets."""

    return (summary["algorithm"] == "lloyd") & summary["params"].map(
        lambda p: isinstance(p, str) and json.loads(p).get("init") == "points"
    )


def _baseline(summary: pd.DataFrame) -> pd.Series:
    """Per dataset: the min NICV of Lloyd from the shared init sets (docs/methods.md A0: the
    paper's baseline)."""
    base = summary[(summary["algorithm"] == "lloyd") & ~_lloyd_from_points(summary)]
    return base.groupby("dataset")["min"].min()


def _reference_baseline(summary: pd.DataFrame) -> pd.Series:
    """Per dataset: the min NICV of every Lloyd run, data-point starts included."""
    return summary[summary["algorithm"] == "lloyd"].groupby("dataset")["min"].min()


def nicv_vs_epsilon(
    summary: pd.DataFrame, out: Path, stem: str, title: str = "", log_y: bool = True
) -> list[Path]:
    datasets = list(dict.fromkeys(summary["dataset"]))
    base, best = _baseline(summary), _reference_baseline(summary)
    ncols = min(3, len(datasets))
    nrows = math.ceil(len(datasets) / ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=_panel_size(len(datasets), ncols, nrows), squeeze=False
    )
    private = summary[np.isfinite(summary["epsilon"])].copy()
    private["_series"] = series_labels(private, "epsilon")
    style = styles(private["_series"])
    metric = str(summary["metric"].iloc[0]) if "metric" in summary else "nicv"
    kmeans = summary[summary["algorithm"] == "kmeans"].groupby("dataset")["mean"].min()
    for ax in list(axes.flat)[len(datasets) :]:
        ax.set_visible(False)
    for ax, ds in zip(axes.flat, datasets):
        sub = private[private["dataset"] == ds]
        for name, g in sub.groupby("_series", sort=False):
            g = g.sort_values("epsilon")
            ax.plot(g["epsilon"], g["mean"], label=name, **style[name])
            ci_band(ax, g["epsilon"], g["ci95_low"], g["ci95_high"], style[name]["color"])
        if ds not in base.index and ds in kmeans.index:  # the estimator pipeline's baseline
            ax.axhline(kmeans[ds], color="k", ls="--", lw=1, label="baseline (k-means)")
        if ds in base.index:
            ax.axhline(base[ds], color="k", ls="--", lw=1, label="baseline (Lloyd, min)")
            if best[ds] < base[ds] * (1 - 1e-3):  # visibly lower only
                ax.axhline(best[ds], color="k", ls=":", lw=1, label="Lloyd from data points (min)")
        label = summary.loc[summary["dataset"] == ds, "dataset_label"].iloc[0]
        ax.set_title(label, fontsize=10)
        ax.set_xscale("log")
        log_ticks(ax, sub["epsilon"])
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel(metric_label(metric))
        ax.grid(alpha=0.3, which="both")
    figure_legend(fig, list(axes.flat)[: len(datasets)], band=True)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save(fig, out, stem)


def gap_vs_param(
    summary: pd.DataFrame,
    out: Path,
    stem: str,
    xs: tuple[str, ...],
    title: str = "",
    log_y: bool = False,
) -> list[Path]:
    base = _baseline(summary)
    priv = summary[np.isfinite(summary["epsilon"]) & summary["dataset"].isin(base.index)].copy()
    priv["gap"] = priv["mean"] - priv["dataset"].map(base)
    # ε joins a series' name only when the figure has more than one (the title gives it)
    several_eps = priv["epsilon"].nunique() > 1
    priv["series"] = [
        f"{v}, ε={e:g}" if several_eps else v
        for v, e in zip(series_labels(priv, "epsilon"), priv["epsilon"])
    ]
    style = styles(priv["series"])
    floor = _log_floor(priv, xs) if log_y else None
    fig, axes = plt.subplots(1, len(xs), figsize=(5.6 * len(xs), 3.8), squeeze=False)
    for ax, x in zip(axes.flat, xs):
        for name, g in priv.groupby("series", sort=False):
            m = g.groupby(x)["gap"].mean().sort_index()
            if floor is None:
                ax.plot(m.index, m.values, label=name, **style[name])
                continue
            # a gap at or below the floor (a method at the baseline) is drawn on the floor
            # with an open marker, not stretched across decades by a symlog axis
            ax.plot(m.index, np.maximum(m.values, floor), label=name, **style[name])
            low = m.values <= floor
            if low.any():
                ax.plot(
                    m.index[low],
                    np.full(low.sum(), floor),
                    ls="none",
                    marker=style[name]["marker"],
                    ms=7,
                    mfc="white",
                    color=style[name]["color"],
                )
        if floor is not None:
            ax.plot(
                [],
                [],
                ls="none",
                marker="o",
                mfc="white",
                color="grey",
                label=f"open: gap ≤ {floor:g}, at the baseline",
            )
        averaged = [o for o in xs if o != x and o in priv and priv[o].nunique() > 1]
        if averaged:
            ax.set_title(f"mean over {', '.join(averaged)}", fontsize=9)
        ax.set_xlabel(x)
        ax.set_ylabel("NICV − baseline (normalised units²)")
        if x in ("k", "d", "N"):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if log_y:
            ax.set_yscale("log")
            label_within_a_decade(ax)
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    figure_legend(fig, list(axes.flat))
    return save(fig, out, stem)


def _panel_size(panels: int, ncols: int, nrows: int) -> tuple[float, float]:
    """Inches of a grid of dataset panels: a lone panel gets the width its legend below
    needs, so the plot fills the canvas rather than a corner of it."""
    if panels == 1:
        return (7.2, 4.6)
    return (4.6 * ncols, 3.6 * nrows)


def _log_floor(priv: pd.DataFrame, xs) -> float | None:
    """The floor of a log gap axis: a power of ten below half the smallest positive mean
    gap drawn, or None when every drawn gap is positive (nothing needs a floor)."""
    gaps = np.concatenate(
        [g.groupby(x)["gap"].mean().to_numpy() for x in xs for _, g in priv.groupby("series")]
    )
    positive = gaps[gaps > 0]
    if len(positive) == len(gaps) or not len(positive):
        return None if len(positive) else 1e-3
    return float(10.0 ** math.floor(math.log10(positive.min() / 2)))


def _panels(summary: pd.DataFrame, ylabel: str, title: str):
    """A grid of one panel per dataset; yields (axes, dataset, its rows)."""
    datasets = list(dict.fromkeys(summary["dataset"]))
    ncols = min(3, len(datasets))
    nrows = math.ceil(len(datasets) / ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=_panel_size(len(datasets), ncols, nrows), squeeze=False
    )
    for ax in list(axes.flat)[len(datasets) :]:
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


def _per_dataset_lines(
    rows: pd.DataFrame,
    out: Path,
    stem: str,
    x: str,
    param: str,
    y: str,
    ylabel: str,
    xlabel: str,
    title: str,
    log_x: bool,
    log_y: bool,
    baseline: pd.Series | None = None,
) -> list[Path]:
    """One panel per dataset; one line of ``y`` vs ``x`` per series (:func:`series_labels`
    with the swept parameter ``param`` left out); the baseline (per dataset) as a dashed
    line when given."""
    rows = rows.assign(_series=series_labels(rows, param) if len(rows) else [])
    fig, panels = _panels(rows, ylabel, title)
    style = styles(rows["_series"]) if len(rows) else {}
    for ax, ds, sub in panels:
        for name, g in sub.groupby("_series", sort=False):
            g = g.sort_values(x)
            ax.plot(g[x], g[y], label=name, **style[name])
        if baseline is not None and ds in baseline.index:
            ax.axhline(baseline[ds], color="k", ls="--", lw=1, label="baseline (Lloyd, min)")
        ax.set_xlabel(xlabel)
        if log_x:
            ax.set_xscale("log")
            log_ticks(ax, sub[x])
        if log_y:
            ax.set_yscale("log")
    figure_legend(fig, [ax for ax, _, _ in panels])
    fig.tight_layout()
    return save(fig, out, stem)


def nicv_vs_step(
    summary: pd.DataFrame, out: Path, stem: str, title: str = "", log_y: bool = True
) -> list[Path]:
    """Figure 4: mean NICV after each iteration (Lloyd over init sets, Gene over runs)."""
    traced = summary[summary["step"].notna()] if "step" in summary else summary.iloc[:0]
    return _per_dataset_lines(
        traced,
        out,
        stem,
        "step",
        "step",
        "mean",
        "NICV (normalised units²)",
        "iteration",
        title,
        False,
        log_y,
        _baseline(summary),
    )


def nicv_vs_block(
    summary: pd.DataFrame, out: Path, stem: str, title: str = "", log_y: bool = True
) -> list[Path]:
    """Figure 3: mean NICV vs block size (log x) for GkM, SAG and Noise."""
    blocks = summary[summary["block_size_mean"].notna()]
    return _per_dataset_lines(
        blocks,
        out,
        stem,
        "block_size_mean",
        "block",
        "mean",
        "NICV (normalised units²)",
        "block size (records)",
        title,
        True,
        log_y,
        _baseline(summary),
    )


def time_vs_epsilon(
    summary: pd.DataFrame, out: Path, stem: str, title: str = "", log_y: bool = True
) -> list[Path]:
    """Figure 7: mean wall-clock seconds per run vs ε (log x, log y), from ``timing.csv``."""
    timed = _read_beside(out, "timing.csv", "the seconds per run")
    timed = timed[np.isfinite(timed["epsilon"])]
    return _per_dataset_lines(
        timed,
        out,
        stem,
        "epsilon",
        "epsilon",
        "wall_time_s_mean",
        "wall time per run (s)",
        "ε",
        title,
        True,
        log_y,
    )


def lines(
    summary: pd.DataFrame,
    out: Path,
    stem: str,
    x: str,
    title: str = "",
    log_y: bool = False,
    log_x: bool = False,
    xlabel: str = "",
    metrics: tuple[str, ...] = (),
    family_of: dict[str, str] | None = None,
) -> list[Path]:
    """Metric means vs ``x``: one line per algorithm + the parameters that vary (and per ε
    when several). Panels: one per dataset family (``family_of``: dataset key -> the source
    name its spec entry gives); with a single family and several ``metrics``, one per metric
    instead (95% CI band on the primary metric)."""
    s = summary.copy()
    s["_x"] = x_values(s, x)
    # entries without x (a baseline beside a swept plugin) are reference levels, not lines:
    # labelled among themselves, drawn dashed across the panel
    flat = s["_x"].isna()
    s["_series"] = ""
    for part in (flat, ~flat):
        if part.any():
            s.loc[part, "_series"] = series_labels(s[part], x)
    eps = s["epsilon"].replace(math.inf, np.nan)
    if eps.nunique() > 1 and x != "epsilon":
        s["_series"] += eps.map(lambda e: "" if e != e else f", ε={e:g}")
    s["_panel"] = (
        s["dataset_label"]
        if x not in ("d", "k", "N")
        else s["dataset"].map(family_of or {}).fillna(s["dataset"])
    )
    primary = s["metric"].iloc[0] if "metric" in s else "value"
    families = list(dict.fromkeys(s["_panel"]))
    shown = [m for m in metrics if f"{m}_mean" in s.columns]
    if len(families) == 1 and len(shown) > 1:
        panels = [(families[0], m) for m in shown]
    else:
        panels = [(f, primary) for f in families]
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.8 * nrows), squeeze=False)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    style = styles(s["_series"])
    for ax, (family, metric) in zip(axes.flat, panels):
        sub = s[s["_panel"] == family]
        y = "mean" if metric == primary else f"{metric}_mean"
        for series, g in sub.groupby("_series", sort=False):
            g = g.sort_values("_x")
            c = style[series]["color"]
            if g["_x"].isna().all():
                if len(g) == 1:  # one level: a dashed reference across the panel
                    ax.axhline(g[y].iloc[0], ls="--", lw=1, label=series, color=c)
                continue
            ax.plot(g["_x"], g[y], label=series, **style[series])
            if metric == primary:
                ci_band(ax, g["_x"], g["ci95_low"], g["ci95_high"], c)
        ax.set_title(
            family if len(families) > 1 or len(panels) == 1 else f"{family}: {metric}", fontsize=10
        )
        ax.set_xlabel(xlabel or AXIS_NAMES.get(x, x))
        ax.set_ylabel(metric_label(metric))
        if log_x:
            ax.set_xscale("log")
            log_ticks(ax, sub["_x"])
        elif sub["_x"].dropna().map(float.is_integer).all():  # d, s, k: whole numbers
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if log_y:
            ax.set_yscale("log")
        ax.grid(alpha=0.3, which="both")
    figure_legend(fig, list(axes.flat)[: len(panels)], band=any(m == primary for _, m in panels))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save(fig, out, stem)


# --- one drawer per kind (dpcluster/plotting/kinds.py), called as draw(spec, summary, out)


def _title(spec) -> str:
    return spec.plot.title or spec.name


def draw_nicv_vs_epsilon(spec, summary, out):
    return nicv_vs_epsilon(summary, out, "figure", _title(spec), spec.plot.log_y)


def draw_gap_vs_param(spec, summary, out):
    return gap_vs_param(summary, out, "figure", spec.plot.x, _title(spec), spec.plot.log_y)


def draw_nicv_vs_step(spec, summary, out):
    return nicv_vs_step(summary, out, "figure", _title(spec), spec.plot.log_y)


def draw_nicv_vs_block(spec, summary, out):
    return nicv_vs_block(summary, out, "figure", _title(spec), spec.plot.log_y)


def draw_time_vs_epsilon(spec, summary, out):
    return time_vs_epsilon(summary, out, "figure", _title(spec), spec.plot.log_y)


def draw_lines(spec, summary, out):
    p = spec.plot
    family_of = {ds.key: ds.name for ds in spec.datasets}
    return lines(
        summary,
        out,
        "figure",
        p.x[0],
        _title(spec),
        p.log_y,
        p.log_x,
        p.xlabel,
        spec.metrics,
        family_of,
    )


def draw_scatter(spec, summary, out):
    keys = {ds.key: ds for ds in spec.datasets}
    runs = _read_beside(out, "runs.csv", "every run's saved labels")
    return scatter(runs, out, "figure", _title(spec), keys)


def _read_beside(out: Path, name: str, holds: str) -> pd.DataFrame:
    """A file of the results folder that a figure needs beside summary.csv; a folder
    without it (a copy of the summary alone) is refused in one line."""
    path = out / name
    if not path.is_file():
        raise ResultsError(
            f"{path}: not found; this figure is drawn from {holds}, which a run writes "
            "there (run the spec into this folder first)"
        )
    return pd.read_csv(path)


def draw_table(spec, summary, out):
    return table(summary, out, "table", spec.metrics)
