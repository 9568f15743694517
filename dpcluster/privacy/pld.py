"""Privacy-loss-distribution (PLD) accounting of (ε, δ) fits (docs/privacy.md, "PLD").

A ledger with Gaussian releases is (ε, δ)-DP for the ε this module computes, and every
Gaussian method calibrates its noise by it. The composed event is

* **the Gaussian releases**, each ρ_i-zCDP with L2 sensitivity Δ_i and noise σ_i ≥
  Δ_i/√(2ρ_i): their adaptive composition is dominated by one Gaussian mechanism of
  sensitivity 1 and noise 1/μ, μ = √(2Σρ_i) (μ-GDP composes exactly: Dong, Roth and Su,
  "Gaussian Differential Privacy", JRSS-B 2022, Cor. 3.3). Its privacy curve is the
  analytic Gaussian's, δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) (Balle and Wang, ICML
  2018, Thm 8). The releases are discrete Gaussians on a lattice; the continuous
  Gaussian stands in for them as a bound (the argument and its source are in
  docs/privacy.md);
* **every pure ε-DP release** (Laplace counts, exponential-mechanism choices): any
  ε-DP mechanism's pair of output distributions is dominated by binary randomised
  response at ε (Kairouz, Oh and Viswanath, ICML 2015, Thm 2.1), whose PLD is two
  atoms, at ±ε with masses e^{±ε}/(1 + e^ε);
* composed by convolving the PLDs (Koskela et al.; Google's `dp-accounting`: its
  pessimistic PLDs of the pure releases, and the Gaussian's built here by rounding its
  exact N(μ²/2, μ²) loss up to the grid, :func:`gaussian_pld`; each ε is an upper bound).

The Gaussian group alone is computed in closed form; with pure releases beside it the
PLD of ``dp_accounting`` is used (a PLD's ε at δ rounds up, so it stays a bound). The
ledger books the smallest of this ε and the older routes (zCDP conversion, Rényi
composition, basic composition): each is a valid bound.
"""

from __future__ import annotations

import functools
import math

import numpy as np

#: the PLDs' loss discretization (dp-accounting's value_discretization_interval)
VALUE_INTERVAL = 1e-4
#: a pure release's largest ε given a PLD here (e^ε must stay a finite double); beyond
#: it :func:`composed_epsilon` is ∞ and the ledger's other routes apply
PURE_MAX = 500.0
#: calibration aims this far (relative) below ε, so a ledger's own evaluation at a ρ
#: on the same grid never lands above it
MARGIN = 1e-8
#: ρ is evaluated on a relative grid of 2^-24: rounded up in a ledger (a larger ρ is a
#: weaker, still valid, guarantee), chosen on the grid in calibration
GRID_BITS = 24


def rho_up(rho: float) -> float:
    """ρ rounded up to the grid (:data:`GRID_BITS` significant bits)."""
    if rho <= 0:
        return 0.0
    m, e = math.frexp(rho)
    return math.ldexp(math.ceil(m * 2**GRID_BITS), e - GRID_BITS)


def rho_down(rho: float) -> float:
    """ρ rounded down to the grid."""
    if rho <= 0:
        return 0.0
    m, e = math.frexp(rho)
    return math.ldexp(math.floor(m * 2**GRID_BITS), e - GRID_BITS)


