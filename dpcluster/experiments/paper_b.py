"""Paper B's registry entries, docs/methods.md "Experiments / Paper B"; the cell runners
are in :mod:`.paper_b_cells`, whose docstring gives the stream discipline and the privacy
bookkeeping (docs/privacy.md)."""

from __future__ import annotations

from ..data import physical_memory
from ..ldp.bitvector import RANGE_MODES, mmax_bytes
from . import costs
from .paper_b_cells import (
    CLUSTER_METRICS,
    cluster_cell,
    error_cell,
    profile_cell,
    vertical_cell,
)
from .protocol import AlgorithmInfo, CellShape, Param, independent_runs

_S = Param(1000, int, "s, bits per value", minimum=1)
_T_HALF = Param(0.0, float, "t, half-window; 0 = half of each attribute's range", minimum=0.0)
_SAVE = Param(False, bool, "store each run's labels (for scatter plots)")
_RANGE = Param(
    "extended",
    str,
    "centres r ~ U[L−t, U+t], μ = U−L+2t (extended) or U[L, U], μ = U−L (plain)",
    choices=RANGE_MODES,
)


#: seconds Paper B's numba kernels take to compile per new shape (run --dry-run): about a
#: second for the clusterers and the distance errors (Hamming distances, Algorithm 1,
#: kCluster), a fraction of one for the rest; fitted on the smoke specs
#: (docs/performance.md)
COMPILE_S = 0.5
#: ... for the entries that cluster or run Algorithm 1
COMPILE_HEAVY_S = 1.0
#: ... for the BV profile, which compiles almost nothing
COMPILE_LIGHT_S = 0.25


def _entry(
    name,
    summary,
    private,
    runner,
    params,
    repeat=10,
    doc="independent repetitions",
    metrics=("mae", "rmse"),
    cost=None,
    preflight=None,
    compile_s=COMPILE_S,
    title="",
):
    checks = [_encodings_fit, *([preflight] if preflight else [])]
    return independent_runs(
        name,
        summary,
        private,
        runner,
        params,
        repeat,
        doc,
        metrics,
        cost=cost,
        preflight=lambda shape: next((p for c in checks if (p := c(shape))), None),
        compile_s=compile_s,
        title=title,
    )


