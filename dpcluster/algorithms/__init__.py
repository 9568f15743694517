"""Clustering algorithms of Paper A (one module per family) and their registry."""

from .dplloyd import DPResult, dplloyd, dplloyd_batch, dplloyd_improved
from .eugkm import eugkm
from .init import initial_sets
from .lloyd import lloyd, lloyd_batch
from .registry import ALGORITHMS, AlgorithmInfo, CellContext, Param

__all__ = ["ALGORITHMS", "AlgorithmInfo", "CellContext", "DPResult", "Param", "dplloyd",
           "dplloyd_batch", "dplloyd_improved", "eugkm", "initial_sets", "lloyd", "lloyd_batch"]
