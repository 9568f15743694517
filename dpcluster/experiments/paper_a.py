"""Paper A's registry entries: one cell runner per algorithm, with its parameters and
protocol (docs/methods.md A1-A7; the privacy arguments are in dpcluster/algorithms/)."""

from __future__ import annotations

import numpy as np

from ..algorithms.dplloyd import dplloyd_batch, improved_iterations
from ..algorithms.eugkm import MAX_CELLS, ROUNDING, cells_per_axis, eugkm
from ..algorithms.gkm import (
    ALIGN,
    MINIT,
    NOISE_RULES,
    block_size,
    gkm,
    n_blocks,
    noise_diagnostic,
    sample_and_aggregate,
)
from ..algorithms.hybrid import hybrid
from ..algorithms.init import INIT_METHODS
from ..algorithms.lloyd import lloyd_batch
from ..algorithms.pgkm import genetic_kmeans
from ..analysis import hybrid_switch
from ..kernels import GRID_DISTANCES, nicv
from ..privacy import NOT_PRIVATE, not_private, spent
from . import costs
from .protocol import (
    AlgorithmInfo,
    CellContext,
    CellShape,
    Param,
    Row,
    independent_runs,
    without_default,
)


def _lloyd_inits(ctx: CellContext) -> tuple[np.ndarray, str]:
    """(init sets (S, k, d), the name of their streams): the spec's shared sets, or with
    ``init: points`` k distinct records per set, set i from its own stream (a reference
    baseline, not the paper's protocol)."""
    if ctx.params.get("init", "spec") == "spec":
        return ctx.init_sets(), ctx.init_method
    X = ctx.dataset.X
    sets = [
        X[ctx.init_streams.child("init", "points", i).choice(len(X), ctx.k, replace=False)]
        for i in range(ctx.n_init)
    ]
    return np.stack(sets), "points"


def _lloyd_cell(ctx: CellContext) -> tuple[list[Row], dict]:
    inits, method = _lloyd_inits(ctx)
    C, iters = lloyd_batch(ctx.dataset.X, inits, max_iter=ctx.params["max_iter"])
    scores = nicv(ctx.dataset.X, C)
    rows = [
        {
            "init": i,
            "rep": 0,
            "nicv": float(scores[i]),
            "iterations": int(iters[i]),
            **NOT_PRIVATE,
            "stream": ctx.init_streams.key("init", method, i),
        }
        for i in range(len(inits))
    ]
    return rows, not_private()


def _dplloyd_cell(ctx: CellContext, improved: bool) -> tuple[list[Row], dict]:
    X, p = ctx.dataset.X, ctx.params
    inits = ctx.init_sets(p.get("init"))
    n_sets = len(inits)
    runs = [(i, rep) for i in range(n_sets) for rep in range(ctx.repeat)]
    streams = [
        {
            "count": ctx.streams.child("run", i, rep, "count"),
            "sum": ctx.streams.child("run", i, rep, "sum"),
        }
        for i, rep in runs
    ]
    if improved:
        t = improved_iterations(ctx.epsilon, ctx.dataset.N, ctx.k, ctx.dataset.d, p["rho"])
    else:
        t = p["iterations"]
    C, ledger = dplloyd_batch(
        X,
        np.repeat(inits, ctx.repeat, axis=0),
        ctx.epsilon,
        streams,
        iterations=t,
        split="improved" if improved else "sensitivity",
        rho=p.get("rho", 0.225),
        min_count=p["min_count"],
    )
    scores = nicv(X, C)
    used = spent(ledger)
    rows = [
        {"init": i, "rep": rep, "nicv": float(scores[n]), "iterations": t, **used}
        for n, (i, rep) in enumerate(runs)
    ]
    return rows, ledger.to_dict()


def _eugkm_cell(ctx: CellContext) -> tuple[list[Row], dict]:
    X, p = ctx.dataset.X, ctx.params
    inits = ctx.init_sets()
    rows, ledger = [], None
    for s in range(ctx.repeat):
        res = eugkm(
            X,
            ctx.k,
            ctx.epsilon,
            inits,
            ctx.streams.child("synopsis", s),
            theta=p["theta"],
            rounding=p["rounding"],
            private_n=p["private_n"],
            max_iter=p["max_iter"],
            distances=p["distances"],
        )
        ledger = res.ledger
        rows.append(
            {
                "init": res.info["chosen_init"],
                "rep": s,
                "nicv": float(nicv(X, res.centroids)),
                "iterations": res.iterations,
                **spent(res.ledger),
                "cells": res.info["cells"],
                "stream": ctx.streams.key("synopsis", s),
            }
        )
    return rows, ledger.to_dict() if ledger else {}


