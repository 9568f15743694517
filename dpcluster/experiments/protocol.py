"""What every entry of the registry declares, and the two objects its callables receive.

A *cell* is one (dataset, algorithm + params, ε) combination of a spec: the unit of work,
caching and resumption. An entry (:class:`AlgorithmInfo`) declares its parameters, its
protocol (runs per cell) and its *cell runner*: ``run_cell(ctx: CellContext) -> (rows,
ledger dict)``, one row per run with its ``init`` and ``rep`` indices, its metrics and
``epsilon_claimed`` / ``epsilon_provable`` (:func:`dpcluster.privacy.spent`). The planning
callables (runs, cost, canonical parameters) get a :class:`CellShape`, which needs no data.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..algorithms.init import initial_sets
from ..data import Dataset
from ..kernels import nicv
from ..privacy import spent
from ..rng import StreamFactory

#: metrics scored against the data's ground-truth classes: a spec may ask for them only
#: of datasets that have classes
CLASS_METRICS = ("ari", "nmi", "ami", "homogeneity", "completeness", "v_measure")


class ParamError(ValueError):
    """A value a :class:`Param` refuses: ``problem`` says why, ``hint`` what would do."""

    def __init__(self, problem: str, hint: str = ""):
        super().__init__(problem + (f". {hint}" if hint else ""))
        self.problem, self.hint = problem, hint


@dataclass(frozen=True)
class Param:
    """One algorithm parameter: default, type, allowed values, bounds and meaning."""

    default: Any
    kind: type
    doc: str
    choices: tuple | None = None
    minimum: float | None = None
    #: the largest value, and why (``maximum_reason`` is the error's hint)
    maximum: float | None = None
    maximum_reason: str = ""
    #: returns a problem description for a bad value, or None
    check: Callable[[Any], str | None] | None = None
    #: how a figure's legend writes the parameter (the paper's symbol, e.g. "θ"); "" for its
    #: name
    symbol: str = ""

    def coerce(self, value: Any) -> Any:
        """``value`` as this parameter's type, or a :class:`ParamError`: a bool is never a
        number, an int is a float, a float must be finite, a number may name a string
        (a block size), and ``check``, ``choices``, ``minimum`` and ``maximum`` apply. The
        one check of a spec's parameters and of the estimators' ``method_params``."""
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ParamError("must be true or false")
        elif self.kind is int:
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ParamError("must be an integer")
            value = int(value)
        elif self.kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
                raise ParamError("must be a number")
            value = float(value)
            if not math.isfinite(value):
                raise ParamError("must be a finite number")
        elif self.kind is str and not isinstance(value, str):
            if isinstance(value, int) and not isinstance(value, bool):
                value = str(value)  # e.g. a block size written as a number
            else:
                raise ParamError("must be a string")
        if self.check is not None and (problem := self.check(value)):
            raise ParamError(problem)
        if self.choices is not None and value not in self.choices:
            from ..errors import did_you_mean

            raise ParamError(
                "is not an allowed value", did_you_mean(str(value), [str(c) for c in self.choices])
            )
        if self.minimum is not None and value < self.minimum:
            raise ParamError(f"must be >= {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise ParamError(f"must be <= {self.maximum:,}", self.maximum_reason)
        return value


#: the most iterations a private iterative algorithm takes: each gets ε/t, so beyond this
#: every release is noise, and the ledger keeps every iteration's spends (memory ∝ t)
PRIVATE_ITERATIONS_MAX = 10_000
PRIVATE_ITERATIONS_REASON = (
    "each iteration spends ε/t, so more iterations only add noise, and the ledger keeps "
    "every iteration's spends"
)


def private_iterations(default: int, doc: str, minimum: int = 1) -> Param:
    """An iteration count of a private algorithm, at most :data:`PRIVATE_ITERATIONS_MAX`."""
    return Param(
        default,
        int,
        doc,
        minimum=minimum,
        maximum=PRIVATE_ITERATIONS_MAX,
        maximum_reason=PRIVATE_ITERATIONS_REASON,
    )


@dataclass(frozen=True, kw_only=True)
class CellShape:
    """A cell as its planning sees it: the dataset's shape, ε (inf: non-private), the
    algorithm's parameters, runs per init set (``repeat``) and the number of init sets."""

    N: int
    d: int
    k: int
    epsilon: float
    params: Mapping[str, Any]
    repeat: int
    n_init: int
    #: the spec's δ (0: pure ε)
    delta: float = 0.0


