"""Every registry entry runs through the harness on a tiny input, and every plot kind draws.

Each entry's rows are checked for their count (the entry's own ``count_runs``), their
columns (every metric the entry declares, and the privacy columns) and their value ranges
(NICV in [0, d·(2r)²], clustering scores in their ranges, errors ≥ 0).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcluster import harness, plotting, spec
from dpcluster.algorithms.comparators import diffprivlib_problem
from dpcluster.experiments import ALGORITHMS
from dpcluster.spec import AlgorithmSpec, DatasetSpec

ROOT = Path(__file__).resolve().parent.parent
TINY_A = DatasetSpec("synthetic", (("N", 200), ("d", 2), ("k", 3)))
BLOBS = DatasetSpec("blobs", (("N", 60), ("k", 3)))
LINE = DatasetSpec("uniform", (("N", 30), ("d", 2), ("lo", 0), ("hi", 25)))

#: entry -> (dataset, params, repeat); every entry of the registry must be here. Rows are
#: one per run, except where ROWS says otherwise.
TINY = {
    "lloyd": (TINY_A, {}, 1),
    "dplloyd": (TINY_A, {}, 2),
    "dplloyd_improved": (TINY_A, {}, 2),
    "eugkm": (TINY_A, {"max_iter": 5}, 2),
    "lloyd_steps": (TINY_A, {"steps": 4}, 1),
    "gkm": (TINY_A, {}, 3),
    "gkm_3k": (TINY_A, {}, 3),
    "gkm_sag": (TINY_A, {}, 3),
    "gkm_noise": (TINY_A, {}, 3),
    "pgkm": (TINY_A, {"pool": 10, "selected": 3, "iterations": 2}, 2),
    "gene": (TINY_A, {"pool": 10, "selected": 3, "iterations": 3}, 2),
    "hybrid": (TINY_A, {"lloyd_runs": 2, "force": True, "max_iter": 5}, 2),
    "lsh_splits": (TINY_A, {}, 2),
    "lsh_splits_gaussian": (TINY_A, {"n_init": 1}, 2),
    "dpm": (TINY_A, {"n_init": 1}, 2),
    "dplloyd_capped": (TINY_A, {}, 2),
    "pe_means": (TINY_A, {"n_init": 1, "generations": 3}, 2),
    "pe_lloyd": (TINY_A, {"n_init": 1, "generations": 3}, 2),
    "private_mean": (TINY_A, {}, 2),
    "diffprivlib": (TINY_A, {}, 2),
    "auto": (TINY_A, {}, 2),
    "bv_profile": (
        DatasetSpec("uniform", (("N", 2), ("d", 1), ("lo", 0), ("hi", 20))),
        {"s": 64, "step": 2.0, "pairs": 5},
        2,
    ),
    "bv_error": (LINE, {"s": 64, "pairs": 50, "method": "consistence"}, 2),
    "dpbv_error": (LINE, {"s": 64, "pairs": 50}, 2),
    "vertical_error": (LINE, {"s": 64, "t": 12.5, "pairs": 50}, 2),
    "kmeans": (BLOBS, {}, 2),
    "adp": (BLOBS, {}, 2),
    "rsp": (BLOBS, {}, 2),
    "kcluster": (BLOBS, {}, 2),
    "dp_kcluster": (BLOBS, {"s": 64}, 2),
    "dbscan": (BLOBS, {"radius": 0.2}, 2),
    "dp_dbscan": (BLOBS, {"s": 64, "radius": 0.2}, 2),
    "agglomerative": (BLOBS, {}, 2),
    "dp_agglomerative": (BLOBS, {"s": 64}, 2),
    "ldp_one_round": (BLOBS, {"levels": 2}, 2),
    "ldp_grid": (BLOBS, {"level": 2}, 2),
    "ldp_perturb": (BLOBS, {}, 2),
}

#: entries with more than one row per run: bv_profile one per true distance 0, 2, …, 20
#: (11) and repetition; gene one per iteration; lloyd_steps one per init set and step
ROWS = {"bv_profile": 11 * 2, "gene": 2 * 3, "lloyd_steps": 2 * 4}

#: metric -> (low, high) inclusive; NICV's bound is d·(2r)² = 8 for d = 2, r = 1
RANGES = {
    "nicv": (0.0, 8.0),
    "ari": (-1.0, 1.0),
    "nmi": (0.0, 1.0),
    "ami": (-1.0, 1.0),
    "homogeneity": (0.0, 1.0),
    "completeness": (0.0, 1.0),
    "v_measure": (0.0, 1.0),
    "silhouette": (-1.0, 1.0),
    "kmeans_cost": (0.0, math.inf),
    "mae": (0.0, math.inf),
    "rmse": (0.0, math.inf),
    "estimate": (0.0, math.inf),
}


#: entries that spend (ε, δ) only, and the δ their tiny case runs at
GAUSSIAN_ONLY = {"lsh_splits_gaussian": 1e-6}


def _algorithm(name: str, params: dict, repeat: int) -> AlgorithmSpec:
    """The entry with its defaults filled in, as the spec parser gives it to the harness."""
    full = {key: p.default for key, p in ALGORITHMS[name].params.items()} | params
    return AlgorithmSpec(name=name, params=tuple(sorted(full.items())), repeat=repeat)


def test_every_registry_entry_has_a_tiny_case():
    assert set(TINY) == set(ALGORITHMS)


@pytest.mark.parametrize("name", sorted(TINY))
def test_entry_runs_with_declared_rows_columns_and_ranges(name):
    ds, params, repeat = TINY[name]
    info = ALGORITHMS[name]
    if name == "diffprivlib" and (missing := diffprivlib_problem()):
        pytest.skip(missing)  # an optional comparator (the compare extra)
    eps = 2.0 if info.private else math.inf
    cell = harness.Cell(
        dataset=ds,
        algorithm=_algorithm(name, params, repeat),
        epsilon=eps,
        seed=3,
        n_init=2,
        init_method="uniform",
        delta=GAUSSIAN_ONLY.get(name, 0.0),
    )
    outcome = harness.run_cell(cell)
    assert outcome.error == ""
    rows = outcome.rows
    if name in GAUSSIAN_ONLY:
        assert np.all((rows["delta_provable"] > 0) & (rows["delta_provable"] <= cell.delta))
    assert len(rows) == ROWS.get(name, cell.n_runs)
    for metric in info.metrics:
        values = rows[metric].to_numpy(float)
        low, high = RANGES[metric]
        finite = values[np.isfinite(values)]
        # silhouette is undefined (NaN) when a method finds one cluster; nothing else may be
        assert metric == "silhouette" or finite.size == values.size, metric
        assert np.all((finite >= low - 1e-12) & (finite <= high + 1e-12)), (metric, finite)
    claimed = rows["epsilon_claimed"].to_numpy(float)
    provable = rows["epsilon_provable"].to_numpy(float)
    if not info.private or name == "gkm_noise":  # gkm_noise: Figure 3's diagnostic
        assert np.all(np.isinf(provable))
    elif name in ("dpbv_error", "dp_kcluster", "dp_dbscan", "dp_agglomerative"):
        # DPBV: the claim is ε per attribute (d = 2 of them), what holds is m_max·ε each
        assert np.all(claimed == 2 * eps) and np.all(provable > claimed)
    elif name == "vertical_error":  # Bob's one attribute, m_max·ε
        assert np.all(claimed == eps) and np.all(provable > claimed)
    else:
        assert np.all(claimed <= eps * (1 + 1e-12))
        # the papers' rules that read the exact N book it: ∞ provable under add/remove one
        # (diffprivlib: its T reads N, and it skips an empty cluster exactly)
        exact_n = name in ("eugkm", "hybrid", "gkm", "gkm_3k", "dplloyd_improved", "diffprivlib")
        assert np.all((provable <= eps * (1 + 1e-12)) | (np.isinf(provable) & exact_n))
    assert outcome.meta["n_runs"] == len(rows)


# --- plot kinds ----------------------------------------------------------------------------

FIGURE_SPECS = sorted(
    p
    for p in (ROOT / "configs").glob("*.yaml")
    if (ROOT / "docs" / "results" / p.stem / "summary.csv").exists()
    and spec.load(p).plot.kind not in ("scatter", "none")  # scatter: from runs.csv, below
)


def test_every_plot_kind_is_drawn_below():
    kinds = {spec.load(p).plot.kind for p in FIGURE_SPECS} | {"scatter"}
    assert kinds >= set(plotting.KINDS) - {"none"}


@pytest.mark.parametrize("path", FIGURE_SPECS, ids=lambda p: p.stem)
def test_figure_redrawn_from_the_committed_summary(path, tmp_path):
    sp = spec.load(path)
    reference = ROOT / "docs" / "results" / path.stem
    summary = pd.read_csv(reference / "summary.csv")
    if (reference / "timing.csv").exists():  # time_vs_epsilon reads it beside the figure
        (tmp_path / "timing.csv").write_bytes((reference / "timing.csv").read_bytes())
    written = plotting.render(sp, summary, tmp_path)
    assert written
    for out in written:
        assert out.stat().st_size > 0
        if out.suffix == ".png":
            assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if out.suffix == ".md":  # one table row per summary variant
            body = out.read_text().splitlines()[2:]
            assert len(body) == summary["variant"].nunique()


def test_scatter_plot_from_saved_labels(tmp_path):
    sp = spec.load(ROOT / "configs" / "smoke-b-fig7.yaml")
    cell = harness.Cell(
        dataset=BLOBS,
        algorithm=_algorithm("dp_kcluster", {"s": 64, "save_labels": True}, 1),
        epsilon=2.0,
        seed=3,
        n_init=1,
        init_method="uniform",
    )
    outcome = harness.run_cell(cell)
    labels = outcome.rows["labels"]
    assert labels.notna().all()
    outcome.rows.to_csv(tmp_path / "runs.csv", index=False)
    sp = dataclasses.replace(sp, datasets=(BLOBS,))  # the points come from the spec's entry
    written = plotting.render(sp, pd.DataFrame(), tmp_path)
    assert [p.suffix for p in written] == [".png", ".pdf"]
    assert written[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_plot_kind_names_a_drawer_that_exists():
    from dpcluster.plotting import figures

    for name, kind in plotting.KINDS.items():
        assert not kind.draw or callable(getattr(figures, kind.draw)), name


def test_a_lines_figure_draws_entries_without_x_as_dashed_levels(tmp_path, monkeypatch):
    """A swept plugin beside a baseline that lacks the swept parameter: the baseline is a
    dashed level across the panel, labelled among its peers (no parameter of the other
    entry in its label), and no legend entry stands for a line that is not drawn."""
    import json

    from dpcluster.plotting import figures

    rows = [
        {"algorithm": "mine", "params": json.dumps({"share": v}), "mean": m}
        for v, m in ((0.1, 0.3), (0.5, 0.2))
    ] + [{"algorithm": "dplloyd", "params": json.dumps({"min_count": 0.0}), "mean": 0.25}]
    summary = pd.DataFrame(
        [
            {**r, "dataset": "d", "dataset_label": "d", "epsilon": 1.0, "metric": "nicv"}
            | {"variant": r["algorithm"], "ci95_low": r["mean"] - 0.01, "ci95_high": r["mean"]}
            for r in rows
        ]
    )
    drawn = {}
    monkeypatch.setattr(figures, "save", lambda fig, out, stem: drawn.setdefault("fig", fig) and [])
    figures.lines(summary, tmp_path, "figure", "share")
    ax = drawn["fig"].axes[0]
    by_label = {line.get_label(): line for line in ax.get_lines()}
    assert set(by_label) == {"mine", "DPLloyd"}
    assert list(by_label["mine"].get_xdata()) == [0.1, 0.5]
    assert by_label["DPLloyd"].get_linestyle() == "--"
    assert list(by_label["DPLloyd"].get_ydata()) == [0.25, 0.25]


def test_a_parameter_only_one_entry_has_stays_out_of_the_labels():
    """DPLloyd's min_count beside a plugin without it: not a difference between series."""
    import json

    from dpcluster.plotting.common import series_labels

    params = ({"init": "spec"}, {"min_count": 0.0}, {"a": 1, "b": 1}, {"a": 2, "b": 1})
    s = pd.DataFrame(
        {
            "algorithm": ["lloyd", "dplloyd", "mine", "mine"],
            "params": [json.dumps(p) for p in params],
        }
    )
    assert list(series_labels(s, "a")) == ["Lloyd", "DPLloyd", "mine", "mine"]
    assert list(series_labels(s, "epsilon")) == ["Lloyd", "DPLloyd", "mine, a=1", "mine, a=2"]


