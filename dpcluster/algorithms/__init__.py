"""Clustering algorithms of Paper A, one module per family (their registry entries live in
dpcluster/experiments/)."""

from .dplloyd import DPResult, dplloyd, dplloyd_batch, dplloyd_improved
from .eugkm import eugkm
from .init import initial_sets
from .lloyd import lloyd, lloyd_batch

__all__ = [
    "DPResult",
    "dplloyd",
    "dplloyd_batch",
    "dplloyd_improved",
    "eugkm",
    "initial_sets",
    "lloyd",
    "lloyd_batch",
]