def _lloyd_steps_cell(ctx: CellContext) -> tuple[list[Row], dict]:
    """Lloyd's NICV after each of the first ``steps`` iterations, per init set (Figure 4)."""
    X = ctx.dataset.X
    C = ctx.init_sets()
    rows = []
    for step in range(1, ctx.params["steps"] + 1):
        C, _ = lloyd_batch(X, C, max_iter=1)
        rows += [
            {
                "init": i,
                "rep": 0,
                "step": step,
                "nicv": float(v),
                "iterations": step,
                **NOT_PRIVATE,
                "stream": ctx.init_streams.key("init", ctx.init_method, i),
            }
            for i, v in enumerate(nicv(X, C))
        ]
    return rows, not_private()


def _gkm_cell(ctx: CellContext, mode: str) -> tuple[list[Row], dict]:
    """GkM / GkM-3K (``mode="gkm"``), SAG (no noise) or Noise (baseline + Eq.-3 noise)."""
    X, p, k = ctx.dataset.X, ctx.params, ctx.k
    rows, ledger = [], not_private("diagnostic, not private")
    best = None
    if mode == "noise":  # the baseline's best centroids: min-NICV Lloyd over the init sets
        C, _ = lloyd_batch(X, ctx.init_sets())
        best = C[int(np.argmin(nicv(X, C)))]
    for rep in range(ctx.repeat):
        rng = ctx.streams.child("run", rep)
        used, iters = NOT_PRIVATE, p.get("max_iter", 0)
        if mode == "gkm":
            res = gkm(
                X,
                k,
                ctx.epsilon,
                rng,
                p["block"],
                p["minit"],
                p["align"],
                p["max_iter"],
                noise=p["noise"],
            )
            out, blocks, used, ledger = (
                res.centroids,
                res.info["blocks"],
                spent(res.ledger),
                res.ledger.to_dict(),
            )
        elif mode == "sag":
            out, blocks = sample_and_aggregate(
                X, k, p["block"], rng, p["minit"], p["align"], p["max_iter"]
            )
        else:
            out = noise_diagnostic(
                best, ctx.dataset.N, ctx.epsilon, p["block"], rng, noise=p["noise"]
            )
            blocks = None
        row = {
            "init": 0,
            "rep": rep,
            "nicv": float(nicv(X, out)),
            "iterations": iters,
            **used,
            "stream": ctx.streams.key("run", rep),
        }
        size = block_size(p["block"], ctx.dataset.N, k)
        row.update(block_size=size, blocks=blocks or n_blocks(ctx.dataset.N, size))
        rows.append(row)
    return rows, ledger


def _genetic_cell(ctx: CellContext, private: bool) -> tuple[list[Row], dict]:
    """PGkM (one row per run) or Gene (one row per run and iteration, for Figure 4)."""
    X, p = ctx.dataset.X, ctx.params
    rows, ledger = [], {}
    for rep in range(ctx.repeat):
        res = genetic_kmeans(
            X,
            ctx.k,
            ctx.streams.child("run", rep),
            ctx.epsilon if private else None,
            pool=p["pool"],
            selected=p["selected"],
            iterations=p["iterations"],
            decay=p["decay"],
            trace=not private,
        )
        if private:
            ledger = res.ledger.to_dict()
            rows.append(
                {
                    "init": 0,
                    "rep": rep,
                    "nicv": float(nicv(X, res.centroids)),
                    "iterations": res.iterations,
                    **spent(res.ledger),
                    "stream": ctx.streams.key("run", rep),
                }
            )
        else:
            rows += [
                {
                    "init": 0,
                    "rep": rep,
                    "step": s + 1,
                    "nicv": v,
                    "iterations": s + 1,
                    **NOT_PRIVATE,
                    "stream": ctx.streams.key("run", rep),
                }
                for s, v in enumerate(res.info["trace"])
            ]
    return rows, ledger or not_private()


