"""Registry entries beyond the two papers: LSH-splits (a modern central-DP baseline), the
private-mean reference, and ``auto`` (docs/utility.md; privacy arguments in
dpcluster/algorithms/lsh_splits.py, reference.py and auto.py)."""

from __future__ import annotations

from ..algorithms.lsh_splits import COUNT_SHARE, lsh_splits
from ..algorithms.methods import auto
from ..algorithms.reference import private_mean
from ..kernels import nicv
from ..privacy import spent
from .protocol import AlgorithmInfo, CellContext, Param, Row, independent_runs


def _runs(ctx: CellContext, fit, columns=()) -> tuple[list[Row], dict]:
    """``repeat`` independent fits, run ``rep`` from the stream ``("run", rep)``; each row
    carries the fit's ``info`` values named in ``columns``."""
    rows, ledger = [], {}
    for rep in range(ctx.repeat):
        res = fit(ctx.dataset.X, ctx.k, ctx.epsilon, ctx.streams.child("run", rep), ctx.params)
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


MODERN: dict[str, AlgorithmInfo] = {
    "lsh_splits": independent_runs(
        "lsh_splits",
        "LSH-splits private coreset + k-means (Chang & Kamath 2021), docs/methods.md",
        True,
        lambda c: _runs(c, lambda X, k, e, g, p: lsh_splits(X, k, e, g, **p), ("leaves", "depth")),
        {
            "depth": Param(0, int, "hash length D (0: ceil(log2 k) + 3)", minimum=0),
            "count_share": Param(
                COUNT_SHARE,
                float,
                "share of ε on the tree's counts (the rest on the leaves' sums)",
                check=lambda v: None if 0 < v < 1 else "must lie in (0, 1)",
            ),
        },
        repeat=10,
    ),
    "private_mean": independent_runs(
        "private_mean",
        "every centre at one ε-DP mean: the trivial private reference, docs/utility.md",
        True,
        lambda c: _runs(c, lambda X, k, e, g, p: private_mean(X, k, e, g)),
        {},
        repeat=10,
    ),
    "auto": independent_runs(
        "auto",
        "chooses a method from public N, d, k, ε (docs/utility.md); the row says which",
        True,
        lambda c: _runs(c, lambda X, k, e, g, p: auto(X, k, e, g), ("chosen",)),
        {},
        repeat=10,
    ),
}
