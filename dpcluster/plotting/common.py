"""What every figure shares: matplotlib off-screen, one colour and marker per series, one
legend per figure, short log grids ticked at their values, plain numbers on log axes,
metric labels with units, series labels, and atomic saving."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..results import atomic_write_bytes  # noqa: E402

#: characters a legend below the panels spans, split into columns of its longest label
LEGEND_WIDTH = 150

#: the shaded band's entry in every legend that has one
BAND_LABEL = "shaded: 95 % CI of the mean"


#: one marker per series, cycled with the colours so that no two series of a figure share
#: both (and a series stays told apart in grey print)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")

#: what each metric's axis says: its name and its units
METRIC_LABELS = {
    "nicv": "NICV (normalised units²)",
    "cost": "cost per record (data units²)",
    "ari": "ARI",
    "nmi": "NMI",
    "ami": "AMI",
    "mae": "mean absolute error (data units)",
    "rmse": "RMS error (data units)",
}


def metric_label(metric: str) -> str:
    """The axis label of ``metric``: its name with its units (the metric itself when the
    table does not know it)."""
    return METRIC_LABELS.get(metric, metric.replace("_", " "))


def colours(names) -> dict:
    """One colour per series name for the whole figure, so a series has the same colour
    in every panel (tab10, then tab20 beyond ten series)."""
    names = list(dict.fromkeys(names))
    cmap = plt.get_cmap("tab10" if len(names) <= 10 else "tab20")
    return {n: cmap(i % cmap.N) for i, n in enumerate(names)}


def styles(names) -> dict:
    """``ax.plot`` keywords per series name: its colour (:func:`colours`) and a marker of
    its own, the same in every panel."""
    names = list(dict.fromkeys(names))
    colour = colours(names)
    return {
        n: {"color": colour[n], "marker": MARKERS[i % len(MARKERS)], "ms": 4}
        for i, n in enumerate(names)
    }


def figure_legend(fig, axes, band: bool = False) -> None:
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
            # long labels get fewer columns, so the legend is no wider than the figure
            ncol=max(1, min(4, len(labels), LEGEND_WIDTH // max(map(len, labels)))),
            fontsize=8,
            frameon=False,
        )


def ci_band(ax, x, low, high, color) -> None:
    """The 95 % CI of a series: a shaded band, or an error bar where the series has a
    single x (a band of one point has no width)."""
    x, low, high = (np.asarray(v, dtype=float) for v in (x, low, high))
    if len(x) > 1:
        ax.fill_between(x, low, high, alpha=0.2, color=color)
    elif len(x) == 1:
        mid = (low + high) / 2
        ax.errorbar(x, mid, yerr=(high - low) / 2, fmt="none", ecolor=color, alpha=0.5, capsize=4)


def log_ticks(ax, values) -> None:
    """A log axis ticked at the data's own x values when there are few of them (labels as
    plain numbers, no minor labels), so short grids get no overlapping labels."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    xs = sorted({float(v) for v in values if np.isfinite(v) and v > 0})
    if 1 <= len(xs) <= 8:
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def label_within_a_decade(ax) -> None:
    """A log (or symlog) y axis whose data lie between two powers of ten has no labelled
    tick: label it at a few round values inside the range instead, as plain numbers."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator

    lo, hi = sorted(ax.get_ylim())
    if lo <= 0 or math.floor(math.log10(lo)) != math.floor(math.log10(hi)):
        return
    ticks = [v for v in MaxNLocator(nbins=4).tick_values(lo, hi) if lo <= v <= hi]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))


def plain_log_labels(fig) -> None:
    """Every log axis of ``fig`` that keeps matplotlib's own labels gets them as plain
    numbers ("20000", "0.05") instead of "2×10⁴": the ticks matplotlib would label, written
    as a reader writes them."""
    from matplotlib.ticker import Formatter, LogFormatterSciNotation

    class Plain(Formatter):
        def __init__(self, inner):
            self.inner = inner

        def set_axis(self, axis):
            super().set_axis(axis)
            self.inner.set_axis(axis)

        def set_locs(self, locs):
            self.inner.set_locs(locs)

        def __call__(self, x, pos=None):
            return f"{x:g}" if self.inner(x, pos) else ""

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() != "log":
                continue
            for minor in (False, True):
                current = axis.get_minor_formatter() if minor else axis.get_major_formatter()
                if type(current) is LogFormatterSciNotation:
                    plain = Plain(current)
                    if minor:
                        axis.set_minor_formatter(plain)
                    else:
                        axis.set_major_formatter(plain)


def save(fig, out: Path, stem: str) -> list[Path]:
    plain_log_labels(fig)
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


def x_values(sub: pd.DataFrame, x: str) -> pd.Series:
    """x from a summary column (d, k, epsilon, step) or from the variant's params JSON."""
    if x in sub.columns:
        return sub[x].astype(float)
    return sub["params"].map(lambda p: float(json.loads(p).get(x, math.nan)))


def _entry(algorithm: str):
    """The registry's entry of ``algorithm``, or None for one it does not know (a plugin
    folder that is gone)."""
    from ..experiments import lookup

    try:
        return lookup(algorithm)
    except (KeyError, TypeError):
        return None


def _shown(value) -> str:
    """A parameter value as a legend writes it: 2.0 as 2, true/false in lower case."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def series_labels(s: pd.DataFrame, x: str) -> pd.Series:
    """The papers' name of each row's algorithm (its entry's ``title``) and the parameters
    (other than x) that vary within the figure, by their symbols: "EUGkM, θ=2". A
    parameter is left out of a series' label where it is at its default and does not vary
    among the same algorithm's series that agree on the other parameters (κ on the plain
    estimate, which ignores it; DPLloyd's 5 iterations beside PGkM's 8)."""
    params = list(s["params"].map(json.loads))
    keys = sorted({k for p in params for k in p if k != x})
    # a parameter varies when the series that have it differ in it: one that only some
    # entries have (DPLloyd's min_count beside a plugin) is not told apart by its absence
    varying = [k for k in keys if len({json.dumps(p[k]) for p in params if k in p}) > 1]

    rows = list(zip(s["algorithm"], params))

    def moves(alg, k, p) -> bool:
        """k takes several values among alg's series that agree on the other parameters."""
        others = [k2 for k2 in varying if k2 != k]
        peers = [
            q for a, q in rows if a == alg and k in q and all(q.get(o) == p.get(o) for o in others)
        ]
        return len({json.dumps(q[k]) for q in peers}) > 1

    entries = {alg: _entry(alg) for alg in set(s["algorithm"])}

    def label(alg, p):
        info = entries[alg]
        default = {k: q.default for k, q in info.params.items()} if info else {}
        symbol = {k: q.symbol or k for k, q in info.params.items()} if info else {}
        shown = [
            f"{symbol.get(k, k)}={_shown(p[k])}"
            for k in varying
            if k in p and (moves(alg, k, p) or k not in default or p[k] != default[k])
        ]
        return ", ".join([(info.title if info else "") or alg, *shown])

    return pd.Series([label(a, p) for a, p in rows], index=s.index)