def _hybrid_cell(ctx: CellContext) -> tuple[list[Row], dict]:
    """A7 protocol: ``repeat`` synopses × ``lloyd_runs`` DPLloyd steps (or the fallback)."""
    X, p = ctx.dataset.X, ctx.params
    inits = ctx.init_sets()
    rows, ledger = [], {}
    for s in range(ctx.repeat):
        results = hybrid(
            X,
            ctx.k,
            ctx.epsilon,
            inits,
            ctx.streams.child("synopsis", s),
            lloyd_runs=p["lloyd_runs"],
            force=p["force"],
            theta=p["theta"],
            rounding=p["rounding"],
            max_iter=p["max_iter"],
            distances=p["distances"],
        )
        for j, res in enumerate(results):
            ledger = res.ledger.to_dict()
            rows.append(
                {
                    "init": s,
                    "rep": j,
                    "nicv": float(nicv(X, res.centroids)),
                    "iterations": res.iterations,
                    **spent(res.ledger),
                    "fell_back": bool(res.info["fell_back"]),
                    "cells": res.info["cells"],
                    "stream": ctx.streams.key("synopsis", s),
                }
            )
    return rows, ledger


def _eugkm_canonical(shape: CellShape) -> dict:
    """EUGkM depends on θ and the rounding rule only through m, the cells per axis, unless
    N itself is noisy (``private_n``). So θ values giving the same m (Figure 2: θ = 2 and
    5 at d = 10 both give m = 4) are one computation, computed once, and the θ lines of a
    sweep share their noise draws there (common random numbers)."""
    params = dict(shape.params)
    if params["private_n"]:
        return params
    m = cells_per_axis(shape.N, shape.epsilon, shape.d, params["theta"], params["rounding"])
    rest = {key: v for key, v in params.items() if key not in ("theta", "rounding")}
    return {**rest, "m": m}


def _hybrid_runs(shape: CellShape) -> int:
    """``repeat`` synopses, each followed by ``lloyd_runs`` DPLloyd steps, or by nothing when
    the switch (public N, d, k, ε only) falls back to EUGkM."""
    p = shape.params
    uses = (
        p["force"]
        or hybrid_switch(shape.N, shape.k, shape.d, shape.epsilon, t=5, theta=p["theta"])[
            "use_hybrid"
        ]
    )
    return shape.repeat * (p["lloyd_runs"] if uses else 1)


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


