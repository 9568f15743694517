"""Privacy mechanisms, the budget ledger and the release hook the audit listens to."""

from .ledger import CENTRAL, LOCAL, NEIGHBOURING, NOT_PRIVATE, Ledger, Spend, spent
from .mechanisms import ExactRelease, ExponentialMechanism, LaplaceMechanism
from .response import BitVectorResponse, keep_probability, theorem4_delta, tight_delta
from .transcript import Release, observe, observing, release

__all__ = [
    "CENTRAL",
    "LOCAL",
    "NEIGHBOURING",
    "NOT_PRIVATE",
    "BitVectorResponse",
    "ExactRelease",
    "ExponentialMechanism",
    "LaplaceMechanism",
    "Ledger",
    "Release",
    "Spend",
    "keep_probability",
    "observe",
    "observing",
    "release",
    "spent",
    "theorem4_delta",
    "tight_delta",
]
