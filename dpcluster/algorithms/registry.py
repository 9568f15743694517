"""The algorithm registry: each entry declares its parameters, protocol and cell runner.

A *cell* is one (dataset, algorithm + params, ε) combination of a spec. Its runner gets a
:class:`CellContext` and returns one row per run. Adding an algorithm (GkM, PGkM, the
hybrid, DPBV, …) means adding one :class:`AlgorithmInfo` here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data import Dataset
from ..kernels import nicv
from ..rng import StreamFactory
from .dplloyd import dplloyd_batch, improved_iterations
from .eugkm import ROUNDING, eugkm
from .init import INIT_METHODS, initial_sets
from .lloyd import lloyd_batch


@dataclass(frozen=True)
class Param:
    """One algorithm parameter: default, type, allowed values, lower bound and meaning."""

    default: Any
    kind: type
    doc: str
    choices: tuple | None = None
    minimum: float | None = None


@dataclass(frozen=True)
class CellContext:
    """Everything a cell runner needs. ``init_sets(method)`` gives the shared (S, k, d) sets."""

    dataset: Dataset
    k: int
    epsilon: float
    params: dict
    repeat: int
    n_init: int
    init_method: str
    streams: StreamFactory
    init_streams: StreamFactory

    def init_sets(self, method: str | None = None) -> np.ndarray:
        return initial_sets(self.init_streams, self.n_init, self.k, self.dataset.d,
                            method or self.init_method)


Row = dict[str, Any]


@dataclass(frozen=True)
class AlgorithmInfo:
    name: str
    summary: str
    private: bool
    repeat_default: int
    repeat_doc: str
    run_cell: Callable[[CellContext], tuple[list[Row], dict]]
    params: dict[str, Param] = field(default_factory=dict)
    #: runs in one cell given (repeat, number of init sets)
    count_runs: Callable[[int, int], int] = lambda repeat, n_init: repeat * n_init


def _lloyd_cell(ctx: CellContext) -> tuple[list[Row], dict]:
    inits = ctx.init_sets()
    C, iters = lloyd_batch(ctx.dataset.X, inits, max_iter=ctx.params["max_iter"])
    scores = nicv(ctx.dataset.X, C)
    rows = [{"init": i, "rep": 0, "nicv": float(scores[i]), "iterations": int(iters[i]),
             "epsilon_spent": 0.0} for i in range(len(inits))]
    return rows, {"total_epsilon": 0.0, "entries": []}


def _dplloyd_cell(ctx: CellContext, improved: bool) -> tuple[list[Row], dict]:
    X, p = ctx.dataset.X, ctx.params
    inits = ctx.init_sets(p.get("init"))
    n_sets = len(inits)
    runs = [(i, rep) for i in range(n_sets) for rep in range(ctx.repeat)]
    streams = [{"count": ctx.streams.child("run", i, rep, "count"),
                "sum": ctx.streams.child("run", i, rep, "sum")} for i, rep in runs]
    if improved:
        t = improved_iterations(ctx.epsilon, ctx.dataset.N, ctx.k, ctx.dataset.d, p["rho"])
    else:
        t = p["iterations"]
    C, ledger = dplloyd_batch(X, np.repeat(inits, ctx.repeat, axis=0), ctx.epsilon, streams,
                              iterations=t, split="improved" if improved else "sensitivity",
                              rho=p.get("rho", 0.225), min_count=p["min_count"])
    scores = nicv(X, C)
    spent = ledger.total_epsilon
    rows = [{"init": i, "rep": rep, "nicv": float(scores[n]), "iterations": t,
             "epsilon_spent": spent} for n, (i, rep) in enumerate(runs)]
    return rows, ledger.to_dict()


def _eugkm_cell(ctx: CellContext) -> tuple[list[Row], dict]:
    X, p = ctx.dataset.X, ctx.params
    inits = ctx.init_sets()
    rows, ledger = [], None
    for s in range(ctx.repeat):
        res = eugkm(X, ctx.k, ctx.epsilon, inits, ctx.streams.child("synopsis", s),
                    theta=p["theta"], rounding=p["rounding"], private_n=p["private_n"],
                    max_iter=p["max_iter"])
        ledger = res.ledger
        rows.append({"init": res.info["chosen_init"], "rep": s,
                     "nicv": float(nicv(X, res.centroids)), "iterations": res.iterations,
                     "epsilon_spent": res.ledger.total_epsilon, "cells": res.info["cells"]})
    return rows, ledger.to_dict() if ledger else {}


_MIN_COUNT = Param(0.0, float, "a cluster whose noisy count is <= this keeps its centroid "
                   "(METHODS A1 ASSUMPTION; option 1)")

ALGORITHMS: dict[str, AlgorithmInfo] = {
    "lloyd": AlgorithmInfo(
        "lloyd", "non-private Lloyd to convergence from each init set (baseline = min NICV)",
        private=False, repeat_default=1, repeat_doc="runs per init set (deterministic: 1)",
        run_cell=_lloyd_cell, count_runs=lambda repeat, n_init: n_init,
        params={"max_iter": Param(300, int, "iteration cap; stops earlier when no point "
                                  "changes cluster", minimum=1)},
    ),
    "dplloyd": AlgorithmInfo(
        "dplloyd", "DPLloyd / SuLQ k-means, METHODS A1", private=True, repeat_default=100,
        repeat_doc="runs per init set", run_cell=lambda c: _dplloyd_cell(c, improved=False),
        params={"iterations": Param(5, int, "t, iterations (ε/t each)", minimum=1),
                "min_count": _MIN_COUNT},
    ),
    "dplloyd_improved": AlgorithmInfo(
        "dplloyd_improved", "improved DPLloyd (TOPS), METHODS A2", private=True,
        repeat_default=100, repeat_doc="runs per init set",
        run_cell=lambda c: _dplloyd_cell(c, improved=True),
        params={"rho": Param(0.225, float, "ρ of the split c = (4dρ²)^(1/3)", minimum=0.0),
                "init": Param("sphere_packing", str, "initial sets", choices=INIT_METHODS),
                "min_count": _MIN_COUNT},
    ),
    "eugkm": AlgorithmInfo(
        "eugkm", "noisy uniform grid + weighted k-means, METHODS A3", private=True,
        repeat_default=10, repeat_doc="independent synopses", run_cell=_eugkm_cell,
        count_runs=lambda repeat, n_init: repeat,
        params={"theta": Param(10.0, float, "θ in M = (Nε/θ)^(2d/(2+d))", minimum=1e-9),
                "rounding": Param("round", str, "cells per axis m = rounding(M^(1/d))",
                                  choices=tuple(ROUNDING)),
                "private_n": Param(False, bool, "spend 5% of ε on a noisy N for choosing M"),
                "max_iter": Param(100, int, "weighted Lloyd iteration cap", minimum=1)},
    ),
}
