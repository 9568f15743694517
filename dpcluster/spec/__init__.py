"""Specs: YAML in, frozen validated dataclasses out (docs/specs.md).

model     the dataclasses (:class:`Spec`, :class:`DatasetSpec`, :class:`AlgorithmSpec`, …)
document  reading YAML under limits; ``--set`` overrides
parse     the top level; datasets, entries (algorithms, ε, metrics) and plot its sections
"""

from ..errors import SpecError
from .document import apply_overrides, parse_overrides
from .model import AlgorithmSpec, DatasetSpec, InitSpec, PlotSpec, Spec
from .parse import load, parse
from .plot import PLOT_KINDS

__all__ = [
    "PLOT_KINDS",
    "AlgorithmSpec",
    "DatasetSpec",
    "InitSpec",
    "PlotSpec",
    "Spec",
    "SpecError",
    "apply_overrides",
    "load",
    "parse",
    "parse_overrides",
]
