"""Exact discrete Laplace samples from integer draws only (docs/privacy.md, "The sampler").

The continuous Laplace of ``numpy`` (inverse CDF in floating point) leaks through the low
bits of its outputs: the set of doubles that ``x + Lap(b)`` can reach depends on x, so an
output can be impossible under one neighbour and possible under the other (Mironov,
CCS 2012). A mechanism here instead releases a point of a public lattice γℤ: the answer
rounded to the lattice plus γ·Z, with Z drawn from the discrete Laplace

    P(Z = z) = (1 − q)/(1 + q) · q^|z|,   q = exp(−1/σ),   σ = t/s > 0 (t, s integers),

by Algorithm 2 of Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential
Privacy" (NeurIPS 2020). Every step is a comparison of uniform integers from the caller's
generator, so the distribution is exact: no rounding enters it. Each sample costs a few
integer draws on average. The discrete Laplace and the discrete Gaussian are compiled
(numba draws from the caller's generator), one sample at a time; the exponential
mechanism's rarer helpers are vectorised with rejection masks.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..cache import share_numba_cache

share_numba_cache()  # before the first @njit: one compiled cache per commit and machine

#: the largest integer scale numerator t the int64 arithmetic below admits: t·K and t·V
#: stay below 2^63 while K, V < 2^16, which fails with probability below 1/(2^16)!
MAX_NUMERATOR = 2**46


def bernoulli_exp(rng: np.random.Generator, num: np.ndarray, den: int) -> np.ndarray:
    """(n,) bool: Bernoulli(exp(−num/den)) for integer ``num`` in [0, den] (CKS Algorithm 1
    for γ ∈ [0, 1]): K ← 1; while Bernoulli(γ/K): K ← K + 1; return K odd. The entries
    still looping in round K all share that K, so each round is one draw below den·K."""
    num = np.asarray(num, dtype=np.int64)
    odd = np.ones(num.shape, dtype=bool)
    active = np.flatnonzero(num > 0)  # γ = 0: K = 1, true
    k = 1
    while active.size:
        active = active[rng.integers(0, den * k, size=active.size) < num[active]]
        k += 1
        odd[active] = k % 2 == 1
    return odd


@njit(cache=True)
def _bernoulli_exp_one(rng, num, den):
    """Bernoulli(exp(−num/den)) for integers 0 ≤ num ≤ den (CKS Algorithm 1 for γ ∈ [0, 1],
    one sample): K ← 1; while Bernoulli(γ/K), drawn as a uniform integer below den·K
    compared with num: K ← K + 1; true when K is odd."""
    if num == 0:
        return True
    k = 1
    while rng.integers(0, den * k) < num:
        k += 1
    return k % 2 == 1


@njit(cache=True)
def _discrete_laplace_one(rng, t, s):
    """One exact discrete Laplace sample of scale t/s (CKS Algorithm 2): U uniform below t,
    kept with probability exp(−U/t); V the successes of Bernoulli(exp(−1)) before its first
    failure; Y = ⌊(U + tV)/s⌋; a fair sign, with −0 rejected so that 0 is not counted
    twice. Every step compares uniform integers drawn from the caller's generator (numba
    draws from its bit generator, advancing it)."""
    while True:
        u = rng.integers(0, t)
        if not _bernoulli_exp_one(rng, u, t):
            continue
        v = 0
        while _bernoulli_exp_one(rng, 1, 1):
            v += 1
        y = (u + t * v) // s
        negative = rng.integers(0, 2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


@njit(cache=True)
def _discrete_laplace_fill(rng, t, s, out):
    """out[i] ← :func:`_discrete_laplace_one`, one sample at a time."""
    for i in range(out.size):
        out[i] = _discrete_laplace_one(rng, t, s)


def discrete_laplace(rng: np.random.Generator, t: int, s: int, shape) -> np.ndarray:
    """int64 array of ``shape``: exact samples of the discrete Laplace with scale σ = t/s
    (module docstring), t and s positive integers, t ≤ :data:`MAX_NUMERATOR`. Compiled:
    a few tens of nanoseconds per sample and no per-call rejection rounds, so the many
    small releases of a DPLloyd cell cost about what numpy's continuous Laplace did."""
    t, s = int(t), int(s)
    if not (0 < t <= MAX_NUMERATOR and s > 0):
        raise ValueError(f"discrete Laplace needs 0 < t <= 2^46 and s > 0, got t={t}, s={s}")
    out = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    _discrete_laplace_fill(rng, np.int64(t), np.int64(s), out)
    return out.reshape(shape)


