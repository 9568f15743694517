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
:class:`~dpcluster.privacy.Ledger` that books something, each release a positive finite ε
(or ∞ for a claim it cannot prove: :func:`external_claim`), and its provable totals and
its claims may not exceed the cell's ε and δ; every row's (ε, δ) columns are
written from that ledger, whatever the row says (non-private entries: ε = ``inf``, δ = 1);
a ``centroids`` value
must be finite and of shape (k, d); every row has integer ``init`` and ``rep``, a number
for each metric, and no (init, rep, step) twice. Any breach fails the cell, with its
traceback. Each plugin cell runs in a process of its own (:mod:`dpcluster.harness.isolated`),
so nothing it does reaches another cell.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import numpy as np

from .experiments.protocol import AlgorithmInfo, CellContext, Param, Row
from .privacy import Ledger, check_epsilon, not_private, spent
from .privacy.ledger import Spend
from .results import GROUP

__all__ = ["AlgorithmInfo", "CellContext", "Param", "algorithm", "external_claim"]


def external_claim(ledger, what: str, epsilon: float, delta: float = 0.0) -> None:
    """Book a release made by code dpcluster cannot vouch for (another library's fit) as a
    **claim only**: its rows show ``epsilon`` as claimed and ∞ as provable, never the
    other way round, until the ledger books what that code provably spends instead (as
    dpcluster/algorithms/comparators.py does for diffprivlib). ``ledger``: the run's
    :class:`~dpcluster.privacy.Ledger`."""
    from .privacy import ExactRelease

    for name, value, low_ok in (("epsilon", epsilon, False), ("delta", delta, True)):
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise PluginError(f"external_claim: {name} must be a number, got {value!r}")
        if not math.isfinite(value) or value < 0 or (value == 0 and not low_ok):
            raise PluginError(
                f"external_claim: {name} must be finite and "
                f"{'at least 0' if low_ok else 'positive'}, got {value!r}"
            )
    if delta >= 1:
        raise PluginError(f"external_claim: delta must be below 1, got {delta!r}")
    ledger.record(
        ExactRelease(
            what,
            claim=f"{what}: claimed by its authors, not proven here",
            claimed_epsilon=float(epsilon),
            claimed_delta=float(delta),
        ),
        what,
    )


#: the columns the harness writes into every row (the grouping columns of the tables, and
#: the run's bounds, seed, cell and time); a plugin's rows may not carry them
HARNESS_COLUMNS = (*GROUP, "bounds", "seed", "cell", "wall_time_s")


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
    title: str = "",
) -> Callable[[Callable[[CellContext], tuple[list[Row], Ledger | None]]], AlgorithmInfo]:
    """Turn a cell runner ``run(ctx) -> (rows, ledger)`` into a registry entry; ``title``
    is how figure legends name it (default: its name)."""

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
            rows = [dict(r) for r in rows]  # the rows themselves are checked by enforce
            if private and not isinstance(ledger, Ledger):
                raise PluginError(
                    f"{label} is private but returned {type(ledger).__name__} instead of a Ledger"
                )
            return rows, ledger.to_dict() if isinstance(ledger, Ledger) else not_private()

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
            title=title,
        )

    return wrap


def _check_rows(label: str, rows: list, metrics: tuple[str, ...], n_init: int) -> None:
    """Each row is a dict that leaves the harness's columns alone, has integer ``init`` in
    0..n_init − 1 and ``rep`` ≥ 0 (NumPy integers are made ints), and a real number for
    each declared metric (inf and NaN are numbers: they are counted as non-finite, not
    refused); no (init, rep, step) comes twice, since the tables' n would count it twice."""
    if not isinstance(rows, list | tuple):
        raise PluginError(f"{label}'s rows must be a list of dicts, one per run")
    seen = {}
    for n, row in enumerate(rows):
        if not isinstance(row, dict):
            raise PluginError(f"{label}: row {n} is a {type(row).__name__}, not a dict")
        taken = sorted(set(row) & set(HARNESS_COLUMNS))
        if taken:
            raise PluginError(f"{label}: row {n} sets {taken}, which the harness writes itself")
        for key in ("init", "rep"):
            value = row.get(key)
            if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
                raise PluginError(f"{label}: row {n} needs an integer {key!r}, has {value!r}")
            row[key] = int(value)
        if row["rep"] < 0 or not 0 <= row["init"] < n_init:
            raise PluginError(
                f"{label}: row {n} is init {row['init']}, rep {row['rep']}; init numbers one "
                f"of the spec's {n_init} initial sets (0..{n_init - 1}) and rep is >= 0"
            )
        missing = [m for m in metrics if m not in row]
        if missing:
            raise PluginError(f"{label}: row {n} lacks the metric(s) {missing} it declares")
        for m in metrics:
            value = row[m]
            if isinstance(value, bool | np.bool_) or not isinstance(
                value, int | float | np.integer | np.floating
            ):
                raise PluginError(
                    f"{label}: row {n}'s {m!r} is {value!r}, not a number (a metric is a real "
                    "number; inf and NaN are counted as non-finite)"
                )
        key = (row["init"], row["rep"], row.get("step"))
        if key in seen:
            step = "" if key[2] is None else f", step {key[2]!r}"
            raise PluginError(
                f"{label}: rows {seen[key]} and {n} are both init {key[0]}, rep {key[1]}{step}: "
                "each run is one row (or one per step)"
            )
        seen[key] = n


