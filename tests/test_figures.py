"""Camera-ready figures: plain numbers on log axes, a style of its own for every series,
units on every metric axis, and a log gap axis that does not stretch a gap at the baseline
across decades (dpcluster/plotting/)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dpcluster.plotting import common, figures


def _summary(gaps: dict[str, list[float]]) -> pd.DataFrame:
    """A Figure-2-like summary: one dataset per d = 2..4, Lloyd's baseline 1.0 on each,
    and each method's mean at 1 + its gap."""
    rows = []
    for d in (2, 3, 4):
        ds = f"synthetic(d={d})"
        rows.append({"dataset": ds, "algorithm": "lloyd", "epsilon": math.inf, "mean": 1.0, "d": d})
        for name, values in gaps.items():
            rows.append(
                {
                    "dataset": ds,
                    "algorithm": name,
                    "epsilon": 1.0,
                    "mean": 1.0 + values[d - 2],
                    "d": d,
                }
            )
    frame = pd.DataFrame(rows)
    return frame.assign(
        min=frame["mean"],
        dataset_label=frame["dataset"],
        params="{}",
        variant=frame["algorithm"],
        metric="nicv",
        ci95_low=frame["mean"],
        ci95_high=frame["mean"],
    )


@pytest.fixture
def drawn(monkeypatch):
    """The figure a drawing function saves, with matplotlib's tick labels computed."""
    out = {}

    def keep(fig, path, stem):
        common.plain_log_labels(fig)
        fig.canvas.draw()
        out["fig"] = fig
        return []

    monkeypatch.setattr(figures, "save", keep)
    return out


def test_a_gap_at_or_below_the_baseline_sits_on_a_log_floor_with_an_open_marker(tmp_path, drawn):
    summary = _summary({"dplloyd": [0.1, 0.2, 0.4], "eugkm": [-0.001, 0.003, 0.05]})
    figures.gap_vs_param(summary, tmp_path, "figure", ("d",), log_y=True)
    ax = drawn["fig"].axes[0]
    assert ax.get_yscale() == "log"  # not symlog: −0.001 is not drawn a decade below 0
    floor = 1e-3  # a power of ten below half the smallest positive gap, 0.003
    lowest = min(min(line.get_ydata()) for line in ax.get_lines() if len(line.get_ydata()))
    assert lowest == pytest.approx(floor)
    handles, labels = ax.get_legend_handles_labels()
    assert any(label.startswith("open: gap ≤ 0.001") for label in labels)
    assert ax.get_ylabel() == "NICV − baseline (normalised units²)"


def test_log_axes_read_as_plain_numbers(tmp_path, drawn):
    summary = _summary({"dplloyd": [10.0, 200.0, 3000.0]})
    figures.gap_vs_param(summary, tmp_path, "figure", ("d",), log_y=True)
    ax = drawn["fig"].axes[0]
    texts = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert texts and not any("10^" in t or "times" in t or "$" in t for t in texts), texts
    assert {"10", "100", "1000"} <= set(texts)


def test_every_series_has_its_own_colour_and_marker():
    names = [f"method {i}" for i in range(12)]
    style = common.styles(names)
    pairs = {(tuple(s["color"]), s["marker"]) for s in style.values()}
    assert len(pairs) == 12 and len({s["marker"] for s in style.values()}) == 12


@pytest.mark.parametrize(
    ("metric", "label"),
    [("nicv", "NICV (normalised units²)"), ("cost", "cost per record (data units²)")],
)
def test_a_metric_axis_says_its_units(metric, label):
    assert common.metric_label(metric) == label
