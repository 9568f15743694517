"""Paper B's claims (Sun, Zhao, Ye), each a function of one spec's table -> (holds, evidence)."""

from __future__ import annotations

import math

from .claim import Claim
from .tables import Verdict, param, select, value


def bv_saturates(s) -> Verdict:
    at4 = s[(s["step"] - 4.0).abs() < 1e-9]["mean"] if "step" in s else s.iloc[:0]["mean"]
    if at4.empty:
        return None, "no data"
    v = float(at4.iloc[0])
    return 2.0 <= v <= 2.8, f"mean estimate at true distance 4: {v:.3f} (2t = 2.4)"


def bv_tracks(s) -> Verdict:
    near = s[s["step"] <= 2.0 + 1e-9] if "step" in s else s.iloc[:0]
    if near.empty:
        return None, "no data"
    worst = float((near["mean"] - near["step"]).abs().max())
    return worst < 0.15, f"largest |mean estimate − true| for true ≤ 2: {worst:.3f}"


def error_falls_with_s(s) -> Verdict:
    parts, ok, any_ = [], True, False
    for alg in ("bv_error", "dpbv_error"):
        sub = s[s["algorithm"] == alg]
        sub = sub[param(sub, "method") == "plain"].copy()
        if sub.empty:
            continue
        any_ = True
        sub["s"] = param(sub, "s")
        g = sub.groupby("s")["mean"].mean().sort_index()
        ok &= bool(g.iloc[-1] < g.iloc[0])
        parts.append(
            f"{alg}: MAE {g.iloc[0]:.3f} at s={g.index[0]} → {g.iloc[-1]:.3f} at s={g.index[-1]}"
        )
    return (ok if any_ else None), "; ".join(parts) or "no data"


def consistence_helps(s, kappa: float = 0.8, algorithms=("bv_error", "dpbv_error")) -> Verdict:
    rows, worse = 0, []
    for alg in algorithms:
        sub = s[s["algorithm"] == alg].copy()
        if sub.empty:
            continue
        sub["s"], sub["method"] = param(sub, "s"), param(sub, "method")
        sub = sub[(sub["method"] == "plain") | (param(sub, "kappa") == kappa)]
        piv = sub.pivot_table(index="s", columns="method", values="mean")
        if {"plain", "consistence"} <= set(piv.columns):
            rows += len(piv)
            worse += [
                f"{alg} s={i}" for i, r in piv.iterrows() if not r["consistence"] < r["plain"]
            ]
    if rows == 0:
        return None, "no data"
    return not worse, f"{rows} (algorithm, s) points; not lower at: {', '.join(worse) or 'none'}"


def vertical(s, budget: str = "per_encoding") -> Verdict:
    sub = select(s, "vertical_error", budget=budget, method=None).copy()
    if sub.empty:
        return None, "no data"
    sub["method"] = param(sub, "method")
    g = sub.groupby(["method", "d"])["mean"].mean()
    if not {"non-decomposition", "decomposition"} <= set(g.index.get_level_values(0)):
        return None, "no data"
    nd, de = g["non-decomposition"], g["decomposition"]
    grows = nd.iloc[-1] > nd.iloc[0]
    controlled = de.iloc[-1] < nd.iloc[-1]
    return bool(grows and controlled), (
        f"non-decomposition MAE {nd.iloc[0]:.3f} (d={nd.index[0]}) → {nd.iloc[-1]:.3f} "
        f"(d={nd.index[-1]}); decomposition {de.iloc[0]:.3f} → {de.iloc[-1]:.3f}"
    )


def kcluster_beats_kmeans(s) -> Verdict:
    a, b = value(s, "kcluster"), value(s, "kmeans")
    if math.isnan(a) or math.isnan(b):
        return None, "no data"
    return a > b, f"ARI kCluster {a:.3f} vs k-means {b:.3f}"


def dpbv_close(s) -> Verdict:
    a, b = value(s, "dp_kcluster"), value(s, "kcluster")
    if math.isnan(a) or math.isnan(b):
        return None, "no data"
    return abs(a - b) <= 0.1, f"ARI DPBV kCluster {a:.3f} vs kCluster on original data {b:.3f}"


def adp_rsp_utility(s) -> Verdict:
    base = value(s, "kmeans")
    rows = s[s["algorithm"].isin(["adp", "rsp"])]
    if math.isnan(base) or rows.empty:
        return None, "no data"
    vals = dict(zip(rows["variant"], rows["ari_mean"].astype(float)))  # labels: display only
    ok = all(v >= 0.8 * base for v in vals.values())
    listed = ", ".join(f"{k} {v:.3f}" for k, v in vals.items())
    return ok, f"ARI {listed} vs k-means {base:.3f}"


def high_utility_eps(s) -> Verdict:
    sub = select(s, "dp_kcluster").sort_values("epsilon")
    if sub.empty:
        return None, "no data"
    top = float(sub["mean"].iloc[-1])
    ge1 = sub[sub["epsilon"] >= 1.0]["mean"]
    ok = bool((ge1 >= 0.9 * top).all())
    return ok, (
        f"ARI at ε ≥ 1: {', '.join(f'{v:.3f}' for v in ge1)}; at the largest ε "
        f"{top:.3f}; at the smallest {float(sub['mean'].iloc[0]):.3f}"
    )


CLAIMS = [
    Claim("b-fig3", "The BV estimate of the pair (5, 9) saturates near 2t (not 4)", bv_saturates),
    Claim("b-fig3", "Below 2t the BV estimate tracks the true distance", bv_tracks),
    Claim("b-fig5", "The distance error falls as s grows", error_falls_with_s),
    Claim("b-fig5", "Algorithm 1 (κ = 0.8) lowers the error at every s", consistence_helps),
    Claim(
        "b-fig5",
        "Algorithm 1 with κ = 0.6 lowers the DPBV error at every s",
        lambda s: consistence_helps(s, 0.6, ("dpbv_error",)),
    ),
    Claim(
        "b-fig6",
        "Non-decomposition error grows with d; decomposition stays below it (ε per encoding)",
        vertical,
    ),
    Claim(
        "b-fig6",
        "The same with a per-record ε, split over the releases a record takes "
        "part in (Bob's attributes; the busiest record's pairs under decomposition)",
        lambda s: vertical(s, "per_record"),
    ),
    Claim("b-table3", "kCluster beats k-means on digits (ARI)", kcluster_beats_kmeans),
    Claim(
        "b-table3",
        "DPBV kCluster stays close to kCluster on the original data (ARI ± 0.1)",
        dpbv_close,
    ),
    Claim("b-table3", "ADP and RSP keep high utility (ARI ≥ 0.8 × k-means)", adp_rsp_utility),
    Claim(
        "b-fig8", "Utility is high for ε ≥ 1 (ARI ≥ 0.9 × the largest-ε value)", high_utility_eps
    ),
]
