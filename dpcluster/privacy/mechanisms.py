"""Noise mechanisms as small frozen objects. They know nothing about clustering.

Each mechanism is validated when built, exposes ``epsilon``, ``delta``, ``sensitivity``,
``scale`` and draws noise only from a generator passed in by the caller (rule: randomness
is an argument). Each also gives the exact log-likelihood of an output given the true
query answer, which is what the white-box audit (``dpcluster audit``) sums over a run's
releases; tests check every one against brute force.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np


def _check_budget(name: str, epsilon: float, sensitivity: float) -> None:
    """A mechanism needs a positive, finite ε and sensitivity, and a noise scale Δ/ε that
    is a positive finite double: an overflowing scale draws inf noise, and one that
    underflows to 0 would add none while the ledger books ε."""
    for what, value in (("epsilon", epsilon), ("sensitivity", sensitivity)):
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{name} {what} must be positive and finite, got {value}")
    ratio = sensitivity / epsilon
    if not (ratio > 0 and math.isfinite(ratio)):
        raise ValueError(
            f"{name} sensitivity/epsilon = {sensitivity}/{epsilon} is not a positive finite "
            "double: the noise scale is outside double precision"
        )


#: every record and answer a Laplace release reads lies on this lattice or a coarser one:
#: records are truncated to multiples of it (:func:`snap_records`), so sums of up to 2^32
#: records in [-1, 1] are exact in double precision, whatever the order of addition
RECORD_LATTICE = 2.0**-20
#: lattice steps per noise scale (above the record lattice): γ = 2^(⌊log2 b⌋ − 30)
LATTICE_BITS = 30


def snap_records(X: np.ndarray) -> np.ndarray:
    """X with every value truncated toward 0 to a multiple of :data:`RECORD_LATTICE`:
    |x̂| ≤ |x| coordinate by coordinate, so every box, ball and L1 bound on the records
    still holds, and every sum of them is exact (module docstring of
    :mod:`.sampling`). Exact operations only (scaling by powers of two, ``trunc``)."""
    X = np.asarray(X, dtype=np.float64)
    return np.trunc(X * (1.0 / RECORD_LATTICE)) * RECORD_LATTICE


@dataclass(frozen=True)
class LaplaceMechanism:
    """The Laplace mechanism on a lattice, for a vector query with L1 sensitivity
    ``sensitivity`` (Δ) of which one record changes at most ``coordinates`` (p) entries.

    The nominal scale is b = Δ/ε. The release is ``γ·(round(q/γ) + Z)`` on the public
    lattice γℤ, γ = max(2^(⌊log2 b⌋ − 30), 2^-20), with Z the exact discrete Laplace
    of :mod:`.sampling`. Rounding to γ moves each changed entry of a neighbour's answer
    by less than two steps (one for the rounding, one for floating-point error in the
    answer, which is far below a step: record sums are exact, see
    :func:`snap_records`), so the lattice answers differ by at most
    Δ_γ = ⌈Δ/γ⌉ + 2p steps in L1. Z's scale σ = t/s is the smallest dyadic rational
    ≥ Δ_γ/ε at 30 bits, so the release is ε-DP exactly: the ratio of the two output
    probabilities is e^(|z − z'|/σ) ≤ e^(Δ_γ/σ) ≤ e^ε. The released values are exact
    doubles. ``scale`` = γσ ≈ b (1 + 2pγ/Δ), ``variance`` the discrete one.
    """

    epsilon: float
    sensitivity: float
    coordinates: int = 1

    def __post_init__(self) -> None:
        _check_budget("Laplace", self.epsilon, self.sensitivity)
        if int(self.coordinates) < 1:
            raise ValueError(f"Laplace coordinates must be >= 1, got {self.coordinates}")

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def lattice(self) -> float:
        """γ: a power of two, 2^-30 of the nominal scale b, never below the record
        lattice."""
        b = self.sensitivity / self.epsilon
        return max(2.0 ** (math.floor(math.log2(b)) - LATTICE_BITS), RECORD_LATTICE)

    @property
    def noise_epsilon(self) -> float:
        """The ε the noise is calibrated to: ``epsilon`` (the audit's planted bugs
        override it to spend more than they book)."""
        return self.epsilon

    @functools.cached_property
    def _needed(self) -> tuple[int, int]:
        """(t, s): the scale σ = t/s in lattice steps that ε needs, ≥ (⌈Δ/γ⌉ + 2p)/ε
        exactly."""
        from .sampling import dyadic_at_least

        steps = math.ceil(self.sensitivity / self.lattice) + 2 * int(self.coordinates)
        return dyadic_at_least(steps, self.noise_epsilon)

    @property
    def data_free(self) -> bool:
        """True when the scale ε needs is beyond the exact sampler's 2^46 lattice steps
        (ε below about (1 + 2p)·1.4e-14): the release then ignores the answer
        (:meth:`snap` gives 0) and adds noise of the widest scale the sampler draws. A
        release that does not read the data is 0-DP, within any ε."""
        from .sampling import MAX_NUMERATOR

        t, s = self._needed
        return t > MAX_NUMERATOR

    @property
    def _steps(self) -> tuple[int, int]:
        """(t, s): Z's scale σ = t/s in lattice steps (:meth:`_needed`, or the sampler's
        widest when :attr:`data_free`)."""
        from .sampling import MAX_NUMERATOR

        return (MAX_NUMERATOR, 1) if self.data_free else self._needed

    @property
    def sigma(self) -> float:
        t, s = self._steps
        return t / s

    @property
    def drawn_epsilon(self) -> float:
        """The ε the noise actually drawn gives, Δ_γ/σ in lattice steps (0 when
        :attr:`data_free`): at most the booked ``epsilon`` for a correct mechanism."""
        if self.data_free:
            return 0.0
        from fractions import Fraction

        t, s = self._steps
        steps = math.ceil(self.sensitivity / self.lattice) + 2 * int(self.coordinates)
        return float(Fraction(steps) * s / t)

    @property
    def scale(self) -> float:
        """The noise's scale in the answer's units, γσ (≥ b = Δ/ε)."""
        return self.lattice * self.sigma

    @property
    def variance(self) -> float:
        q = math.exp(-1.0 / self.sigma)
        return 2.0 * q / (1.0 - q) ** 2 * self.lattice**2

    def snap(self, answer) -> np.ndarray:
        """The answer rounded to the lattice (half up): γ·⌊q/γ + ½⌋; zeros of its shape
        when :attr:`data_free`."""
        g = self.lattice
        q = np.asarray(answer, dtype=np.float64)
        return np.zeros_like(q) if self.data_free else np.floor(q / g + 0.5) * g

    def noise(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        """γ·Z of the given shape, Z exact discrete Laplace from ``rng``; add it to
        :meth:`snap` of the answer (:meth:`add`)."""
        from .sampling import discrete_laplace

        t, s = self._steps
        return discrete_laplace(rng, t, s, shape).astype(np.float64) * self.lattice

    def add(self, answer, noise) -> np.ndarray:
        """The release: the snapped answer plus noise from :meth:`noise` (both on the
        lattice, so the sum is exact)."""
        return self.snap(answer) + noise

    def log_likelihood(self, output: np.ndarray, answer: np.ndarray) -> np.ndarray:
        """Elementwise ``log P(output | answer) = −|z|/σ + log tanh(1/(2σ))`` with
        z = output/γ − round(answer/γ) in lattice steps."""
        g, sigma = self.lattice, self.sigma
        z = np.asarray(output, float) / g - self.snap(answer) / g
        return -np.abs(z) / sigma + math.log(math.tanh(0.5 / sigma))


#: lattice steps per loss sensitivity in the exponential mechanism: γ = 2^(⌊log2 Δ⌋ − 20)
EXPONENTIAL_LATTICE_BITS = 20
#: significant bits of the exponential mechanism's dyadic rate a/2^m (a < 2^24)
EXPONENTIAL_RATE_BITS = 24
#: the largest rate denominator exponent m the exact Bernoulli sampler admits
_MAX_RATE_SHIFT = 62


@dataclass(frozen=True)
class ExponentialMechanism:
    """Exponential mechanism (McSherry & Talwar 2007) for a *loss* with sensitivity Δ,
    drawn exactly on a lattice (docs/privacy.md, "The exponential mechanism").

    Each loss is rounded to the public lattice γℤ, γ = 2^(⌊log2 Δ⌋ − 20), as an integer
    number of steps s_ω; neighbours' steps differ by at most Δ_γ = ⌈Δ/γ⌉ + 2 (one step
    for the rounding on both sides, one for floating-point error in the loss). Candidate
    ω is chosen with probability ∝ exp(−r·s_ω), r = a/2^m the largest dyadic rational
    at 24 significant bits with r ≤ ε/(2Δ_γ), by rejection sampling decided with integer
    comparisons only (:func:`.sampling.exponential_choice`). The ratio of any output's
    probabilities under neighbours is at most e^(2rΔ_γ) ≤ e^ε: pure ε-DP with no
    floating-point step in the draw. ``scale`` is the temperature in the loss's units,
    γ/r ≥ 2Δ/ε (larger by a relative ~2^-19).
    """

    epsilon: float
    sensitivity: float

    def __post_init__(self) -> None:
        _check_budget("exponential-mechanism", self.epsilon, self.sensitivity)

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def lattice(self) -> float:
        """γ: a power of two, 2^-20 of the loss sensitivity (to within a factor 2)."""
        return 2.0 ** (math.floor(math.log2(self.sensitivity)) - EXPONENTIAL_LATTICE_BITS)

    @functools.cached_property
    def rate(self) -> tuple[int, int]:
        """(a, m): the rate r = a/2^m per lattice step, the largest dyadic rational with
        at most 24 significant bits and m ≤ 62 such that r ≤ ε/(2Δ_γ) exactly (a = 0, a
        uniform choice, when ε/(2Δ_γ) < 2^-62: it reads no loss, so it is 0-DP)."""
        from fractions import Fraction

        steps = math.ceil(Fraction(self.sensitivity) / Fraction(self.lattice)) + 2
        bound = Fraction(self.epsilon) / (2 * steps)
        top = math.floor(math.log2(bound))
        m = min(_MAX_RATE_SHIFT, EXPONENTIAL_RATE_BITS - 1 - top)
        a = math.floor(bound * 2**m)
        if m < 0:  # a huge rate: keep it an integer (m = 0), still at most the bound
            m, a = 0, math.floor(bound)
        return a, m

    @property
    def scale(self) -> float:
        """The temperature in the loss's units: γ/r (∞ for a uniform choice)."""
        a, m = self.rate
        return math.inf if a == 0 else self.lattice * 2.0**m / a

    def steps(self, loss: np.ndarray) -> np.ndarray:
        """Losses (..., n) as int64 lattice steps ⌊loss/γ + ½⌋ (exact: γ is a power of
        two); a ValueError when a loss is not finite or beyond 2^62 steps."""
        scaled = np.floor(np.asarray(loss, dtype=np.float64) / self.lattice + 0.5)
        if not np.all(np.abs(scaled) < 2.0**62):
            raise ValueError(
                "exponential-mechanism losses must be finite and within 2^62 lattice steps "
                f"of {self.lattice:g}"
            )
        return scaled.astype(np.int64)

    def log_probabilities(self, loss: np.ndarray) -> np.ndarray:
        """Log selection probabilities (..., n) for losses (..., n): those of the exact
        law drawn by :meth:`select`, ∝ exp(−r·s_ω), computed by log-sum-exp."""
        a, m = self.rate
        s = self.steps(loss)
        logits = -(s - s.min(axis=-1, keepdims=True)).astype(np.float64) * (a / 2.0**m)
        return logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))

    def probabilities(self, loss: np.ndarray) -> np.ndarray:
        """Selection probabilities (n,) for losses (n,) (:meth:`log_probabilities`)."""
        return np.exp(self.log_probabilities(loss))

    def select(self, rng: np.random.Generator, loss: np.ndarray) -> int:
        """One exact draw: the index of the chosen candidate (integer draws only)."""
        from .sampling import exponential_choice

        return exponential_choice(rng, self.steps(loss), self.rate)

    def log_likelihood(self, output: int, answer: np.ndarray) -> float:
        """``log P(output | losses = answer)``: the chosen index's log probability."""
        return float(self.log_probabilities(answer)[int(output)])


@dataclass(frozen=True)
class ExactRelease:
    """A data-dependent value released without noise (e.g. how many mediators a custodian
    adds). Nothing bounds its privacy loss, so ``epsilon`` is infinite; ``claim`` names what
    the source paper says instead, if anything."""

    what: str
    claim: str = ""
    claimed_epsilon: float = 0.0
    claimed_delta: float = 0.0

    epsilon = math.inf
    delta = 0.0
    #: the one kind of release the ledger books at ε = ∞
    exact = True
    sensitivity = math.inf
    scale = 0.0
