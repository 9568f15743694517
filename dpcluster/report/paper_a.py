"""Paper A's claims (Su et al.), each a function of one spec's table -> (holds, evidence)."""

from __future__ import annotations

import math

from .claim import Claim
from .tables import Verdict, datasets, each_dataset, fraction_better, gap, means, param, select

#: the private methods of Figure 1 that GkM is compared with (each in its default variant)
_FIG1_OTHERS = ("dplloyd", "dplloyd_improved", "eugkm", "gkm_3k", "pgkm")


def eugkm_small_eps_s1(s) -> Verdict:
    frac, n = fraction_better(s, "eugkm", "dplloyd", "s1", eps_max=0.1)
    if n == 0:
        return None, "no data"
    return frac == 1.0, f"EUGkM < DPLloyd at {frac:.0%} of {n} ε ≤ 0.1"


def dplloyd_high_d(s) -> Verdict:
    parts, ok = [], True
    for ds in ("adult", "lifesci"):
        frac, n = fraction_better(s, "dplloyd", "eugkm", ds)
        if n == 0:
            return None, f"no data for {ds}"
        ok = ok and frac > 0.5
        parts.append(f"{ds}: DPLloyd < EUGkM at {frac:.0%} of {n} ε")
    return ok, "; ".join(parts)


def gkm_worst(s, noise: str = "eq3") -> Verdict:
    """GkM above every other method at every (dataset, ε); GkM and GkM-3K both with the
    given noise scale."""
    bad, checked = [], 0
    for ds in datasets(s):
        g = means(s, "gkm", ds, noise=noise)
        for other in _FIG1_OTHERS:
            v = means(s, other, ds, **({"noise": noise} if other == "gkm_3k" else {}))
            for e in g.index.intersection(v.index):
                checked += 1
                if not g[e] > v[e]:
                    bad.append(f"{ds} ε={e:g} vs {other}")
    if checked == 0:
        return None, "no data"
    return not bad, f"{checked} comparisons; exceptions: {', '.join(bad[:6]) or 'none'}"


def gkm3k_beats_pgkm_lifesci(s, noise: str = "eq3") -> Verdict:
    """Section 5: GkM-3K "sometimes significantly outperforms PGkM (e.g. TIGER and
    Lifesci)": below PGkM at most ε on Lifesci (TIGER is not bundled)."""
    g, p = means(s, "gkm_3k", "lifesci", noise=noise), means(s, "pgkm", "lifesci")
    common = g.index.intersection(p.index)
    if common.empty:
        return None, "no data"
    below = int(sum(bool(g[e] < p[e]) for e in common))
    return below > len(common) / 2, f"lifesci: GkM-3K < PGkM at {below} of {len(common)} ε"


def gkm3k_below_dplloyd(s) -> Verdict:
    parts, ok, any_ = [], True, False
    for ds in datasets(s):
        frac, n = fraction_better(s, "dplloyd", "gkm_3k", ds)
        if n:
            any_ = True
            ok = ok and frac > 0.5
            parts.append(f"{ds} {frac:.0%}")
    if not any_:
        return None, "no data"
    return ok, "DPLloyd < GkM-3K at: " + ", ".join(parts)


def pgkm_only_s1_small(s) -> Verdict:
    """PGkM beats DPLloyd where its 95 % interval lies wholly below DPLloyd's; where the
    intervals overlap neither beats the other (a tie, listed, never a win)."""
    wins, ties, checked = [], [], 0
    for ds in datasets(s):
        p_high = means(s, "pgkm", ds, column="ci95_high")
        p_mean, dl_mean = means(s, "pgkm", ds), means(s, "dplloyd", ds)
        dl_low = means(s, "dplloyd", ds, column="ci95_low")
        common = p_mean.index.intersection(dl_mean.index)
        checked += len(common)
        wins += [(ds, e) for e in common if p_high[e] < dl_low[e]]
        ties += [(ds, e) for e in common if p_mean[e] < dl_mean[e] and p_high[e] >= dl_low[e]]
    if checked == 0:
        return None, "no data"
    allowed = all(ds == "s1" and e < 0.15 for ds, e in wins)
    listed = ", ".join(f"{ds} ε={e:g}" for ds, e in wins) or "nowhere"
    tied = ", ".join(f"{ds} ε={e:g}" for ds, e in ties)
    return allowed, f"PGkM beats DPLloyd (95 % intervals apart) at: {listed}" + (
        f"; lower mean within the intervals at: {tied}" if tied else ""
    )


