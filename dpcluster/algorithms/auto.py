"""``auto``'s rule: which method to run, from a record count and public quantities
(docs/utility.md).

Inputs are a count (the plan's noisy Ñ, never the exact N: :mod:`.plan`, docs/privacy.md),
d, k, ε and the public box's per-feature radii; the rule reads no record, so given Ñ it
costs nothing more. It follows Paper A's MSE analysis (docs/methods.md A6) with the guards
the utility benchmark showed it needs:

1. **Grid** (``hybrid``, which takes EUGkM alone when its own Ineq. 15 says so) when
   the EUGkM grid has at least two cells per axis and no more than EUGkM builds
   (``MAX_CELLS``), and d ≤ ``GRID_MAX_D`` or the grid holds at least
   :data:`GRID_MIN_DENSITY` records per cell (low ε in 4 to 8 dimensions). A6 compares
   centroid errors (Eqs. 7, 9–10) as if DPLloyd started near the optimum; from one
   data-independent start it often does not (two centres in one of four clear blobs),
   while the hybrid's Lloyd runs on the grid from 30 starts keep the best, so the grid
   wins wherever it can be built in 1 to 3 dimensions (docs/utility.md). Above three
   dimensions the grid's cells mostly outnumber the records (the battery's 8- to 60-D
   sets have 0.02 to 0.3 expected records per cell at ε = 1).
2. **PE-Lloyd** (:mod:`.pe_lloyd`) where Ñ·ε/√d reaches :data:`PE_MIN_SIGNAL`
   (:data:`PE_MIN_SIGNAL_PURE` with δ = 0): a private evolution of candidate centres finds
   the clusters that a single Lloyd start misses, and Lloyd steps on clipped
   displacements place them; below it the votes are mostly noise (docs/utility.md).
   Where it applies it also covers the shapes where ``auto`` took a private partition
   tree (LSH-splits or DPM, δ > 0 and k ≥ 8 with enough records per leaf): a leaf's
   low-noise size 10√d·σ per half cluster puts N·ε/√d above the floor there.
3. **Improved DPLloyd** otherwise (sphere-packing start, empty centres held, and one pass
   with all of ε where N/k is below ``SINGLE_PASS`` times a single pass's noise floor:
   :func:`~.dplloyd.estimator_iterations`; :mod:`.methods`). Above ``GRID_MAX_D``
   dimensions it first spends a share of ε on a clipping radius (:func:`clip_share`,
   docs/methods.md M4). Even where an average cluster is below the noise floor of a
   DPLloyd centre (:func:`noise_margin` < 1) its k spread centres cost less than k copies
   of the private mean on every real set measured at ε = 0.05 to 2, so ``auto`` never
   takes the mean (``scripts/calibrate_auto.py --rule mean``, docs/utility.md).
"""

from __future__ import annotations

import math

from ..analysis import mse
from .clipping import worth_clipping
from .dplloyd import SINGLE_PASS, estimator_iterations, improved_iterations, pass_margin
from .eugkm import MAX_CELLS, cells_per_axis

#: the largest d for which ``auto`` considers a grid synopsis at any density
GRID_MAX_D = 3
#: above :data:`GRID_MAX_D` dimensions ``auto`` still takes the grid where it holds at
#: least this many records per cell (Ñ/m^d, m ≥ 2): calibrated on one half of the
#: generated battery and reported on the other, both ways round (docs/utility.md)
GRID_MIN_DENSITY = 10.0
#: the smallest Ñ·ε/√d at which ``auto`` runs PE-Lloyd, with δ > 0 (Gaussian votes) and
#: with δ = 0 (Laplace votes); the first calibrated on half of the shipped battery's d > 3
#: sets, the second on half of the three batteries' cells (shipped, generated, blob grid)
#: and reported on the other half (docs/utility.md)
PE_MIN_SIGNAL, PE_MIN_SIGNAL_PURE = 250.0, 350.0
#: the shares of ε ``auto``'s improved DPLloyd may spend on a clipping radius above
#: ``GRID_MAX_D`` dimensions, smallest first (docs/methods.md M4; measured in
#: docs/utility.md)
CLIP_SHARES = (0.1, 0.2)