@dataclass(frozen=True, kw_only=True)
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
    #: the spec's δ; 0 is pure ε. A fit that takes ``delta`` spends (ε, δ) with Gaussian
    #: noise; every other fit stays pure ε, which is (ε, δ) for any δ
    delta: float = 0.0
    #: the spec's ``seeds``: run ``i`` then draws from ``numpy.random.default_rng(seeds[i])``
    #: (the estimator pipeline, :mod:`.pipeline`); () for the identity streams
    seeds: tuple[int, ...] = ()

    def init_sets(self, method: str | None = None) -> np.ndarray:
        return initial_sets(
            self.init_streams, self.n_init, self.k, self.dataset.d, method or self.init_method
        )


Row = dict[str, Any]


def _per_init_set(shape: CellShape) -> int:
    return shape.repeat * shape.n_init


#: arguments a central fit sets itself, never ``method_params``: the data, k, ε, starts,
#: the generator, the box's radii (on which every sensitivity rests), tracing, and what the
#: estimator and the plan pass (a released count n, δ, a ball domain, ε's booked before)
OWN_ARGUMENTS = frozenset(
    {"X", "Z", "k", "epsilon", "init", "inits", "rng", "r", "trace", "n", "delta", "ball", "before"}
    # the budget and domain a fit derives from ε, δ and the ball itself, never a user's
    | {"zcdp", "clip_radius"}
)


@dataclass(frozen=True)
class CentralFit:
    """How :class:`~dpcluster.DPKMeans` runs an entry by name.

    function  ``function(Z, k, epsilon, rng, r, **params) -> DPResult`` on records Z (N, d)
              inside the centred public box ∏ [-r_j, r_j] (r: one radius or (d,) radii)
    params    the ``method_params`` it accepts: name -> :class:`Param`
    """

    function: Callable
    params: dict[str, Param]


def central_fit(
    function: Callable, table: Mapping[str, Param], *algorithms: Callable, extra=None
) -> CentralFit:
    """A :class:`CentralFit` whose parameters are the keyword parameters (with defaults) of
    ``function`` and of the ``algorithms`` it passes ``**params`` to, typed by the entry's
    own ``table`` where it names them, else by their defaults; ``extra`` overrides."""
    import inspect

    params: dict[str, Param] = {}
    for fn in (function, *algorithms):
        for key, p in inspect.signature(fn).parameters.items():
            if key in OWN_ARGUMENTS or p.default is inspect.Parameter.empty or key in params:
                continue
            default = p.default
            known = table.get(key)
            params[key] = (
                dataclasses.replace(known, default=default)
                if known is not None
                else Param(default, type(default) if default is not None else str, "", minimum=0)
            )
    params.update(extra or {})
    return CentralFit(function, params)


#: seconds a Paper A entry's first cell of a new k or d spends compiling (run --dry-run)
COMPILE_S = 2.2


