"""The Gaussian mechanism on a lattice, and the (ε, δ) accounting that composes it
(docs/privacy.md, "(ε, δ): Gaussian noise and zCDP").

* **zCDP** (Bun and Steinke, TCC 2016). A mechanism is ρ-zCDP when every Rényi divergence
  of order α > 1 between neighbours' outputs is at most ρα. zCDP composes by adding the
  ρ's. The Gaussian with L2 sensitivity Δ and standard deviation σ is Δ²/(2σ²)-zCDP, and
  so is the discrete Gaussian on a lattice (Canonne, Kamath and Steinke, NeurIPS 2020,
  Thm 4); a pure ε-DP release is ε²/2-zCDP.
* **From ρ to (ε, δ)** (Canonne, Kamath and Steinke 2020, Prop. 12; Asoodeh et al.): a
  ρ-zCDP mechanism is (ε, δ)-DP with
  ``δ = inf_{α>1} exp((α−1)(αρ−ε)) / (α−1) · (1 − 1/α)^α``.
  Any α gives a valid δ, so a numerical search that misses the infimum only loosens it.
* **The analytic Gaussian** (Balle and Wang, ICML 2018, Thm 8): one Gaussian release is
  (ε, δ)-DP exactly when ``Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) ≤ δ``;
  :func:`analytic_gaussian_sigma` calibrates σ by it (a reference for a single release;
  the package's fits compose in zCDP).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

#: the record lattice the Laplace releases use (:mod:`.mechanisms`)
FLOOR = 2.0**-20
#: lattice steps per standard deviation: γ = 2^(⌊log2 σ⌋ − 12), so σ is 2^12 to 2^13 steps
GAUSSIAN_BITS = 12


@functools.lru_cache(maxsize=4096)
def zcdp_delta(rho: float, epsilon: float) -> float:
    """δ at which ρ-zCDP gives ε-DP (module docstring), searched over α on a grid and
    refined; ``rho`` = 0 gives 0."""
    if rho <= 0:
        return 0.0
    if epsilon <= rho:  # the bound is useless below ε = ρ
        return 1.0

    def log_delta(a):
        a = np.asarray(a, dtype=np.float64)
        return (a - 1) * (a * rho - epsilon) - np.log(a - 1) + a * np.log1p(-1 / a)

    # the minimiser lies near α* = (ε + ρ)/(2ρ) for small ρ; search around it
    centre = (epsilon + rho) / (2 * rho)
    grid = np.concatenate([1 + np.geomspace(1e-6, 1e6, 400), centre * np.geomspace(0.5, 2, 200)])
    grid = np.unique(grid[grid > 1])
    values = log_delta(grid)
    i = int(np.argmin(values))
    lo, hi = grid[max(0, i - 1)], grid[min(len(grid) - 1, i + 1)]
    for _ in range(60):  # golden-section refinement of a unimodal bracket
        m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
        if log_delta(m1) < log_delta(m2):
            hi = m2
        else:
            lo = m1
    best = min(float(values[i]), float(log_delta((lo + hi) / 2)))
    return min(1.0, math.exp(best))


@functools.lru_cache(maxsize=4096)
def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smallest ε (to 1e-12 relative, rounded up) with ``zcdp_delta(ρ, ε) ≤ δ``."""
    if rho <= 0:
        return 0.0
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1) to convert zCDP, got {delta}")
    lo, hi = rho, rho + 2 * math.sqrt(rho * -math.log(delta)) + 1.0  # -log: δ may be subnormal
    while zcdp_delta(rho, hi) > delta:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if zcdp_delta(rho, mid) <= delta:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-13 * hi:
            break
    return hi


