"""Pure numba kernels (:mod:`.assign`, :mod:`.grid`, :mod:`.pruned`, :mod:`.points`,
:mod:`.grid_blocks`, :mod:`.unrolled`, :mod:`.blocks`, :mod:`.bits`, :mod:`.scan`), their tuning constants
(:mod:`.config`) and compile-where-it-pays policy (:mod:`.dispatch`); this face re-exports
the NumPy-facing wrappers of :mod:`.api`."""

from ..cache import share_numba_cache

share_numba_cache()  # before the first @njit: one compiled cache per commit and machine

from .api import (  # noqa: E402 - after share_numba_cache()
    GRID_DISTANCES,
    cluster_stats,
    cluster_stats_single,
    cluster_stats_single_outside,
    grid_histogram,
    grid_moments,
    grid_stats,
    labels,
    nearest,
    nearest_member,
    nicv,
    sse,
    sse_expanded,
)
from .grid import GRID_LANES, cell_centres  # noqa: E402
from .grid_blocks import blocks_pay  # noqa: E402

__all__ = [
    "cluster_stats_single",
    "cluster_stats_single_outside",
    "GRID_DISTANCES",
    "GRID_LANES",
    "blocks_pay",
    "cell_centres",
    "cluster_stats",
    "grid_histogram",
    "grid_moments",
    "grid_stats",
    "labels",
    "nearest",
    "nearest_member",
    "nicv",
    "sse",
    "sse_expanded",
]