def gaussian_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of μ-GDP (module docstring), with e^ε Φ(·) in log space."""
    from scipy.stats import norm

    a, b = mu / 2.0, epsilon / mu
    return float(norm.cdf(a - b) - math.exp(epsilon + norm.logcdf(-a - b)))


@functools.lru_cache(maxsize=4096)
def gaussian_epsilon(rho: float, delta: float) -> float:
    """The smallest ε (bisection to 1e-12 relative, rounded up) at which the Gaussian
    group of total zCDP ρ (μ = √(2ρ)) is (ε, δ)-DP."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    if rho <= 0:
        return 0.0
    mu = math.sqrt(2.0 * rho)
    if gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, max(1.0, mu * mu)
    while gaussian_delta(mu, hi) > delta:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if gaussian_delta(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi


def grid_interval(rho: float, pure_sum: float, pure_min: float = math.inf) -> float:
    """The PLDs' loss grid: :data:`VALUE_INTERVAL`, or 1/100 of the smallest pure ε when
    that is finer (a pure release's atoms round up to the grid, which must not inflate a
    small ε), widened where the composed losses span more than 2^20 steps (a Gaussian of
    μ = √(2ρ) spans about μ²/2 ± 20μ, the pure releases ±``pure_sum``). Any grid is
    pessimistic; a wider one is only looser, and keeps a huge ε (an audit at ε = 10⁵) from
    building PLDs of billions of points. Where it widens, :func:`composed_epsilon` (what
    calibration and ledgers read) is ∞ instead: nearby ρ on grids of different widths
    need not compare in order, and the older routes apply there."""
    mu = math.sqrt(2.0 * rho) if rho > 0 else 0.0
    span = mu * mu / 2.0 + 20.0 * mu + 2.0 * pure_sum
    return max(min(VALUE_INTERVAL, pure_min / 100.0), span / 2**20)


#: the Gaussian PLD is built over the losses within this many standard deviations of
#: its mean; the mass above (1.1e-19) goes to the loss +∞ (pessimistic: it adds at most
#: that to δ), the mass below to the lowest point (rounded up, pessimistic too). Wider
#: tails only slow dp-accounting's compositions, whose truncation walks them in Python
GAUSSIAN_TAILS = 9.0


def gaussian_pld(rho: float, interval: float):
    """The pessimistic PLD of the Gaussian group of total zCDP ρ (sensitivity 1, noise
    1/μ, μ = √(2ρ)) on the loss grid ``interval``, as a dp-accounting
    ``PrivacyLossDistribution``. The Gaussian mechanism's privacy loss is exactly
    N(μ²/2, μ²) for both neighbouring orders; each loss is rounded up to the grid (mass
    P((i − 1)h < L ≤ ih) at ih), which can only raise δ(ε) (Meiser and Mohammadi, CCS
    2018; Koskela et al., AISTATS 2021). Vectorised: dp-accounting's own constructor
    evaluates the inverse loss point by point in Python, seconds per PLD at large ρ."""
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pld
    from scipy.stats import norm

    mu = math.sqrt(2.0 * rho)
    mean = mu * mu / 2.0
    lo = math.floor((mean - GAUSSIAN_TAILS * mu) / interval)
    hi = math.ceil((mean + GAUSSIAN_TAILS * mu) / interval)
    top = np.arange(lo, hi + 1) * interval
    bottom = top - interval
    # differences of the cdf below the mean and of the survival function above it, so
    # that no mass is a difference of two numbers near 1
    probs = np.where(
        top <= mean,
        norm.cdf(top, mean, mu) - norm.cdf(bottom, mean, mu),
        norm.sf(bottom, mean, mu) - norm.sf(top, mean, mu),
    )
    probs = np.maximum(probs, 0.0)
    probs[0] += norm.cdf(bottom[0], mean, mu)
    infinity = float(norm.sf(top[-1], mean, mu))
    nonzero = np.flatnonzero(probs)  # zero ends would only slow every composition down
    first, last = int(nonzero[0]), int(nonzero[-1])
    probs[first] += probs[:first].sum()
    pmf = pld_pmf.DensePLDPmf(interval, lo + first, probs[first : last + 1], infinity, True)
    return pld.PrivacyLossDistribution(pmf)


def _grouped(values: tuple[float, ...]) -> list[tuple[float, int]]:
    counts: dict[float, int] = {}
    for v in values:
        counts[float(v)] = counts.get(float(v), 0) + 1
    return sorted(counts.items())


@functools.lru_cache(maxsize=4096)
def _composed(pure: tuple[float, ...], rho: float, delta: float) -> float:
    if any(not e < PURE_MAX for e in pure):  # unbounded, or past exp's range: no PLD
        return math.inf
    if not pure:
        return gaussian_epsilon(rho, delta)
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    interval = grid_interval(rho, math.fsum(pure), min(pure, default=math.inf))
    if interval > grid_interval(0.0, 0.0, min(pure, default=math.inf)):
        return math.inf  # losses past 2^20 grid steps (huge ε): the older routes apply
    total = gaussian_pld(rho, interval) if rho > 0 else None
    for eps, count in _grouped(pure):
        one = pld.from_privacy_parameters(
            common.DifferentialPrivacyParameters(eps, 0.0),
            value_discretization_interval=interval,
        )
        part = one.self_compose(count) if count > 1 else one
        total = part if total is None else total.compose(part)
    return float(total.get_epsilon_for_delta(delta))


def composed_generic_epsilon(pure, rho: float, generic, delta: float) -> float:
    """:func:`composed_epsilon` with generic (ε_i, δ_i)-DP parts beside: each enters as
    dp-accounting's pessimistic PLD of an (ε, δ) guarantee (mass δ_i at ∞, the rest two
    atoms at ±ε_i). ``inf`` when their δ's reach ``delta`` or an ε is past the PLD."""
    generic = [(float(e), float(d)) for e, d in generic]
    if not generic:
        return composed_epsilon(pure, rho, delta)
    if math.fsum(d for _, d in generic) >= delta or any(not e < PURE_MAX for e, _ in generic):
        return math.inf
    pure = [float(e) for e in pure]
    if any(not e < PURE_MAX for e in pure):
        return math.inf
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    rho = rho_up(float(rho))
    every = pure + [e for e, _ in generic]
    interval = grid_interval(rho, math.fsum(every), min(every, default=math.inf))
    parts = []
    if rho > 0:
        parts.append(gaussian_pld(rho, interval))
    for eps, d in [(e, 0.0) for e in pure] + generic:
        parts.append(
            pld.from_privacy_parameters(
                common.DifferentialPrivacyParameters(eps, d),
                value_discretization_interval=interval,
            )
        )
    total = parts[0]
    for part in parts[1:]:
        total = total.compose(part)
    return float(total.get_epsilon_for_delta(delta))


def composed_epsilon(pure, rho: float, delta: float) -> float:
    """The ε at ``delta`` of pure ε-DP releases ``pure`` (their ε's) composed with a
    Gaussian group of total zCDP ``rho``, by PLD (module docstring); ρ is rounded up to
    the grid first. ``inf`` when a pure release is unbounded."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    return _composed(tuple(sorted(float(e) for e in pure)), rho_up(float(rho)), float(delta))


@functools.lru_cache(maxsize=1024)
def _largest_rho(pure: tuple[float, ...], epsilon: float, delta: float) -> float:
    target = epsilon * (1.0 - MARGIN)
    if pure and _composed(pure, 0.0, delta) > target:
        return 0.0

    def excess(log_rho: float) -> float:
        return _composed(pure, rho_down(math.exp(log_rho)), delta) - target

    # a bracket: the Gaussian group alone at ε is an upper end (pure releases only add)
    hi = math.log(max(_largest_rho((), epsilon, delta) if pure else 4.0 * epsilon, 1e-300))
    lo = hi - 1.0
    f_hi, f_lo = excess(hi), excess(lo)
    while f_hi <= 0:
        lo, f_lo, hi = hi, f_hi, hi + 1.0
        f_hi = excess(hi)
    while f_lo > 0:
        hi, f_hi, lo = lo, f_lo, lo - 2.0
        f_lo = excess(lo)
        if lo < -700:
            return 0.0
    # Illinois regula falsi on log ρ, keeping f(lo) ≤ 0 < f(hi), to 1e-7 relative in ρ
    side = 0
    while hi - lo > 1e-7:
        mid = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if not lo < mid < hi:
            mid = (lo + hi) / 2.0
        f_mid = excess(mid)
        if f_mid <= 0:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi /= 2.0
            side = -1
        else:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo /= 2.0
            side = 1
    best = rho_down(math.exp(lo))
    return best if best > 0 and _composed(pure, best, delta) <= target else 0.0


def largest_rho(pure, epsilon: float, delta: float) -> float:
    """The largest total zCDP ρ on the grid whose Gaussian group, composed with the pure
    releases ``pure``, is (ε(1 − MARGIN), δ)-DP by :func:`composed_epsilon` (0.0 when
    even ρ = 0 is over: the pure releases alone spend ε)."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    return _largest_rho(tuple(sorted(float(e) for e in pure)), float(epsilon), float(delta))


def smallest_scale(spent, epsilon: float, upper: float) -> float:
    """The smallest noise scale α ≤ ``upper`` (to 1e-9 relative, from above) with
    ``spent(α) ≤ ε``, for ``spent`` decreasing in α: Illinois regula falsi on log α
    between ``upper``/2 and ``upper``; ``upper`` itself when ``spent(upper)`` is over."""
    hi = math.log(upper)
    f_hi = spent(upper) - epsilon
    if f_hi > 0:
        return upper
    lo = hi - math.log(2.0)
    f_lo = spent(math.exp(lo)) - epsilon
    while f_lo <= 0:
        hi, f_hi, lo = lo, f_lo, lo - math.log(2.0)
        f_lo = spent(math.exp(lo)) - epsilon
    side = 0
    while hi - lo > 1e-9:  # f(lo) > 0 ≥ f(hi)
        mid = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if not lo < mid < hi:
            mid = (lo + hi) / 2.0
        f_mid = spent(math.exp(mid)) - epsilon
        if f_mid <= 0:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo /= 2.0
            side = 1
        else:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi /= 2.0
            side = -1
    return math.exp(hi) if spent(math.exp(hi)) <= epsilon else upper


# --- DpEvents ---------------------------------------------------------------------------


def flip_probability(epsilon: float) -> float:
    """The noise parameter p of binary randomised response at ε (dp-accounting's
    ``RandomizedResponseDpEvent``: the input is kept with probability 1 − p/2), e^ε =
    (1 − p/2)/(p/2)."""
    return 2.0 / (1.0 + math.exp(epsilon)) if epsilon < 700 else 0.0


def spend_event(spend: dict):
    """The ``dp_accounting.DpEvent`` of one ledger entry (a :class:`~.ledger.Spend` as a
    dict): a Gaussian release (``rho`` > 0) is ``GaussianDpEvent(1/√(2ρ))``, repeated; a
    pure ε-DP release is ``RandomizedResponseDpEvent(p, 2)``, its dominating pair; an
    unbounded read is ``NonPrivateDpEvent``; a pure release with its own δ is an
    ``UnsupportedDpEvent`` (no standard event carries a generic (ε, δ))."""
    import dp_accounting as dpa

    repeats = max(1, int(spend.get("repeats", 1)))
    eps, delta = float(spend["epsilon"]), float(spend.get("delta", 0.0))
    rho = float(spend.get("rho", 0.0))
    if not math.isfinite(eps):
        return dpa.NonPrivateDpEvent()
    if rho > 0:
        one = dpa.GaussianDpEvent(noise_multiplier=1.0 / math.sqrt(2.0 * rho / repeats))
    elif delta > 0:
        return dpa.UnsupportedDpEvent()
    else:
        one = dpa.RandomizedResponseDpEvent(
            noise_parameter=flip_probability(eps / repeats), num_buckets=2
        )
    return one if repeats == 1 else dpa.SelfComposedDpEvent(one, repeats)


def ledger_event(ledger: dict):
    """``dp_accounting.ComposedDpEvent`` of every entry of a ledger dict (a fit's
    ``ledger_.to_dict()`` or a results row's ``ledger`` JSON)."""
    import dp_accounting as dpa

    return dpa.ComposedDpEvent([spend_event(e) for e in ledger.get("entries", [])])


def event_epsilon(event, delta: float) -> float:
    """The ε at ``delta`` of an event from :func:`ledger_event`, under add/remove-one
    neighbours, by dp-accounting's PLDs: each Gaussian at its noise multiplier, each
    randomised response as its ε's two-atom pair. ``inf`` with a non-private part;
    ValueError for an unsupported part."""
    import dp_accounting as dpa
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    gaussians: list[float] = []  # noise multipliers, one per composed Gaussian
    pure: list[tuple[float, int]] = []  # (ε, times)
    private = True

    def walk(ev, count: int) -> None:
        nonlocal private
        if isinstance(ev, dpa.ComposedDpEvent):
            for e in ev.events:
                walk(e, count)
        elif isinstance(ev, dpa.SelfComposedDpEvent):
            walk(ev.event, count * ev.count)
        elif isinstance(ev, dpa.GaussianDpEvent):
            gaussians.append(ev.noise_multiplier / math.sqrt(count))
        elif isinstance(ev, dpa.RandomizedResponseDpEvent) and ev.num_buckets == 2:
            p = ev.noise_parameter
            pure.append((math.log((1.0 - p / 2.0) / (p / 2.0)) if p > 0 else math.inf, count))
        elif isinstance(ev, dpa.NonPrivateDpEvent):
            private = False
        else:
            raise ValueError(f"no PLD for the event {ev!r}")

    walk(event, 1)
    if not private or any(not e < PURE_MAX for e, _ in pure):
        return math.inf
    if not gaussians and not pure:
        return 0.0
    rho = math.fsum(1.0 / (2.0 * z * z) for z in gaussians)
    interval = grid_interval(
        rho, math.fsum(e * c for e, c in pure), min((e for e, _ in pure), default=math.inf)
    )
    parts = [
        pld.from_gaussian_mechanism(standard_deviation=z, value_discretization_interval=interval)
        for z in gaussians
    ]
    for eps, count in pure:
        one = pld.from_privacy_parameters(
            common.DifferentialPrivacyParameters(eps, 0.0),
            value_discretization_interval=interval,
        )
        parts.append(one.self_compose(count) if count > 1 else one)
    total = parts[0]
    for part in parts[1:]:
        total = total.compose(part)
    return float(total.get_epsilon_for_delta(delta))
