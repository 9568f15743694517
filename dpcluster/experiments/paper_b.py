"""Paper B's registry entries (cell runners), docs/methods.md "Experiments / Paper B".

Stream discipline. The public centres r_j of a repetition come from a stream keyed by the
*dataset* and (s, t, rep) only, and so do the sampled pairs: every method, ε and baseline
of a spec sees the same codec and the same pairs, so comparisons are paired. The private
flips come from the cell's own stream (algorithm, params, ε, rep).

Privacy bookkeeping (docs/privacy.md). The spec's ε is the paper's: per bit, per attribute
(docs/methods.md B3). Every ledger is local (any two values of one attribute) and records one spend
per encoded attribute: what holds, ``m_max·ε`` for that attribute's codec, and Theorem 4's
claim, (ε, δ_Thm4). A run's ``epsilon_provable`` is the per-record total over the
attributes it encodes (basic composition); ``epsilon_claimed`` is the paper's A·ε.
"""

from __future__ import annotations

import json

import numpy as np

from ..data import physical_memory
from ..ldp.baselines import adp, kmeans_labels, rsp
from ..ldp.bitvector import RANGE_MODES, RecordCodec, mmax_bytes
from ..ldp.distance import consistence, distance_matrix, pair_estimates
from ..ldp.kcluster import kcluster
from ..ldp.parties import Custodian, Receiver, pair_multiplicity, vertical_distances
from ..privacy import LOCAL, NOT_PRIVATE, Ledger, not_private, spent
from . import costs
from .protocol import (
    CLASS_METRICS,
    AlgorithmInfo,
    CellContext,
    CellShape,
    Param,
    Row,
    independent_runs,
)

CLUSTER_METRICS = (*CLASS_METRICS, "silhouette")


def _codec(ctx: CellContext, rep: int, s: int, t: float) -> RecordCodec:
    """The public codec of repetition ``rep``: t = 0 means half of each attribute's range;
    the centres' range follows the cell's ``range`` parameter (docs/methods.md B1)."""
    lo, hi = ctx.dataset.domain
    tt = (hi - lo) / 2.0 if t <= 0 else np.full(len(lo), float(t))
    mode = ctx.params.get("range", "extended")
    rng = ctx.init_streams.child("bv-public", int(s), float(t), mode, rep)
    return RecordCodec.draw(int(s), tt, lo, hi, rng, mode)


def _shared(ctx: CellContext, what: str, rep: int) -> np.random.Generator:
    """A stream shared by every cell on this dataset (pairs, anchors)."""
    return ctx.init_streams.child("bv-shared", what, rep)


def _eps(ctx: CellContext, private: bool) -> float | None:
    return ctx.epsilon if private else None


# --- Figure 3: estimate vs true distance -------------------------------------------------


def _profile_cell(ctx: CellContext) -> tuple[list[Row], dict]:
    p = ctx.params
    lo, hi = (float(v[0]) for v in ctx.dataset.domain)
    rows = []
    for rep in range(ctx.repeat):
        codec = _codec(ctx, rep, p["s"], p["t"])
        rng = _shared(ctx, "anchors", rep)
        for dist in np.arange(0.0, hi - lo + 1e-9, p["step"]):
            a = rng.uniform(lo, hi - dist, size=(p["pairs"], 1))
            est = pair_estimates(codec, codec.encode(a), codec.encode(a + dist), None)[:, 0]
            rows.append(
                {
                    "init": 0,
                    "rep": rep,
                    "step": round(float(dist), 10),
                    "estimate": float(est.mean()),
                    "estimate_sd": float(est.std()),
                    **NOT_PRIVATE,
                    "stream": ctx.init_streams.key("bv-shared", "anchors", rep),
                }
            )
    return rows, not_private("plain BV, not private", LOCAL)


# --- Figure 5: error vs s, plain vs Algorithm 1 -----------------------------------------


def _random_pairs(rng: np.random.Generator, n: int, count: int) -> np.ndarray:
    i = rng.integers(0, n, size=count)
    j = (i + rng.integers(1, n, size=count)) % n  # j ≠ i
    return np.stack([i, j], axis=1)


def _error_row(ctx: CellContext, rep: int, raw, pairs, est, used: dict) -> Row:
    """Eq. 24's errors of the estimated distances ``est`` (P,) of ``pairs`` (P, 2) against
    the true distances of the records ``raw``: MAE and RMSE, with the run's ε columns."""
    err = est - np.sqrt(((raw[pairs[:, 0]] - raw[pairs[:, 1]]) ** 2).sum(axis=1))
    return {
        "init": 0,
        "rep": rep,
        "mae": float(np.abs(err).mean()),
        "rmse": float(np.sqrt((err**2).mean())),
        **used,
        "stream": ctx.streams.key("flips", rep),
    }