def grows(s, algorithm: str, x: str, **fixed) -> Verdict:
    g = gap(s, algorithm, x, **fixed)
    if len(g) < 2:
        return None, "no data"
    return bool(g.iloc[-1] > g.iloc[0]), (
        f"gap at {x}={g.index[0]}: {g.iloc[0]:.4f}; at {x}={g.index[-1]}: {g.iloc[-1]:.4f}"
    )


def more_robust(s, robust: str, fragile: str, x: str) -> Verdict:
    """``robust``'s gap to the baseline grows less from the first to the last x than
    ``fragile``'s (both in their default variants, averaged over the other sweep)."""
    a, b = gap(s, robust, x), gap(s, fragile, x)
    common = [v for v in a.index if v in b.index]
    if len(common) < 2:
        return None, "no data"
    lo, hi = common[0], common[-1]
    da, db = a[hi] - a[lo], b[hi] - b[lo]
    return bool(da < db), (
        f"gap growth from {x}={lo} to {hi}: {robust} {da:+.4f}, {fragile} {db:+.4f}"
    )


def theta10_good(s) -> Verdict:
    """θ = 10 ranks in the top two of the θ grid on most datasets."""
    sub = s[s["algorithm"] == "eugkm"]
    if sub.empty:
        return None, "no data"
    theta = param(sub, "theta").astype(float)
    ranks, best = [], {}
    for _, rows in sub.groupby("dataset"):
        t, mean = theta[rows.index].to_numpy(), rows["mean"].to_numpy()
        if 10.0 in t:
            # competition ranking: θ values with the same grid m are one computation and tie
            ranks.append(1 + int((mean < mean[t == 10.0][0]).sum()))
            for b in t[mean == mean.min()]:
                best[b] = best.get(b, 0) + 1
    if not ranks:
        return None, "no θ = 10 rows"
    top2 = sum(r <= 2 for r in ranks)
    counts = ", ".join(f"θ={t:g}: {n}" for t, n in sorted(best.items()))
    return top2 > len(ranks) / 2, (
        f"θ = 10 in the top two at {top2} of {len(ranks)} datasets; "
        f"best θ per dataset (ties count for each): {counts}"
    )


def gkm_worst_at_every_point(s) -> Verdict:
    """GkM has the highest NICV of the default methods at every dataset (θ = 10 for EUGkM)."""
    bad, checked = [], 0
    for ds, rows in s.groupby("dataset", sort=False):
        g = select(rows, "gkm")["mean"]
        if g.empty:
            continue
        for name in ("dplloyd", "gkm_3k", "pgkm", "eugkm"):
            o = select(rows, name, **({"theta": 10.0} if name == "eugkm" else {}))["mean"]
            if len(o):
                checked += 1
                if not g.iloc[0] > o.iloc[0]:
                    bad.append(f"{ds} vs {name}")
    if checked == 0:
        return None, "no data"
    return not bad, (
        f"{checked} comparisons; exceptions ({len(bad)}): {', '.join(bad[:6]) or 'none'}"
    )


def _at_block(sub, algorithm: str, rule: str, **fixed) -> float | None:
    rows = select(sub, algorithm, block=rule, **fixed)["mean"]
    return float(rows.iloc[0]) if len(rows) else None


def sag_below_gkm(s, noise: str = "eq3") -> Verdict:
    def check(sub, ds):
        g = _at_block(sub, "gkm", "N^0.6", noise=noise)
        a = _at_block(sub, "gkm_sag", "N^0.6")
        if g is None or a is None:
            return None
        return g > 2 * a, f"{ds} GkM {g:.3g} vs SAG {a:.3g}"

    return each_dataset(s, check)


def small_blocks_help(s) -> Verdict:
    def check(sub, ds):
        big, small = _at_block(sub, "gkm", "N^0.6"), _at_block(sub, "gkm", "3k")
        if big is None or small is None:
            return None
        return small < big, f"{ds} 3k {small:.3g} vs N^0.6 {big:.3g}"

    return each_dataset(s, check)


