"""The estimator's pipeline: one way to run a central method, for :class:`~dpcluster.DPKMeans`
and for specs that say ``pipeline: estimator`` (docs/specs.md).

A spec has one of two pipelines:

``paper``      (the default) the papers' protocol: records normalised feature by feature
               onto [-1, 1]^d, each entry's own cell (Paper A's shared init sets, NICV).
``estimator``  what ``DPKMeans(method=name)`` computes: records in DPKMeans's working
               space (a dataset's ``scaling``, ``common`` unless it says ``per_feature``),
               every entry that declares a central ``fit`` run by :func:`fit_central`,
               the one function DPKMeans calls too, and scored by ``cost``: the k-means
               cost per record in the data's units. ``kmeans`` (scikit-learn) is the
               non-private baseline; the summary divides each cost by its cost.

The same method name, parameters and generator give the same centres through either
front door: the spec's run ``i`` draws from ``numpy.random.default_rng(seeds[i])`` when the
spec lists ``seeds`` (as ``DPKMeans(random_state=seeds[i])`` does), else from the run's
identity stream.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np

from ..algorithms.methods import radius
from ..kernels import labels, nicv
from ..privacy import NOT_PRIVATE, not_private, spent
from .paper_b_cells import cluster_metrics
from .protocol import CLASS_METRICS, AlgorithmInfo, CellContext, CentralFit, Row
from .registry import lookup

PIPELINES = ("paper", "estimator")
#: what a run of the estimator pipeline reports: ``cost`` (k-means cost per record in the
#: data's units), ``nicv`` (the same in the working space) and, on data with classes, the
#: class-agreement scores of the records' nearest centres
ESTIMATOR_METRICS = ("cost", "nicv", *CLASS_METRICS)
#: a fit's ``info`` values its rows carry: what auto chose, the grid's size and fallback
#: (meta.json counts one-cell grids), and what a comparator's noise alone spends
INFO_COLUMNS = ("chosen", "cells", "fell_back", "noise_epsilon")
#: the non-private baseline of the estimator pipeline, and its runs' k-means++ restarts
BASELINE = "kmeans"
BASELINE_N_INIT = 10


def fit_central(
    fit: CentralFit,
    Z: np.ndarray,
    k: int,
    epsilon: float,
    rng: np.random.Generator,
    box: np.ndarray,
    params: dict,
    delta: float = 0.0,
    ball: float | None = None,
):
    """One fit of a central method as DPKMeans runs it: (centres (k, d), DPResult).

    Z      (N, d) records in the working space, inside the public box ∏ [-box_j, box_j]
    box    (d,) the box's half-widths (:func:`~dpcluster.data.scaling_factors`)
    delta  > 0: (ε, δ) with Gaussian noise, for the methods whose fit takes ``delta``
    ball   the radius of a public L2-ball domain, for the methods whose fit takes it
    The centres are clipped into the box: post-processing that keeps a noisy centre in
    the domain the user declared."""
    taken = inspect.signature(fit.function).parameters
    extra = {}
    if delta and "delta" in taken:
        extra["delta"] = float(delta)
    if ball is not None and "ball" in taken:
        extra["ball"] = float(ball)
    d = np.shape(Z)[1]
    res = fit.function(Z, k, float(epsilon), rng, radius(box, d), **params, **extra)
    box = np.broadcast_to(np.asarray(box, dtype=np.float64), (d,))
    return np.clip(np.asarray(res.centroids, dtype=np.float64), -box, box), res


def cost(Z: np.ndarray, centres: np.ndarray, unit: np.ndarray) -> float:
    """k-means cost per record in the data's units: (1/N) Σ_i min_j ||(z_i − c_j)·unit||²
    for records Z (N, d) and centres (k, d) in the working space, ``unit`` (d,) data units
    per working-space unit."""
    return float(nicv(np.ascontiguousarray(Z * unit), np.ascontiguousarray(centres * unit)))


def scores(ctx: CellContext, centres: np.ndarray) -> dict:
    """The estimator pipeline's metrics of ``centres`` on the cell's records: ``cost`` on
    the records as given, in the data's units (what ``DPKMeans.inertia_ / N`` is, clipped
    or projected records included at their own place), the others in the working space."""
    ds = ctx.dataset
    if ds.given is None:
        spent_cost = cost(ds.X, centres, ds.unit)
    else:
        spent_cost = float(
            nicv(np.ascontiguousarray(ds.given), np.ascontiguousarray(ds.to_data_units(centres)))
        )
    out = {"cost": spent_cost, "nicv": float(nicv(ds.X, centres))}
    if ds.classes is not None:
        scored = cluster_metrics(ds.classes, labels(ds.X, centres), ds.X, silhouette=False)
        out.update({m: scored[m] for m in CLASS_METRICS})
    return out


def run_generator(ctx: CellContext, rep: int) -> tuple[np.random.Generator, str]:
    """Run ``rep``'s generator and its ``stream`` column: ``default_rng(seeds[rep])``
    when the spec lists seeds, else the identity stream ``("run", rep)``."""
    if ctx.seeds:
        return np.random.default_rng(ctx.seeds[rep]), f"seed:{ctx.seeds[rep]}"
    return ctx.streams.child("run", rep), ctx.streams.key("run", rep)


def estimator_runs(ctx: CellContext, fit: CentralFit) -> tuple[list[Row], dict]:
    """``repeat`` fits of a central method through :func:`fit_central`."""
    ds = ctx.dataset
    # the parameters a spec sets, as ``method_params`` would give them (a default is the
    # fit's own, and some belong to the algorithm the fit passes them on to)
    given = {k: v for k, v in ctx.params.items() if v != fit.params[k].default}
    rows, ledger = [], {}
    for rep in range(ctx.repeat):
        rng, key = run_generator(ctx, rep)
        centres, res = fit_central(
            fit, ds.X, ctx.k, ctx.epsilon, rng, ds.box_radius, given, ctx.delta, ds.ball
        )
        ledger = res.ledger.to_dict()
        chosen = {c: res.info[c] for c in INFO_COLUMNS if c in res.info}
        rows.append(
            {
                "init": 0,
                "rep": rep,
                **scores(ctx, centres),
                "iterations": res.iterations,
                **spent(res.ledger),
                **chosen,
                "stream": key,
            }
        )
    return rows, ledger


def baseline_runs(ctx: CellContext) -> tuple[list[Row], dict]:
    """Non-private k-means in the data's units: scikit-learn's KMeans with k-means++ and
    :data:`BASELINE_N_INIT` restarts, seeded ``seeds[rep]`` (as a researcher's
    ``KMeans(random_state=seed)``) or from the run's stream."""
    from sklearn.cluster import KMeans

    ds = ctx.dataset
    unit = ds.unit
    rows = []
    for rep in range(ctx.repeat):
        rng, key = run_generator(ctx, rep)
        seed = ctx.seeds[rep] if ctx.seeds else int(rng.integers(0, 2**31 - 1))
        if ds.given is None:
            km = KMeans(ctx.k, n_init=BASELINE_N_INIT, random_state=seed).fit(ds.X * unit)
            centres = km.cluster_centers_ / unit
        else:  # k-means of the records as given, mapped into the working space
            km = KMeans(ctx.k, n_init=BASELINE_N_INIT, random_state=seed).fit(ds.given)
            centres = (km.cluster_centers_ - ds.to_data_units(np.zeros((1, ds.d)))) / unit
        rows.append({"init": 0, "rep": rep, **scores(ctx, centres), **NOT_PRIVATE, "stream": key})
    return rows, not_private()


