"""One-round local-DP k-means next to Paper B's methods (docs/methods.md L1–L3): the
registry entries ``ldp_one_round``, ``ldp_grid`` and ``ldp_perturb`` and their cell
runner.

Each user's message is pure ε-LDP under "any two records of one user" in the public box.
The spec's ε is read, by ``budget``, either per record (the user's whole message spends
it) or per attribute as Paper B states its ε, so that the user's message spends d·ε,
what Paper B claims for a DPBV record (its provable figure is m_max times more,
docs/privacy.md). The ledger books what the message spends either way.

Each run labels every user by the nearest released centre (the user's own
post-processing) and is scored with Paper B's metrics and the partition's k-means cost in
the data's own units.
"""

from __future__ import annotations

from ..ldp.one_round import (
    grid_oracle_kmeans,
    grid_problem,
    input_perturbation_kmeans,
    one_round_kmeans,
    tree_problem,
)
from ..privacy import spent
from .paper_b_cells import CLUSTER_METRICS, cluster_metrics
from .protocol import AlgorithmInfo, CellContext, Param, Row, independent_runs

_BUDGET = Param(
    "per_record",
    str,
    "the spec's ε per record (the user's message spends ε) or per attribute (it spends "
    "d·ε, Paper B's claim for a record)",
    choices=("per_record", "per_attribute"),
)
_D_PROJ = Param(4, int, "d', the public projection's dimension", minimum=1)


def user_epsilon(ctx: CellContext) -> float:
    """What one user's message spends: ε, or d·ε with ``budget: per_attribute``."""
    per_attribute = ctx.params["budget"] == "per_attribute"
    return ctx.epsilon * (ctx.dataset.d if per_attribute else 1)


def ldp_cell(ctx: CellContext, method: str) -> tuple[list[Row], dict]:
    """``repeat`` runs of one method on the dataset's scaled records (X in [-1, 1]^d)."""
    ds, p = ctx.dataset, ctx.params
    eps = user_epsilon(ctx)
    rows, ledger = [], None
    for rep in range(ctx.repeat):
        users = ctx.streams.child("users", rep)
        public = ctx.streams.child("public", rep)
        if method == "one_round":
            res = one_round_kmeans(
                ds.X, ctx.k, eps, users, public, p["d_proj"], p["levels"], p["cell_share"]
            )
        elif method == "grid":
            res = grid_oracle_kmeans(ds.X, ctx.k, eps, users, public, p["d_proj"], p["level"])
        else:
            res = input_perturbation_kmeans(ds.X, ctx.k, eps, users, public)
        ledger = res.ledger
        rows.append(
            {
                "init": 0,
                "rep": rep,
                **cluster_metrics(ds.classes, res.labels, ds.raw, silhouette=False),
                "n_clusters": len(set(res.labels.tolist())),
                **spent(ledger),
                "stream": ctx.streams.key("users", rep),
            }
        )
    return rows, ledger.to_dict()


def _too_large(shape) -> tuple[str, str] | None:
    """Preflight: a grid or net tree too large to index for this dataset's d."""
    p = shape.params
    if "level" in p and (problem := grid_problem(shape.d, p["d_proj"], p["level"])):
        return "level", problem
    if "levels" in p and (problem := tree_problem(shape.d, p["d_proj"], p["levels"])):
        return "levels", problem
    return None


def _entry(name: str, method: str, summary: str, params: dict, title: str) -> AlgorithmInfo:
    return independent_runs(
        name,
        summary,
        True,
        lambda c: ldp_cell(c, method),
        {"budget": _BUDGET, **params},
        repeat=5,
        metrics=CLUSTER_METRICS,
        preflight=_too_large,
        title=title,
    )


LDP_MODERN: dict[str, AlgorithmInfo] = {
    "ldp_one_round": _entry(
        "ldp_one_round",
        "one_round",
        "one-round LDP k-means (Chang et al. ICML 2021, practical form; docs/methods.md L1)",
        {
            "d_proj": Param(8, int, "d', the public projection's dimension", minimum=1),
            "levels": Param(3, int, "levels of the net tree", minimum=1, maximum=8),
            "cell_share": Param(
                0.5,
                float,
                "ε₁/ε, the share for the cell report",
                check=lambda v: None if 0 < v < 1 else "must be in (0, 1)",
            ),
        },
        "one-round LDP k-means",
    ),
    "ldp_grid": _entry(
        "ldp_grid",
        "grid",
        "OLH histogram of a public grid, then weighted k-means (docs/methods.md L2)",
        {
            "d_proj": _D_PROJ,
            "level": Param(
                3, int, "the grid's level: 2^level cells per axis", minimum=1, maximum=8
            ),
        },
        "LDP grid histogram",
    ),
    "ldp_perturb": _entry(
        "ldp_perturb",
        "perturb",
        "Laplace input perturbation, then k-means (docs/methods.md L3)",
        {},
        "LDP input perturbation",
    ),
}