def test_legends_use_the_papers_names_and_symbols():
    """Series are named as the papers name them (the entry's title), parameters by their
    symbols with plain numbers; a parameter two algorithms share is shown only where it
    moves within one algorithm or leaves its default (DPLloyd's 5 iterations beside
    PGkM's 8 are not a difference between series)."""
    import json

    from dpcluster.plotting.common import series_labels

    rows = [
        ("dplloyd", {"iterations": 5, "min_count": 0.0}),
        ("pgkm", {"iterations": 8}),
        ("eugkm", {"theta": 2.0}),
        ("eugkm", {"theta": 10.0}),
        ("gkm_3k", {"block": "3k", "noise": "gupt"}),
        ("gkm_3k", {"block": "3k", "noise": "eq3"}),
        ("dpbv_error", {"kappa": 0.8, "method": "plain"}),
        ("dpbv_error", {"kappa": 0.6, "method": "consistence"}),
        ("my.module:entry", {"iterations": 3}),
    ]
    s = pd.DataFrame(
        {"algorithm": [a for a, _ in rows], "params": [json.dumps(p) for _, p in rows]}
    )
    assert list(series_labels(s, "epsilon")) == [
        "DPLloyd",
        "PGkM",
        "EUGkM, θ=2",
        "EUGkM, θ=10",
        "GkM-3K, noise=gupt",
        "GkM-3K, noise=eq3",
        "DPBV",
        "DPBV, κ=0.6, method=consistence",
        "my.module:entry, iterations=3",
    ]