def _error_cell(ctx: CellContext, private: bool) -> tuple[list[Row], dict]:
    p = ctx.params
    raw = ctx.dataset.raw
    rows, ledger_out = [], {}
    for rep in range(ctx.repeat):
        codec = _codec(ctx, rep, p["s"], p["t"])
        ledger = Ledger(LOCAL)
        E = codec.encode(raw, _eps(ctx, private), ctx.streams.child("flips", rep), ledger)
        D = distance_matrix(codec, E, epsilon=_eps(ctx, private))
        if p["method"] == "consistence":
            D = consistence(D, kappa=p["kappa"], tau=p["tau"])[0]
        pairs = _random_pairs(_shared(ctx, "pairs", rep), len(raw), p["pairs"])
        used = spent(ledger) if private else NOT_PRIVATE
        rows.append(_error_row(ctx, rep, raw, pairs, D[pairs[:, 0], pairs[:, 1]], used))
        ledger_out = ledger.to_dict()
    return rows, ledger_out


# --- Figure 6: vertical partition -------------------------------------------------------


def _vertical_cell(ctx: CellContext) -> tuple[list[Row], dict]:
    p = ctx.params
    raw = ctx.dataset.raw
    d = raw.shape[1]
    if d < 2:
        raise ValueError("the vertical partition needs d >= 2 (Alice and Bob hold d/2 each)")
    l = d // 2
    rows, ledger_out = [], {}
    for rep in range(ctx.repeat):
        full = _codec(ctx, rep, p["s"], p["t"])
        right = RecordCodec(full.attributes[l:])
        pairs = _random_pairs(_shared(ctx, "pairs", rep), len(raw), p["pairs"])
        eps = ctx.epsilon
        if p["budget"] == "per_record":
            # ε is per record: split over the releases one record takes part in (basic
            # composition): Bob's d − l attribute encodings, or the R² encodings of every
            # pair the busiest record is in
            releases = (
                d - l if p["method"] == "non-decomposition" else pair_multiplicity(pairs, len(raw))
            )
            eps = ctx.epsilon / releases
        bob = Custodian("bob", raw, eps, ctx.streams.child("flips", rep))
        est = vertical_distances(
            raw[:, :l],
            bob,
            pairs,
            l,
            right,
            p["method"],
            ctx.init_streams.child("bv-public-z", int(p["s"]), rep),
            Receiver("alice"),
        )
        rows.append(_error_row(ctx, rep, raw, pairs, est, spent(bob.ledger)))
        ledger_out = bob.ledger.to_dict()
    return rows, ledger_out


# --- Table III, Figures 7 and 8: clustering ---------------------------------------------


def cluster_metrics(truth: np.ndarray | None, labels: np.ndarray, X: np.ndarray) -> dict:
    """ARI, NMI, AMI, homogeneity, completeness, V-measure against ``truth``, and the
    silhouette of ``labels`` on the original records X (NaN when undefined)."""
    from sklearn import metrics as m

    out = dict.fromkeys(CLUSTER_METRICS, float("nan"))
    if truth is not None:
        h, c, v = m.homogeneity_completeness_v_measure(truth, labels)
        out.update(
            ari=m.adjusted_rand_score(truth, labels),
            nmi=m.normalized_mutual_info_score(truth, labels),
            ami=m.adjusted_mutual_info_score(truth, labels),
            homogeneity=h,
            completeness=c,
            v_measure=v,
        )
    n_labels = len(set(labels.tolist()))
    if 2 <= n_labels <= len(labels) - 1:
        out["silhouette"] = m.silhouette_score(X, labels)
    return {k: float(v) for k, v in out.items()}


def _exact_distances(X: np.ndarray) -> np.ndarray:
    sq = (X * X).sum(axis=1)
    return np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0))


