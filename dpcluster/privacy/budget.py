"""Budget shares whose booked total never exceeds ε, not even by a rounding error.

A fit splits ε into parts (a count, the sums, t iterations of both, ...). Computed in
floating point, ε/t·c/(d + c) and its siblings can add up to a few ulps above ε. These
helpers lower the intended shares by as few ulps as needed for their *exact* sum (in
rational arithmetic) to be at most the budget they split. Shares nest: when every split
holds exactly, the exact total of every booked entry is at most ε, so the ledger's
correctly rounded total (``math.fsum``) is too.
"""

from __future__ import annotations

import math
from fractions import Fraction


def _exact_sum(values) -> Fraction:
    return sum((Fraction(v) for v in values), Fraction(0))


def within(epsilon: float, parts: list[float], rounds: int = 1) -> list[float]:
    """``parts`` (one round's shares, each > 0), lowered by as few ulps as needed so that
    ``rounds`` repetitions of them sum exactly to at most ε."""
    parts = [float(p) for p in parts]
    if not parts or min(parts) <= 0:
        raise ValueError(f"budget parts must be positive, got {parts}")
    budget = Fraction(epsilon)
    while _exact_sum(parts) * int(rounds) > budget:
        i = max(range(len(parts)), key=parts.__getitem__)
        parts[i] = math.nextafter(parts[i], 0.0)
    return parts


def remaining(epsilon: float, spent: list[float]) -> float:
    """What is left of ε after ``spent``: the largest double x ≤ ε − Σ spent whose exact
    sum with ``spent`` is at most ε. ValueError when nothing is left."""
    x = float(Fraction(epsilon) - _exact_sum(spent))
    if not x > 0:
        raise ValueError(f"nothing of epsilon={epsilon} is left after {spent}")
    budget = Fraction(epsilon) - _exact_sum(spent)
    while Fraction(x) > budget:
        x = math.nextafter(x, 0.0)
    return x


def split(epsilon: float, fraction: float) -> tuple[float, float]:
    """(fraction·ε, the rest), whose exact sum is at most ε; 0 < fraction < 1."""
    first = epsilon * fraction
    return first, remaining(epsilon, [first])
