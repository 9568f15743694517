"""A generic audit target for any registry entry, a plugin's included: one cell per trial
on the central pair, its output and ledger as the entry returns them."""

from __future__ import annotations

import json
import math

import numpy as np

from ..errors import DpclusterError
from .targets import D_CENTRAL, K_CENTRAL, N_CENTRAL, Target, central_pair


class _LedgerTotals:
    """The totals of a ledger dict (what a registry entry's cell runner returns)."""

    def __init__(self, ledger: dict):
        self.total_epsilon = float(ledger.get("total_epsilon", math.inf))
        self.claimed_epsilon = float(ledger.get("claimed_epsilon", self.total_epsilon))
        self.total_delta = float(ledger.get("total_delta", 0.0))
        self.claimed_delta = float(ledger.get("claimed_delta", self.total_delta))
        #: the entries as dicts (purpose, mechanism, epsilon, delta, rho, ...)
        self.entry_dicts = list(ledger.get("entries", []))


def entry_target(
    name: str, info, params: dict | None = None, trials: int = 2_000, delta: float = 0.0
) -> Target:
    """A central target for any registry entry (a plugin's too): one cell of ``repeat`` 1
    per trial on the standard pair (D, D + corner), streams from the trial's generator.
    The black-box bound needs the run's output: a ``centroids`` value in its row (a list
    or a JSON string); the metrics are no output (NICV is computed on the private data
    itself). ``delta``: the cells' δ (0: pure ε). The white-box bound applies when the
    entry releases through dpcluster's mechanisms and ``release`` hook, as the built-ins
    do, and goes on with what ``release`` returns (the replay audit hands it values)."""
    from ..data import Dataset
    from ..experiments import CellContext
    from ..plugins import enforce
    from ..rng import StreamFactory

    values = {key: p.default for key, p in info.params.items()}
    values.update(params or {})

    def run(X, epsilon, rng, n, trial=None):
        d = X.shape[1]
        ds = Dataset(
            name="audit",
            X=X,
            k=K_CENTRAL,
            label="audit pair",
            lo=-np.ones(d),
            hi=np.ones(d),
            bounds="public",
        ).read_only()  # every trial sees the same records, whatever the entry does
        out, ledger = [], None
        for i, g in enumerate(rng.spawn(n)):
            if trial is not None:
                trial.current = i
            streams = StreamFactory(int(g.integers(2**63 - 1)), ("audit", name))
            ctx = CellContext(
                dataset=ds,
                k=K_CENTRAL,
                epsilon=float(epsilon),
                params=values,
                repeat=1,
                n_init=4,
                init_method="uniform",
                streams=streams,
                init_streams=StreamFactory(0, ("audit-public",)),
                delta=float(delta),
            )
            try:
                rows, ledger = info.run_cell(ctx)
                enforce(name, info, ctx, rows, ledger)  # finite (k, d) centres, ledger ε
            except Exception as exc:  # noqa: BLE001 - the entry's fault, named in one line
                raise DpclusterError(
                    f"{name}: failed during the audit ({type(exc).__name__}: {exc})"
                ) from None
            centres = rows[0].get("centroids")  # the run's output, if the entry returns it
            if isinstance(centres, str):
                centres = json.loads(centres)
            out.append(np.ravel(np.asarray(centres, dtype=float)) if centres is not None else [])
        return np.array(out, dtype=float).reshape(n, -1), _LedgerTotals(ledger or {})

    central = {"N": N_CENTRAL, "d": D_CENTRAL, "k": K_CENTRAL, "neighbour": "D + corner"}
    return Target(
        name=name,
        covers=(name,),
        kind="central",
        params={**central, **values},
        trials=trials,
        run=run,
        pair=central_pair,
        per_trial=True,
        note="generic target",
    )