def test_every_entry_has_a_title_and_its_symbols_are_the_papers():
    """A new entry declares how the figures name it."""
    assert [name for name, info in ALGORITHMS.items() if not info.title] == []
    assert ALGORITHMS["eugkm"].params["theta"].symbol == "θ"
    assert ALGORITHMS["dpbv_error"].params["kappa"].symbol == "κ"


def test_figure_3_draws_one_line_per_algorithm_and_noise_scale(tmp_path, monkeypatch):
    """Block size is the x axis; GkM at two noise scales is two lines, not one line that
    zigzags between them at every block size."""
    import json

    from dpcluster.plotting import figures

    rows = [
        {"algorithm": a, "params": json.dumps({"block": b, **extra}), "mean": m, "bs": bs}
        for b, bs in (("N^0.3", 13.0), ("N^0.6", 166.0))
        for a, extra, m in (
            ("gkm", {"noise": "eq3"}, bs),
            ("gkm", {"noise": "gupt"}, 3 * bs),
            ("gkm_sag", {}, 0.1),
        )
    ]
    summary = pd.DataFrame(rows).assign(
        dataset="d",
        dataset_label="d",
        epsilon=1.0,
        variant=lambda f: f["algorithm"],
        block_size_mean=lambda f: f["bs"],
        min=lambda f: f["mean"],
    )
    drawn = {}
    monkeypatch.setattr(figures, "save", lambda fig, out, stem: drawn.setdefault("fig", fig) and [])
    figures.nicv_vs_block(summary, tmp_path, "figure")
    lines = {ln.get_label(): ln for ln in drawn["fig"].axes[0].get_lines()}
    assert set(lines) == {"GkM, noise=eq3", "GkM, noise=gupt", "SAG"}
    assert list(lines["GkM, noise=gupt"].get_ydata()) == [39.0, 498.0]


