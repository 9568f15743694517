"""``results/REPORT.md``: every figure, and the papers' qualitative claims checked from tables.

Each claim is a function of the spec's ``summary.csv`` (Fig. 7: ``timing.csv``) that returns (holds, evidence), where
evidence is the numbers it compared. Nothing is written by hand: a claim whose spec has not
been run is reported as "not run", and one whose inputs are missing as "no data".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .results import atomic_write_text

Verdict = tuple[bool | None, str]


@dataclass(frozen=True)
class Claim:
    spec: str
    text: str
    check: Callable[[pd.DataFrame], Verdict]
    table: str = "summary.csv"


def _means(s: pd.DataFrame, algorithm: str, dataset: str | None = None) -> pd.Series:
    """Mean NICV indexed by ε for one algorithm's default variant (first variant seen)."""
    sub = s[(s["algorithm"] == algorithm) & s["epsilon"].apply(math.isfinite)]
    if dataset is not None:
        sub = sub[sub["dataset"] == dataset]
    if sub.empty:
        return pd.Series(dtype=float)
    first = sub["variant"].iloc[0]
    return sub[sub["variant"] == first].set_index("epsilon")["mean"].sort_index()


def _datasets(s: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(s["dataset"]))


def _fraction_better(s, a, b, ds, eps_max=math.inf) -> tuple[float, int]:
    x, y = _means(s, a, ds), _means(s, b, ds)
    common = [e for e in x.index if e in y.index and e <= eps_max]
    if not common:
        return math.nan, 0
    return sum(x[e] < y[e] for e in common) / len(common), len(common)


def _eugkm_small_eps_s1(s):
    frac, n = _fraction_better(s, "eugkm", "dplloyd", "s1", eps_max=0.1)
    return (None, "no data") if n == 0 else (frac == 1.0, f"EUGkM < DPLloyd at {frac:.0%} of {n} ε ≤ 0.1")


def _dplloyd_high_d(s):
    parts, ok = [], True
    for ds in ("adult", "lifesci"):
        frac, n = _fraction_better(s, "dplloyd", "eugkm", ds)
        if n == 0:
            return None, f"no data for {ds}"
        ok &= frac > 0.5
        parts.append(f"{ds}: DPLloyd < EUGkM at {frac:.0%} of {n} ε")
    return ok, "; ".join(parts)


def _gkm_worst(s):
    others = ["dplloyd", "dplloyd_improved", "eugkm", "gkm_3k", "pgkm"]
    bad = []
    checked = 0
    for ds in _datasets(s):
        g = _means(s, "gkm", ds)
        for e in g.index:
            for o in others:
                v = _means(s, o, ds)
                if e in v.index:
                    checked += 1
                    if not g[e] > v[e]:
                        bad.append(f"{ds} ε={e:g} vs {o}")
    if checked == 0:
        return None, "no data"
    return not bad, f"{checked} comparisons; exceptions: {', '.join(bad[:6]) or 'none'}"


def _gkm3k_below_dplloyd(s):
    parts, ok, any_ = [], True, False
    for ds in _datasets(s):
        frac, n = _fraction_better(s, "dplloyd", "gkm_3k", ds)
        if n:
            any_ = True
            ok &= frac > 0.5
            parts.append(f"{ds} {frac:.0%}")
    return (ok if any_ else None), "DPLloyd < GkM-3K at: " + ", ".join(parts)


def _pgkm_only_s1_small(s):
    wins = []
    for ds in _datasets(s):
        p, dl = _means(s, "pgkm", ds), _means(s, "dplloyd", ds)
        wins += [f"{ds} ε={e:g}" for e in p.index if e in dl.index and p[e] < dl[e]]
    allowed = all(w.startswith("s1 ") and float(w.split("=")[1]) < 0.15 for w in wins)
    return allowed, f"PGkM beats DPLloyd at: {', '.join(wins) or 'nowhere'}"


def _gap(s: pd.DataFrame, variant_prefix: str, x: str) -> pd.Series:
    base = s[s["algorithm"] == "lloyd"].groupby("dataset")["min"].min()
    sub = s[s["variant"].str.startswith(variant_prefix) & s["epsilon"].apply(math.isfinite)]
    sub = sub[sub["dataset"].isin(base.index)]
    gap = sub["mean"] - sub["dataset"].map(base)
    return gap.groupby(sub[x]).mean().sort_index()


