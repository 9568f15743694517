"""Noise mechanisms as small frozen objects. They know nothing about clustering.

Each mechanism is validated when built, exposes ``epsilon``, ``delta``, ``sensitivity``,
``scale`` and draws noise only from a generator passed in by the caller (rule: randomness
is an argument). Each also gives the exact log-likelihood of an output given the true
query answer, which is what the white-box audit (``dpcluster audit``) sums over a run's
releases; tests check every one against brute force.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class LaplaceMechanism:
    """Laplace mechanism for a vector-valued query with L1 sensitivity ``sensitivity``.

    Adding i.i.d. ``Lap(b)`` with ``b = sensitivity / epsilon`` to every coordinate of the
    query gives ``epsilon``-DP (Dwork et al. 2006). Density ``exp(-|x|/b) / (2b)``,
    variance ``2 b^2``.
    """

    epsilon: float
    sensitivity: float

    def __post_init__(self) -> None:
        _check_budget("Laplace", self.epsilon, self.sensitivity)

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def scale(self) -> float:
        """Laplace scale ``b = Δ₁ / ε``."""
        return self.sensitivity / self.epsilon

    @property
    def variance(self) -> float:
        return 2.0 * self.scale**2

    def noise(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        """Draw Laplace noise of the given shape from ``rng``."""
        return rng.laplace(0.0, self.scale, size=shape)

    def log_likelihood(self, output: np.ndarray, answer: np.ndarray) -> np.ndarray:
        """Elementwise ``log f(output | answer) = −|output − answer|/b − log 2b``."""
        b = self.scale
        return -np.abs(np.asarray(output, float) - answer) / b - math.log(2.0 * b)


@dataclass(frozen=True)
class ExponentialMechanism:
    """Exponential mechanism (McSherry & Talwar 2007) for a *loss* with sensitivity Δ.

    Picks candidate ω with probability ``∝ exp(−ε · loss(ω) / (2Δ))``, which is ε-DP when
    every candidate's loss changes by at most Δ between neighbours. ``scale`` is the
    temperature ``2Δ/ε``.
    """

    epsilon: float
    sensitivity: float

    def __post_init__(self) -> None:
        _check_budget("exponential-mechanism", self.epsilon, self.sensitivity)

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def scale(self) -> float:
        return 2.0 * self.sensitivity / self.epsilon

    def log_probabilities(self, loss: np.ndarray) -> np.ndarray:
        """Log selection probabilities (..., n) for losses (..., n) (log-sum-exp)."""
        logits = -np.asarray(loss, dtype=np.float64) / self.scale
        top = logits.max(axis=-1, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))

    def probabilities(self, loss: np.ndarray) -> np.ndarray:
        """Selection probabilities (n,) for losses (n,), computed stably (log-sum-exp)."""
        logits = -np.asarray(loss, dtype=np.float64) / self.scale
        logits -= logits.max()
        p = np.exp(logits)
        return p / p.sum()

    def select(self, rng: np.random.Generator, loss: np.ndarray) -> int:
        """One draw: the index of the chosen candidate."""
        return int(rng.choice(len(loss), p=self.probabilities(loss)))

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
