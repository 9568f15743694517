"""A privacy budget across fits: what a researcher may still spend on one dataset.

:class:`BudgetAccountant` holds a total (ε, δ). A fit that is given one *reserves* its
declared (ε, δ) first, before anything is released, and is refused when that would
overspend; after the fit the reservation is settled to what the fit's ledger proves
(never more than it reserved). Fits on the same data compose by basic composition (the
ε's add and the δ's add), or, with ``composition="pld"``, by the privacy-loss
distribution of everything they released (:mod:`.pld`; docs/privacy.md, "A budget
across fits").

One accountant is one budget, so it is shared, never copied:

* ``copy.copy`` and ``copy.deepcopy`` return the accountant itself, so scikit-learn's
  ``clone`` (and ``cross_validate``, ``GridSearchCV``) hands every clone the same budget;
* it cannot be pickled: a copy in another process would be a second budget;
* reserving, settling and releasing are atomic under a lock, so threads sharing it cannot
  together reserve more than the total;
* sums are exact (rational arithmetic on the doubles), so 0.3 + 0.17 does not pass a
  budget of 0.47 that the exact sum exceeds.
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction


class BudgetExceeded(ValueError):
    """A fit would spend more than what is left of an accountant's budget."""


def _amount(name: str, value, upper: float | None = None) -> float:
    """``value`` as a float in [0, ``upper``) (or [0, ∞)), refusing bools, NaN, ∞ and
    negatives with a message that names ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (upper is not None and value >= upper):
        bound = f"[0, {upper:g})" if upper is not None else "[0, inf)"
        raise ValueError(f"{name} must be finite and in {bound}, got {value!r}")
    return value


class Reservation:
    """A fit's hold on an accountant: its declared (ε, δ) until :meth:`settle`; once
    settled, what its ledger proves, and (for PLD composition) what it released."""

    def __init__(self, accountant: BudgetAccountant, epsilon: float, delta: float) -> None:
        self.accountant, self.epsilon, self.delta = accountant, epsilon, delta
        self.settled = False
        #: (pure ε's, zCDP ρ of the Gaussian group) of a settled ledger whose releases the
        #: PLD can compose; None: the fit counts as a generic (ε, δ) pair
        self.releases: tuple[tuple[float, ...], float] | None = None

    def settle(self, ledger) -> None:
        """Replace the hold by what ``ledger`` proves (its total ε and δ); a ledger above
        the hold is refused (:class:`BudgetExceeded`) and the hold stays booked."""
        self.accountant._settle(
            self, float(ledger.total_epsilon), float(ledger.total_delta), _releases(ledger)
        )


def _releases(ledger) -> tuple[tuple[float, ...], float] | None:
    """(pure ε's, Gaussian ρ) of a ledger whose every release is pure ε or Gaussian, else
    None (a pure release with its own δ, or an unbounded one)."""
    entries = getattr(ledger, "entries", None)
    if entries is None or any(
        (e.delta and not e.rho) or not math.isfinite(e.epsilon) for e in entries
    ):
        return None
    return tuple(e.epsilon for e in entries if not e.rho), math.fsum(e.rho for e in entries)


class BudgetAccountant:
    """Total budget ``epsilon`` (> 0) and ``delta`` (in [0, 1), default 0: pure ε) over
    fits on one dataset. ``spent``: each settled fit's (ε, δ), and each held
    reservation's, as a tuple.

    ``composition``: ``"basic"`` (the default) adds ε's and δ's exactly; ``"pld"`` (with
    ``delta`` > 0) composes every settled fit's releases (its pure ε's and its Gaussian
    group) and every held or proposed fit as a generic (ε, δ) pair by their privacy-loss
    distribution (:mod:`.pld`), and refuses a fit when the composition's ε at the
    budget's δ would exceed its ε. Each fit's own (ε, δ) must still fit in the budget."""

    def __init__(self, epsilon: float, delta: float = 0.0, composition: str = "basic") -> None:
        epsilon = _amount("epsilon", epsilon)
        if epsilon == 0:
            raise ValueError("epsilon must be positive, got 0.0")
        if composition not in ("basic", "pld"):
            raise ValueError(f"composition must be 'basic' or 'pld', got {composition!r}")
        self._epsilon = epsilon
        self._delta = _amount("delta", delta, upper=1.0)
        if composition == "pld" and self._delta == 0:
            raise ValueError("composition='pld' needs a budget delta > 0 (pure ε adds)")
        self._composition = composition
        self._entries: list[Reservation] = []  # held and settled, in booking order
        self._lock = threading.Lock()

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def delta(self) -> float:
        return self._delta

    @property
    def composition(self) -> str:
        """How fits compose: ``"basic"`` or ``"pld"``."""
        return self._composition

    def __repr__(self) -> str:
        extra = f", composition={self._composition!r}" if self._composition != "basic" else ""
        return f"BudgetAccountant(epsilon={self._epsilon!r}, delta={self._delta!r}{extra})"

    def __copy__(self) -> BudgetAccountant:
        return self

    def __deepcopy__(self, memo) -> BudgetAccountant:
        return self

    def __reduce__(self):
        raise TypeError(
            "a BudgetAccountant cannot be pickled: a copy in another process would be a "
            "second budget (run fits that share one in threads or in one process)"
        )

    @property
    def spent(self) -> tuple[tuple[float, float], ...]:
        with self._lock:
            return tuple((r.epsilon, r.delta) for r in self._entries)

    def _exact(self) -> tuple[Fraction, Fraction]:
        return (
            sum((Fraction(r.epsilon) for r in self._entries), Fraction(0)),
            sum((Fraction(r.delta) for r in self._entries), Fraction(0)),
        )

    def _pld_epsilon(self, extra: tuple[float, float] | None = None) -> float:
        """The ε at the budget's δ of every fit composed by PLD (:meth:`__init__`), with
        ``extra`` = (ε, δ) of a proposed fit."""
        from .pld import composed_generic_epsilon

        pure: list[float] = []
        generic: list[tuple[float, float]] = []
        rho = 0.0
        for r in self._entries:
            if r.settled and r.releases is not None:
                pure.extend(r.releases[0])
                rho += r.releases[1]
            else:
                generic.append((r.epsilon, r.delta))
        if extra is not None:
            generic.append(extra)
        return composed_generic_epsilon(pure, rho, generic, self._delta)

    @property
    def spent_epsilon(self) -> float:
        """ε spent so far: the exact sum, or (``composition="pld"``) the PLD's ε at the
        budget's δ, whichever is smaller."""
        with self._lock:
            basic = float(self._exact()[0])
            if self._composition == "pld" and self._entries:
                return min(basic, self._pld_epsilon())
            return basic

    @property
    def spent_delta(self) -> float:
        with self._lock:
            return float(self._exact()[1])

    @property
    def remaining(self) -> tuple[float, float]:
        """(ε, δ) still to spend (never below 0), rounded down."""
        with self._lock:
            eps, delta = self._exact()
            if self._composition == "pld" and self._entries:
                eps = min(eps, Fraction(self._pld_epsilon()))
        return (
            _floor(Fraction(self._epsilon) - eps),
            _floor(Fraction(self._delta) - delta),
        )

    def _refusal(self, epsilon: float, delta: float) -> BudgetExceeded | None:
        eps, dl = self._exact()
        over = eps + Fraction(epsilon) > Fraction(self._epsilon) or dl + Fraction(delta) > Fraction(
            self._delta
        )
        if over and self._composition == "pld" and Fraction(epsilon) <= Fraction(self._epsilon):
            # the PLD of all fits at the budget's δ may still fit where the sum does not
            over = self._pld_epsilon((epsilon, delta)) > self._epsilon
        if over:
            if self._composition == "pld" and self._entries:
                eps = min(eps, Fraction(self._pld_epsilon()))
            left_eps = _floor(Fraction(self._epsilon) - eps)
            left_delta = _floor(Fraction(self._delta) - dl)
            return BudgetExceeded(
                f"a fit of epsilon={epsilon:g}, delta={delta:g} would overspend the "
                f"accountant: {left_eps:g} epsilon and {left_delta:g} delta are left of "
                f"({self._epsilon:g}, {self._delta:g}) by {self._composition} composition"
            )
        return None

    def check(self, epsilon: float, delta: float = 0.0) -> None:
        """Refuse (:class:`BudgetExceeded`) a fit of (ε, δ) that would overspend; books
        nothing (:meth:`reserve` books)."""
        epsilon, delta = _amount("epsilon", epsilon), _amount("delta", delta, upper=1.0)
        with self._lock:
            refusal = self._refusal(epsilon, delta)
        if refusal is not None:
            raise refusal

    def reserve(self, epsilon: float, delta: float = 0.0) -> Reservation:
        """Hold (ε, δ) for a fit, atomically, or refuse (:class:`BudgetExceeded`) before
        anything is released."""
        epsilon, delta = _amount("epsilon", epsilon), _amount("delta", delta, upper=1.0)
        with self._lock:
            refusal = self._refusal(epsilon, delta)
            if refusal is not None:
                raise refusal
            hold = Reservation(self, epsilon, delta)
            self._entries.append(hold)
        return hold

    def _settle(self, hold: Reservation, epsilon: float, delta: float, releases=None) -> None:
        with self._lock:
            if hold.settled:
                raise ValueError("this reservation is already settled")
            if Fraction(epsilon) > Fraction(hold.epsilon) or Fraction(delta) > Fraction(hold.delta):
                raise BudgetExceeded(
                    f"the fit's ledger proves ({epsilon:g}, {delta:g}), above the "
                    f"({hold.epsilon:g}, {hold.delta:g}) it reserved; the reservation stays "
                    "booked"
                )
            hold.epsilon, hold.delta, hold.settled = epsilon, delta, True
            hold.releases = releases

    def spend(self, ledger) -> None:
        """Book what ``ledger`` proves (its total ε and δ) at once; refuses an overspend."""
        hold = self.reserve(float(ledger.total_epsilon), float(ledger.total_delta))
        hold.settled, hold.releases = True, _releases(ledger)


def _floor(value: Fraction) -> float:
    """The largest double ≤ ``value`` (and ≥ 0)."""
    if value <= 0:
        return 0.0
    out = float(value)
    return out if Fraction(out) <= value else math.nextafter(out, 0.0)
