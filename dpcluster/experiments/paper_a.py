"""Paper A's registry entries: each algorithm's parameters, protocol and cell runner
(:mod:`.paper_a_cells`); docs/methods.md A1-A7, privacy arguments in dpcluster/algorithms/."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..algorithms import methods
from ..algorithms.dplloyd import RHO, dplloyd, dplloyd_improved
from ..algorithms.eugkm import MAX_CELLS, ROUNDING, SEEDINGS, cells_per_axis, eugkm
from ..algorithms.gkm import (
    ALIGN,
    MINIT,
    NOISE_RULES,
    block_size,
    gkm,
)
from ..algorithms.hybrid import hybrid
from ..algorithms.init import INIT_METHODS
from ..algorithms.pgkm import genetic_kmeans
from ..analysis import hybrid_switch
from ..analysis.mse import SWITCH_T, THETA
from ..data import physical_memory
from ..kernels import GRID_DISTANCES
from . import costs
from .paper_a_cells import (
    dplloyd_cell,
    eugkm_canonical,
    eugkm_cell,
    genetic_cell,
    gkm_cell,
    hybrid_cell,
    hybrid_runs,
    lloyd_cell,
    lloyd_steps_cell,
)
from .protocol import (
    AlgorithmInfo,
    CellShape,
    Param,
    central_fit,
    independent_runs,
    private_iterations,
    without_default,
)

_DISTANCES = Param(
    "float32",
    str,
    "precision of EUGkM's cell-to-centroid distance comparisons "
    "(float32: whole cells 13-37% faster; float64: the exact double path; "
    "docs/numerics.md)",
    choices=GRID_DISTANCES,
)

_MIN_COUNT = Param(
    0.0,
    float,
    "a cluster whose noisy count is <= this keeps its centroid "
    "(docs/methods.md A1 ASSUMPTION; option 1)",
)


def _noise_or_count(value) -> str | None:
    if value == "noise":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        return "must be 'noise' or a number"
    return None if math.isfinite(value) else "must be 'noise' or a finite number"


#: the estimator's hold rule for DPLloyd and improved DPLloyd: ``noise`` (its default) or a
#: count, as the fits take it
_FIT_MIN_COUNT = Param(
    "noise",
    object,
    "a cluster whose noisy count is below this keeps its centroid: 'noise' (the count's own "
    "noise floor, the estimator's default) or a number (0 is the paper's)",
    check=_noise_or_count,
)


def _block_problem(value: str) -> str | None:
    try:
        block_size(value, 100, 2)
    except ValueError as exc:
        return str(exc)
    return None


_GKM_PARAMS = {
    "block": Param(
        "N^0.6",
        str,
        "block size rule: 'N^a', '3k' or an integer (docs/methods.md A4)",
        check=_block_problem,
    ),
    "minit": Param(
        "points", str, "per-block initial centroids (SciPy kmeans2 minit)", choices=MINIT
    ),
    "align": Param("lex0", str, "centroid alignment across blocks", choices=ALIGN),
    "max_iter": Param(10, int, "per-block Lloyd iterations (SciPy kmeans2 default)", minimum=1),
}
_NOISE = Param(
    "eq3",
    str,
    "noise scale: eq3 (docs/methods.md A4, k·d·2r/(l·ε)) or gupt (the public GUPT code's "
    "3·k·d·2r/(l·ε); the release then spends ε/3)",
    choices=NOISE_RULES,
)

_GKM_CANONICAL = without_default("noise", "eq3")
#: gkm()'s align_rule is the entry's align
_GKM_FIT = {"align_rule": _GKM_PARAMS["align"]}


_GENE_PARAMS = {
    "pool": Param(200, int, "candidate pool size m", minimum=2),
    "selected": Param(10, int, "parameters selected per iteration m'", minimum=1),
    "iterations": private_iterations(8, "iterations r_it (ε/(m'·r_it) per selection)"),
    "decay": Param(
        0.7,
        float,
        "mutation width r·decay^(i−1)",
        minimum=0.0,
        maximum=1.0,
        maximum_reason="the mutation width never grows",
    ),
}


def _grid_fits(share: float = 1.0):
    """Preflight of the grid entries: the grid at ``share``·ε has at most
    :data:`MAX_CELLS` cells (docs/methods.md A3's m = rounding((Nε/θ)^(2/(2+d))))."""

    def check(shape: CellShape) -> tuple[str, str] | None:
        p, eps = shape.params, shape.epsilon * share
        m = cells_per_axis(shape.N, eps, shape.d, p["theta"], p["rounding"])
        if m**shape.d > MAX_CELLS:
            return "theta", (
                f"gives a grid of {m}^{shape.d} cells at ε = {eps:g} (N = {shape.N:,}), "
                f"above {MAX_CELLS:,}; raise theta or use rounding: floor"
            )
        return None

    return check


def _hybrid_grid_fits(shape: CellShape) -> tuple[str, str] | None:
    """The hybrid's synopsis gets ε/2, or all of ε when its MSE switch falls back."""
    p = shape.params
    switch = hybrid_switch(shape.N, shape.k, shape.d, shape.epsilon, t=SWITCH_T, theta=p["theta"])
    share = 0.5 if (switch["use_hybrid"] or p["force"]) else 1.0
    return _grid_fits(share)(shape)


def _selection_fits(shape: CellShape) -> tuple[str, str] | None:
    """Preflight of PGkM and Gene: m' parameters are selected from a pool of m."""
    pool = shape.params["pool"]
    if shape.params["selected"] > pool:
        return "selected", f"must not exceed pool = {pool}"
    need = 4 * pool * shape.k * shape.d * 8  # the pool, its offspring and their copies
    have = physical_memory()
    if need > have // 2:
        return "pool", (
            f"needs about {need / 2**30:.1f} GiB for {pool:,} candidate sets of k·d = "
            f"{shape.k * shape.d} values (a few copies); this machine has {have / 2**30:.1f} GiB"
        )
    return None


#: DPKMeans's start parameters of the Lloyd methods and the grid methods
_LLOYD_START = {
    "init": Param(
        "sphere_packing",
        str,
        "start: sphere_packing (the estimator's) or uniform (the paper's A1)",
        choices=("sphere_packing", "uniform"),
    )
}
#: EUGkM's stopping rule (the hybrid's grid stage keeps its default)
_GRID_TOL = {
    "tol": Param(
        1e-9,
        float,
        "Lloyd on the grid stops when no centre moves more than tol times the radius",
        minimum=0,
    ),
}
_GRID_STARTS = {
    "init_sets": Param(30, int, "Lloyd start sets on the synopsis", minimum=1),
    "seeding": Param(
        "synopsis",
        str,
        "starts: k-means++ on the cells that clear the noise (synopsis) or uniform (given)",
        choices=SEEDINGS,
    ),
}


def _with_fit(info: AlgorithmInfo, function, *algorithms, extra=None) -> AlgorithmInfo:
    """``info`` that DPKMeans also runs by name: ``function`` (dpcluster/algorithms/methods.py)
    with the parameters of ``algorithms``, typed by the entry's own table."""
    return dataclasses.replace(
        info, fit=central_fit(function, info.params, *algorithms, extra=extra)
    )


PAPER_A: dict[str, AlgorithmInfo] = {
    "lloyd": AlgorithmInfo(
        "lloyd",
        "non-private Lloyd to convergence from each init set (baseline = min NICV)",
        private=False,
        repeat_default=1,
        repeat_doc="runs per init set (deterministic: 1)",
        run_cell=lloyd_cell,
        count_runs=lambda shape: shape.n_init,
        params={
            "max_iter": Param(
                300, int, "iteration cap; stops earlier when no point changes cluster", minimum=1
            ),
            "init": Param(
                "spec",
                str,
                "initial sets: the spec's shared sets (the paper's baseline) or points: k "
                "distinct records per set (a reference baseline that can be lower)",
                choices=("spec", "points"),
            ),
        },
        canonical=without_default("init", "spec"),
        title="Lloyd",
    ),
    "dplloyd": _with_fit(
        AlgorithmInfo(
            "dplloyd",
            "DPLloyd / SuLQ k-means, docs/methods.md A1",
            private=True,
            repeat_default=100,
            repeat_doc="runs per init set",
            run_cell=lambda c: dplloyd_cell(c, improved=False),
            cost=costs.dplloyd,
            title="DPLloyd",
            params={
                "iterations": private_iterations(5, "t, iterations (ε/t each)"),
                "min_count": _MIN_COUNT,
            },
        ),
        methods.fit_dplloyd,
        dplloyd,
        extra={**_LLOYD_START, "min_count": _FIT_MIN_COUNT},
    ),
    "dplloyd_improved": _with_fit(
        AlgorithmInfo(
            "dplloyd_improved",
            "improved DPLloyd (TOPS), docs/methods.md A2",
            private=True,
            repeat_default=100,
            repeat_doc="runs per init set",
            run_cell=lambda c: dplloyd_cell(c, improved=True),
            cost=costs.dplloyd,
            title="improved DPLloyd",
            params={
                "rho": Param(
                    RHO,
                    float,
                    "ρ of the split c = (4dρ²)^(1/3)",
                    check=lambda v: None if 1e-6 <= v <= 1e6 else "must be in [1e-6, 1e6]",
                ),
                "init": Param("sphere_packing", str, "initial sets", choices=INIT_METHODS),
                "min_count": _MIN_COUNT,
            },
        ),
        methods.fit_dplloyd_improved,
        dplloyd_improved,
        extra={
            "min_count": _FIT_MIN_COUNT,
            "init": Param(
                "searched",
                str,
                "start: searched (PE-Lloyd's search with 30 % of ε where Ñ·0.3ε/√d ≥ 500, "
                "else sphere_packing; docs/methods.md M7), sphere_packing "
                "(data-independent) or uniform (the paper's A1)",
                choices=("searched", "sphere_packing", "uniform"),
            ),
            "single_pass": Param(
                True,
                bool,
                "one pass with all of ε where N/k is below 10 times a pass's noise floor "
                "(docs/utility.md); false: A2's t rule",
            ),
            "shrink": Param(
                True,
                bool,
                "shrink the last pass's centres toward their pooled mean by positive-part "
                "James–Stein (post-processing; docs/methods.md M8); false: the raw means",
            ),
            "iterations": private_iterations(0, "t; 0: the rule above", minimum=0),
            "clip": Param(
                0.0,
                float,
                "share of ε spent on a private radius near the 90th percentile of the "
                "records' norms; the records are clipped to it, so the sums need less noise "
                "in high d (docs/utility.md); 0: off",
                minimum=0.0,
                maximum=0.5,
            ),
        },
    ),
    "eugkm": _with_fit(
        AlgorithmInfo(
            "eugkm",
            "noisy uniform grid + weighted k-means, docs/methods.md A3",
            private=True,
            repeat_default=10,
            repeat_doc="independent synopses",
            run_cell=eugkm_cell,
            title="EUGkM",
            count_runs=lambda shape: shape.repeat,
            cost=costs.grid,
            compile_on=("k",),  # the grid kernel is compiled per k (kernels/grid.py)
            canonical=eugkm_canonical,
            arithmetic=("distances",),
            preflight=_grid_fits(),
            params={
                "theta": Param(
                    THETA, float, "θ in M = (Nε/θ)^(2d/(2+d))", minimum=1e-9, symbol="θ"
                ),
                "rounding": Param(
                    "round", str, "cells per axis m = rounding(M^(1/d))", choices=tuple(ROUNDING)
                ),
                "private_n": Param(False, bool, "spend 5% of ε on a noisy N for choosing M"),
                "max_iter": Param(100, int, "weighted Lloyd iteration cap", minimum=1),
                "distances": _DISTANCES,
            },
        ),
        methods.fit_eugkm,
        eugkm,
        extra={
            **_GRID_STARTS,
            **_GRID_TOL,
            "max_cells": Param(MAX_CELLS, int, "the largest grid m^d built", minimum=1),
        },
    ),
    "lloyd_steps": AlgorithmInfo(
        "lloyd_steps",
        "non-private Lloyd, NICV after each of the first iterations (Fig. 4)",
        private=False,
        repeat_default=1,
        repeat_doc="runs per init set (deterministic: 1)",
        run_cell=lloyd_steps_cell,
        title="Lloyd",
        count_runs=lambda shape: shape.n_init,
        params={"steps": Param(30, int, "iterations traced", minimum=1)},
    ),
    "gkm": _with_fit(
        independent_runs(
            "gkm",
            "GUPT sample-and-aggregate k-means, docs/methods.md A4 (GkM-3K: block: 3k)",
            True,
            lambda c: gkm_cell(c, "gkm"),
            {**_GKM_PARAMS, "noise": _NOISE},
            cost=costs.gkm,
            canonical=_GKM_CANONICAL,
            title="GkM",
        ),
        methods.fit_gkm,
        gkm,
        extra=_GKM_FIT,
    ),
    "gkm_3k": independent_runs(
        "gkm_3k",
        "GkM with blocks of 3k records, docs/methods.md A4",
        True,
        lambda c: gkm_cell(c, "gkm"),
        {
            **_GKM_PARAMS,
            "block": Param("3k", str, _GKM_PARAMS["block"].doc),
            "noise": _NOISE,
        },
        cost=costs.gkm,
        canonical=_GKM_CANONICAL,
        title="GkM-3K",
    ),
    "gkm_sag": independent_runs(
        "gkm_sag",
        "SAG: GkM's block average without noise (Fig. 3 diagnostic, not private)",
        False,
        lambda c: gkm_cell(c, "sag"),
        _GKM_PARAMS,
        cost=costs.gkm,
        title="SAG",
    ),
    "gkm_noise": independent_runs(
        "gkm_noise",
        "Noise: baseline centroids + GkM's noise (Fig. 3 diagnostic, not private)",
        True,
        lambda c: gkm_cell(c, "noise"),
        {"block": _GKM_PARAMS["block"], "noise": _NOISE},
        canonical=_GKM_CANONICAL,
        title="Noise",
    ),
    "pgkm": _with_fit(
        independent_runs(
            "pgkm",
            "PrivGene k-means, docs/methods.md A5",
            True,
            lambda c: genetic_cell(c, True),
            _GENE_PARAMS,
            cost=costs.gene,
            preflight=_selection_fits,
            title="PGkM",
        ),
        methods.fit_pgkm,
        genetic_kmeans,
        extra=None,
    ),
    "gene": independent_runs(
        "gene",
        "non-private genetic k-means (PGkM's twin), NICV per iteration (Fig. 4)",
        False,
        lambda c: genetic_cell(c, False),
        {**_GENE_PARAMS, "iterations": Param(30, int, "iterations r_it", minimum=1)},
        repeat=10,
        cost=costs.gene,
        preflight=_selection_fits,
        title="Gene",
    ),
    "hybrid": _with_fit(
        AlgorithmInfo(
            "hybrid",
            "EUGkM(ε/2) then one DPLloyd iteration (ε/2), MSE switch, docs/methods.md A7",
            private=True,
            repeat_default=10,
            repeat_doc="EUGkM synopses (× lloyd_runs each)",
            run_cell=hybrid_cell,
            title="hybrid",
            count_runs=hybrid_runs,
            cost=lambda shape: costs.grid(shape, share=0.5),  # an upper bound: EUGkM at ε/2
            compile_on=("k", "d"),  # EUGkM's grid per k, then DPLloyd's kernels per d
            arithmetic=("distances",),
            preflight=_hybrid_grid_fits,
            params={
                "lloyd_runs": Param(10, int, "DPLloyd runs per synopsis", minimum=1),
                "force": Param(False, bool, "skip the MSE fallback test (always hybrid)"),
                "theta": Param(THETA, float, "EUGkM θ", minimum=1e-9, symbol="θ"),
                "rounding": Param(
                    "round", str, "EUGkM cells per axis rounding", choices=tuple(ROUNDING)
                ),
                "max_iter": Param(100, int, "weighted Lloyd iteration cap", minimum=1),
                "distances": _DISTANCES,
            },
        ),
        methods.fit_hybrid,
        hybrid,
        extra=_GRID_STARTS,
    ),
}