def _grows(s, variant, x) -> Verdict:
    g = _gap(s, variant, x)
    if len(g) < 2:
        return None, "no data"
    return bool(g.iloc[-1] > g.iloc[0]), (f"gap at {x}={g.index[0]}: {g.iloc[0]:.4f}; "
                                          f"at {x}={g.index[-1]}: {g.iloc[-1]:.4f}")


def _sag_below_gkm(s):
    parts, ok, any_ = [], True, False
    for ds in _datasets(s):
        sub = s[(s["dataset"] == ds) & s["params"].str.contains('"N\\^0.6"', regex=True)]
        g = sub[sub["algorithm"] == "gkm"]["mean"]
        a = sub[sub["algorithm"] == "gkm_sag"]["mean"]
        if len(g) and len(a):
            any_ = True
            ok &= float(g.iloc[0]) > 2 * float(a.iloc[0])
            parts.append(f"{ds} GkM {g.iloc[0]:.3g} vs SAG {a.iloc[0]:.3g}")
    return (ok if any_ else None), "; ".join(parts)


def _small_blocks_help(s):
    parts, ok, any_ = [], True, False
    for ds in _datasets(s):
        sub = s[(s["dataset"] == ds) & (s["algorithm"] == "gkm")]
        big = sub[sub["params"].str.contains('"N\\^0.6"', regex=True)]["mean"]
        small = sub[sub["params"].str.contains('"3k"')]["mean"]
        if len(big) and len(small):
            any_ = True
            ok &= float(small.iloc[0]) < float(big.iloc[0])
            parts.append(f"{ds} 3k {small.iloc[0]:.3g} vs N^0.6 {big.iloc[0]:.3g}")
    return (ok if any_ else None), "; ".join(parts)


def _lloyd_faster_early(s):
    parts, ok, any_ = [], True, False
    for ds in _datasets(s):
        sub = s[(s["dataset"] == ds) & (s.get("step") == 3)]
        lo = sub[sub["algorithm"] == "lloyd_steps"]["mean"]
        ge = sub[sub["algorithm"] == "gene"]["mean"]
        if len(lo) and len(ge):
            any_ = True
            ok &= float(lo.iloc[0]) < float(ge.iloc[0])
            parts.append(f"{ds} step 3: Lloyd {lo.iloc[0]:.4g}, Gene {ge.iloc[0]:.4g}")
    return (ok if any_ else None), "; ".join(parts)


def _hybrid_falls_back_low_d(s):
    parts, ok, any_ = [], True, False
    for ds in ("s1", "gowalla", "image"):
        sub = s[(s["dataset"] == ds) & (s["algorithm"] == "hybrid")]
        if len(sub) and "fell_back_mean" in sub:
            any_ = True
            rate = float(sub.sort_values("epsilon")["fell_back_mean"].iloc[0])
            ok &= rate == 1.0
            parts.append(f"{ds} fallback rate at smallest ε: {rate:.0%}")
    return (ok if any_ else None), "; ".join(parts)


def _hybrid_best_high_d(s):
    parts, ok, any_ = [], True, False
    for ds in ("adult", "lifesci"):
        h = _means(s, "hybrid", ds)
        if h.empty:
            continue
        any_ = True
        others = [_means(s, a, ds) for a in ("dplloyd", "eugkm")]
        best = [e for e in h.index if all(e in o.index and h[e] <= o[e] for o in others)]
        frac = len(best) / len(h)
        ok &= frac > 0.5
        parts.append(f"{ds}: hybrid best at {frac:.0%} of {len(h)} ε")
    return (ok if any_ else None), "; ".join(parts)


def _hybrid_scales(s):
    verdicts = []
    for x in ("k", "d"):
        h, e = _gap(s, "hybrid", x), _gap(s, "eugkm", x)
        if len(h) < 2 or len(e) < 2:
            return None, "no data"
        verdicts.append((h.iloc[-1] - h.iloc[0] < e.iloc[-1] - e.iloc[0],
                         f"{x}: hybrid gap grows {h.iloc[-1] - h.iloc[0]:.4f}, "
                         f"EUGkM {e.iloc[-1] - e.iloc[0]:.4f}"))
    return all(v for v, _ in verdicts), "; ".join(t for _, t in verdicts)


