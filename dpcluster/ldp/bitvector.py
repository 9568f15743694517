"""BV encoding and its local-DP version DPBV (METHODS B1, B3), stored packed.

A value x in [L, U] becomes s bits, ``h_j(x) = 1`` iff ``|x − r_j| ≤ t``, for public random
centres r_1..r_s drawn once (their stream is *public* randomness) and shared by everyone.
DPBV then keeps each bit with probability ``p = e^ε/(e^ε+1)`` and flips it with
``q = 1/(e^ε+1)``, fresh for every report (the *private* stream).

Privacy (DPBV). Neighbouring relation: local DP — any two input values of one attribute.
Per-bit randomised response; the paper's Theorem 4 claims (ε, δ)-LDP per attribute with
``δ = p^s − e^ε q^s`` (:func:`dpbv_delta`). Caveat, reported not fixed (METHODS B3): under
the usual analysis two clean encodings that differ in m bits cost m·ε, and a record's
A attributes compose to A·ε; experiments use ε *per attribute*, as the paper appears to.
Every encode call records its spend in the ledger it is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..privacy import Ledger

RANGE_MODES = ("extended", "plain")


def keep_probability(epsilon: float) -> float:
    """p = e^ε/(e^ε+1) (stable for large ε)."""
    return 1.0 / (1.0 + math.exp(-epsilon))


def dpbv_delta(epsilon: float, s: int) -> float:
    """Theorem 4: δ = p^s − e^ε q^s, computed in log space (δ(2, 1000) ≈ 7.514e-56)."""
    log_p = -math.log1p(math.exp(-epsilon))
    log_q = -math.log1p(math.exp(epsilon))
    a = s * log_p
    b = epsilon + s * log_q
    return math.exp(a) * -math.expm1(b - a) if a > b else 0.0


@dataclass(frozen=True)
class RandomisedResponse:
    """Per-bit randomised response as a ledger-recordable mechanism (ε per attribute)."""

    epsilon: float
    s: int
    sensitivity: float = 1.0

    @property
    def delta(self) -> float:
        return dpbv_delta(self.epsilon, self.s)

    @property
    def scale(self) -> float:
        """The flip probability q (the mechanism's noise level)."""
        return 1.0 - keep_probability(self.epsilon)


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
    def draw(cls, s: int, t: float, lo: float, hi: float, public_rng: np.random.Generator,
             range_mode: str = "extended") -> BVCodec:
        if range_mode not in RANGE_MODES:
            raise ValueError(f"unknown range mode {range_mode!r}; valid: {RANGE_MODES}")
        if not (s >= 1 and t > 0 and hi > lo):
            raise ValueError(f"need s >= 1, t > 0 and hi > lo; got s={s}, t={t}, [{lo}, {hi}]")
        a, b = (lo - t, hi + t) if range_mode == "extended" else (lo, hi)
        return cls(int(s), float(t), float(lo), float(hi), public_rng.uniform(a, b, int(s)),
                   range_mode)

    @property
    def mu(self) -> float:
        """μ, the length of the range the centres are drawn from."""
        return (self.hi - self.lo) + (2 * self.t if self.range_mode == "extended" else 0.0)

    @property
    def n_words(self) -> int:
        return words(self.s)

    def encode(self, x: np.ndarray, epsilon: float | None = None,
               private_rng: np.random.Generator | None = None,
               ledger: Ledger | None = None) -> np.ndarray:
        """BV (``epsilon=None``) or DPBV encodings of values x (n,): packed (n, W) uint64."""
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        bits = np.abs(x[:, None] - self.centres[None, :]) <= self.t
        if epsilon is not None:
            if private_rng is None:
                raise ValueError("DPBV needs the private generator for its flips")
            mech = RandomisedResponse(float(epsilon), self.s)
            if ledger is not None:
                ledger.record(mech, "DPBV bits of one attribute (per-bit randomised response)")
            bits ^= private_rng.random(bits.shape) < mech.scale
        return pack_bits(bits)


@dataclass(frozen=True)
class RecordCodec:
    """One :class:`BVCodec` per attribute (METHODS B0: attributes are encoded separately)."""

    attributes: tuple[BVCodec, ...]

    @classmethod
    def draw(cls, s: int, t, lo, hi, public_rng: np.random.Generator,
             range_mode: str = "extended") -> RecordCodec:
        """t, lo, hi: scalars or (A,) arrays; each attribute gets its own centres."""
        lo = np.atleast_1d(np.asarray(lo, float))
        hi = np.atleast_1d(np.asarray(hi, float))
        A = max(len(lo), len(hi))
        t = np.broadcast_to(np.asarray(t, float), (A,))
        lo, hi = np.broadcast_to(lo, (A,)), np.broadcast_to(hi, (A,))
        rngs = public_rng.spawn(A)
        return cls(tuple(BVCodec.draw(s, float(t[a]), float(lo[a]), float(hi[a]), rngs[a],
                                      range_mode) for a in range(A)))

    @property
    def s(self) -> int:
        return self.attributes[0].s

    @property
    def mu(self) -> np.ndarray:
        return np.array([c.mu for c in self.attributes])

    @property
    def widths(self) -> np.ndarray:
        return np.array([c.hi - c.lo for c in self.attributes])

    def encode(self, X: np.ndarray, epsilon: float | None = None,
               private_rng: np.random.Generator | None = None,
               ledger: Ledger | None = None) -> np.ndarray:
        """Records X (n, A) -> packed (n, A, W) uint64; one private child stream per attribute."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != len(self.attributes):
            raise ValueError(f"X has shape {X.shape}, expected (n, {len(self.attributes)})")
        rngs = private_rng.spawn(X.shape[1]) if private_rng is not None else [None] * X.shape[1]
        out = np.empty((X.shape[0], X.shape[1], self.attributes[0].n_words), np.uint64)
        for a, codec in enumerate(self.attributes):
            out[:, a] = codec.encode(X[:, a], epsilon, rngs[a], ledger)
        return out
