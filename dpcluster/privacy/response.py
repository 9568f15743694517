"""Per-bit randomised response on bit vectors (Paper B's DPBV, docs/methods.md B3).

Each of the s bits of a clean encoding h(x) is kept with probability
``p = e^ε/(e^ε+1)`` and flipped with ``q = 1/(e^ε+1)``, independently. For one bit,
``P(y | h) / P(y | h') ≤ p/q = e^ε``: ε-LDP per bit.

What holds for the whole vector (docs/privacy.md). Fix two inputs x, x' whose clean
vectors differ in m bits. Output bits where h(x) = h(x') have the same distribution under
both, so the log-likelihood ratio is exactly ``ε·(2A − m)``, where A counts the differing
bits that kept x's value (A ~ Bin(m, p) under x). Its maximum is ``m·ε``, so one vector is
pure ``m_max·ε``-LDP, where ``m_max`` is the largest Hamming distance between two clean
encodings of the public domain, and no smaller pure ε holds. At any smaller ε' it is
(ε', δ)-LDP only with the hockey-stick divergence
``δ(ε') = Σ_a P(A = a)·(1 − e^{ε' − ε(2a − m_max)})_+`` (:func:`tight_delta`).
Sun et al.'s Theorem 4 claims (ε, p^s − e^ε q^s)-LDP; that δ is the probability that no
bit flips, not the divergence, so the claim is recorded as a claim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


def keep_probability(epsilon: float) -> float:
    """p = e^ε/(e^ε+1) (stable for large ε)."""
    return 1.0 / (1.0 + math.exp(-epsilon))


def theorem4_delta(epsilon: float, s: int) -> float:
    """Theorem 4's claimed δ = p^s − e^ε q^s, in log space (δ(2, 1000) ≈ 7.514e-56)."""
    log_p = -math.log1p(math.exp(-epsilon))
    log_q = -math.log1p(math.exp(epsilon))
    a = s * log_p
    b = epsilon + s * log_q
    return math.exp(a) * -math.expm1(b - a) if a > b else 0.0


def tight_delta(epsilon_bit: float, m: int, epsilon_target: float) -> float:
    """The smallest δ with which m independently randomised differing bits (ε per bit) are
    (``epsilon_target``, δ)-indistinguishable: ``Σ_a P(A=a)(1 − e^{ε' − L(a)})_+`` with
    ``L(a) = ε_bit(2a − m)``, A ~ Bin(m, p). Exact (a finite sum); 0 when m·ε_bit ≤ ε'."""
    from scipy.stats import binom

    if m <= 0 or m * epsilon_bit <= epsilon_target:
        return 0.0
    p = keep_probability(epsilon_bit)
    a = np.arange(m + 1)
    loss = epsilon_bit * (2.0 * a - m)
    hit = loss > epsilon_target
    logpmf = binom.logpmf(a[hit], m, p)
    terms = np.exp(logpmf) * -np.expm1(epsilon_target - loss[hit])
    return float(min(1.0, math.fsum(terms.tolist())))


@dataclass(frozen=True)
class BitVectorResponse:
    """Per-bit randomised response on one attribute's s-bit encoding, as a ledger entry.

    epsilon_bit  ε of each bit (the paper's ε, "per attribute")
    s            bits per vector
    m_max        largest Hamming distance between two clean encodings of the public
                 domain (``BVCodec.m_max``)
    ``epsilon`` (what holds) is ``m_max·ε_bit``, pure; the claim is Theorem 4's
    (ε_bit, p^s − e^ε q^s).
    """

    epsilon_bit: float
    s: int
    m_max: int
    claim: str = "Sun et al. Theorem 4: (ε, p^s − e^ε q^s)-LDP per attribute"
    _details: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (self.epsilon_bit > 0 and math.isfinite(self.epsilon_bit)):
            raise ValueError(
                f"randomised response epsilon must be positive and finite, got {self.epsilon_bit}"
            )
        if not 0 <= self.m_max <= self.s:
            raise ValueError(f"m_max={self.m_max} must be in 0..s={self.s}")

    @property
    def p(self) -> float:
        return keep_probability(self.epsilon_bit)

    @property
    def epsilon(self) -> float:
        """What provably holds: pure ``m_max·ε_bit``-LDP."""
        return self.m_max * self.epsilon_bit

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def sensitivity(self) -> float:
        """The Hamming sensitivity of the clean encoding, m_max."""
        return float(self.m_max)

    @property
    def scale(self) -> float:
        """The flip probability q (the mechanism's noise level)."""
        return 1.0 - self.p

    @property
    def claimed_epsilon(self) -> float:
        return self.epsilon_bit

    @property
    def claimed_delta(self) -> float:
        return theorem4_delta(self.epsilon_bit, self.s)

    @property
    def details(self) -> dict:
        """Per-bit ε, m_max, and the exact δ that the claimed ε would need."""
        return {
            "epsilon_bit": self.epsilon_bit,
            "m_max": self.m_max,
            "s": self.s,
            "delta_at_claimed_epsilon": tight_delta(self.epsilon_bit, self.m_max, self.epsilon_bit),
        }

    def flips(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Boolean flip mask: True with probability q."""
        return rng.random(shape) < self.scale

    def log_likelihood(self, output: np.ndarray, answer: np.ndarray) -> np.ndarray:
        """``log P(output bits | clean bits = answer)`` over the last axis (bool arrays):
        kept bits contribute log p, flipped ones log q."""
        flipped = (np.asarray(output, bool) != np.asarray(answer, bool)).sum(axis=-1)
        kept = np.asarray(output).shape[-1] - flipped
        return kept * math.log(self.p) + flipped * math.log1p(-self.p)