def clip_share(N: int, d: int, epsilon: float) -> float:
    """The ``clip`` of ``auto``'s improved DPLloyd above :data:`GRID_MAX_D` dimensions:
    the first of :data:`CLIP_SHARES` with which N·ε_R picks a radius reliably
    (:func:`~.clipping.worth_clipping`), else 0; 0 in 1 to 3 dimensions, where √d·R
    saves little. A public decision from N, d and ε."""
    if d <= GRID_MAX_D:
        return 0.0
    return next((share for share in CLIP_SHARES if worth_clipping(N, share * epsilon)), 0.0)


def noise_margin(N: int, k: int, d: int, epsilon: float, r=1.0) -> float:
    """:func:`~.dplloyd.pass_margin` of A2's iteration budget ε/t."""
    return pass_margin(N, k, d, epsilon / improved_iterations(epsilon, N, k, d), r)


def pe_signal(N: float, d: int, epsilon: float) -> float:
    """Ñ·ε/√d: how clearly PE-Lloyd's vote histograms and clipped sums stand above their
    noise (the votes per cluster grow as Ñ, their noise shrinks as ε, and a cluster's
    clipped displacement sum carries noise in d coordinates)."""
    return N * epsilon / d**0.5


def choose(
    N: int, k: int, d: int, epsilon: float, r=1.0, delta: float = 0.0, ball: bool = False
) -> tuple[str, str]:
    """(method, reason) for N records, d features, k clusters, budget (ε, δ), radii r and
    whether the public domain is a ball."""
    m = cells_per_axis(N, epsilon, d)
    # records per cell Ñ/m^d, in logs: m^d itself overflows a double at huge ε and d
    dense = m >= 2 and math.log(N) - d * math.log(m) >= math.log(GRID_MIN_DENSITY)
    if (d <= GRID_MAX_D or dense) and m >= 2 and float(m) ** d <= MAX_CELLS:
        M = float(m) ** d
        grid = mse.eugkm_variance(N, k, d, epsilon, M=M) + mse.eugkm_bias_sq(M, d)
        lloyd = mse.dplloyd_mse(N, k, d, epsilon)
        where = f"d = {d} <= {GRID_MAX_D}" if d <= GRID_MAX_D else f"{N / M:.3g} records per cell"
        return "hybrid", (
            f"{where}, grid {m}^{d} (A6 predicts centroid MSE {grid:.3g} "
            f"for the grid and {lloyd:.3g} for DPLloyd from a good start; the grid's 30 "
            "starts find one)"
        )
    signal = pe_signal(N, d, epsilon)
    floor = PE_MIN_SIGNAL if delta > 0 else PE_MIN_SIGNAL_PURE
    if signal >= floor:
        return "pe_lloyd", (
            f"N·ε/√d = {signal:.3g} >= {floor:g}: a private evolution finds the clusters, "
            "clipped Lloyd steps place the centres"
            + ("" if d <= GRID_MAX_D else f"; d = {d} > {GRID_MAX_D} rules out a grid")
        )
    margin = noise_margin(N, k, d, epsilon, r)
    clip = clip_share(N, d, epsilon)
    if clip:  # the number of passes then follows the released radius's noise floor
        passes = f"; records clipped to a private radius ({clip:.0%} of ε), passes set from it"
    elif estimator_iterations(epsilon, N, k, d, r) == 1:
        passes = f"; one pass with all of ε (below {SINGLE_PASS:g} times its floor)"
    else:
        passes = ""
    return "dplloyd_improved", (
        f"N/k is {margin:.2f} times DPLloyd's noise floor"
        + ("" if d <= GRID_MAX_D else f"; d = {d} > {GRID_MAX_D} rules out a grid")
        + passes
    )