def dyadic_at_least(value_num: int, value_den: float, bits: int = 30) -> tuple[int, int]:
    """(t, s) with s a power of two and t/s ≥ value_num/value_den exactly, t/s within a
    relative 2^-bits of it (above 2^bits, s = 1 and t is the ceiling). ``value_den`` is a
    positive float, read exactly as the dyadic rational it is."""
    from fractions import Fraction

    value = Fraction(int(value_num)) / Fraction(value_den)
    shift = max(0, bits - max(0, math.floor(math.log2(value)) if value >= 1 else 0))
    s = 2**shift
    return math.ceil(value * s), s


def bernoulli_exp_wide_den(rng: np.random.Generator, num: np.ndarray, den: int) -> np.ndarray:
    """:func:`bernoulli_exp` for a denominator up to 2^62: each Bernoulli(γ/K) is drawn as
    Bernoulli(num/den) and Bernoulli(1/K) together (their product has the same law), so
    no draw bound ever exceeds den."""
    num = np.asarray(num, dtype=np.int64)
    odd = np.ones(num.shape, dtype=bool)
    active = np.flatnonzero(num > 0)
    k = 1
    while active.size:
        hit = rng.integers(0, den, size=active.size) < num[active]
        if k > 1:
            hit &= rng.integers(0, k, size=active.size) == 0
        active = active[hit]
        k += 1
        odd[active] = k % 2 == 1
    return odd


