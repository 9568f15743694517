"""The initial-centroid sets shared by Lloyd, DPLloyd and EUGkM (docs/methods.md A0).

They are generated once per dataset shape from the spec seed and never look at the data,
so using them costs no privacy budget.
"""

from __future__ import annotations

import numpy as np

from ..data import sphere_packing
from ..rng import StreamFactory

INIT_METHODS = ("uniform", "sphere_packing")


def initial_sets(
    streams: StreamFactory, n_sets: int, k: int, d: int, method: str = "uniform", r: float = 1.0
) -> np.ndarray:
    """``n_sets`` sets of k initial centroids in ``[-r, r]^d``: array (n_sets, k, d).

    method ``uniform``: k points i.i.d. uniform on the domain (the CODASPY default).
    method ``sphere_packing``: :func:`dpcluster.data.sphere_packing` (improved DPLloyd, A2).
    Set ``i`` is drawn from the stream ``(…, "init", method, i)``, so set i is the same
    whatever ``n_sets`` is.
    """
    if method not in INIT_METHODS:
        raise ValueError(f"unknown init method {method!r}; valid: {INIT_METHODS}")
    out = np.empty((n_sets, k, d))
    for i in range(n_sets):
        rng = streams.child("init", method, i)
        if method == "uniform":
            out[i] = rng.uniform(-r, r, size=(k, d))
        else:
            out[i] = sphere_packing(k, d, rng, r=r)[0]
    return out
