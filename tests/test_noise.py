"""The noise every private algorithm actually adds, measured where the algorithm adds it.

Each test runs the algorithm inside :func:`dpcluster.privacy.observe`, takes every release
of one kind, subtracts the noiseless answer (the release's own query, evaluated on the
data) and compares the realised noise with a scale or probability written out by hand from
docs/methods.md, never read back from the code. Every test is parametrised with planted
mutants (scale halved, scale doubled, a budget split swapped) and asserts that the same
measurement rejects each of them: the test is tested.

Tolerances. For Laplace noise of scale b, |X| has mean b and standard deviation b, so the
mean of n absolute values has relative standard error 1/√n; a measurement passes within
``Z`` of those. For a probability p estimated from n Bernoulli draws the standard error is
√(p(1−p)/n). ``Z = 5`` makes a false alarm a < 1e-6 event; every seed is fixed.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from dpcluster.algorithms.dplloyd import dplloyd_batch, dplloyd_improved
from dpcluster.algorithms.eugkm import eugkm
from dpcluster.algorithms.gkm import gkm, sample_and_aggregate
from dpcluster.algorithms.hybrid import hybrid
from dpcluster.algorithms.pgkm import genetic_kmeans
from dpcluster.ldp.bitvector import BVCodec
from dpcluster.privacy import ExponentialMechanism, observe
from dpcluster.privacy import response as response_module
from tests import planted

Z = 5.0
dplloyd_module = importlib.import_module("dpcluster.algorithms.dplloyd")
eugkm_module = importlib.import_module("dpcluster.algorithms.eugkm")
gkm_module = importlib.import_module("dpcluster.algorithms.gkm")
hybrid_module = importlib.import_module("dpcluster.algorithms.hybrid")
pgkm_module = importlib.import_module("dpcluster.algorithms.pgkm")
paper_b_module = importlib.import_module("dpcluster.experiments.paper_b")


def _releases(fn):
    """(fn's result, every release made while it ran)."""
    seen = []
    with observe(seen.append):
        out = fn()
    return out, seen


def _laplace_noise(releases, purpose: str, data) -> np.ndarray:
    """Realised noise of every release whose purpose starts with ``purpose``."""
    noise = [
        np.ravel(np.asarray(r.output, float) - np.asarray(r.query(data), float))
        for r in releases
        if r.purpose.startswith(purpose)
    ]
    assert noise, f"no release of {purpose!r}"
    return np.concatenate(noise)


def laplace_scale_is(noise: np.ndarray, b: float) -> bool:
    """Is the realised noise Laplace of scale b? (mean |X| = b within Z standard errors)."""
    assert noise.size >= 1000, "too few draws to tell a factor of 1.25 apart"
    return abs(np.abs(noise).mean() / b - 1.0) < Z / math.sqrt(noise.size)


def independent(noise: np.ndarray) -> bool:
    """Are the columns of ``noise`` (draws, m) uncorrelated? Each pair's sample correlation
    has standard error 1/√draws under independence (Z of them allowed); one draw shared by
    two columns gives 1."""
    rho = np.corrcoef(noise, rowvar=False)[np.triu_indices(noise.shape[1], 1)]
    return bool(np.all(np.abs(rho) < Z / math.sqrt(noise.shape[0])))


def rate_is(hits: int, n: int, p: float) -> bool:
    """Is ``hits`` of ``n`` Bernoulli draws consistent with probability p?"""
    return abs(hits / n - p) < Z * math.sqrt(p * (1 - p) / n)


def _patch(monkeypatch, mutant: str | None, module, d: int = 0, **extra) -> None:
    """Plant one mutant into ``module``'s Laplace mechanism (or an extra hook); "swapped"
    is diffprivlib's count/sum swap of the improved split in d dimensions."""
    if mutant in extra:
        extra[mutant](monkeypatch)
    elif mutant == "swapped" and d:
        monkeypatch.setattr(module, "LaplaceMechanism", planted.swapped_split(d))
    elif mutant == "half":  # the noise scale halved: the mechanism spends 2ε
        monkeypatch.setattr(module, "LaplaceMechanism", planted.scaled_laplace(2.0))
    elif mutant == "double":  # the noise scale doubled
        monkeypatch.setattr(module, "LaplaceMechanism", planted.scaled_laplace(0.5))
    elif mutant is not None:
        raise ValueError(mutant)


def _uniform(N: int, d: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (N, d))


# --- DPLloyd (A1): counts and sums share the scale t·(d·r + 1)/ε -----------------------------


@pytest.mark.parametrize("mutant", [None, "half", "double"])
def test_dplloyd_counts_and_sums_have_scale_t_dr_plus_1_over_eps(mutant, monkeypatch):
    _patch(monkeypatch, mutant, dplloyd_module)
    X = _uniform(300, 3)
    R, k = 200, 3
    inits = np.random.default_rng(1).uniform(-1, 1, (R, k, 3))
    streams = {"count": np.random.default_rng(2), "sum": np.random.default_rng(3)}
    _, seen = _releases(lambda: dplloyd_batch(X, inits, 1.0, streams, iterations=5))
    b = 5 * (3 * 1 + 1) / 1.0  # t = 5, d = 3, r = 1, ε = 1: b = 20 for counts and sums
    counts = _laplace_noise(seen, "cluster counts", X)
    sums = _laplace_noise(seen, "cluster coordinate sums", X)
    assert counts.size == R * 5 * k and sums.size == R * 5 * k * 3
    assert laplace_scale_is(counts, b) == (mutant is None)
    assert laplace_scale_is(sums, b) == (mutant is None)
    assert independent(counts.reshape(-1, k)) and independent(sums.reshape(-1, 3))


# --- improved DPLloyd (A2): count ε_iter·c/(d+c), each coordinate sum ε_iter/(d+c) --------


@pytest.mark.parametrize("mutant", [None, "half", "double", "swapped"])
def test_improved_dplloyd_split_count_c_to_each_sum_1(mutant, monkeypatch):
    d = 10
    _patch(monkeypatch, mutant, dplloyd_module, d=d)
    X = _uniform(500, d)
    seen = []
    with observe(seen.append):
        for i in range(300):
            rng = np.random.default_rng(i)
            dplloyd_improved(X, 2, 1.0, rng.uniform(-1, 1, (2, d)), rng)
    # c = (4 d ρ²)^(1/3) with ρ = 0.225; ε_m = sqrt(500 k³/N² (d+c)³) = 4.78 > ε = 1, so
    # t = t_min = 2 and ε_iter = 1/2.
    c = (4 * d * 0.225**2) ** (1 / 3)
    eps_iter = 1.0 / 2
    b_count = 1.0 / (eps_iter * c / (d + c))  # 17.81
    b_sum = 1.0 / (eps_iter / (d + c))  # each coordinate sum, sensitivity r = 1: 22.53
    counts = _laplace_noise(seen, "cluster counts", X)
    sums = _laplace_noise(seen, "cluster coordinate sums", X)
    assert counts.size == 300 * 2 * 2  # runs × t × k
    assert laplace_scale_is(sums, b_sum) == (mutant is None)
    assert laplace_scale_is(counts, b_count) == (mutant is None)


# --- EUGkM (A3): every cell Lap(1/ε); with private N, 5 % of ε on N ---------------------------


def _eugkm_releases(X, runs: int, private_n: bool):
    seen = []
    inits = np.random.default_rng(9).uniform(-1, 1, (1, 2, X.shape[1]))
    with observe(seen.append):
        for i in range(runs):
            eugkm(X, 2, 1.0, inits, np.random.default_rng(i), private_n=private_n, max_iter=1)
    return seen


@pytest.mark.parametrize("mutant", [None, "half", "double"])
def test_eugkm_cells_have_scale_one_over_eps(mutant, monkeypatch):
    _patch(monkeypatch, mutant, eugkm_module)
    X = _uniform(20_000, 2)
    seen = _eugkm_releases(X, 40, private_n=False)
    noise = _laplace_noise(seen, "grid cell counts", X)
    # m = round((N ε/θ)^(2/(2+d))) = round(2000^0.5) = 45 cells per axis, 2,025 cells
    assert noise.size == 40 * 45**2
    assert laplace_scale_is(noise, 1.0) == (mutant is None)
    assert independent(noise.reshape(-1, 2))  # neighbouring cells draw apart


@pytest.mark.parametrize("mutant", [None, "half", "swapped"])
def test_eugkm_private_n_spends_5_percent_on_n(mutant, monkeypatch):
    swap = lambda mp: mp.setattr(eugkm_module, "N_SHARE", 0.95)  # noqa: E731
    _patch(monkeypatch, mutant, eugkm_module, swapped=swap)
    X = _uniform(2_000, 2)
    seen = _eugkm_releases(X, 1_200, private_n=True)
    n_noise = _laplace_noise(seen, "record count N", X)
    cells = _laplace_noise(seen, "grid cell counts", X)
    assert laplace_scale_is(cells, 1 / 0.95) == (mutant is None)  # ε − ε_N = 0.95
    assert laplace_scale_is(n_noise, 1 / 0.05) == (mutant is None)  # ε_N = 0.05: b = 20


# --- the hybrid (A7): EUGkM at ε/2, then one DPLloyd step at ε/2 -----------------------------


def _double_epsilon(fn):
    return lambda X, k, eps, *a, **kw: fn(X, k, 2 * eps, *a, **kw)


@pytest.mark.parametrize("mutant", [None, "eugkm gets all of eps", "lloyd step gets all of eps"])
def test_hybrid_halves_have_scales_2_over_eps_and_2_dr_plus_1_over_eps(mutant, monkeypatch):
    plants = {
        "eugkm gets all of eps": lambda mp: mp.setattr(
            hybrid_module, "eugkm", _double_epsilon(eugkm)
        ),
        "lloyd step gets all of eps": lambda mp: mp.setattr(
            hybrid_module, "dplloyd_batch", _double_epsilon(dplloyd_batch)
        ),
    }
    _patch(monkeypatch, mutant, None, **plants)
    X = _uniform(20_000, 2)
    inits = np.random.default_rng(9).uniform(-1, 1, (1, 2, 2))
    seen = []
    with observe(seen.append):
        for i in range(30):
            hybrid(
                X, 2, 2.0, inits, np.random.default_rng(i), lloyd_runs=30, force=True, max_iter=1
            )
    cells = _laplace_noise(seen, "grid cell counts", X)
    step = np.concatenate(
        [_laplace_noise(seen, "cluster counts", X), _laplace_noise(seen, "cluster coordinate", X)]
    )
    # ε = 2: the synopsis at ε/2 = 1 has b = 1; one DPLloyd iteration at ε/2 = 1 split by
    # sensitivity has b = (d·r + 1)/1 = 3 for counts and sums (d = 2)
    assert laplace_scale_is(cells, 1.0) == (mutant != "eugkm gets all of eps")
    assert laplace_scale_is(step, 3.0) == (mutant != "lloyd step gets all of eps")


def test_hybrid_switch_flips_at_the_hand_computed_epsilon():
    """N = 10,000, k = 2, d = 2, r = 1, θ = 10, ||o||² = d r² = 2: Ineq. 15's threshold is
    M_req = 12 (d+1)² k^(1+2/d) (d + ||o||²)/d = 12·9·4·4/2 = 864 cells, and M = (Nε/θ)^1,
    so the hybrid switches on at ε = 10·864/10,000 = 0.864."""
    X = _uniform(10_000, 2)
    inits = np.random.default_rng(9).uniform(-1, 1, (1, 2, 2))
    below = hybrid(X, 2, 0.9 * 0.864, inits, np.random.default_rng(0), max_iter=1)
    above = hybrid(X, 2, 1.1 * 0.864, inits, np.random.default_rng(0), max_iter=1)
    assert below[0].info["fell_back"] is True
    assert above[0].info["fell_back"] is False
    assert below[0].ledger.claimed_epsilon == pytest.approx(0.9 * 0.864)  # exact N: ∞ holds
    assert above[0].ledger.claimed_epsilon == pytest.approx(1.1 * 0.864)


# --- GkM and GkM-3K (A4): Eq. 3, Lap(k·d·2r/(l·ε)) per averaged coordinate ----------------


@pytest.mark.parametrize("rule,factor", [("eq3", 1.0), ("gupt", 3.0)])
@pytest.mark.parametrize("block", ["N^0.6", "3k"])
@pytest.mark.parametrize("mutant", [None, "half", "double"])
def test_gkm_noise_scale_is_2kd_over_l_eps(block, mutant, rule, factor, monkeypatch):
    """Eq. 3; the GUPT rule (ε/3 before the noise) triples the scale."""
    _patch(monkeypatch, mutant, gkm_module)
    X = _uniform(1_000, 2)
    k, eps, noise = 2, 1.0, []
    for i in range(300):
        out = gkm(X, k, eps, np.random.default_rng(i), block=block, max_iter=2, noise=rule)
        sag_rng, _ = np.random.default_rng(i).spawn(2)  # gkm's own split of its generator
        centre, _ = sample_and_aggregate(X, k, block, sag_rng, "points", "lex0", 2, 1.0)
        noise.append(np.ravel(out.centroids - centre))
    # N^0.6 = 63.1 → blocks of 63, l = ⌊1000/63⌋ = 15; 3k = 6 → l = ⌊1000/6⌋ = 166
    l = {"N^0.6": 15, "3k": 166}[block]
    b = factor * k * 2 * 2.0 / (l * eps)
    assert laplace_scale_is(np.concatenate(noise), b) == (mutant is None)


# --- PGkM (A5): selection ∝ exp(−ε' f / (2Δf)), ε' = ε/(m'·r_it), Δf = d·(2r)² ----------------


def _tempered(f: float):
    class Tempered(ExponentialMechanism):
        @property
        def rate(self) -> tuple[int, int]:  # the rate per lattice step times f (2 or 1/2)
            a, m = ExponentialMechanism.rate.func(self)
            return (2 * a, m) if f == 2.0 else (a, m + 1)

    return Tempered


@pytest.mark.parametrize("mutant", [None, "half", "double"])
def test_pgkm_selects_with_the_hand_computed_probability(mutant, monkeypatch):
    plants = {
        "half": lambda mp: mp.setattr(pgkm_module, "ExponentialMechanism", _tempered(2.0)),
        "double": lambda mp: mp.setattr(pgkm_module, "ExponentialMechanism", _tempered(0.5)),
    }
    _patch(monkeypatch, mutant, None, **plants)
    X = _uniform(40, 2)
    eps = 1.0  # pool 2, m' = 1, r_it = 1: ε' = ε; Δf = 2·4 = 8, temperature 2Δf/ε' = 16
    chose_better, p_better = 0, 0.0
    for i in range(3_000):
        _, seen = _releases(
            lambda i=i: genetic_kmeans(
                X, 2, np.random.default_rng(i), eps, pool=2, selected=1, iterations=1
            )
        )
        (rel,) = seen
        f = np.asarray(rel.query(X))
        better = int(np.argmin(f))
        chose_better += rel.output == better
        p_better += 1.0 / (1.0 + math.exp(-abs(f[1] - f[0]) / 16.0))
    # how often the fitter candidate wins is a Poisson-binomial count with mean Σ p_i and
    # sd ≤ sqrt(n/4); a sharper or flatter temperature moves it
    assert (abs(chose_better - p_better) < Z * math.sqrt(3_000 / 4)) == (mutant is None)


# --- DPBV (B3): every bit kept with p = e^ε/(1 + e^ε) ----------------------------------------


@pytest.mark.parametrize("mutant", [None, "rr at 2 eps", "rr at eps/2"])
def test_dpbv_keeps_each_bit_with_e_eps_over_1_plus_e_eps(mutant, monkeypatch):
    if mutant is not None:
        f = 2.0 if mutant == "rr at 2 eps" else 0.5
        monkeypatch.setattr(
            response_module.BitVectorResponse,
            "p",
            property(lambda self: response_module.keep_probability(f * self.epsilon_bit)),
        )
    codec = BVCodec.draw(200, 1.0, 0.0, 10.0, np.random.default_rng(0))
    x = np.random.default_rng(1).uniform(0, 10, 100)
    _, seen = _releases(lambda: codec.encode(x, 1.0, np.random.default_rng(2)))
    (rel,) = seen
    flipped = int((np.asarray(rel.output) != rel.query(x)).sum())
    n = x.size * 200
    p_keep = math.e / (1 + math.e)  # ε = 1 per bit: 0.7311
    assert rate_is(n - flipped, n, p_keep) == (mutant is None)


# --- Figure 6's per-record budget: ε split over the releases one record takes part in ------


@pytest.mark.parametrize("budget", ["per_record", "per_encoding (the mutant)"])
@pytest.mark.parametrize("method", ["non-decomposition", "decomposition"])
def test_vertical_per_record_budget_splits_epsilon(method, budget, monkeypatch):
    """N = 2 records, d = 4, Bob holds l..d = 2 attributes; 40 pairs, all of them (0, 1) or
    (1, 0), so the busiest record is in all 40. Per record, ε = 2 gives each of Bob's two
    attribute encodings ε/2 = 1, and each R² encoding ε/40 = 0.05. The measurement must
    reject the per-encoding budget (ε = 2 on every encoding)."""
    from dpcluster import harness
    from dpcluster.spec import AlgorithmSpec, DatasetSpec

    encoded = []
    real_encode = BVCodec.encode

    def spy(self, x, epsilon=None, private_rng=None, ledger=None, column=None):
        if epsilon is not None:
            encoded.append((self, np.asarray(x, float).reshape(-1)))
        return real_encode(self, x, epsilon, private_rng, ledger, column)

    monkeypatch.setattr(BVCodec, "encode", spy)
    params = {"budget": budget.split()[0], "method": method, "pairs": 40, "s": 1500, "t": 12.5}
    cell = harness.Cell(
        dataset=DatasetSpec("uniform", (("N", 2), ("d", 4), ("lo", 0), ("hi", 25))),
        algorithm=AlgorithmSpec(
            name="vertical_error", params=tuple(sorted(params.items())), repeat=1
        ),
        epsilon=2.0,
        seed=7,
        n_init=1,
        init_method="uniform",
    )
    outcome, seen = _releases(lambda: harness.run_cell(cell))
    assert not outcome.error
    dpbv = [r for r in seen if r.purpose.startswith("DPBV")]
    assert len(dpbv) == len(encoded) == (2 if method == "non-decomposition" else 2)
    kept = sum(
        int((np.asarray(r.output) == c.clean_bits(x)).sum()) for r, (c, x) in zip(dpbv, encoded)
    )
    n = sum(x.size * c.s for c, x in encoded)
    eps_encoding = 2.0 / 2 if method == "non-decomposition" else 2.0 / 40
    p_keep = math.exp(eps_encoding) / (1 + math.exp(eps_encoding))
    assert rate_is(kept, n, p_keep) == (budget == "per_record")
