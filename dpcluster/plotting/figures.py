"""Figures drawn from ``summary.csv`` only — no computation, so ``dpcluster plot`` can redraw.

Kinds:
* ``nicv_vs_epsilon``: one panel per dataset, NICV (mean, 95% CI band) vs ε on a log x
  axis, one line per private variant, the Lloyd baseline (min over init sets) as a dashed
  horizontal line. Stand-in datasets carry "(stand-in …)" in the panel title.
* ``gap_vs_param``: one panel per dataset parameter in ``plot.x`` (k, d): the mean of
  NICV(method) − NICV(baseline of the same dataset), averaged over the other parameters.
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

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..results import atomic_write_bytes  # noqa: E402


def _lloyd_from_points(summary: pd.DataFrame) -> pd.Series:
    """Rows of Lloyd started from data points (``init: points``), not the shared sets."""
    import json

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


def _legend(ax, **kwargs) -> None:
    """A legend when the panel has labelled lines (a panel whose every value is NaN has none)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


#: the shaded band's entry in every legend that has one
BAND_LABEL = "shaded: 95 % CI of the mean"


def _colours(names) -> dict:
    """One colour per series name for the whole figure, so a series has the same colour
    in every panel (tab10, then tab20 beyond ten series)."""
    names = list(dict.fromkeys(names))
    cmap = plt.get_cmap("tab10" if len(names) <= 10 else "tab20")
    return {n: cmap(i % cmap.N) for i, n in enumerate(names)}


def _figure_legend(fig, axes, band: bool = False) -> None:
    """One legend for the whole figure (the series of every panel, each once), in the first
    unused panel when there is one, else below the panels; ``band`` adds the shaded
    band's meaning."""
    from matplotlib.patches import Patch

    handles, labels = [], []
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    if band:
        handles.append(Patch(facecolor="grey", alpha=0.2))
        labels.append(BAND_LABEL)
    if not handles:
        return
    spare = [ax for ax in fig.axes if not ax.get_visible()]
    if spare:
        spare[0].set_visible(True)
        spare[0].axis("off")
        spare[0].legend(handles, labels, loc="center", fontsize=8, frameon=False)
    else:
        fig.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=min(4, len(labels)),
            fontsize=8,
            frameon=False,
        )


def _log_ticks(ax, values) -> None:
    """A log axis ticked at the data's own x values when there are few of them (labels as
    plain numbers, no minor labels), so short grids get no overlapping labels."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    xs = sorted({float(v) for v in values if np.isfinite(v) and v > 0})
    if 1 < len(xs) <= 8:
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


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


def nicv_vs_epsilon(
    summary: pd.DataFrame, out: Path, stem: str, title: str = "", log_y: bool = True
) -> list[Path]:
    datasets = list(dict.fromkeys(summary["dataset"]))
    base, best = _baseline(summary), _reference_baseline(summary)
    ncols = min(3, len(datasets))
    nrows = math.ceil(len(datasets) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), squeeze=False)
    private = summary[np.isfinite(summary["epsilon"])]
    colour = _colours(private["variant"])
    for ax in list(axes.flat)[len(datasets) :]:
        ax.set_visible(False)
    for ax, ds in zip(axes.flat, datasets):
        sub = private[private["dataset"] == ds]
        for variant, g in sub.groupby("variant", sort=False):
            g = g.sort_values("epsilon")
            c = colour[variant]
            ax.plot(g["epsilon"], g["mean"], marker="o", ms=3, label=variant, color=c)
            ax.fill_between(g["epsilon"], g["ci95_low"], g["ci95_high"], alpha=0.2, color=c)
        if ds in base.index:
            ax.axhline(base[ds], color="k", ls="--", lw=1, label="baseline (Lloyd, min)")
            if best[ds] < base[ds] * (1 - 1e-3):  # visibly lower only
                ax.axhline(best[ds], color="k", ls=":", lw=1, label="Lloyd from data points (min)")
        label = summary.loc[summary["dataset"] == ds, "dataset_label"].iloc[0]
        ax.set_title(label, fontsize=10)
        ax.set_xscale("log")
        _log_ticks(ax, sub["epsilon"])
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel("NICV")
        ax.grid(alpha=0.3, which="both")
    _figure_legend(fig, list(axes.flat)[: len(datasets)], band=True)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, out, stem)


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
    fig, axes = plt.subplots(1, len(xs), figsize=(5 * len(xs), 3.8), squeeze=False)
    for ax, x in zip(axes.flat, xs):
        for (variant, eps), g in priv.groupby(["variant", "epsilon"], sort=False):
            m = g.groupby(x)["gap"].mean().sort_index()
            ax.plot(m.index, m.values, marker="o", ms=3, label=f"{variant}, ε={eps:g}")
        ax.set_xlabel(x)
        ax.set_ylabel("NICV − baseline")
        if log_y:  # a gap can be ≤ 0 (a method at the baseline): linear below 1e-3
            ax.set_yscale("symlog", linthresh=1e-3)
        ax.grid(alpha=0.3)
        _legend(ax, fontsize=7)
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
    series: str,
    y: str,
    ylabel: str,
    xlabel: str,
    title: str,
    log_x: bool,
    log_y: bool,
    baseline: pd.Series | None = None,
) -> list[Path]:
    """One panel per dataset; one line of ``y`` vs ``x`` per value of ``series``; the
    baseline (per dataset) as a dashed line when given."""
    fig, panels = _panels(rows, ylabel, title)
    colour = _colours(rows[series]) if len(rows) else {}
    for ax, ds, sub in panels:
        for name, g in sub.groupby(series, sort=False):
            g = g.sort_values(x)
            ax.plot(g[x], g[y], marker="o", ms=3, label=name, color=colour[name])
        if baseline is not None and ds in baseline.index:
            ax.axhline(baseline[ds], color="k", ls="--", lw=1, label="baseline (Lloyd, min)")
        ax.set_xlabel(xlabel)
        if log_x:
            ax.set_xscale("log")
            _log_ticks(ax, sub[x])
        if log_y:
            ax.set_yscale("log")
    _figure_legend(fig, [ax for ax, _, _ in panels])
    fig.tight_layout()
    return _save(fig, out, stem)


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
        "variant",
        "mean",
        "NICV",
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
        "algorithm",
        "mean",
        "NICV",
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
    timed = pd.read_csv(out / "timing.csv")
    timed = timed[np.isfinite(timed["epsilon"])]
    return _per_dataset_lines(
        timed,
        out,
        stem,
        "epsilon",
        "variant",
        "wall_time_s_mean",
        "seconds per run",
        "ε",
        title,
        True,
        log_y,
    )


def _x_values(sub: pd.DataFrame, x: str) -> pd.Series:
    """x from a summary column (d, k, epsilon, step) or from the variant's params JSON."""
    if x in sub.columns:
        return sub[x].astype(float)
    return sub["params"].map(lambda p: float(json.loads(p).get(x, math.nan)))


