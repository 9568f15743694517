"""``plot``: the figure's kind and its options, refused before any work when none of the
spec's algorithms can feed it or matplotlib cannot draw its text."""

from __future__ import annotations

from typing import Any

from ..errors import SpecError, did_you_mean
from ..experiments import ALGORITHMS
from ..plotting.kinds import KINDS, LINE_COLUMNS
from .fields import _check_keys, _mapping
from .model import PlotSpec

#: the defaults of every plot key
DEFAULT = PlotSpec()


#: every plot kind (dpcluster/plotting/kinds.py)
PLOT_KINDS = tuple(KINDS)

PLOT_KEYS = {"kind", "log_y", "log_x", "x", "title", "xlabel"}


def _check_plot_feeds(file: str, kind: str, x, algorithms, datasets) -> None:
    """Refuse a plot kind that none of the spec's algorithms can feed, and a ``lines`` x
    that is neither a parameter nor a run column: the figure would fail after all the work."""
    plugins = any(a.name not in ALGORITHMS for a in algorithms)
    feeders, what = KINDS[kind].feeds, KINDS[kind].carries
    if feeders and not plugins:
        if not any(a.name in feeders for a in algorithms):
            raise SpecError(
                file,
                "plot.kind",
                kind,
                f"draws {what}, which only {', '.join(feeders)} report; "
                "none of the spec's algorithms does",
            )
    if KINDS[kind].x == "one" and not plugins:
        known = set(LINE_COLUMNS)
        for a in algorithms:
            known |= set(a.kwargs)
        for ds in datasets:
            known |= set(ds.kwargs)
        if x[0] not in known:
            raise SpecError(
                file,
                "plot.x",
                x[0],
                "is no parameter or run column of this spec",
                did_you_mean(str(x[0]), sorted(known)),
            )


def _undrawable(text: str) -> str | None:
    """Why matplotlib cannot draw ``text`` (a pair of ``$`` starts mathtext), or None."""
    if "$" not in text:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure()
    canvas = FigureCanvasAgg(fig)
    fig.text(0, 0, text)
    try:
        canvas.draw()
    except ValueError as exc:
        return f"cannot be drawn: matplotlib reads $…$ as math ({str(exc).splitlines()[-1]})"
    return None


def parse_plot(file: str, raw: Any, algorithms, datasets) -> PlotSpec:
    """The ``plot`` section as a :class:`PlotSpec`; its defaults are the dataclass's."""
    plot_raw = _mapping(file, "plot", raw or {})
    _check_keys(file, "plot", plot_raw, PLOT_KEYS)
    kind = plot_raw.get("kind", DEFAULT.kind)
    if kind not in PLOT_KINDS:
        raise SpecError(
            file, "plot.kind", kind, "unknown plot kind", did_you_mean(str(kind), PLOT_KINDS)
        )
    x = plot_raw.get("x", [])
    x = [x] if isinstance(x, str) else x
    needs = KINDS[kind].x
    if needs == "k_or_d" and (not x or any(v not in ("k", "d") for v in x)):
        raise SpecError(
            file,
            "plot.x",
            plot_raw.get("x"),
            f"{kind} needs x: a list of dataset parameters among 'k', 'd'",
        )
    if needs == "one" and len(x) != 1:
        raise SpecError(
            file,
            "plot.x",
            plot_raw.get("x"),
            f"{kind} needs x: one algorithm "
            "parameter, dataset parameter or run column (e.g. s, d, epsilon, step)",
        )
    _check_plot_feeds(file, kind, x, algorithms, datasets)
    log_y = plot_raw.get("log_y", DEFAULT.log_y)
    if not isinstance(log_y, bool):
        raise SpecError(file, "plot.log_y", log_y, "must be true or false")
    log_x = plot_raw.get("log_x", DEFAULT.log_x)
    if not isinstance(log_x, bool):
        raise SpecError(file, "plot.log_x", log_x, "must be true or false")
    for key in ("title", "xlabel"):
        text = plot_raw.get(key, "")
        if not isinstance(text, str):
            raise SpecError(file, f"plot.{key}", text, "must be a string")
        if problem := _undrawable(text):
            raise SpecError(file, f"plot.{key}", text, problem, "write \\$ for a dollar sign")
    plot = PlotSpec(
        kind=kind,
        log_y=log_y,
        x=tuple(x),
        title=str(plot_raw.get("title", DEFAULT.title)),
        log_x=log_x,
        xlabel=str(plot_raw.get("xlabel", DEFAULT.xlabel)),
    )
    return plot
