"""Privacy mechanisms and the budget ledger."""

from .ledger import NEIGHBOURING, Ledger, Spend
from .mechanisms import LaplaceMechanism

__all__ = ["NEIGHBOURING", "LaplaceMechanism", "Ledger", "Spend"]
