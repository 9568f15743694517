"""``auto``'s rule: which method to run, from public quantities only (placeholder)."""

from __future__ import annotations


def choose(N: int, k: int, d: int, epsilon: float) -> tuple[str, str]:
    """(method, reason) for N records, d features, k clusters and budget ε."""
    if d <= 3:
        return "hybrid", f"d = {d} <= 3"
    return "dplloyd_improved", f"d = {d} > 3"