def lloyd_faster_early(s) -> Verdict:
    def check(sub, ds):
        at3 = sub[sub["step"] == 3] if "step" in sub else sub.iloc[:0]
        lo = at3[at3["algorithm"] == "lloyd_steps"]["mean"]
        ge = at3[at3["algorithm"] == "gene"]["mean"]
        if not (len(lo) and len(ge)):
            return None
        return (
            float(lo.iloc[0]) < float(ge.iloc[0]),
            f"{ds} step 3: Lloyd {lo.iloc[0]:.4g}, Gene {ge.iloc[0]:.4g}",
        )

    return each_dataset(s, check)


def hybrid_falls_back_low_d(s) -> Verdict:
    def check(sub, ds):
        h = select(sub, "hybrid")
        if h.empty or "fell_back_mean" not in h:
            return None
        rate = float(h.sort_values("epsilon")["fell_back_mean"].iloc[0])
        return rate == 1.0, f"{ds} fallback rate at smallest ε: {rate:.0%}"

    return each_dataset(s, check, ("s1", "gowalla", "image"))


def hybrid_after_switch(s) -> Verdict:
    """The second half of Figure 5's low-d claim: at the ε where the hybrid switches in
    (its fallback rate is below 1), its mean NICV is at or below EUGkM's. A dataset on which
    the bundled data never switch cannot test it, and the evidence says so."""
    parts, verdicts, untestable = [], [], []
    for ds in ("s1", "gowalla", "image"):
        sub = s[s["dataset"] == ds]
        h = select(sub, "hybrid")
        if h.empty or "fell_back_mean" not in h:
            continue
        switched = h[h["fell_back_mean"] < 1.0]
        if switched.empty:
            untestable.append(ds)
            continue
        eug = means(sub, "eugkm")
        pairs = [
            (e, m, eug.get(e))
            for e, m in zip(switched["epsilon"], switched["mean"])
            if e in eug.index
        ]
        ok = [m <= ref for _, m, ref in pairs]
        verdicts.append(all(ok))
        parts.append(f"{ds}: hybrid ≤ EUGkM at {sum(ok)} of {len(pairs)} switched ε")
    if untestable:
        parts.append(
            f"not testable on this data: the hybrid falls back at every ε on "
            f"{', '.join(untestable)}"
        )
    return (all(verdicts) if verdicts else None), "; ".join(parts) or "no data"


def hybrid_best_high_d(s) -> Verdict:
    def check(sub, ds):
        h = means(sub, "hybrid")
        if h.empty:
            return None
        others = [means(sub, a) for a in ("dplloyd", "eugkm")]
        best = [e for e in h.index if all(e in o.index and h[e] <= o[e] for o in others)]
        frac = len(best) / len(h)
        return frac > 0.5, f"{ds}: hybrid best at {frac:.0%} of {len(h)} ε"

    return each_dataset(s, check, ("adult", "lifesci"))


def hybrid_scales(s) -> Verdict:
    verdicts = []
    for x in ("k", "d"):
        h, e = gap(s, "hybrid", x), gap(s, "eugkm", x)
        if len(h) < 2 or len(e) < 2:
            return None, "no data"
        verdicts.append(
            (
                h.iloc[-1] - h.iloc[0] < e.iloc[-1] - e.iloc[0],
                f"{x}: hybrid gap grows {h.iloc[-1] - h.iloc[0]:.4f}, "
                f"EUGkM {e.iloc[-1] - e.iloc[0]:.4f}",
            )
        )
    return all(v for v, _ in verdicts), "; ".join(t for _, t in verdicts)


def dplloyd_faster(s) -> Verdict:
    """Uses ``timing.csv`` (the claim's ``table``)."""

    def check(sub, ds):
        a = sub[sub["algorithm"] == "dplloyd"]["wall_time_s_mean"].mean()
        b = sub[sub["algorithm"] == "eugkm"]["wall_time_s_mean"].mean()
        if not (math.isfinite(a) and math.isfinite(b)):
            return None
        return b > 10 * a, f"{ds} EUGkM/DPLloyd time per run {b / a:.0f}x"

    return each_dataset(s, check)


