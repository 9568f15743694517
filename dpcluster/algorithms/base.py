"""What every algorithm entry declares: its parameters, protocol and cell runner.

A *cell* is one (dataset, algorithm + params, ε) combination of a spec. Its runner gets a
:class:`CellContext` and returns (rows, ledger dict): one row per run, holding the run's
``init`` and ``rep`` indices, its metrics, and ``epsilon_claimed`` and
``epsilon_provable`` (:func:`dpcluster.privacy.spent`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data import Dataset
from ..rng import StreamFactory
from .init import initial_sets


@dataclass(frozen=True)
class Param:
    """One algorithm parameter: default, type, allowed values, lower bound and meaning."""

    default: Any
    kind: type
    doc: str
    choices: tuple | None = None
    minimum: float | None = None
    #: returns a problem description for a bad value, or None
    check: Callable[[Any], str | None] | None = None


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
    #: the metric columns its rows carry (a spec's first metric must be among them)
    metrics: tuple[str, ...] = ("nicv",)
    #: rough seconds on one core for a cell, ``cost(N, d, k, ε, params, repeat, n_init)``;
    #: None means the harness's generic data-pass estimate (scheduling and ETA only)
    cost: Callable[[int, int, int, float, dict, int, int], float] | None = None
    #: ``canonical(N, d, ε, params) -> dict``: the parameters that actually determine the
    #: computation (EUGkM: m instead of θ and rounding). Cells whose canonical parameters
    #: agree are one computation: same identity, same streams, computed once. None: the
    #: spec's parameters as given.
    canonical: Callable[[int, int, float, dict], dict] | None = None
    #: parameters that change only the arithmetic, not which random numbers are drawn
    #: (EUGkM's ``distances``). They are part of a cell's identity but not of its streams, so
    #: cells that differ only in them see the same noise and compare run for run.
    arithmetic: tuple[str, ...] = ()




def independent_runs(name: str, summary: str, private: bool, run_cell, params: dict,
                     repeat: int = 100, doc: str = "independent runs",
                     metrics: tuple[str, ...] = ("nicv",), cost=None) -> AlgorithmInfo:
    """An entry whose protocol is ``repeat`` independent runs (no init sets)."""
    return AlgorithmInfo(name, summary, private=private, repeat_default=repeat, repeat_doc=doc,
                         run_cell=run_cell, params=params,
                         count_runs=lambda repeat, n_init: repeat, metrics=metrics, cost=cost)
