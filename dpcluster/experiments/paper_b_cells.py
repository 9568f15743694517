"""Paper B's cell runners: how each entry of :mod:`.paper_b` turns one cell into rows
(docs/methods.md "Experiments / Paper B").

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

from ..ldp.baselines import adp, kmeans_labels, rsp
from ..ldp.bitvector import RecordCodec
from ..ldp.distance import consistence, distance_matrix, pair_estimates
from ..ldp.kcluster import kcluster
from ..ldp.parties import Custodian, Receiver, pair_multiplicity, vertical_distances
from ..privacy import LOCAL, NOT_PRIVATE, Ledger, not_private, spent
from .protocol import CLASS_METRICS, CellContext, Row

CLUSTER_METRICS = (*CLASS_METRICS, "silhouette", "kmeans_cost")


def record_codec(ctx: CellContext, rep: int, s: int, t: float) -> RecordCodec:
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


def profile_cell(ctx: CellContext) -> tuple[list[Row], dict]:
    p = ctx.params
    lo, hi = (float(v[0]) for v in ctx.dataset.domain)
    rows = []
    for rep in range(ctx.repeat):
        codec = record_codec(ctx, rep, p["s"], p["t"])
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


def error_cell(ctx: CellContext, private: bool) -> tuple[list[Row], dict]:
    p = ctx.params
    raw = ctx.dataset.raw
    rows, ledger_out = [], {}
    for rep in range(ctx.repeat):
        codec = record_codec(ctx, rep, p["s"], p["t"])
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


def vertical_cell(ctx: CellContext) -> tuple[list[Row], dict]:
    p = ctx.params
    raw = ctx.dataset.raw
    d = raw.shape[1]
    if d < 2:
        raise ValueError("the vertical partition needs d >= 2 (Alice and Bob hold d/2 each)")
    l = d // 2
    rows, ledger_out = [], {}
    for rep in range(ctx.repeat):
        full = record_codec(ctx, rep, p["s"], p["t"])
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


def cluster_metrics(
    truth: np.ndarray | None, labels: np.ndarray, X: np.ndarray, silhouette: bool = True
) -> dict:
    """ARI, NMI, AMI, homogeneity, completeness, V-measure against ``truth``, the
    silhouette of ``labels`` on the original records X (NaN when undefined, or not asked
    for: it takes O(N²) time), and ``kmeans_cost``: the k-means cost of the partition in
    X's units, the mean squared distance of a record to its cluster's own mean (DBSCAN's
    noise, label −1, counts as one cluster)."""
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
    out["kmeans_cost"] = partition_cost(X, labels)
    n_labels = len(set(labels.tolist()))
    if silhouette and 2 <= n_labels <= len(labels) - 1:
        out["silhouette"] = m.silhouette_score(X, labels)
    return {k: float(v) for k, v in out.items()}


def partition_cost(X: np.ndarray, labels: np.ndarray) -> float:
    """Mean over records of ‖x − mean of its cluster‖² (X's units squared)."""
    X = np.asarray(X, dtype=np.float64)
    _, inverse = np.unique(np.asarray(labels), return_inverse=True)
    counts = np.bincount(inverse).astype(np.float64)
    means = (
        np.stack([np.bincount(inverse, weights=X[:, j]) for j in range(X.shape[1])], axis=1)
        / counts[:, None]
    )
    return float(((X - means[inverse]) ** 2).sum(axis=1).mean())


def _exact_distances(X: np.ndarray) -> np.ndarray:
    sq = (X * X).sum(axis=1)
    return np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0))


def cluster_cell(ctx: CellContext, method: str, private: bool) -> tuple[list[Row], dict]:
    """One clustering method per cell; ``private`` methods see only DPBV encodings."""
    p, ds = ctx.params, ctx.dataset
    raw = ds.raw
    rows, ledger_out = [], {}
    for rep in range(ctx.repeat):
        rng = ctx.streams.child("run", rep)
        ledger = Ledger(LOCAL)
        D = None
        if private:
            codec = record_codec(ctx, rep, p["s"], p["t"])
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
