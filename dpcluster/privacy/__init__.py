"""Privacy mechanisms and the budget ledger."""

from .ledger import NEIGHBOURING, Ledger, Spend
from .mechanisms import ExponentialMechanism, LaplaceMechanism

__all__ = ["NEIGHBOURING", "ExponentialMechanism", "LaplaceMechanism", "Ledger", "Spend"]
