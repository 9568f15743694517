"""Other libraries' private k-means, run as shipped, with the ε they really spend.

diffprivlib 0.6.6 (IBM; ``pip install 'dpcluster[compare]'``) ``models.KMeans`` is
Su et al.'s improved DPLloyd (docs/methods.md A2) as its documentation says, with three
differences from what it claims, each read from its source (``diffprivlib/models/k_means.py``):

1. **The split is swapped.** ``_split_epsilon`` returns (ε_sum_j, ε_count) in the order
   the caller unpacks as (ε_count, ε_sum_j): each of the T iterations puts u = ε/(T(d+c))
   on the count and c·u on each of the d coordinate sums, c = (4dρ²)^(1/3), ρ = 0.225,
   where A2 puts c·u and u. By basic composition its noise spends ε(1 + d·c)/(d + c)
   (1.32ε at d = 13, 1.75ε at d = 30; less than ε below d = 5).
2. **T reads the exact N.** ``_calc_iters`` sets T = ⌊max(min(ε/ε_m, 7), 2)⌋ with
   ε_m ∝ k^1.5/N: under add/remove one record N is not public, and at each switch of T
   the output distribution of two neighbours differs by a whole iteration.
3. **An empty cluster is skipped exactly.** ``_update_centers`` draws no noise for a
   cluster no record is nearest to and keeps its centre, so whether it moved depends on an
   exact count: a centre that never moved is its data-independent start, which lies at
   least the packing margin inside the box, where a moved one need not.

So nothing finite is proven under add/remove one record: the ledger books the noise
releases at what they spend (the claim beside each: A2's split) and the two exact reads
(claimed 0), and its total is ∞. ``noise_epsilon`` in a fit's ``info`` is what the noise
alone spends, the figure that would hold were N public and no cluster ever empty.
Neighbouring relation of every entry: add/remove one record, records in the public box
∏ [-r_j, r_j] (diffprivlib's ``bounds``); count sensitivity 1, coordinate j's sum
sensitivity 2·r_j (its ``LaplaceBoundedDomain``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..privacy import ExactRelease, Ledger
from .dplloyd import DPResult

#: the diffprivlib release whose KMeans source the ledger above describes
DIFFPRIVLIB_VERSION = "0.6.6"
#: diffprivlib's coordinate normalisation ρ (``_split_epsilon``'s default)
RHO = 0.225
INSTALL_HINT = "pip install 'dpcluster[compare]' (diffprivlib 0.6.6)"


@dataclass(frozen=True)
class ForeignRelease:
    """A noisy release made by another library's code: what it provably spends
    (``epsilon``), its sensitivity and noise scale, and what that library claims for it.
    The ledger books it like any mechanism; dpcluster did not draw its noise."""

    what: str
    epsilon: float
    sensitivity: float
    scale: float
    claimed_epsilon: float
    claim: str
    delta: float = 0.0
    claimed_delta: float = 0.0


def diffprivlib_problem() -> str | None:
    """Why diffprivlib's KMeans cannot run here (not installed, another version), or None."""
    try:
        load_diffprivlib_kmeans()
    except ImportError as exc:
        return str(exc)
    return None


def load_diffprivlib_kmeans():
    """diffprivlib's ``models.KMeans`` class; ImportError (with the install line) when it is
    missing or not 0.6.6.

    diffprivlib 0.6.6 imports three names from ``sklearn.tree._tree`` that scikit-learn 1.7
    removed; its KMeans uses none of them, so they are supplied before the import."""
    import sklearn.tree._tree as tree

    for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32), ("NODE_DTYPE", None)):
        if not hasattr(tree, name):
            setattr(tree, name, value)
    try:
        import diffprivlib
        from diffprivlib.models import KMeans
    except ImportError:
        raise ImportError(f"diffprivlib is not installed: {INSTALL_HINT}") from None
    if diffprivlib.__version__ != DIFFPRIVLIB_VERSION:
        raise ImportError(
            f"diffprivlib {diffprivlib.__version__} is installed; dpcluster's ledger of its "
            f"KMeans describes {DIFFPRIVLIB_VERSION}: {INSTALL_HINT}"
        )
    return KMeans


def diffprivlib_split(epsilon: float, iterations: int, d: int) -> tuple[float, float]:
    """(ε_count, ε_sum per coordinate) of one of diffprivlib 0.6.6's iterations, as its
    code spends them: u and c·u, u = ε/(T(d + c)) (arrays broadcast)."""
    c = np.cbrt(4 * np.asarray(d) * RHO**2)
    unit = epsilon / iterations / (d + c)
    return unit, c * unit


def fit_diffprivlib(Z, k, epsilon, rng, r=1.0):
    """diffprivlib 0.6.6's KMeans on records Z (N, d) in the public box ∏ [-r_j, r_j]
    (its ``bounds``), seeded from ``rng``, with a ledger of what it spends (module
    docstring). ``info``: ``noise_epsilon`` (its noise alone), ``iterations`` T."""
    KMeans = load_diffprivlib_kmeans()
    from diffprivlib import BudgetAccountant

    Z = np.asarray(Z, dtype=np.float64)
    d = Z.shape[1]
    radius = np.broadcast_to(np.asarray(r, dtype=np.float64), (d,))
    # a constant feature (radius 0) gets diffprivlib's smallest allowed width
    half = np.maximum(radius, 1e-5)
    seed = int(rng.integers(0, 2**32 - 1))
    model = KMeans(
        n_clusters=int(k),
        epsilon=float(epsilon),
        bounds=(-half, half),
        random_state=np.random.RandomState(seed),
        accountant=BudgetAccountant(),  # its own, not diffprivlib's process-wide default
    ).fit(Z)
    T = int(model.n_iter_)
    ledger = Ledger()
    ledger.record(
        ExactRelease(
            "diffprivlib's iteration count T, from the exact record count N",
            claim="diffprivlib treats N as public",
        ),
        "iteration count T (reads the exact N)",
    )
    ledger.record(
        ExactRelease(
            "which clusters are empty: diffprivlib skips their update without noise",
            claim="diffprivlib does not count it",
        ),
        "empty clusters (read exactly)",
    )
    count_eps, sum_eps = (float(e) for e in diffprivlib_split(epsilon, T, d))
    claim = "diffprivlib's documented split (Su et al. A2): the count gets c·u, each sum u"
    for t in range(T):
        ledger.record(
            ForeignRelease(
                "cluster counts (GeometricFolded)", count_eps, 1.0, 1.0 / count_eps, sum_eps, claim
            ),
            f"diffprivlib iteration {t + 1}: cluster counts",
            round=t + 1,
        )
        ledger.record(
            ForeignRelease(
                "cluster coordinate sums (LaplaceBoundedDomain)",
                d * sum_eps,
                float(np.sum(2 * half)),
                float(np.max(2 * half)) / sum_eps,
                d * count_eps,
                claim,
            ),
            f"diffprivlib iteration {t + 1}: cluster coordinate sums ({d} coordinates)",
            round=t + 1,
        )
    noise = T * (count_eps + d * sum_eps)
    centres = np.clip(np.asarray(model.cluster_centers_, dtype=np.float64), -half, half)
    return DPResult(centres, ledger, T, {"noise_epsilon": noise, "iterations": T})
