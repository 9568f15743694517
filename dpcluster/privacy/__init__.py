"""Privacy mechanisms, the budget ledger and the release hook the audit listens to."""

from .ledger import (
    CENTRAL,
    DATA_BOUNDS_NOTE,
    LOCAL,
    NOT_PRIVATE,
    USER_EPSILON,
    Ledger,
    Spend,
    check_epsilon,
    check_user_epsilon,
    not_private,
    spent,
)
from .mechanisms import ExactRelease, ExponentialMechanism, LaplaceMechanism
from .response import BitVectorResponse, keep_probability, theorem4_delta, tight_delta
from .transcript import Release, observe, release

__all__ = [
    "DATA_BOUNDS_NOTE",
    "check_epsilon",
    "check_user_epsilon",
    "USER_EPSILON",
    "not_private",
    "CENTRAL",
    "LOCAL",
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
    "release",
    "spent",
    "theorem4_delta",
    "tight_delta",
]