@dataclass(frozen=True)
class AlgorithmInfo:
    name: str
    summary: str
    private: bool
    repeat_default: int
    repeat_doc: str
    run_cell: Callable[[CellContext], tuple[list[Row], dict]]
    params: dict[str, Param] = field(default_factory=dict)
    #: runs in one cell
    count_runs: Callable[[CellShape], int] = _per_init_set
    #: the metric columns its rows carry (a spec's first metric must be among them)
    metrics: tuple[str, ...] = ("nicv",)
    #: rough seconds on one core for a cell; None: the harness's generic data-pass estimate
    #: (scheduling and ETA only, never results)
    cost: Callable[[CellShape], float] | None = None
    #: the parameters that actually determine the computation (EUGkM: m instead of θ and
    #: rounding). Cells whose canonical parameters agree are one computation: same identity,
    #: same streams, computed once. None: the spec's parameters as given.
    canonical: Callable[[CellShape], dict] | None = None
    #: parameters that change only the arithmetic, not which random numbers are drawn
    #: (EUGkM's ``distances``): part of a cell's identity but not of its streams
    arithmetic: tuple[str, ...] = ()
    #: ``(parameter, problem)`` when a cell of this shape cannot run (parameters that
    #: contradict each other or the data's shape), checked before any work; None: it can
    preflight: Callable[[CellShape], tuple[str, str] | None] | None = None
    #: how DPKMeans runs it (``DPKMeans(method=name)``); None: not a central k-means method
    fit: CentralFit | None = None
    #: the shape values its kernels are compiled for ("k", "d"): a cell with a value this
    #: entry has not run on this install yet compiles (``run --dry-run`` only)
    compile_on: tuple[str, ...] = ("d",)
    #: rough seconds each such new value costs (fitted in docs/performance.md)
    compile_s: float = COMPILE_S
    #: the name the papers' figures give it (legends); "" for the registry name
    title: str = ""


def independent_runs(
    name: str,
    summary: str,
    private: bool,
    run_cell,
    params: dict,
    repeat: int = 100,
    doc: str = "independent runs",
    metrics: tuple[str, ...] = ("nicv",),
    cost=None,
    canonical=None,
    preflight=None,
    fit: CentralFit | None = None,
    compile_s: float = COMPILE_S,
    title: str = "",
) -> AlgorithmInfo:
    """An entry whose protocol is ``repeat`` independent runs (no init sets)."""
    return AlgorithmInfo(
        name,
        summary,
        private=private,
        repeat_default=repeat,
        repeat_doc=doc,
        run_cell=run_cell,
        params=params,
        count_runs=lambda shape: shape.repeat,
        metrics=metrics,
        cost=cost,
        canonical=canonical,
        preflight=preflight,
        fit=fit,
        compile_s=compile_s,
        title=title,
    )


def fit_runs(ctx: CellContext, fit: CentralFit, columns=()) -> tuple[list[Row], dict]:
    """``repeat`` independent fits on the cell's records (the papers' cube, r = 1), run
    ``rep`` from the stream ``("run", rep)``; each row carries the fit's ``info`` values
    named in ``columns``."""
    rows, ledger = [], {}
    taken = inspect.signature(fit.function).parameters
    extra = {"delta": ctx.delta} if ctx.delta and "delta" in taken else {}
    if ctx.dataset.ball is not None and "ball" in taken:
        extra["ball"] = ctx.dataset.ball  # a public ball domain bounds the sums

    for rep in range(ctx.repeat):
        rng = ctx.streams.child("run", rep)
        res = fit.function(ctx.dataset.X, ctx.k, ctx.epsilon, rng, 1.0, **ctx.params, **extra)
        ledger = res.ledger.to_dict()
        rows.append(
            {
                "init": 0,
                "rep": rep,
                "nicv": float(nicv(ctx.dataset.X, res.centroids)),
                "iterations": res.iterations,
                **spent(res.ledger),
                **{c: res.info[c] for c in columns},
                "stream": ctx.streams.key("run", rep),
            }
        )
    return rows, ledger


def central_method(
    name: str, summary: str, fit: CentralFit, repeat: int = 10, columns=(), **kwargs
) -> AlgorithmInfo:
    """A private central k-means entry declared once: ``repeat`` independent fits per cell
    (:func:`fit_runs`), its spec parameters the fit's, ``DPKMeans(method=name)`` runs it, and
    the audit takes it as a generic target. ``columns``: ``info`` values each row carries."""
    return independent_runs(
        name,
        summary,
        True,
        lambda ctx: fit_runs(ctx, fit, columns),
        dict(fit.params),
        repeat=repeat,
        fit=fit,
        **kwargs,
    )


def without_default(key: str, default) -> Callable[[CellShape], dict]:
    """A ``canonical`` view that leaves parameter ``key`` out of a cell's identity while it
    has the value ``default``: cells computed before the parameter existed stay the same
    computation."""
    return lambda shape: {k: v for k, v in shape.params.items() if not (k == key and v == default)}