def _dplloyd_faster(s):
    """Uses ``timing.csv`` (passed in place of the summary, see CLAIM_TABLE)."""
    parts, ok, any_ = [], True, False
    for ds in _datasets(s):
        sub = s[s["dataset"] == ds]
        a = sub[sub["algorithm"] == "dplloyd"]["wall_time_s_mean"].mean()
        b = sub[sub["algorithm"] == "eugkm"]["wall_time_s_mean"].mean()
        if a == a and b == b:
            any_ = True
            ok &= b > 10 * a
            parts.append(f"{ds} EUGkM/DPLloyd time per run {b / a:.0f}x")
    return (ok if any_ else None), "; ".join(parts)


CLAIMS = [
    Claim("fig1", "EUGkM beats DPLloyd at ε ≤ 0.1 on S1", _eugkm_small_eps_s1),
    Claim("fig1", "On Adult-num and Lifesci, DPLloyd beats EUGkM at most ε", _dplloyd_high_d),
    Claim("fig1", "GkM is worse than every other method on every dataset", _gkm_worst),
    Claim("fig1", "GkM-3K is worse than DPLloyd (at most ε, every dataset)",
          _gkm3k_below_dplloyd),
    Claim("fig1", "DPLloyd beats PGkM everywhere except S1 at ε < 0.15", _pgkm_only_s1_small),
    Claim("fig2", "EUGkM (θ = 10) degrades with d", lambda s: _grows(s, "eugkm(theta=10", "d")),
    Claim("fig2", "DPLloyd degrades with k", lambda s: _grows(s, "dplloyd", "k")),
    Claim("fig3", "At blocks of N^0.6, GkM sits far (> 2x) above SAG", _sag_below_gkm),
    Claim("fig3", "GkM's error falls as blocks shrink (3k below N^0.6)", _small_blocks_help),
    Claim("fig4", "Lloyd improves faster than Gene in the first iterations (step 3)",
          _lloyd_faster_early),
    Claim("fig5", "On S1, Gowalla and Image the hybrid falls back to EUGkM at the smallest ε",
          _hybrid_falls_back_low_d),
    Claim("fig5", "On Adult-num and Lifesci the hybrid is best at most ε", _hybrid_best_high_d),
    Claim("fig6", "The hybrid scales better than EUGkM in k and d", _hybrid_scales),
    Claim("fig7", "DPLloyd is much faster (> 10x per run) than EUGkM", _dplloyd_faster,
          table="timing.csv"),
]


def evaluate(results_dir: Path) -> list[tuple[Claim, Verdict]]:
    out = []
    for claim in CLAIMS:
        path = results_dir / claim.spec / claim.table
        if not path.is_file():
            out.append((claim, (None, f"not run (no {path})")))
            continue
        summary = pd.read_csv(path)
        try:
            out.append((claim, claim.check(summary)))
        except (KeyError, ValueError, IndexError) as exc:
            out.append((claim, (None, f"no data ({type(exc).__name__}: {exc})")))
    return out


def write_report(results_dir: Path | str = "results") -> Path:
    """Write ``results_dir/REPORT.md`` from whatever figure results exist."""
    results_dir = Path(results_dir)
    lines = ["# dpcluster — reproduction report", "",
             "Generated by `dpcluster report` from the result tables; every verdict below is "
             "computed from `summary.csv`, not written by hand.", "", "## Claims", "",
             "| figure | claim | verdict | evidence |", "|---|---|---|---|"]
    for claim, (holds, evidence) in evaluate(results_dir):
        verdict = {True: "holds", False: "does not hold", None: "—"}[holds]
        lines.append(f"| {claim.spec} | {claim.text} | {verdict} | {evidence} |")
    lines += ["", "## Figures", ""]
    for fig in sorted(results_dir.glob("fig*/figure.png")):
        lines += [f"### {fig.parent.name}", "", f"![{fig.parent.name}]({fig.parent.name}/figure.png)", ""]
    path = results_dir / "REPORT.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