def _defaults(algorithm: str) -> dict:
    """The registry's parameter defaults of ``algorithm`` ({} for one it does not know)."""
    from ..experiments import lookup

    try:
        return {k: p.default for k, p in lookup(algorithm).params.items()}
    except (KeyError, TypeError):
        return {}


def _series_labels(s: pd.DataFrame, x: str) -> pd.Series:
    """algorithm + the parameters (other than x) that vary within the figure. A parameter
    is left out of a series' label where it is at its default and does not vary among the
    series that agree on the other parameters (κ on the plain estimate, which ignores it)."""
    params = list(s["params"].map(json.loads))
    keys = sorted({k for p in params for k in p if k != x})
    varying = [k for k in keys if len({json.dumps(p.get(k)) for p in params}) > 1]

    def moves(k, p) -> bool:
        others = [k2 for k2 in varying if k2 != k]
        peers = [q for q in params if all(q.get(o) == p.get(o) for o in others)]
        return len({json.dumps(q.get(k)) for q in peers}) > 1

    def label(alg, p):
        default = _defaults(alg)
        shown = ", ".join(
            f"{k}={p[k]}"
            for k in varying
            if k in p and (moves(k, p) or k not in default or p[k] != default[k])
        )
        return f"{alg}({shown})" if shown else alg

    return pd.Series([label(a, p) for a, p in zip(s["algorithm"], params)], index=s.index)


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
    s["_x"] = _x_values(s, x)
    s["_series"] = _series_labels(s, x)
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
    colour = _colours(s["_series"])
    for ax, (family, metric) in zip(axes.flat, panels):
        sub = s[s["_panel"] == family]
        y = "mean" if metric == primary else f"{metric}_mean"
        for series, g in sub.groupby("_series", sort=False):
            g = g.sort_values("_x")
            c = colour[series]
            ax.plot(g["_x"], g[y], marker="o", ms=3, label=series, color=c)
            if metric == primary:
                ax.fill_between(g["_x"], g["ci95_low"], g["ci95_high"], alpha=0.2, color=c)
        ax.set_title(
            family if len(families) > 1 or len(panels) == 1 else f"{family}: {metric}", fontsize=10
        )
        ax.set_xlabel(xlabel or x)
        ax.set_ylabel(metric)
        if log_x:
            ax.set_xscale("log")
            _log_ticks(ax, sub["_x"])
        if log_y:
            ax.set_yscale("log")
        ax.grid(alpha=0.3, which="both")
    _figure_legend(fig, list(axes.flat)[: len(panels)], band=any(m == primary for _, m in panels))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, out, stem)


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
    firsts = firsts.assign(_series=_series_labels(firsts, "save_labels"))
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
    return _save(fig, out, stem)


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
    head = "| " + " | ".join(df.columns) + " |"
    sep = "|" + "---|" * len(df.columns)
    body = ["| " + " | ".join(str(v) for v in row) + " |" for row in df.itertuples(index=False)]
    paths = [out / f"{stem}.csv", out / f"{stem}.md"]
    atomic_write_text(paths[0], to_csv(df))
    atomic_write_text(paths[1], "\n".join([head, sep, *body]) + "\n")
    return paths


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
    return scatter(pd.read_csv(out / "runs.csv"), out, "figure", _title(spec), keys)


def draw_table(spec, summary, out):
    return table(summary, out, "table", spec.metrics)
