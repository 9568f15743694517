"""An append-only privacy ledger that travels with every result.

Every noisy release records one immutable :class:`Spend`. Totals use basic sequential
composition (sum of epsilons); a release that covers disjoint parts of the data (e.g. all
cells of a histogram) is one Spend whose sensitivity already accounts for that.

Neighbouring relation throughout Paper A: unbounded DP, D ~ D' iff one equals the other
plus one tuple (METHODS A0).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

NEIGHBOURING = "add/remove one tuple (unbounded DP)"


@dataclass(frozen=True)
class Spend:
    """One noisy release: what it was for, which mechanism, its epsilon and L1 sensitivity."""

    purpose: str
    mechanism: str
    epsilon: float
    sensitivity: float
    scale: float
    round: int = 0
    delta: float = 0.0


@dataclass
class Ledger:
    """Append-only list of :class:`Spend` records for one run."""

    neighbouring: str = NEIGHBOURING
    entries: list[Spend] = field(default_factory=list)

    def record(self, mech, purpose: str, round: int = 0):
        """Append the spend of ``mech`` (any mechanism with epsilon, sensitivity, scale, delta)
        and return it, so draws read ``ledger.record(m, ..)``."""
        self.entries.append(
            Spend(
                purpose=purpose,
                mechanism=type(mech).__name__,
                epsilon=float(mech.epsilon),
                sensitivity=float(mech.sensitivity),
                scale=float(mech.scale),
                round=int(round),
                delta=float(mech.delta),
            )
        )
        return mech

    def extend(self, other: "Ledger") -> "Ledger":
        """Append every spend of ``other`` (sequential composition of two runs' releases)."""
        self.entries.extend(other.entries)
        return self

    @property
    def total_epsilon(self) -> float:
        """Sequential composition: the sum of every recorded epsilon."""
        return math.fsum(e.epsilon for e in self.entries)

    @property
    def total_delta(self) -> float:
        return math.fsum(e.delta for e in self.entries)

    def to_dict(self) -> dict:
        return {
            "neighbouring": self.neighbouring,
            "total_epsilon": self.total_epsilon,
            "entries": [asdict(e) for e in self.entries],
        }
