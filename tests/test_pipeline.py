"""One pipeline, two front doors: a spec with ``pipeline: estimator`` computes what
``DPKMeans`` computes from the same data, method, ε and seed (dpcluster/experiments/pipeline.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.cluster import KMeans

from dpcluster import DPKMeans, harness, spec
from dpcluster.errors import SpecError


def _wine_like(folder, n=150, seed=3):
    """Three labelled Gaussian groups in 5 features of very different ranges (a csv)."""
    rng = np.random.default_rng(seed)
    scale = np.array([1.0, 30.0, 0.2, 500.0, 4.0])
    centres = rng.normal(size=(3, 5)) * 3 * scale
    y = np.repeat(np.arange(3), n // 3)
    X = centres[y] + rng.normal(size=(len(y), 5)) * scale
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    frame["label"] = y
    frame.to_csv(folder / "mine.csv", index=False)
    return X


def _spec(folder, extra: dict, dataset_params=None):
    raw = {
        "name": "mine",
        "seed": 11,
        "pipeline": "estimator",
        "seeds": [0, 1],
        "datasets": [
            {
                "name": "csv",
                "params": {
                    "path": "mine.csv",
                    "k": 3,
                    "classes": "label",
                    **(dataset_params or {}),
                },
            }
        ],
        "epsilon": [0.5, 2.0],
        "algorithms": [
            {"name": "kmeans"},
            {"name": "auto"},
            {"name": "dplloyd_improved"},
            {"name": "eugkm", "params": {"theta": 5.0}},
        ],
        "metrics": ["cost", "ari"],
        "plot": {"kind": "none"},
        **extra,
    }
    path = folder / "mine.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _python_cost(X, row, **estimator) -> float:
    """The researcher's loop: the same method, ε and seed through DPKMeans (or KMeans)."""
    seed = int(row["stream"].removeprefix("seed:"))
    if row["algorithm"] == "kmeans":
        return KMeans(3, n_init=10, random_state=seed).fit(X).inertia_ / len(X)
    params = {"theta": 5.0} if row["algorithm"] == "eugkm" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = DPKMeans(
            3,
            epsilon=row["epsilon"],
            method=row["algorithm"],
            random_state=seed,
            method_params=params,
            **estimator,
        ).fit(X)
    return fitted.inertia_ / len(X)


@pytest.mark.parametrize(
    ("extra", "dataset_params", "estimator"),
    [
        ({}, None, {}),
        (
            {"scaling": "per_feature", "bounds": "public"},
            {"domain": [[-40.0, -3000.0, -5.0, -9000.0, -60.0], [40.0, 3000.0, 5.0, 9000.0, 60.0]]},
            {
                "scaling": "per_feature",
                "bounds": (
                    [-40.0, -3000.0, -5.0, -9000.0, -60.0],
                    [40.0, 3000.0, 5.0, 9000.0, 60.0],
                ),
            },
        ),
        (  # a box that clips most records: cost and the baseline on the data as given
            {"bounds": "public"},
            {"domain": [[-1.0] * 5, [1.0] * 5]},
            {"bounds": ([-1.0] * 5, [1.0] * 5)},
        ),
        (  # a ball that projects most records
            {"bounds": "public"},
            {"domain": {"radius": 50.0}},
            {"radius": 50.0},
        ),
    ],
    ids=["common-scaling-data-bounds", "per-feature-public-bounds", "clipping-box", "ball"],
)
def test_a_spec_reproduces_the_python_comparison_run_by_run(
    tmp_path, extra, dataset_params, estimator
):
    X = _wine_like(tmp_path)
    sp = spec.load(_spec(tmp_path, extra, dataset_params))
    report = harness.run_spec(sp, tmp_path / "out")
    assert not report.failures
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    assert set(runs["algorithm"]) == {"kmeans", "auto", "dplloyd_improved", "eugkm"}
    assert len(runs) == 2 * (1 + 3 * 2)  # two seeds; the baseline once, the rest per ε
    for _, row in runs.iterrows():
        assert row["cost"] == pytest.approx(_python_cost(X, row, **estimator), rel=1e-9), row


def test_the_summary_divides_each_cost_by_the_baselines(tmp_path):
    _wine_like(tmp_path)
    harness.run_spec(spec.load(_spec(tmp_path, {})), tmp_path / "out")
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    base = summary.loc[summary["algorithm"] == "kmeans", "cost_mean"].item()
    assert summary.loc[summary["algorithm"] == "kmeans", "cost_ratio"].item() == 1.0
    np.testing.assert_allclose(summary["cost_ratio"], summary["cost_mean"] / base)
    assert (summary.loc[summary["algorithm"] != "kmeans", "cost_ratio"] > 1.0).all()
    assert summary["metric"].unique().tolist() == ["cost"]