def near_published(value: float, force: bool):
    """Adult-num at ε = 0.05, the hybrid (fallback or forced): the paper's number lies
    inside our 95 % CI, or within 10 % of our mean."""

    def check(s) -> Verdict:
        sub = select(s[(s["dataset"] == "adult") & (s["epsilon"] == 0.05)], "hybrid", force=force)
        if sub.empty:
            return None, "no data"
        r = sub.iloc[0]
        inside = r["ci95_low"] <= value <= r["ci95_high"] or abs(r["mean"] - value) <= 0.1 * value
        return bool(inside), (
            f"ours {r['mean']:.3f} (95% CI {r['ci95_low']:.3f}–"
            f"{r['ci95_high']:.3f}, n = {int(r['n'])}); paper {value}"
        )

    return check


CLAIMS = [
    Claim("fig1", "EUGkM beats DPLloyd at ε ≤ 0.1 on S1", eugkm_small_eps_s1),
    Claim("fig1", "On Adult-num and Lifesci, DPLloyd beats EUGkM at most ε", dplloyd_high_d),
    Claim("fig1", "GkM is worse than every other method on every dataset", gkm_worst),
    Claim(
        "fig1",
        "GkM is worse than every other method on every dataset (GUPT's noise scale)",
        lambda s: gkm_worst(s, "gupt"),
    ),
    Claim("fig1", "GkM-3K beats PGkM on Lifesci at most ε", gkm3k_beats_pgkm_lifesci),
    Claim(
        "fig1",
        "GkM-3K beats PGkM on Lifesci at most ε (GUPT's noise scale)",
        lambda s: gkm3k_beats_pgkm_lifesci(s, "gupt"),
    ),
    Claim("fig1", "GkM-3K is worse than DPLloyd (at most ε, every dataset)", gkm3k_below_dplloyd),
    Claim("fig1", "DPLloyd beats PGkM everywhere except S1 at ε < 0.15", pgkm_only_s1_small),
    Claim("fig2", "EUGkM (θ = 10) degrades with d", lambda s: grows(s, "eugkm", "d")),
    Claim("fig2", "DPLloyd degrades with k", lambda s: grows(s, "dplloyd", "k")),
    Claim(
        "fig2",
        "DPLloyd is more robust to d than EUGkM (θ = 10)",
        lambda s: more_robust(s, "dplloyd", "eugkm", "d"),
    ),
    Claim("fig2", "θ = 10 is good in most cases (top two of the θ grid)", theta10_good),
    Claim("fig2", "GkM is the worst method at every (k, d)", gkm_worst_at_every_point),
    Claim("fig3", "At blocks of N^0.6, GkM sits far (> 2x) above SAG", sag_below_gkm),
    Claim(
        "fig3",
        "At blocks of N^0.6, GkM sits far (> 2x) above SAG (GUPT's noise scale)",
        lambda s: sag_below_gkm(s, "gupt"),
    ),
    Claim("fig3", "GkM's error falls as blocks shrink (3k below N^0.6)", small_blocks_help),
    Claim(
        "fig4",
        "Lloyd improves faster than Gene in the first iterations (step 3)",
        lloyd_faster_early,
    ),
    Claim(
        "fig5",
        "On S1, Gowalla and Image the hybrid falls back to EUGkM at the smallest ε",
        hybrid_falls_back_low_d,
    ),
    Claim(
        "fig5",
        "On S1, Gowalla and Image, once the hybrid switches in it is at or below EUGkM",
        hybrid_after_switch,
    ),
    Claim("fig5", "On Adult-num and Lifesci the hybrid is best at most ε", hybrid_best_high_d),
    Claim("fig6", "The hybrid scales better than EUGkM in k and d", hybrid_scales),
    Claim(
        "fig7",
        "DPLloyd is much faster (> 10x per run) than EUGkM",
        dplloyd_faster,
        table="timing.csv",
    ),
    Claim(
        "numeric-checks",
        "Adult-num, ε = 0.05: the hybrid falls back to EUGkM, NICV 0.370",
        near_published(0.370, force=False),
    ),
    Claim(
        "numeric-checks",
        "Adult-num, ε = 0.05: EUGkM + one forced DPLloyd step, NICV 0.244",
        near_published(0.244, force=True),
    ),
]
