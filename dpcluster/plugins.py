"""Your own algorithm next to the papers' (docs/plugins.md).

An entry is a *cell runner* plus what it declares::

    from dpcluster.plugins import Param, algorithm
    from dpcluster.privacy import LaplaceMechanism, Ledger, spent

    @algorithm(private=True, summary="my private k-means", repeat=20,
               params={"iterations": Param(5, int, "t", minimum=1)})
    def my_kmeans(ctx):                     # ctx: dpcluster.experiments.CellContext
        rows, ledger = [], None
        for rep in range(ctx.repeat):
            rng = ctx.streams.child("run", rep)   # streams come from the cell's identity
            ledger = Ledger()
            ...                               # ledger.record(mechanism, purpose) per release
            rows.append({"init": 0, "rep": rep, "nicv": value, **spent(ledger)})
        return rows, ledger

A spec names it ``"module:my_kmeans"`` (the module importable from the spec's folder or
installed), or an installed package declares it under the entry-point group
``dpcluster.algorithms``. The runner gets a :class:`~dpcluster.experiments.CellContext`:
``dataset`` (X in [-1, 1]^d, N, d, k, raw, domain), ``k``, ``epsilon``, ``params`` (the
declared ones, validated), ``repeat``, ``n_init``/``init_sets()`` and ``streams``. It
returns one row per run (``init``, ``rep``, the metrics) and the ledger of a run.

What is enforced (here and by the harness): a private entry must return a
:class:`~dpcluster.privacy.Ledger` that books something, each release a positive finite ε,
and its provable total may not exceed the cell's ε; every row's ε columns are written from
that ledger, whatever the row says (non-private entries: ``inf``); a ``centroids`` value
must be finite and of shape (k, d). Any breach fails the cell, with its traceback.
"""

from __future__ import annotations

from collections.abc import Callable

from .experiments.protocol import HARNESS_COLUMNS, AlgorithmInfo, CellContext, Param, Row
from .privacy import NOT_PRIVATE, Ledger, spent

__all__ = ["AlgorithmInfo", "CellContext", "Param", "algorithm"]


class PluginError(RuntimeError):
    """A plugin broke the entry protocol (reported as the cell's failure)."""


def algorithm(
    private: bool,
    summary: str = "",
    params: dict[str, Param] | None = None,
    repeat: int = 10,
    repeat_doc: str = "independent runs",
    metrics: tuple[str, ...] = ("nicv",),
    name: str = "",
) -> Callable[[Callable[[CellContext], tuple[list[Row], Ledger | None]]], AlgorithmInfo]:
    """Turn a cell runner ``run(ctx) -> (rows, ledger)`` into a registry entry."""

    def wrap(run):
        label = name or run.__name__

        def run_cell(ctx: CellContext):
            out = run(ctx)
            if not (isinstance(out, tuple | list) and len(out) == 2):
                raise PluginError(
                    f"{label} must return (rows, ledger), returned {type(out).__name__}"
                )
            rows, ledger = out
            if not isinstance(rows, list | tuple) or not all(isinstance(r, dict) for r in rows):
                raise PluginError(f"{label}'s rows must be a list of dicts, one per run")
            for n, r in enumerate(rows):
                taken = sorted(set(r) & set(HARNESS_COLUMNS))
                if taken:
                    raise PluginError(
                        f"{label}: row {n} sets {taken}, which the harness writes itself"
                    )
                missing = [m for m in metrics if m not in r]
                if missing:
                    raise PluginError(f"{label}: row {n} lacks the metric(s) {missing} it declares")
                for key in ("init", "rep"):
                    if isinstance(r.get(key), bool) or not isinstance(r.get(key), int):
                        raise PluginError(
                            f"{label}: row {n} needs an integer {key!r}, has {r.get(key)!r}"
                        )
            rows = [dict(r) for r in rows]
            if private:
                if not isinstance(ledger, Ledger):
                    raise PluginError(
                        f"{label} is private but returned "
                        f"{type(ledger).__name__} instead of a Ledger"
                    )
                if ledger.total_epsilon > ctx.epsilon * (1 + 1e-9):
                    raise PluginError(
                        f"{label} books ε = {ledger.total_epsilon:g} in a cell "
                        f"of ε = {ctx.epsilon:g}"
                    )
                defaults = spent(ledger)
            else:
                defaults = NOT_PRIVATE
            for r in rows:  # the ledger's word, never the row's own
                r.update(defaults)
            return rows, ledger.to_dict() if isinstance(ledger, Ledger) else {
                "entries": [],
                "note": "not private",
            }

        return AlgorithmInfo(
            label,
            summary or (run.__doc__ or label).strip().splitlines()[0],
            private=private,
            repeat_default=repeat,
            repeat_doc=repeat_doc,
            run_cell=run_cell,
            params=dict(params or {}),
            count_runs=lambda shape: shape.repeat,
            metrics=metrics,
        )

    return wrap