def bernoulli_exp_rational(rng: np.random.Generator, num: np.ndarray, den: int) -> np.ndarray:
    """(n,) bool: Bernoulli(exp(−num/den)) for integers num ≥ 0 and den > 0 (CKS
    Algorithm 1 for γ > 1): ⌊γ⌋ Bernoulli(exp(−1)) trials must all succeed, then one
    Bernoulli(exp(−(γ − ⌊γ⌋)))."""
    num = np.asarray(num, dtype=np.int64)
    return bernoulli_exp_split(rng, num // den, num % den, den)


def bernoulli_exp_split(
    rng: np.random.Generator, whole: np.ndarray, frac: np.ndarray, den: int
) -> np.ndarray:
    """(n,) bool: Bernoulli(exp(−(whole + frac/den))) for integers whole ≥ 0,
    0 ≤ frac < den ≤ 2^62, given split so that whole·den + frac may exceed int64: the
    ``whole`` Bernoulli(exp(−1)) trials stop at the first failure, then one
    Bernoulli(exp(−frac/den))."""
    whole = np.asarray(whole, dtype=np.int64)
    frac = np.asarray(frac, dtype=np.int64)
    ok = np.ones(whole.shape, dtype=bool)
    active = np.flatnonzero(whole > 0)
    left = whole.copy()
    while active.size:
        hit = bernoulli_exp(rng, np.ones(active.size, dtype=np.int64), 1)
        ok[active[~hit]] = False
        left[active] -= 1
        active = active[hit & (left[active] > 0)]
    still = np.flatnonzero(ok)
    ok[still] = bernoulli_exp_wide_den(rng, frac[still], den)
    return ok


def exponential_choice(rng: np.random.Generator, steps: np.ndarray, rate: tuple[int, int]) -> int:
    """One exact draw of index i with probability ∝ exp(−rate·steps_i), for integer losses
    ``steps`` (n,) and a dyadic rate a/2^m given as ``rate`` = (a, m), a ≥ 0, m ≤ 62.

    Rejection from the uniform proposal: propose i uniformly, accept with probability
    exp(−rate·(steps_i − min steps)), decided exactly (:func:`bernoulli_exp_split`); the
    first accepted proposal has the target law. The best candidate is always accepted,
    so at most n proposals are needed in expectation. Proposals are drawn n at a time
    and the first accepted one in draw order is returned."""
    steps = np.asarray(steps, dtype=np.int64)
    n = steps.size
    if n == 1:
        return 0
    a, m = int(rate[0]), int(rate[1])
    gap = steps - steps.min()
    if int(gap.max()) <= (2**63 - 1) // max(a, 1):
        exponent = gap * a
    else:  # Python integers: no overflow
        exponent = gap.astype(object) * a
    whole = (exponent >> m).astype(np.int64)
    frac = (exponent & ((1 << m) - 1)).astype(np.int64)
    while True:
        proposal = rng.integers(0, n, size=n)
        accepted = bernoulli_exp_split(rng, whole[proposal], frac[proposal], 1 << m)
        if accepted.any():
            return int(proposal[np.argmax(accepted)])


#: the largest integer variance σ² (in lattice steps) of :func:`discrete_gaussian`: the
#: denominator 2σ²t² of its acceptance test stays below 2^62
MAX_VARIANCE = 2**30


def _bernoulli_exp_wide(rng: np.random.Generator, num: int, den: int) -> bool:
    """Bernoulli(exp(−num/den)) for one pair whose numerator exceeds int64 (a far tail):
    ⌊num/den⌋ Bernoulli(exp(−1)) trials, stopping at the first failure, then the rest."""
    whole, frac = divmod(int(num), int(den))
    one = np.ones(1, dtype=np.int64)
    for _ in range(whole):
        if not bernoulli_exp(rng, one, 1)[0]:
            return False
    return bool(bernoulli_exp_wide_den(rng, np.array([frac], dtype=np.int64), den)[0])


@njit(cache=True)
def _bernoulli_exp_below_one(rng, num, den):
    """Bernoulli(exp(−num/den)) for integers 0 ≤ num < den ≤ 2^62, one sample: CKS
    Algorithm 1 with each Bernoulli(γ/K) drawn as Bernoulli(num/den) and Bernoulli(1/K)
    together (:func:`bernoulli_exp_wide_den`), so no draw bound exceeds den."""
    if num == 0:
        return True
    k = 1
    while rng.integers(0, den) < num and (k == 1 or rng.integers(0, k) == 0):
        k += 1
    return k % 2 == 1


@njit(cache=True)
def _discrete_gaussian_fill(rng, sigma2, t, out, start):
    """out[start:] ← exact discrete Gaussian samples (CKS Algorithm 3), one at a time: a
    discrete Laplace proposal Y of scale t kept with probability
    exp(−(|Y|·t − σ²)²/(2σ²t²)), i.e. ⌊g²/den⌋ Bernoulli(exp(−1)) trials stopping at the
    first failure, then Bernoulli(exp(−(g² mod den)/den)). A proposal whose gap g reaches
    2^31 (g² would overflow int64) is handed back undecided: returns (i, Y) for the
    caller to decide, or (−1, 0) when ``out`` is full."""
    den = 2 * sigma2 * t * t
    for i in range(start, out.size):
        while True:
            y = _discrete_laplace_one(rng, t, 1)
            gap = abs(y) * t - sigma2
            if abs(gap) >= 2**31:
                return i, y
            square = gap * gap
            whole = square // den
            keep = True
            while whole > 0 and keep:
                keep = _bernoulli_exp_one(rng, 1, 1)
                whole -= 1
            if keep and _bernoulli_exp_below_one(rng, square % den, den):
                out[i] = y
                break
    return -1, 0


def discrete_gaussian(rng: np.random.Generator, sigma2: int, shape) -> np.ndarray:
    """int64 array of ``shape``: exact samples of the discrete Gaussian
    P(Z = z) ∝ exp(−z²/(2σ²)) for an integer variance parameter σ² ≤ :data:`MAX_VARIANCE`
    (CKS Algorithm 3: a discrete Laplace proposal of scale t = ⌊σ⌋ + 1, kept with
    probability exp(−(|Y| − σ²/t)²/(2σ²)), decided by integer comparisons). Compiled, one
    sample at a time; a proposal in the far tail, whose squared gap exceeds int64, is
    decided here with Python integers and the fill resumes (rejected: the same sample is
    drawn again)."""
    sigma2 = int(sigma2)
    if not 0 < sigma2 <= MAX_VARIANCE:
        raise ValueError(f"discrete Gaussian needs 0 < sigma^2 <= 2^30, got {sigma2}")
    t = math.isqrt(sigma2) + 1
    out = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    den = 2 * sigma2 * t * t
    start = 0
    while True:
        start, y = _discrete_gaussian_fill(rng, np.int64(sigma2), np.int64(t), out, start)
        if start < 0:
            return out.reshape(shape)
        if _bernoulli_exp_wide(rng, (abs(int(y)) * t - sigma2) ** 2, den):
            out[start] = y
            start += 1