@functools.lru_cache(maxsize=1024)
def zcdp_budget(epsilon: float, delta: float) -> float:
    """The largest ρ (to 1e-12 relative, rounded down) that is (ε, δ)-DP by
    :func:`zcdp_delta`: what a fit of budget (ε, δ) may spend in zCDP."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    lo, hi = 0.0, epsilon
    for _ in range(200):
        mid = (lo + hi) / 2
        if zcdp_delta(mid, epsilon) <= delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    # the ledger converts with zcdp_epsilon's bisection, which resolves ε to 1e-13 relative
    # from a bracket that depends on ρ, so a smaller ρ can convert to an ε up to that much
    # higher: stay a margin of 1e-12 below ε by its measure, and any ρ' ≤ ρ (a ledger's
    # exact sum of the parts of ρ) converts to at most ε
    while lo > 0 and zcdp_epsilon(lo, delta) > epsilon * (1 - 1e-12):
        lo *= 1 - 1e-9
    return lo


def analytic_gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Balle and Wang's exact δ of one Gaussian release at ε (module docstring)."""
    from scipy.stats import norm

    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    # e^ε Φ(−a − b) in log space, so that large ε does not overflow
    return float(norm.cdf(a - b) - math.exp(epsilon + norm.logcdf(-a - b)))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest σ (bisection, rounded up) with analytic δ ≤ ``delta`` at ``epsilon``."""
    lo, hi = 1e-12 * sensitivity, sensitivity
    while analytic_gaussian_delta(hi, epsilon, sensitivity) > delta:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if analytic_gaussian_delta(mid, epsilon, sensitivity) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return hi


@dataclass(frozen=True)
class GaussianMechanism:
    """The discrete Gaussian on a lattice for a vector query with L2 sensitivity
    ``sensitivity`` (Δ₂) of which one record changes at most ``coordinates`` (p) entries;
    ``rho`` is the zCDP budget it may spend and ``delta`` the δ at which its own ε is
    stated (the ledger composes the ρ's, not these ε's).

    The release is ``γ·(round(q/γ) + Z)`` with Z the exact discrete Gaussian of variance
    parameter σ² (in lattice steps) from :func:`~.sampling.discrete_gaussian`. Rounding
    moves each changed entry by less than one step, and floating-point error in the answer
    by less than one more, so neighbours' lattice answers differ by at most
    Δ_γ = Δ₂/γ + 2√p steps in L2; σ² is the smallest integer ≥ Δ_γ²/(2ρ), so the
    release is Δ_γ²/(2σ²) ≤ ρ zCDP. γ = max(2^(⌊log2 σ₀⌋ − 12), 2^-20), σ₀ = Δ₂/√(2ρ).
    """

    rho: float
    sensitivity: float
    coordinates: int = 1
    delta: float = 1e-6

    def __post_init__(self) -> None:
        for what, value in (("rho", self.rho), ("sensitivity", self.sensitivity)):
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"Gaussian {what} must be positive and finite, got {value}")
        if not 0 < self.delta < 1:
            raise ValueError(f"Gaussian delta must lie in (0, 1), got {self.delta}")

    @property
    def noise_rho(self) -> float:
        """The ρ the noise is calibrated to (the audit's planted bugs override it)."""
        return self.rho

    @property
    def lattice(self) -> float:
        sigma0 = self.sensitivity / math.sqrt(2 * self.rho)
        return max(2.0 ** (math.floor(math.log2(sigma0)) - GAUSSIAN_BITS), FLOOR)

    @functools.cached_property
    def _steps(self) -> Fraction:
        """Δ_γ: the L2 sensitivity in lattice steps, rounding and float error included."""
        root_p = Fraction(math.sqrt(self.coordinates)) * (1 + Fraction(1, 2**40))
        return Fraction(self.sensitivity) / Fraction(self.lattice) + 2 * root_p

    @functools.cached_property
    def _needed(self) -> int:
        """σ² in lattice steps that ρ needs: the smallest integer ≥ Δ_γ²/(2ρ), exactly."""
        return math.ceil(self._steps * self._steps / (2 * Fraction(self.noise_rho)))

    @property
    def drawn_rho(self) -> float:
        """The zCDP ρ the noise actually drawn gives, Δ_γ²/(2σ²) in lattice steps (0 when
        :attr:`data_free`): at most the booked ``rho`` for a correct mechanism. The audit
        compares the two for every release (docs/audit.md)."""
        if self.data_free:
            return 0.0
        return float(self._steps * self._steps / (2 * self.variance_steps))

    @property
    def data_free(self) -> bool:
        """True when the variance ρ needs is beyond the exact sampler's 2^30 steps² (ρ
        below about 2p·2^-30 ≈ 1.9e-9·p: the rounding's 2√p steps alone then need more):
        the release then ignores the answer (:meth:`snap` gives 0) and adds noise of the
        widest variance the sampler draws, which is 0-zCDP, within any ρ."""
        from .sampling import MAX_VARIANCE

        return self._needed > MAX_VARIANCE

    @property
    def variance_steps(self) -> int:
        """σ² in lattice steps (:meth:`_needed`, or the sampler's widest when
        :attr:`data_free`)."""
        from .sampling import MAX_VARIANCE

        return MAX_VARIANCE if self.data_free else self._needed

    @property
    def sigma(self) -> float:
        """The noise's standard deviation parameter in the answer's units, γσ."""
        return self.lattice * math.sqrt(self.variance_steps)

    @property
    def scale(self) -> float:
        return self.sigma

    @functools.cached_property
    def epsilon(self) -> float:
        """This release alone, at ``delta``: (ε, δ)-DP by :func:`zcdp_epsilon`."""
        return zcdp_epsilon(self.rho, self.delta)

    def snap(self, answer) -> np.ndarray:
        """The answer rounded to the lattice (half up); zeros of its shape when
        :attr:`data_free`."""
        g = self.lattice
        q = np.asarray(answer, dtype=np.float64)
        return np.zeros_like(q) if self.data_free else np.floor(q / g + 0.5) * g

    def noise(self, rng: np.random.Generator, shape) -> np.ndarray:
        from .sampling import discrete_gaussian

        return discrete_gaussian(rng, self.variance_steps, shape).astype(np.float64) * self.lattice

    def add(self, answer, noise) -> np.ndarray:
        return self.snap(answer) + noise

    def log_likelihood(self, output, answer) -> np.ndarray:
        """Elementwise log P(output | answer) up to the normaliser, which is the same for
        every answer (a likelihood ratio needs no more): −z²/(2σ²) in lattice steps."""
        g = self.lattice
        z = np.asarray(output, float) / g - self.snap(answer) / g
        return -(z * z) / (2.0 * self.variance_steps)
