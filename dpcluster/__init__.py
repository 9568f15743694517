"""dpcluster: run, compare, audit and reproduce differentially private clustering algorithms."""

from .cache import use_for_numba

__version__ = "0.1.0"

use_for_numba()  # one kernel cache per user (dpcluster/cache.py), set before numba loads


def __getattr__(name):  # the estimators import scikit-learn: load them on first use
    if name in ("DPKMeans", "DPBVEncoder", "dpbv_distances"):
        from . import estimator

        return getattr(estimator, name)
    if name == "LDPKMeans":
        from .ldp_estimator import LDPKMeans

        return LDPKMeans
    if name in ("BudgetAccountant", "BudgetExceeded"):
        from .privacy import accountant

        return getattr(accountant, name)
    raise AttributeError(f"module 'dpcluster' has no attribute {name!r}")
