"""Paper A's cell runners: how each entry of :mod:`.paper_a` turns one cell into rows
(the papers' protocols: shared init sets, repeats, NICV; docs/methods.md A1-A7)."""

from __future__ import annotations

import numpy as np

from ..algorithms.dplloyd import RHO, dplloyd_batch, improved_iterations
from ..algorithms.eugkm import cells_per_axis, eugkm
from ..algorithms.gkm import (
    block_size,
    gkm,
    n_blocks,
    noise_diagnostic,
    sample_and_aggregate,
)
from ..algorithms.hybrid import hybrid
from ..algorithms.lloyd import lloyd_batch
from ..algorithms.methods import gaussian_budget
from ..algorithms.pgkm import genetic_kmeans
from ..analysis import hybrid_switch
from ..analysis.mse import SWITCH_T
from ..kernels import nicv
from ..privacy import NOT_PRIVATE, not_private, spent
from ..privacy.ledger import book_exact_count
from .protocol import (
    CellContext,
    CellShape,
    Row,
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


def lloyd_cell(ctx: CellContext) -> tuple[list[Row], dict]:
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


def dplloyd_cell(ctx: CellContext, improved: bool) -> tuple[list[Row], dict]:
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
        rho=p.get("rho", RHO),
        min_count=p["min_count"],
        clip_radius=ctx.dataset.ball,  # a public ball domain bounds the sums (None: the box)
        **gaussian_budget(ctx.epsilon, ctx.delta),
    )
    if improved:  # A2's t read the exact N, as the paper does
        book_exact_count(ledger, "A2's iteration count t")
    scores = nicv(X, C)
    used = spent(ledger)
    rows = [
        {"init": i, "rep": rep, "nicv": float(scores[n]), "iterations": t, **used}
        for n, (i, rep) in enumerate(runs)
    ]
    return rows, ledger.to_dict()


def eugkm_cell(ctx: CellContext) -> tuple[list[Row], dict]:
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


def lloyd_steps_cell(ctx: CellContext) -> tuple[list[Row], dict]:
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


def gkm_cell(ctx: CellContext, mode: str) -> tuple[list[Row], dict]:
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


def genetic_cell(ctx: CellContext, private: bool) -> tuple[list[Row], dict]:
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


def hybrid_cell(ctx: CellContext) -> tuple[list[Row], dict]:
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


def eugkm_canonical(shape: CellShape) -> dict:
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


def hybrid_runs(shape: CellShape) -> int:
    """``repeat`` synopses, each followed by ``lloyd_runs`` DPLloyd steps, or by nothing when
    the switch (public N, d, k, ε only) falls back to EUGkM."""
    p = shape.params
    uses = (
        p["force"]
        or hybrid_switch(shape.N, shape.k, shape.d, shape.epsilon, t=SWITCH_T, theta=p["theta"])[
            "use_hybrid"
        ]
    )
    return shape.repeat * (p["lloyd_runs"] if uses else 1)
