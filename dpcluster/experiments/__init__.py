"""Where the harness meets the algorithms: the entry protocol, the cost estimates, Paper A's
and Paper B's entries, and the registry (with plugins). The harness calls this package;
it calls algorithms, kernels and privacy, never the harness."""

from .protocol import (
    CLASS_METRICS,
    AlgorithmInfo,
    CellContext,
    CellShape,
    Param,
    Row,
    independent_runs,
)
from .registry import (
    ALGORITHMS,
    ENTRY_POINT_GROUP,
    describe_entry,
    known_metrics,
    known_names,
    lookup,
)

__all__ = [
    "ALGORITHMS",
    "CLASS_METRICS",
    "ENTRY_POINT_GROUP",
    "AlgorithmInfo",
    "CellContext",
    "CellShape",
    "Param",
    "Row",
    "describe_entry",
    "independent_runs",
    "known_metrics",
    "known_names",
    "lookup",
]