def _encodings_fit(shape: CellShape) -> tuple[str, str] | None:
    """Preflight: the cell's bit vectors (s bits per value, for N records or 2·pairs values
    per attribute, a few copies) fit in half this machine's memory."""
    s = shape.params.get("s")
    if s is None:
        return None
    values = shape.d * max(shape.N, 2 * shape.params.get("pairs", 0))
    need = 4 * values * (s // 64 + 1) * 8
    have = physical_memory()
    if need > have // 2:
        return "pairs" if 2 * shape.params.get("pairs", 0) > shape.N else "s", (
            f"needs about {need / 2**30:.1f} GiB of bit vectors for this dataset "
            f"(s bits × {values:,} values); this machine has {have / 2**30:.1f} GiB"
        )
    if mmax_bytes(s) > have // 2:
        return "s", (
            f"needs about {mmax_bytes(s) / 2**30:.1f} GiB to find m_max, the farthest pair of "
            f"s-bit encodings (about 4s of them, s bits each); this machine has "
            f"{have / 2**30:.1f} GiB"
        )
    return None


def _one_attribute(shape: CellShape) -> tuple[str, str] | None:
    if shape.d != 1:
        return "", f"draws 1-D pairs and needs a dataset with d = 1, not {shape.d}"
    return None


def _two_parties(shape: CellShape) -> tuple[str, str] | None:
    if shape.d < 2:
        return "", "splits the attributes between Alice and Bob and needs d >= 2"
    return None


def _clusterer(
    name: str, method: str, private: bool, summary: str, extra: dict, title: str
) -> AlgorithmInfo:
    params = {
        **({"s": _S, "t": _T_HALF, "range": _RANGE} if private else {}),
        **extra,
        "save_labels": _SAVE,
    }
    return _entry(
        name,
        summary,
        private,
        lambda c: cluster_cell(c, method, private),
        params,
        metrics=CLUSTER_METRICS,
        cost=costs.distance_matrix,
        compile_s=COMPILE_HEAVY_S,
        title=title,
    )


_DBSCAN = {
    "radius": Param(
        0.05,
        float,
        "DBSCAN radius E as a fraction of the mean attribute range",
        check=lambda v: None if v > 0 else "must be > 0",
    ),
    "min_samples": Param(5, int, "DBSCAN minPts", minimum=1),
}
_KC = {"max_iter": Param(100, int, "kCluster rounds", minimum=1)}

PAPER_B: dict[str, AlgorithmInfo] = {
    "bv_profile": _entry(
        "bv_profile",
        "plain BV estimate vs true distance (B Fig. 3)",
        False,
        profile_cell,
        {
            "s": _S,
            "t": Param(1.2, float, "t, half-window", minimum=1e-12),
            "range": _RANGE,
            "step": Param(0.25, float, "true-distance grid step", minimum=1e-6),
            "pairs": Param(200, int, "pairs per distance", minimum=1),
        },
        repeat=1,
        doc="public codec draws",
        metrics=("estimate",),
        preflight=_one_attribute,
        compile_s=COMPILE_LIGHT_S,
        title="BV",
    ),
    **{
        name: _entry(
            name,
            f"{kind} distance error, plain or after Algorithm 1 (B Fig. 5)",
            private,
            lambda c, private=private: error_cell(c, private),
            {
                "s": _S,
                "t": Param(3.0, float, "t, half-window", minimum=1e-12),
                "range": _RANGE,
                "method": Param(
                    "plain",
                    str,
                    "estimate as is, or after Algorithm 1",
                    choices=("plain", "consistence"),
                ),
                "kappa": Param(0.8, float, "λ = κτ (Algorithm 1)", minimum=0.0, symbol="κ"),
                "tau": Param(
                    "max",
                    str,
                    "τ: max or 99th percentile of the estimates",
                    choices=("max", "p99"),
                    symbol="τ",
                ),
                "pairs": Param(10000, int, "random pairs scored", minimum=1),
            },
            repeat=3,
            cost=costs.distance_error,
            compile_s=COMPILE_HEAVY_S,
            title=kind,
        )
        for name, kind, private in (("bv_error", "BV", False), ("dpbv_error", "DPBV", True))
    },
    "vertical_error": _entry(
        "vertical_error",
        "vertical partition distance error (B Fig. 6)",
        True,
        vertical_cell,
        {
            "s": _S,
            "t": _T_HALF,
            "range": _RANGE,
            "method": Param(
                "non-decomposition",
                str,
                "Bob's encoding",
                choices=("non-decomposition", "decomposition"),
            ),
            "budget": Param(
                "per_encoding",
                str,
                "ε per encoded value (the paper's reading) or "
                "per record, split over the releases a record takes part in: Bob's "
                "attributes (non-decomposition) or the busiest record's pairs "
                "(decomposition)",
                choices=("per_encoding", "per_record"),
            ),
            "pairs": Param(10000, int, "random pairs scored", minimum=1),
        },
        repeat=3,
        cost=costs.vertical,
        preflight=_two_parties,
        title="vertical partition",
    ),
    "kmeans": _clusterer(
        "kmeans",
        "kmeans",
        False,
        "k-means on the original data (scikit-learn, n_init 10)",
        {},
        "k-means",
    ),
    "adp": _clusterer(
        "adp",
        "adp",
        False,
        "ADP: Gaussian noise then k-means (B8)",
        {
            "sigma": Param(1.0, float, "σ (a standard deviation)", minimum=0.0),
            "sigma_is_variance": Param(False, bool, "read σ as a variance"),
        },
        "ADP",
    ),
    "rsp": _clusterer(
        "rsp",
        "rsp",
        False,
        "RSP: Gaussian random projection then k-means (B8)",
        {
            "fraction": Param(
                0.5,
                float,
                "q as a fraction of d",
                check=lambda v: None if 0 < v <= 1 else "must be in (0, 1]",
            )
        },
        "RSP",
    ),
    "kcluster": _clusterer(
        "kcluster", "kcluster", False, "kCluster on exact distances (B5)", _KC, "kCluster"
    ),
    "dp_kcluster": _clusterer(
        "dp_kcluster",
        "kcluster",
        True,
        "kCluster on DPBV-estimated distances (B5)",
        _KC,
        "DP-kCluster",
    ),
    "dbscan": _clusterer("dbscan", "dbscan", False, "DBSCAN on exact distances", _DBSCAN, "DBSCAN"),
    "dp_dbscan": _clusterer(
        "dp_dbscan",
        "dbscan",
        True,
        "DBSCAN on DPBV-estimated distances (B6)",
        _DBSCAN,
        "DP-DBSCAN",
    ),
    "agglomerative": _clusterer(
        "agglomerative",
        "agglomerative",
        False,
        "average-linkage clustering on exact distances",
        {},
        "average linkage",
    ),
    "dp_agglomerative": _clusterer(
        "dp_agglomerative",
        "agglomerative",
        True,
        "average-linkage clustering on DPBV distances (B6)",
        {},
        "DP average linkage",
    ),
}
