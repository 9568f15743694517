"""A privacy budget across fits: what a researcher may still spend on one dataset.

:class:`BudgetAccountant` holds a total (ε, δ). A fit that is given one asks it first,
before anything is released, and is refused when its (ε, δ) would overspend; after the fit
it books what the fit's ledger proves. Fits on the same data compose by basic composition:
the ε's add and the δ's add (docs/privacy.md, "A budget across fits").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


class BudgetExceeded(ValueError):
    """A fit would spend more than what is left of an accountant's budget."""


@dataclass
class BudgetAccountant:
    """Total budget ``epsilon`` (and ``delta``, default 0: pure ε) over fits on one
    dataset; ``spent`` lists each booked fit's (ε, δ)."""

    epsilon: float
    delta: float = 0.0
    spent: list[tuple[float, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not (self.epsilon > 0 and math.isfinite(self.epsilon)):
            raise ValueError(f"epsilon must be positive and finite, got {self.epsilon!r}")
        if not 0 <= self.delta < 1:
            raise ValueError(f"delta must lie in [0, 1), got {self.delta!r}")

    @property
    def spent_epsilon(self) -> float:
        return math.fsum(e for e, _ in self.spent)

    @property
    def spent_delta(self) -> float:
        return math.fsum(d for _, d in self.spent)

    @property
    def remaining(self) -> tuple[float, float]:
        """(ε, δ) still to spend (never below 0)."""
        return (
            max(0.0, self.epsilon - self.spent_epsilon),
            max(0.0, self.delta - self.spent_delta),
        )

    def check(self, epsilon: float, delta: float = 0.0) -> None:
        """Refuse (:class:`BudgetExceeded`) a fit of (ε, δ) that would overspend."""
        if math.fsum([self.spent_epsilon, epsilon]) > self.epsilon or (
            math.fsum([self.spent_delta, delta]) > self.delta
        ):
            left_eps, left_delta = self.remaining
            raise BudgetExceeded(
                f"a fit of epsilon={epsilon:g}, delta={delta:g} would overspend the "
                f"accountant: {left_eps:g} epsilon and {left_delta:g} delta are left of "
                f"({self.epsilon:g}, {self.delta:g})"
            )

    def spend(self, ledger) -> None:
        """Book what ``ledger`` proves (its total ε and δ); refuses an overspend."""
        epsilon, delta = float(ledger.total_epsilon), float(ledger.total_delta)
        self.check(epsilon, delta)
        self.spent.append((epsilon, delta))