def _cluster_cell(ctx: CellContext, method: str, private: bool) -> tuple[list[Row], dict]:
    """One clustering method per cell; ``private`` methods see only DPBV encodings."""
    p, ds = ctx.params, ctx.dataset
    raw = ds.raw
    rows, ledger_out = [], {}
    for rep in range(ctx.repeat):
        rng = ctx.streams.child("run", rep)
        ledger = Ledger(LOCAL)
        D = None
        if private:
            codec = _codec(ctx, rep, p["s"], p["t"])
            E = codec.encode(raw, ctx.epsilon, ctx.streams.child("flips", rep), ledger)
            D = distance_matrix(codec, E, epsilon=ctx.epsilon)
        elif method in ("kcluster", "dbscan", "agglomerative"):
            D = _exact_distances(raw)
        if method == "kmeans":
            labels = kmeans_labels(raw, ctx.k, rng)
        elif method == "adp":
            labels = kmeans_labels(adp(raw, p["sigma"], rng, p["sigma_is_variance"]), ctx.k, rng)
        elif method == "rsp":
            q = max(1, int(round(p["fraction"] * raw.shape[1])))
            labels = kmeans_labels(rsp(raw, q, rng), ctx.k, rng)
        elif method == "kcluster":
            labels = kcluster(D, ctx.k, rng, p["max_iter"])[0]
        elif method == "dbscan":
            from sklearn.cluster import DBSCAN

            lo, hi = ds.domain
            radius = p["radius"] * float(np.mean(hi - lo))
            labels = DBSCAN(
                eps=radius, min_samples=p["min_samples"], metric="precomputed"
            ).fit_predict(D)
        elif method == "agglomerative":
            from sklearn.cluster import AgglomerativeClustering

            labels = AgglomerativeClustering(
                n_clusters=ctx.k, metric="precomputed", linkage="average"
            ).fit_predict(D)
        else:  # pragma: no cover - guarded by the registry
            raise ValueError(method)
        labels = np.asarray(labels, dtype=np.int64)
        row = {
            "init": 0,
            "rep": rep,
            **cluster_metrics(ds.classes, labels, raw),
            "n_clusters": len(set(labels.tolist()) - {-1}),
            **(spent(ledger) if private else NOT_PRIVATE),
            "stream": ctx.streams.key("flips" if private else "run", rep),
        }
        if p.get("save_labels"):
            row["labels"] = json.dumps(labels.tolist(), separators=(",", ":"))
        rows.append(row)
        ledger_out = ledger.to_dict()
    return rows, ledger_out


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


def _clusterer(name: str, method: str, private: bool, summary: str, extra: dict) -> AlgorithmInfo:
    params = {
        **({"s": _S, "t": _T_HALF, "range": _RANGE} if private else {}),
        **extra,
        "save_labels": _SAVE,
    }
    return _entry(
        name,
        summary,
        private,
        lambda c: _cluster_cell(c, method, private),
        params,
        metrics=CLUSTER_METRICS,
        cost=costs.distance_matrix,
        compile_s=COMPILE_HEAVY_S,
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
        _profile_cell,
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
    ),
    **{
        name: _entry(
            name,
            f"{kind} distance error, plain or after Algorithm 1 (B Fig. 5)",
            private,
            lambda c, private=private: _error_cell(c, private),
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
                "kappa": Param(0.8, float, "λ = κτ (Algorithm 1)", minimum=0.0),
                "tau": Param(
                    "max", str, "τ: max or 99th percentile of the estimates", choices=("max", "p99")
                ),
                "pairs": Param(10000, int, "random pairs scored", minimum=1),
            },
            repeat=3,
            cost=costs.distance_error,
            compile_s=COMPILE_HEAVY_S,
        )
        for name, kind, private in (("bv_error", "BV", False), ("dpbv_error", "DPBV", True))
    },
    "vertical_error": _entry(
        "vertical_error",
        "vertical partition distance error (B Fig. 6)",
        True,
        _vertical_cell,
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
    ),
    "kmeans": _clusterer(
        "kmeans", "kmeans", False, "k-means on the original data (scikit-learn, n_init 10)", {}
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
    ),
    "kcluster": _clusterer("kcluster", "kcluster", False, "kCluster on exact distances (B5)", _KC),
    "dp_kcluster": _clusterer(
        "dp_kcluster", "kcluster", True, "kCluster on DPBV-estimated distances (B5)", _KC
    ),
    "dbscan": _clusterer("dbscan", "dbscan", False, "DBSCAN on exact distances", _DBSCAN),
    "dp_dbscan": _clusterer(
        "dp_dbscan", "dbscan", True, "DBSCAN on DPBV-estimated distances (B6)", _DBSCAN
    ),
    "agglomerative": _clusterer(
        "agglomerative", "agglomerative", False, "average-linkage clustering on exact distances", {}
    ),
    "dp_agglomerative": _clusterer(
        "dp_agglomerative",
        "agglomerative",
        True,
        "average-linkage clustering on DPBV distances (B6)",
        {},
    ),
}