def test_auto_chooses_the_same_method_through_both_doors(tmp_path):
    X = _wine_like(tmp_path)
    harness.run_spec(spec.load(_spec(tmp_path, {})), tmp_path / "out")
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    for _, row in runs[runs["algorithm"] == "auto"].iterrows():
        seed = int(row["stream"].removeprefix("seed:"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = DPKMeans(3, epsilon=row["epsilon"], random_state=seed).fit(X)
        assert fitted.method_ == row["chosen"]


@pytest.mark.parametrize(
    ("extra", "key", "says"),
    [
        ({"pipeline": "paper", "scaling": "common"}, "scaling", "pipeline: estimator"),
        ({"pipeline": "paper", "seeds": [1]}, "seeds", "pipeline: estimator"),
        ({"pipeline": "estimatr"}, "pipeline", "estimator"),
        ({"scaling": "geometric"}, "scaling", "not an allowed value"),
        ({"seeds": [1, 1]}, "seeds", "duplicate"),
        ({"seeds": [-1]}, "seeds[0]", ">= 0"),
    ],
)
def test_a_bad_pipeline_key_names_itself(tmp_path, extra, key, says):
    _wine_like(tmp_path)
    with pytest.raises(SpecError) as caught:
        spec.load(_spec(tmp_path, extra))
    assert f"key '{key}'" in str(caught.value) and says in str(caught.value)


def test_the_estimator_pipeline_names_what_it_cannot_run(tmp_path):
    _wine_like(tmp_path)
    path = _spec(tmp_path, {})
    raw = yaml.safe_load(path.read_text())
    raw["algorithms"].append({"name": "gkm_sag"})
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(SpecError, match=r"algorithms\[4\]\.name.*DPKMeans runs"):
        spec.load(path)


def test_estimator_parameters_are_the_fits_not_the_papers(tmp_path):
    """dplloyd_improved under the estimator pipeline takes DPKMeans's method_params
    (single_pass), which the paper's A2 entry does not have."""
    _wine_like(tmp_path)
    path = _spec(tmp_path, {})
    raw = yaml.safe_load(path.read_text())
    raw["algorithms"] = [{"name": "dplloyd_improved", "params": {"single_pass": False}}]
    path.write_text(yaml.safe_dump(raw))
    assert spec.load(path).algorithms[0].kwargs["single_pass"] is False
    raw["pipeline"] = "paper"
    del raw["seeds"]
    raw["metrics"] = ["nicv"]
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(SpecError, match="single_pass"):
        spec.load(path)


def test_a_run_counts_the_fits_that_cannot_depend_on_the_data(tmp_path):
    """EUGkM's grid at d = 5, N = 150, θ = 50 has one cell per axis at ε = 0.5 and more at
    ε = 2: meta.json counts the runs of the first (from the runs' own ``cells``: no
    budget), not those of the second."""
    import json

    _wine_like(tmp_path)
    path = _spec(tmp_path, {})
    raw = yaml.safe_load(path.read_text())
    raw["algorithms"] = [{"name": "eugkm", "params": {"theta": 50.0}}]
    path.write_text(yaml.safe_dump(raw))
    report = harness.run_spec(spec.load(path), tmp_path / "out")
    runs = pd.read_csv(tmp_path / "out" / "runs.csv").set_index("epsilon")
    assert (runs.loc[0.5, "cells"] == 1).all() and (runs.loc[2.0, "cells"] > 1).all()
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["degenerate_runs"] == report.degenerate == 2


def test_bounds_that_clip_many_records_are_a_warning_in_meta(tmp_path):
    import json

    _wine_like(tmp_path)
    narrow = [[-1.0] * 5, [1.0] * 5]  # most records of these features lie outside
    path = _spec(tmp_path, {"bounds": "public"}, {"domain": narrow})
    harness.run_spec(spec.load(path), tmp_path / "out")
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert any("clipped into them" in w for w in meta["data_warnings"]), meta["data_warnings"]


def test_the_users_page_names_methods_as_the_legend_does_and_has_no_paper_text(tmp_path):
    from dpcluster import report

    _wine_like(tmp_path)
    harness.run_spec(spec.load(_spec(tmp_path, {})), tmp_path / "results" / "mine")
    report.write_report(tmp_path / "results")
    page = (tmp_path / "results" / "REPORT.html").read_text()
    assert "<td>improved DPLloyd</td>" in page and "<td>dplloyd_improved</td>" not in page
    assert "(2." in page or "×)" in page  # costs carry their ratio to the baseline
    assert "claims" not in page and "Theorem" not in page