def as_estimator(info: AlgorithmInfo) -> AlgorithmInfo | None:
    """``info`` as the estimator pipeline runs it: its central fit with the fit's own
    parameters (DPKMeans's ``method_params``), or the k-means baseline; None for an entry
    DPKMeans cannot run."""
    common = {
        "metrics": ESTIMATOR_METRICS,
        "count_runs": lambda shape: shape.repeat,
        "cost": None,
        "canonical": None,
        "arithmetic": (),
        "preflight": None,
        "compile_on": ("d",),
    }
    if info.fit is not None:
        fit = info.fit
        # an entry declared by its fit alone checks the fit's own parameters
        own = dict(info.params) == dict(fit.params)
        return dataclasses.replace(
            info,
            run_cell=lambda ctx: estimator_runs(ctx, fit),
            params=dict(fit.params),
            repeat_default=10,
            repeat_doc="independent fits",
            **{**common, "preflight": info.preflight if own else None},
        )
    if info.name == BASELINE:
        return dataclasses.replace(
            info,
            summary="k-means in the data's units (scikit-learn, k-means++, n_init 10)",
            run_cell=baseline_runs,
            params={},
            repeat_default=3,
            repeat_doc="independent k-means++ seeds",
            **common,
        )
    return None


def resolve(name: str, source: str = "", pipeline: str = "paper") -> AlgorithmInfo:
    """The entry a spec's algorithm runs under ``pipeline``; KeyError when the estimator
    pipeline cannot run it (the message says which can)."""
    info = lookup(name, source)
    if pipeline == "paper":
        return info
    out = as_estimator(info)
    if out is None:
        raise KeyError(
            f"{name}: pipeline: estimator runs the methods DPKMeans runs (an entry with a "
            f"central fit) and {BASELINE}, its baseline"
        )
    return out