_GENE_PARAMS = {
    "pool": Param(200, int, "candidate pool size m", minimum=2),
    "selected": Param(10, int, "parameters selected per iteration m'", minimum=1),
    "iterations": Param(8, int, "iterations r_it (ε/(m'·r_it) per selection)", minimum=1),
    "decay": Param(0.7, float, "mutation width r·decay^(i−1)", minimum=0.0),
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
    switch = hybrid_switch(shape.N, shape.k, shape.d, shape.epsilon, t=5, theta=p["theta"])
    share = 0.5 if (switch["use_hybrid"] or p["force"]) else 1.0
    return _grid_fits(share)(shape)


def _selection_fits(shape: CellShape) -> tuple[str, str] | None:
    """Preflight of PGkM and Gene: m' parameters are selected from a pool of m."""
    if shape.params["selected"] > shape.params["pool"]:
        return "selected", f"must not exceed pool = {shape.params['pool']}"
    return None


PAPER_A: dict[str, AlgorithmInfo] = {
    "lloyd": AlgorithmInfo(
        "lloyd",
        "non-private Lloyd to convergence from each init set (baseline = min NICV)",
        private=False,
        repeat_default=1,
        repeat_doc="runs per init set (deterministic: 1)",
        run_cell=_lloyd_cell,
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
    ),
    "dplloyd": AlgorithmInfo(
        "dplloyd",
        "DPLloyd / SuLQ k-means, docs/methods.md A1",
        private=True,
        repeat_default=100,
        repeat_doc="runs per init set",
        run_cell=lambda c: _dplloyd_cell(c, improved=False),
        params={
            "iterations": Param(5, int, "t, iterations (ε/t each)", minimum=1),
            "min_count": _MIN_COUNT,
        },
    ),
    "dplloyd_improved": AlgorithmInfo(
        "dplloyd_improved",
        "improved DPLloyd (TOPS), docs/methods.md A2",
        private=True,
        repeat_default=100,
        repeat_doc="runs per init set",
        run_cell=lambda c: _dplloyd_cell(c, improved=True),
        params={
            "rho": Param(
                0.225,
                float,
                "ρ of the split c = (4dρ²)^(1/3)",
                check=lambda v: None if v > 0 else "must be > 0",
            ),
            "init": Param("sphere_packing", str, "initial sets", choices=INIT_METHODS),
            "min_count": _MIN_COUNT,
        },
    ),
    "eugkm": AlgorithmInfo(
        "eugkm",
        "noisy uniform grid + weighted k-means, docs/methods.md A3",
        private=True,
        repeat_default=10,
        repeat_doc="independent synopses",
        run_cell=_eugkm_cell,
        count_runs=lambda shape: shape.repeat,
        cost=costs.grid,
        canonical=_eugkm_canonical,
        arithmetic=("distances",),
        preflight=_grid_fits(),
        params={
            "theta": Param(10.0, float, "θ in M = (Nε/θ)^(2d/(2+d))", minimum=1e-9),
            "rounding": Param(
                "round", str, "cells per axis m = rounding(M^(1/d))", choices=tuple(ROUNDING)
            ),
            "private_n": Param(False, bool, "spend 5% of ε on a noisy N for choosing M"),
            "max_iter": Param(100, int, "weighted Lloyd iteration cap", minimum=1),
            "distances": _DISTANCES,
        },
    ),
    "lloyd_steps": AlgorithmInfo(
        "lloyd_steps",
        "non-private Lloyd, NICV after each of the first iterations (Fig. 4)",
        private=False,
        repeat_default=1,
        repeat_doc="runs per init set (deterministic: 1)",
        run_cell=_lloyd_steps_cell,
        count_runs=lambda shape: shape.n_init,
        params={"steps": Param(30, int, "iterations traced", minimum=1)},
    ),
    "gkm": independent_runs(
        "gkm",
        "GUPT sample-and-aggregate k-means, docs/methods.md A4 (GkM-3K: block: 3k)",
        True,
        lambda c: _gkm_cell(c, "gkm"),
        {**_GKM_PARAMS, "noise": _NOISE},
        cost=costs.gkm,
        canonical=_GKM_CANONICAL,
    ),
    "gkm_3k": independent_runs(
        "gkm_3k",
        "GkM with blocks of 3k records, docs/methods.md A4",
        True,
        lambda c: _gkm_cell(c, "gkm"),
        {
            **_GKM_PARAMS,
            "block": Param("3k", str, _GKM_PARAMS["block"].doc),
            "noise": _NOISE,
        },
        cost=costs.gkm,
        canonical=_GKM_CANONICAL,
    ),
    "gkm_sag": independent_runs(
        "gkm_sag",
        "SAG: GkM's block average without noise (Fig. 3 diagnostic, not private)",
        False,
        lambda c: _gkm_cell(c, "sag"),
        _GKM_PARAMS,
        cost=costs.gkm,
    ),
    "gkm_noise": independent_runs(
        "gkm_noise",
        "Noise: baseline centroids + GkM's noise (Fig. 3 diagnostic, not private)",
        True,
        lambda c: _gkm_cell(c, "noise"),
        {"block": _GKM_PARAMS["block"], "noise": _NOISE},
        canonical=_GKM_CANONICAL,
    ),
    "pgkm": independent_runs(
        "pgkm",
        "PrivGene k-means, docs/methods.md A5",
        True,
        lambda c: _genetic_cell(c, True),
        _GENE_PARAMS,
        cost=costs.gene,
        preflight=_selection_fits,
    ),
    "gene": independent_runs(
        "gene",
        "non-private genetic k-means (PGkM's twin), NICV per iteration (Fig. 4)",
        False,
        lambda c: _genetic_cell(c, False),
        {**_GENE_PARAMS, "iterations": Param(30, int, "iterations r_it", minimum=1)},
        repeat=10,
        cost=costs.gene,
        preflight=_selection_fits,
    ),
    "hybrid": AlgorithmInfo(
        "hybrid",
        "EUGkM(ε/2) then one DPLloyd iteration (ε/2), MSE switch, docs/methods.md A7",
        private=True,
        repeat_default=10,
        repeat_doc="EUGkM synopses (× lloyd_runs each)",
        run_cell=_hybrid_cell,
        count_runs=_hybrid_runs,
        cost=lambda shape: costs.grid(shape, share=0.5),  # an upper bound: EUGkM at ε/2
        arithmetic=("distances",),
        preflight=_hybrid_grid_fits,
        params={
            "lloyd_runs": Param(10, int, "DPLloyd runs per synopsis", minimum=1),
            "force": Param(False, bool, "skip the MSE fallback test (always hybrid)"),
            "theta": Param(10.0, float, "EUGkM θ", minimum=1e-9),
            "rounding": Param(
                "round", str, "EUGkM cells per axis rounding", choices=tuple(ROUNDING)
            ),
            "max_iter": Param(100, int, "weighted Lloyd iteration cap", minimum=1),
            "distances": _DISTANCES,
        },
    ),
}
