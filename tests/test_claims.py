"""Every claim of the report can hold and can fail: each is evaluated on its committed
reference table (docs/results/), then on a copy changed by hand in the one way that must
turn the verdict over, and on a table without its rows ("no data", never an exception)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from dpcluster import report

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "results"


def _p(s: pd.DataFrame, key: str) -> pd.Series:
    return s["params"].map(lambda p: json.loads(p).get(key))


def _set(s, mask, column="mean", to=None, times=None):
    """A copy of ``s`` with ``column`` set to ``to`` (or multiplied by ``times``) on ``mask``."""
    s = s.copy()
    s.loc[mask, column] = to if to is not None else s.loc[mask, column] * times
    return s


def _alg(s, name):
    return s["algorithm"] == name


def _top(s, column):
    return s[column] == s[column].max()


def _lloyd_min(s):
    """Each row's dataset baseline (best Lloyd NICV)."""
    return s["dataset"].map(s[_alg(s, "lloyd")].groupby("dataset")["min"].min())


#: claim text (start) -> how to turn its verdict over on the reference table
FLIPS = {
    "EUGkM beats DPLloyd at ε ≤ 0.1": lambda s: _set(s, _alg(s, "eugkm"), times=100),
    "On Adult-num and Lifesci, DPLloyd beats": lambda s: _set(s, _alg(s, "dplloyd"), times=100),
    "GkM is worse than every other": lambda s: _set(s, _alg(s, "gkm"), to=0.0),
    # (make it fail, make it hold): the verdict on the reference picks one
    "GkM-3K beats PGkM on Lifesci": (
        lambda s: _set(s, _alg(s, "pgkm"), to=0.0),
        lambda s: _set(s, _alg(s, "gkm_3k"), to=0.0),
    ),
    "GkM-3K is worse than DPLloyd": lambda s: _set(s, _alg(s, "dplloyd"), times=100),
    "DPLloyd beats PGkM everywhere": lambda s: _set(
        _set(s, _alg(s, "pgkm"), to=0.0), _alg(s, "pgkm"), "ci95_high", to=0.0
    ),
    "EUGkM (θ = 10) degrades with d": lambda s: _set(s, _alg(s, "eugkm") & _top(s, "d"), to=0.0),
    "DPLloyd degrades with k": lambda s: _set(s, _alg(s, "dplloyd") & _top(s, "k"), to=0.0),
    "DPLloyd is more robust to d": lambda s: _set(
        s, _alg(s, "dplloyd"), to=_lloyd_min(s)[_alg(s, "dplloyd")]
    ),
    "θ = 10 is good": lambda s: _set(s, _alg(s, "eugkm") & (_p(s, "theta") == 10.0), times=100),
    "GkM is the worst method at every": lambda s: _set(s, _alg(s, "gkm"), to=0.0),
    "At blocks of N^0.6, GkM sits far": lambda s: _set(s, _alg(s, "gkm_sag"), times=100),
    "GkM's error falls as blocks shrink": lambda s: _set(
        s, _alg(s, "gkm") & (_p(s, "block") == "3k"), times=1000
    ),
    "Lloyd improves faster than Gene": lambda s: _set(s, _alg(s, "gene"), times=100),
    "On S1, Gowalla and Image the hybrid falls back": lambda s: _set(
        s, _alg(s, "hybrid"), "fell_back_mean", to=0.0
    ),
    # (if it holds, if it does not): a single switched ε decides it, within its noise
    "On S1, Gowalla and Image, once the hybrid switches": (
        lambda s: _set(s, _alg(s, "hybrid"), times=100),
        lambda s: _set(s, _alg(s, "hybrid"), to=0.0),
    ),
    "On Adult-num and Lifesci the hybrid is best": lambda s: _set(s, _alg(s, "hybrid"), times=100),
    "The hybrid scales better than EUGkM": lambda s: _set(
        s, _alg(s, "hybrid") & (_top(s, "k") | _top(s, "d")), times=100
    ),
    "DPLloyd is much faster": (
        lambda s: _set(s, _alg(s, "dplloyd"), "wall_time_s_mean", times=1000),
        lambda s: _set(s, _alg(s, "dplloyd"), "wall_time_s_mean", times=0.001),
    ),
    "Adult-num, ε = 0.05: the hybrid falls back": lambda s: _shift(s),
    "Adult-num, ε = 0.05: EUGkM + one forced": lambda s: _shift(s),
    "The BV estimate of the pair (5, 9) saturates": lambda s: _set(
        s, (s["step"] - 4).abs() < 1e-9, to=4.0
    ),
    "Below 2t the BV estimate tracks": lambda s: _set(s, s["step"] <= 2, to=s["step"] + 1),
    "The distance error falls as s grows": lambda s: _set(
        s, _p(s, "s") == _p(s, "s").max(), times=100
    ),
    "Algorithm 1 (κ = 0.8) lowers": lambda s: _set(s, _p(s, "method") == "consistence", to=0.0),
    "Algorithm 1 with κ = 0.6 lowers": lambda s: _set(s, _p(s, "method") == "consistence", to=0.0),
    "Non-decomposition error grows with d": lambda s: _set(
        s, _p(s, "method") == "decomposition", to=0.0
    ),
    "The same with a per-record ε": lambda s: _set(s, _p(s, "method") == "decomposition", to=0.0),
    "kCluster beats k-means": lambda s: _set(s, _alg(s, "kcluster"), "ari_mean", to=1.0),
    "DPBV kCluster stays close": lambda s: _set(s, _alg(s, "dp_kcluster"), "ari_mean", to=0.0),
    "ADP and RSP keep high utility": lambda s: _set(s, _alg(s, "adp"), "ari_mean", to=0.0),
    "Utility is high for ε ≥ 1": lambda s: _set(s, s["epsilon"] == 1.0, to=0.0),
}