def _ledger_spend(label: str, ledger: dict) -> dict[str, float]:
    """The provable and claimed (ε, δ) of a plugin's ledger record, recomputed here from its
    entries as :class:`~dpcluster.privacy.Ledger` totals them (pure releases by basic
    composition, Gaussian ones as a zCDP group at the record's ``delta``), in the row
    columns of :func:`dpcluster.privacy.spent`. Each entry must book a positive finite ε,
    a δ in [0, 1) and a ρ ≥ 0."""
    entries = ledger.get("entries", []) if isinstance(ledger, dict) else None
    if not isinstance(entries, list):
        raise PluginError(f"{label}: its ledger is not a Ledger's record")
    group_delta = ledger.get("delta", 0.0)
    if not (_is_number(group_delta) and 0 <= group_delta < 1):
        raise PluginError(f"{label}: its ledger's δ is {group_delta!r}, not in [0, 1)")
    spends = []
    for n, entry in enumerate(entries):
        eps = entry.get("epsilon") if isinstance(entry, dict) else None
        delta = entry.get("delta", 0.0) if isinstance(entry, dict) else None
        rho = entry.get("rho", 0.0) if isinstance(entry, dict) else None
        # an ExactRelease (external_claim) books ∞: nothing proven, its claim kept
        exact = entry.get("mechanism") == "ExactRelease" and eps == math.inf
        ok = (exact or check_epsilon(eps) is None) and _is_number(delta) and 0 <= delta < 1
        if not ok or not (_is_number(rho) and 0 <= rho < math.inf):
            raise PluginError(
                f"{label}: ledger entry {n} books ε = {eps!r}, δ = {delta!r}, ρ = {rho!r}; "
                "every release must book a positive finite ε, a δ in [0, 1) and a ρ ≥ 0"
            )
        spends.append(
            Spend(
                purpose=str(entry.get("purpose", "")),
                mechanism=str(entry.get("mechanism", "")),
                epsilon=float(eps),
                sensitivity=0.0,
                scale=0.0,
                delta=float(delta),
                claimed_epsilon=float(entry.get("claimed_epsilon", eps)),
                claimed_delta=float(entry.get("claimed_delta", delta)),
                rho=float(rho),
            )
        )
    return spent(Ledger(entries=spends, delta=float(group_delta)))


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def enforce(label: str, info: AlgorithmInfo, ctx: CellContext, rows: list, ledger: dict) -> None:
    """What the harness holds every plugin cell to, whatever made its entry (the decorator
    or a hand-built :class:`AlgorithmInfo`): each row's (ε, δ) columns are the cell ledger's
    totals, recomputed here from its entries (non-private entries: ε = ∞); a private ε must
    be positive and at most the cell's ε, its δ at most the cell's δ; released
    ``centroids`` must be finite and of shape (k, d). Rows are changed in place; a breach
    raises :class:`PluginError`."""
    if info.private:
        used = _ledger_spend(label, ledger)
        provable, delta = used["epsilon_provable"], used["delta_provable"]
        if provable <= 0:
            raise PluginError(f"{label} is private but its ledger books nothing")
        if math.isfinite(provable) and provable > ctx.epsilon * (1 + 1e-9):
            raise PluginError(f"{label} books ε = {provable:g} in a cell of ε = {ctx.epsilon:g}")
        claimed = used["epsilon_claimed"]
        if claimed > ctx.epsilon * (1 + 1e-9):
            raise PluginError(f"{label} claims ε = {claimed:g} in a cell of ε = {ctx.epsilon:g}")
        if delta > ctx.delta * (1 + 1e-9):
            raise PluginError(f"{label} books δ = {delta:g} in a cell of δ = {ctx.delta:g}")
        claimed_delta = used.get("delta_claimed", 0.0)
        if claimed_delta > ctx.delta * (1 + 1e-9):
            raise PluginError(
                f"{label} claims δ = {claimed_delta:g} in a cell of δ = {ctx.delta:g}"
            )
    else:
        used = spent(None)
    k, d = ctx.k, ctx.dataset.d
    _check_rows(label, rows, info.metrics, ctx.n_init)
    for n, row in enumerate(rows):
        row.update(used)
        if row.get("centroids") is None:
            continue
        try:
            raw = row["centroids"]
            centres = np.asarray(json.loads(raw) if isinstance(raw, str) else raw, dtype=float)
        except (ValueError, TypeError):
            raise PluginError(f"{label}: row {n}'s centroids are not numbers") from None
        if centres.shape != (k, d) or not np.all(np.isfinite(centres)):
            finite = "" if np.all(np.isfinite(centres)) else " with non-finite values"
            raise PluginError(
                f"{label}: row {n} releases centroids of shape {centres.shape}{finite}; "
                f"expected finite ({k}, {d})"
            )
