"""BV encoding and its local-DP version DPBV (docs/methods.md B1, B3), stored packed.

A value x in [L, U] becomes s bits, ``h_j(x) = 1`` iff ``|x − r_j| ≤ t``, for public random
centres r_1..r_s drawn once (their stream is *public* randomness) and shared by everyone.
DPBV then keeps each bit with probability ``p = e^ε/(e^ε+1)`` and flips it with
``q = 1/(e^ε+1)``, fresh for every report (the *private* stream).

Privacy (DPBV; docs/privacy.md, docs/methods.md B3). Neighbouring relation: local DP, any two
values of one attribute's public domain [L, U]. Two values whose clean encodings differ in
m bits have a log-likelihood ratio of exactly ε(2A − m), so one attribute's report is pure
``m_max·ε``-LDP, with ``m_max`` (:attr:`BVCodec.m_max`) the largest Hamming distance
between two clean encodings of the domain; that is what every ledger books. The paper's
Theorem 4 claim, (ε, p^s − e^ε q^s) per attribute, is recorded beside it as a claim
(:class:`~dpcluster.privacy.BitVectorResponse`). A record's A attributes compose to the sum.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from ..kernels.bits import farthest_pairs
from ..privacy import BitVectorResponse, Ledger, keep_probability, release, theorem4_delta

RANGE_MODES = ("extended", "plain")
#: Theorem 4's claimed δ, under the name the tests and scripts know
dpbv_delta = theorem4_delta
__all__ = [
    "BVCodec",
    "RANGE_MODES",
    "RecordCodec",
    "dpbv_delta",
    "keep_probability",
    "pack_bits",
    "unpack_bits",
    "words",
]


def words(s: int) -> int:
    return (s + 63) // 64


def pack_bits(bits: np.ndarray) -> np.ndarray:
    """(..., s) bool -> (..., W) uint64, bit j of the vector at bit j%64 of word j//64."""
    s = bits.shape[-1]
    pad = words(s) * 64 - s
    if pad:
        bits = np.concatenate([bits, np.zeros((*bits.shape[:-1], pad), bool)], axis=-1)
    packed = np.packbits(bits, axis=-1, bitorder="little")
    return np.ascontiguousarray(packed).view(np.uint64)


def unpack_bits(packed: np.ndarray, s: int) -> np.ndarray:
    """Inverse of :func:`pack_bits`: (..., W) uint64 -> (..., s) bool."""
    raw = np.ascontiguousarray(packed).view(np.uint8)
    return np.unpackbits(raw, axis=-1, bitorder="little")[..., :s].astype(bool)


#: points per block when the clean encodings of the m_max search are built
MMAX_BLOCK = 1024


def mmax_bytes(s: int) -> int:
    """Memory the m_max search of an s-bit codec holds: up to 4s + 3 packed encodings of s
    bits, twice (the vectors and np.unique's copy), plus one block's comparison."""
    return 2 * (4 * s + 3) * words(s) * 8 + MMAX_BLOCK * s * 9


@functools.lru_cache(maxsize=512)
def _farthest_pair(t: float, lo: float, hi: float, centres: bytes) -> tuple[int, float, float]:
    """The farthest pair of clean encodings over [lo, hi] for these centres (bytes of the
    (s,) float64 array): (m_max, x, x'). See :attr:`BVCodec.m_max`."""
    r = np.frombuffer(centres, dtype=np.float64)
    edges = np.unique(np.clip(np.concatenate([r - t, r + t, [lo, hi]]), lo, hi))
    points = np.concatenate([edges, (edges[:-1] + edges[1:]) / 2.0])
    # packed a block of points at a time: the (points, s) comparison is never whole
    packed = np.concatenate(
        [
            pack_bits(np.abs(points[i : i + MMAX_BLOCK, None] - r[None, :]) <= t)
            for i in range(0, len(points), MMAX_BLOCK)
        ]
    )
    vectors, first = np.unique(packed, axis=0, return_index=True)
    best = np.zeros(len(vectors), np.int64)
    partner = np.arange(len(vectors), dtype=np.int64)
    farthest_pairs(np.ascontiguousarray(vectors), best, partner)
    i = int(np.argmax(best))
    return int(best[i]), float(points[first[i]]), float(points[first[partner[i]]])