def test_a_gap_figure_within_one_decade_still_labels_its_axes(tmp_path, monkeypatch):
    """Gaps between 1 and 3 on a log axis: no power of ten inside, yet ticks are labelled;
    k is ticked at whole numbers."""
    from dpcluster.plotting import figures

    rows = [
        {"algorithm": a, "variant": a, "epsilon": e, "k": k, "mean": m}
        for k, base, mean in ((2, 0.5, 2.8), (3, 0.1, 1.2))
        for a, e, m in (("lloyd", math.inf, base), ("dplloyd", 1.0, mean))
    ]
    summary = pd.DataFrame([{**r, "dataset": "d", "min": r["mean"], "params": "{}"} for r in rows])
    drawn = {}
    monkeypatch.setattr(figures, "save", lambda fig, out, stem: drawn.setdefault("fig", fig) and [])
    figures.gap_vs_param(summary, tmp_path, "figure", ("k",), log_y=True)
    ax = drawn["fig"].axes[0]
    lo, hi = ax.get_ylim()
    labelled = [t for t in ax.get_yticks() if lo <= t <= hi]
    assert len(labelled) >= 2
    assert all(float(t).is_integer() for t in ax.get_xticks())


def test_a_single_epsilon_gets_an_error_bar_and_its_own_tick(tmp_path, monkeypatch):
    """One ε: a band of one point has no width, so the CI is an error bar, and the ε axis
    is ticked at that ε rather than at the decades around it."""
    from dpcluster.plotting import figures

    summary = (
        pd.DataFrame(
            [
                {"algorithm": "lloyd", "epsilon": math.inf, "mean": 0.1, "min": 0.1},
                {"algorithm": "dplloyd", "epsilon": 0.7, "mean": 0.5, "min": 0.4},
            ]
        )
        .assign(dataset="d", dataset_label="d", params="{}", variant=lambda f: f["algorithm"])
        .assign(ci95_low=lambda f: f["mean"] - 0.1, ci95_high=lambda f: f["mean"] + 0.1)
    )
    drawn = {}
    monkeypatch.setattr(figures, "save", lambda fig, out, stem: drawn.setdefault("fig", fig) and [])
    figures.nicv_vs_epsilon(summary, tmp_path, "figure")
    ax = drawn["fig"].axes[0]
    assert ax.containers, "no error bar drawn"
    assert list(ax.get_xticks()) == [0.7]