def _shift(s):
    """Move every interval and mean far from the published number."""
    s = s.copy()
    for column in ("mean", "ci95_low", "ci95_high"):
        s[column] = s[column] * 3
    return s


def _flip_of(text: str):
    """The flip whose key is the longest start of the claim's text."""
    starts = [f for f in FLIPS if text.startswith(f)]
    assert starts, text
    return FLIPS[max(starts, key=len)]


def test_every_claim_has_a_flip_and_every_flip_a_claim():
    texts = [c.text for c in report.CLAIMS]
    assert len(texts) == len(set(texts))
    for text in texts:
        _flip_of(text)
    assert all(any(t.startswith(f) for t in texts) for f in FLIPS)


@pytest.mark.parametrize("claim", report.CLAIMS, ids=lambda c: c.text[:60])
def test_claim_turns_over_when_its_evidence_does(claim):
    table = pd.read_csv(REFERENCE / claim.spec / claim.table)
    holds, evidence = claim.check(table)
    assert holds in (True, False), evidence  # the reference decides every claim
    flip = _flip_of(claim.text)
    if isinstance(flip, tuple):
        flip = flip[0] if holds else flip[1]
    flipped, flipped_evidence = claim.check(flip(table))
    assert flipped is (not holds), (evidence, flipped_evidence)


@pytest.mark.parametrize("claim", report.CLAIMS, ids=lambda c: c.text[:60])
def test_claim_without_its_rows_is_no_data(claim):
    """Only the lloyd baseline (or nothing relevant): "no data", never an exception."""
    table = pd.read_csv(REFERENCE / claim.spec / claim.table)
    other = table[table["algorithm"] == "__nothing__"]
    holds, evidence = claim.check(other)
    assert holds is None and evidence


def test_a_swept_parameter_reads_its_default_variant():
    """A second GkM variant (minit random, far better) beside the default one: "GkM" means
    the default variant, so the verdict is the reference's."""
    table = pd.read_csv(REFERENCE / "fig1" / "summary.csv")
    gkm = table[table["algorithm"] == "gkm"].copy()
    gkm = gkm[gkm["params"].map(lambda p: json.loads(p).get("noise", "eq3")) == "eq3"]
    gkm["params"] = gkm["params"].map(lambda p: json.dumps({**json.loads(p), "minit": "random"}))
    gkm["mean"] = 0.0
    (claim,) = [
        c
        for c in report.CLAIMS
        if c.text == "GkM is worse than every other method on every dataset"
    ]
    assert claim.check(pd.concat([table, gkm]))[0] is True


def test_an_ambiguous_selection_is_an_error_not_a_guess(tmp_path):
    """Two GkM variants told apart only by a parameter the registry does not know (so it has
    no default) raise, shown as "error"."""
    table = pd.read_csv(REFERENCE / "fig1" / "summary.csv")
    gkm = table[table["algorithm"] == "gkm"].copy()
    gkm["params"] = gkm["params"].map(lambda p: json.dumps({**json.loads(p), "extra": 1}))
    gkm["variant"] = "gkm(extra=1)"
    two = pd.concat([table, gkm])
    (tmp_path / "fig1").mkdir()
    two.to_csv(tmp_path / "fig1" / "summary.csv", index=False)
    verdicts = {c.text: v for c, v in report.evaluate(tmp_path) if c.spec == "fig1"}
    holds, evidence = verdicts["GkM is worse than every other method on every dataset"]
    assert holds == report.ERROR and "ambiguous" in evidence


def test_reference_verdicts_are_finite_numbers():
    """The evidence of every decided claim quotes numbers, not NaN."""
    for claim in report.CLAIMS:
        table = pd.read_csv(REFERENCE / claim.spec / claim.table)
        _, evidence = claim.check(table)
        assert "nan" not in evidence.lower().replace(",", " ").split(), (claim.text, evidence)