@dataclass(frozen=True)
class BVCodec:
    """The public parameters of one attribute's BV encoding.

    s bits; t half-window; [lo, hi] the attribute's public interval; ``centres`` (s,) the r_j.
    range ``extended`` (default): r ~ U[L − t, U + t] and μ = (U − L) + 2t, so every x has
    the same expected weight s·2t/μ. ``plain``: r ~ U[L, U], μ = U − L.
    """

    s: int
    t: float
    lo: float
    hi: float
    centres: np.ndarray = field(repr=False)
    range_mode: str = "extended"

    @classmethod
    def draw(
        cls,
        s: int,
        t: float,
        lo: float,
        hi: float,
        public_rng: np.random.Generator,
        range_mode: str = "extended",
    ) -> BVCodec:
        if range_mode not in RANGE_MODES:
            raise ValueError(f"unknown range mode {range_mode!r}; valid: {RANGE_MODES}")
        if not (s >= 1 and t > 0 and hi > lo):
            raise ValueError(f"need s >= 1, t > 0 and hi > lo; got s={s}, t={t}, [{lo}, {hi}]")
        a, b = (lo - t, hi + t) if range_mode == "extended" else (lo, hi)
        return cls(
            int(s), float(t), float(lo), float(hi), public_rng.uniform(a, b, int(s)), range_mode
        )

    @property
    def mu(self) -> float:
        """μ, the length of the range the centres are drawn from."""
        return (self.hi - self.lo) + (2 * self.t if self.range_mode == "extended" else 0.0)

    @property
    def n_words(self) -> int:
        return words(self.s)

    def encode(
        self,
        x: np.ndarray,
        epsilon: float | None = None,
        private_rng: np.random.Generator | None = None,
        ledger: Ledger | None = None,
        column: int | None = None,
    ) -> np.ndarray:
        """BV (``epsilon=None``) or DPBV encodings of values x (n,): packed (n, W) uint64.

        ``column``: x is that column of a record matrix, so the release's query (what the
        audit evaluates on a neighbour) reads the same column of the records it is given."""
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        bits = self.clean_bits(x)
        if epsilon is not None:
            if private_rng is None:
                raise ValueError("DPBV needs the private generator for its flips")
            mech = self.mechanism(float(epsilon))
            if ledger is not None:
                ledger.record(mech, "DPBV bits of one attribute (per-bit randomised response)")
            bits ^= mech.flips(private_rng, bits.shape)
            bits = release(
                mech,
                "DPBV bits of one attribute",
                bits,
                batch=True,
                query=self.clean_bits
                if column is None
                else lambda records: self.clean_bits(np.asarray(records)[:, column]),
            )
        return pack_bits(bits)

    def clean_bits(self, x: np.ndarray) -> np.ndarray:
        """BV bits (n, s) bool of values x (n,): ``|x − r_j| ≤ t``."""
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        return np.abs(x[:, None] - self.centres[None, :]) <= self.t

    def mechanism(self, epsilon: float) -> BitVectorResponse:
        """The randomised response of this codec at ε per bit, with its :attr:`m_max`."""
        return BitVectorResponse(float(epsilon), self.s, self.m_max)

    @functools.cached_property
    def _farthest(self) -> tuple[int, float, float]:
        """(m_max, x, x') with d_H(h(x), h(x')) = m_max; see :attr:`m_max`. Cells on the
        same dataset draw the same public codec, so the search is cached by its content."""
        return _farthest_pair(self.t, self.lo, self.hi, self.centres.tobytes())

    @property
    def m_max(self) -> int:
        """Largest Hamming distance between the clean encodings of two values in [lo, hi].

        The encoding is piecewise constant in x and changes only at the 2s breakpoints
        ``r_j ± t``. Evaluating the encoder at every breakpoint inside [lo, hi], at the
        midpoint between consecutive ones and at lo and hi visits every encoding the domain
        has, so the maximum over those (popcount kernel, distinct vectors only) is exact.
        Integer-valued data (digits) use the whole interval, which can only make it larger.
        """
        return self._farthest[0]

    def worst_pair(self) -> tuple[float, float]:
        """Two values of [lo, hi] whose clean encodings differ in :attr:`m_max` bits."""
        return self._farthest[1], self._farthest[2]


@dataclass(frozen=True)
class RecordCodec:
    """One :class:`BVCodec` per attribute (docs/methods.md B0: attributes are encoded
    separately)."""

    attributes: tuple[BVCodec, ...]

    @classmethod
    def draw(
        cls, s: int, t, lo, hi, public_rng: np.random.Generator, range_mode: str = "extended"
    ) -> RecordCodec:
        """t, lo, hi: scalars or (A,) arrays; each attribute gets its own centres."""
        lo = np.atleast_1d(np.asarray(lo, float))
        hi = np.atleast_1d(np.asarray(hi, float))
        A = max(len(lo), len(hi))
        t = np.broadcast_to(np.asarray(t, float), (A,))
        lo, hi = np.broadcast_to(lo, (A,)), np.broadcast_to(hi, (A,))
        rngs = public_rng.spawn(A)
        return cls(
            tuple(
                BVCodec.draw(s, float(t[a]), float(lo[a]), float(hi[a]), rngs[a], range_mode)
                for a in range(A)
            )
        )

    @property
    def s(self) -> int:
        return self.attributes[0].s

    @property
    def mu(self) -> np.ndarray:
        return np.array([c.mu for c in self.attributes])

    @property
    def widths(self) -> np.ndarray:
        return np.array([c.hi - c.lo for c in self.attributes])

    def encode(
        self,
        X: np.ndarray,
        epsilon: float | None = None,
        private_rng: np.random.Generator | None = None,
        ledger: Ledger | None = None,
    ) -> np.ndarray:
        """Records X (n, A) -> packed (n, A, W) uint64; one private child stream per attribute."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != len(self.attributes):
            raise ValueError(f"X has shape {X.shape}, expected (n, {len(self.attributes)})")
        rngs = private_rng.spawn(X.shape[1]) if private_rng is not None else [None] * X.shape[1]
        out = np.empty((X.shape[0], X.shape[1], self.attributes[0].n_words), np.uint64)
        for a, codec in enumerate(self.attributes):
            out[:, a] = codec.encode(X[:, a], epsilon, rngs[a], ledger, column=a)
        return out