@pytest.mark.parametrize("epsilons", [(1.0,), (0.5, 1.0)])
def test_a_gap_figure_has_one_legend_and_names_epsilon_only_when_it_varies(
    epsilons, tmp_path, monkeypatch
):
    """Figure 2's layout: one legend for both panels, a series keeps its colour in each,
    each panel says what it averages over, and ε joins the names only when it varies."""
    from dpcluster.plotting import figures

    rows = [
        {"algorithm": a, "variant": a, "epsilon": e, "k": k, "d": d, "mean": 1.0 + k + d + e}
        for k in (2, 3)
        for d in (2, 4)
        for a, eps in (("lloyd", (math.inf,)), ("dplloyd", epsilons), ("eugkm", epsilons))
        for e in eps
    ]
    summary = pd.DataFrame(rows).assign(
        dataset=lambda f: "k" + f["k"].astype(str) + "d" + f["d"].astype(str),
        min=lambda f: f["mean"],
        params="{}",
    )
    drawn = {}
    monkeypatch.setattr(figures, "save", lambda fig, out, stem: drawn.setdefault("fig", fig) and [])
    figures.gap_vs_param(summary, tmp_path, "figure", ("k", "d"), log_y=True)
    fig = drawn["fig"]
    assert all(ax.get_legend() is None for ax in fig.axes)
    (legend,) = fig.legends
    # the series, and (a gap at the baseline here) what an open marker on the floor means
    names = [t.get_text() for t in legend.get_texts() if not t.get_text().startswith("open:")]
    if len(epsilons) == 1:
        assert names == ["DPLloyd", "EUGkM"]
    else:
        assert names == [f"{a}, ε={e:g}" for a in ("DPLloyd", "EUGkM") for e in epsilons]
    colour_of = [
        {ln.get_label(): ln.get_color() for ln in ax.lines if ln.get_label() in names}
        for ax in fig.axes
    ]
    assert colour_of[0] == colour_of[1] and len(set(colour_of[0].values())) == len(names)
    assert [ax.get_title() for ax in fig.axes] == ["mean over d", "mean over k"]


def test_plot_refuses_a_folder_without_the_runs_its_figure_needs(tmp_path):
    """B Fig. 7 is drawn from every run's labels: a folder holding only the summary (a copy
    of docs/results) gets one line naming runs.csv and exit 2, not a traceback."""
    import shutil

    from click.testing import CliRunner

    from dpcluster import cli

    root = Path(__file__).resolve().parent.parent
    folder = tmp_path / "b-fig7"
    shutil.copytree(root / "docs/results/b-fig7", folder)
    out = CliRunner().invoke(
        cli.main, ["plot", str(root / "configs/b-fig7.yaml"), "--out", str(folder)]
    )
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output and out.output.count("\n") == 1
    assert f"{folder / 'runs.csv'}: not found" in out.output
