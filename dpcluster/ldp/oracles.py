"""Local randomisers for one-round LDP clustering (docs/methods.md L1–L3): optimised local
hashing for a cell id, Duchi et al.'s mechanism on one sampled coordinate, and the record
itself with Laplace noise.

Neighbouring relation of every mechanism here: any two records of one user in the public
domain [-1, 1]^d (:data:`~dpcluster.privacy.ledger.LOCAL_RECORD`); each report is pure
ε-LDP. Every mechanism draws from the generator passed in, announces its reports through
the release hook (a batch: one row per user) and gives the exact log-likelihood of a
report, which the audit's local targets sum.

Randomised response here decides with a double-precision uniform against p, as Paper B's
bit flips do (:class:`~dpcluster.privacy.BitVectorResponse`); the ratio of two inputs'
probabilities is then e^ε to within one rounding of p.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: odd 64-bit multipliers are drawn from here; hash values keep the top 32 bits
_HASH_BITS = 32


def hash_cells(seeds: np.ndarray, cells: np.ndarray, g: int) -> np.ndarray:
    """Multiply-shift hashing (Dietzfelbinger et al. 1997) of cell ids into [0, g):
    ``(((a·b + c) mod 2^64) >> 32) mod g`` with each user's seed (a, c), a odd. ``seeds``
    (n, 2) uint64 and ``cells`` (n,) or (n, m) int64 give (n,) or (n, m) int64."""
    a = seeds[:, 0].astype(np.uint64)
    c = seeds[:, 1].astype(np.uint64)
    b = np.asarray(cells).astype(np.uint64)
    if b.ndim == 2:
        a, c = a[:, None], c[:, None]
    with np.errstate(over="ignore"):
        mixed = a * b + c  # wraps mod 2^64, as intended
    return ((mixed >> np.uint64(64 - _HASH_BITS)) % np.uint64(g)).astype(np.int64)


@dataclass(frozen=True)
class LocalHash:
    """Optimised local hashing (OLH; Wang, Blocki, Li and Jha, USENIX Security 2017) of a
    cell id: each user draws a hash seed, hashes its cell into g = ⌊e^ε⌉ + 1 values and
    reports the hash value with probability p = e^ε/(e^ε + g − 1), any other one with
    q = 1/(e^ε + g − 1) each. The seed is independent of the input, so the report is
    g-ary randomised response: ε-LDP. ``sensitivity`` is 1 (one cell per user), ``scale``
    the probability q.

    A report is a row (a, c, y) of int64 (the seed's two words as their bit patterns)."""

    epsilon: float

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def g(self) -> int:
        """⌊e^ε⌉ + 1, at most 2^31 (the hash keeps 32 bits; beyond, p is within 2^-31 of
        1 anyway)."""
        return int(min(max(2, round(math.exp(min(self.epsilon, 40.0))) + 1), 2**31))

    @property
    def p(self) -> float:
        e = math.exp(self.epsilon)
        return e / (e + self.g - 1)

    @property
    def q(self) -> float:
        return 1.0 / (math.exp(self.epsilon) + self.g - 1)

    sensitivity = 1.0

    @property
    def scale(self) -> float:
        return self.q

    def encode(self, rng: np.random.Generator, cells: np.ndarray) -> np.ndarray:
        """Reports (n, 3) int64 for cell ids (n,)."""
        cells = np.asarray(cells, dtype=np.int64)
        n = len(cells)
        seeds = rng.integers(0, 2**64, size=(n, 2), dtype=np.uint64)
        seeds[:, 0] |= np.uint64(1)  # a odd
        true = hash_cells(seeds, cells, self.g)
        keep = rng.random(n) < self.p
        other = (true + 1 + rng.integers(0, self.g - 1, size=n)) % self.g
        y = np.where(keep, true, other)
        return np.column_stack([seeds.view(np.int64), y])

    def matches(self, reports: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """(n, m) bool: whether each user's report supports each of the cells (n, m) or
        (m,) (the same candidates for everyone)."""
        seeds = np.ascontiguousarray(reports[:, :2]).view(np.uint64)
        cells = np.asarray(cells, dtype=np.int64)
        if cells.ndim == 1:
            cells = np.broadcast_to(cells, (len(reports), len(cells)))
        return hash_cells(seeds, cells, self.g) == reports[:, 2:3]

    def indicator(self, reports: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """(n, m) unbiased estimates of 1{user's cell = candidate}: (match − 1/g)/(p − 1/g)
        (a non-candidate's hash matches with probability 1/g)."""
        base = 1.0 / self.g
        return (self.matches(reports, cells) - base) / (self.p - base)

    def estimate(self, reports: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """(m,) unbiased counts of the candidate cells among these reports."""
        return self.indicator(reports, cells).sum(axis=0)

    def estimate_sd(self, n: int) -> float:
        """The standard deviation of :meth:`estimate` for a cell no user holds, n reports:
        √(n·(1/g)(1 − 1/g))/(p − 1/g)."""
        base = 1.0 / self.g
        return math.sqrt(n * base * (1 - base)) / (self.p - base)

    def log_likelihood(self, output: np.ndarray, answer: np.ndarray) -> np.ndarray:
        """(n,) log P(report | cell) for reports (n, 3) and cells (n,)."""
        hit = self.matches(np.asarray(output), np.asarray(answer)[:, None])[:, 0]
        return np.where(hit, math.log(self.p), math.log(self.q))


@dataclass(frozen=True)
class DuchiCoordinate:
    """One coordinate of the record, sampled uniformly, through Duchi, Jordan and
    Wainwright's one-dimensional mechanism (JASA 2018): for x_j ∈ [-1, 1] report
    z = ±B, B = (e^ε + 1)/(e^ε − 1), with P(z = +B) = 1/2 + x_j/(2B). The sampled index is
    independent of the input and the sign is binary randomised response with ratio at
    most e^ε, so the report is ε-LDP. E[d·z·e_j] = x: an unbiased vector. ``sensitivity``
    2 (the range of x_j), ``scale`` B.

    A report is a row (j, s) of int64, s ∈ {−1, +1}."""

    epsilon: float
    d: int

    @property
    def delta(self) -> float:
        return 0.0

    sensitivity = 2.0

    @property
    def scale(self) -> float:
        e = math.exp(self.epsilon)
        return (e + 1) / (e - 1)

    def _p_plus(self, x: np.ndarray) -> np.ndarray:
        return 0.5 + np.clip(x, -1.0, 1.0) / (2.0 * self.scale)

    def encode(self, rng: np.random.Generator, X: np.ndarray) -> np.ndarray:
        """Reports (n, 2) int64 for records X (n, d) in [-1, 1]^d."""
        X = np.asarray(X, dtype=np.float64)
        n = len(X)
        j = rng.integers(0, self.d, size=n)
        plus = rng.random(n) < self._p_plus(X[np.arange(n), j])
        return np.column_stack([j, np.where(plus, 1, -1)]).astype(np.int64)

    def vectors(self, reports: np.ndarray) -> np.ndarray:
        """(n, d) unbiased estimates of each user's record: d·B·s on coordinate j."""
        out = np.zeros((len(reports), self.d))
        out[np.arange(len(reports)), reports[:, 0]] = self.d * self.scale * reports[:, 1]
        return out

    def log_likelihood(self, output: np.ndarray, answer: np.ndarray) -> np.ndarray:
        """(n,) log P(report | record) for reports (n, 2) and records (n, d); the sampled
        index contributes log(1/d) on both sides."""
        output, answer = np.asarray(output), np.asarray(answer, dtype=np.float64)
        x = answer[np.arange(len(output)), output[:, 0]]
        p = self._p_plus(x)
        return np.log(np.where(output[:, 1] > 0, p, 1.0 - p)) - math.log(self.d)
