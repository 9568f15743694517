"""DPLloyd (docs/methods.md A1) and the improved DPLloyd of the TOPS version (A2).

Privacy argument (both variants). Neighbouring relation: add/remove one tuple. In one
iteration a tuple falls in exactly one cluster, so it changes the vector of k counts by 1 in
L1 and the k·d coordinate sums by at most d·r in L1 (every |x_i| ≤ r; with per-feature radii
r_j, Σ r_j). Each iteration releases the counts with ``Lap(1/ε_count)`` and the sums with
``Lap(d·r/ε_sum)``; that is ``ε_count + ε_sum`` per iteration, and t iterations compose
sequentially to ε.

* A1 (``dplloyd``): ``ε/t`` per iteration split in proportion to sensitivity,
  ``ε_count = (ε/t)/(dr+1)``, ``ε_sum = (ε/t)·dr/(dr+1)``, so both scales equal
  ``b = t(dr+1)/ε``.
* A2 (``dplloyd_improved``): ``c = (4dρ²)^(1/3)``, ``ε_count = (ε/t)·c/(d+c)`` and each
  coordinate sum ``(ε/t)/(d+c)``, i.e. ``ε_sum = (ε/t)·d/(d+c)``; t from the ε_m rule.
  The split is returned as a named :class:`BudgetSplit`, never as a bare tuple (diffprivlib
  0.6.6 unpacks its tuple in the wrong order and swaps the two).

Post-processing (free): a cluster whose noisy count is ≤ ``min_count`` keeps its previous
centroid; centroids are clipped into ``[-r, r]^d``. ``min_count="noise"`` sets that floor
from the iteration's own noise scales (:func:`empty_threshold`): a centre whose noisy count
cannot be told from an empty cluster's, or whose mean would be mostly noise, holds still
instead of drifting to the box's edge (the estimator's default; the papers use 0).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..kernels import cluster_stats, cluster_stats_single
from ..privacy import LaplaceMechanism, Ledger, release
from ..privacy.budget import within
from ..privacy.ledger import book_exact_count
from ..privacy.mechanisms import snap_records
from . import checks
from .clipping import clip_to_ball, clipped_extent
from .shrinkage import fill_held, noise_variance, pooled_mean, shrink_to_pooled

#: ρ of the improved DPLloyd's budget split c = (4dρ²)^(1/3) (docs/methods.md A2)
RHO = 0.225


@dataclass(frozen=True)
class BudgetSplit:
    """Per-iteration budgets of DPLloyd. ``count`` for the k counts (sensitivity 1) and
    ``sum`` for the whole k×d sum matrix (sensitivity d·r); ``per_coordinate_sum = sum/d``."""

    count: float
    sum: float
    d: int

    @property
    def per_coordinate_sum(self) -> float:
        return self.sum / self.d

    @property
    def total(self) -> float:
        return self.count + self.sum


@dataclass(frozen=True)
class DPResult:
    """Output of one private run: centroids (k, d), its ledger, and diagnostics."""

    centroids: np.ndarray
    ledger: Ledger
    iterations: int
    info: Mapping[str, object]


def sensitivity_split(epsilon_iter: float, d: int, r=1.0) -> BudgetSplit:
    """A1: split ``ε_iter`` in proportion to the sensitivities (1 : d·r; Σ r_j for
    per-feature radii)."""
    if np.isscalar(r):  # the papers' expression, operation for operation
        return BudgetSplit(
            count=epsilon_iter / (d * r + 1), sum=epsilon_iter * d * r / (d * r + 1), d=d
        )
    L = checks.extent(d, r)
    return BudgetSplit(count=epsilon_iter / (L + 1), sum=epsilon_iter * L / (L + 1), d=d)


def empty_threshold(budget: BudgetSplit, r=1.0, spread: float = 0.5, extent=None) -> float:
    """The noisy count below which a centre holds still: the larger of three count-noise
    scales (an empty cluster's noisy count exceeds it with probability e^-3/2 < 2.5%) and
    the count at which the mean's per-coordinate noise, sqrt(2)·(L/ε_sum)/count with
    L = ``extent`` (default :func:`~.checks.extent`), is ``spread`` times the box's
    root-mean-square radius (r itself for one radius)."""
    L = checks.extent(budget.d, r) if extent is None else extent
    sum_scale = L / budget.sum
    rms = r if np.isscalar(r) else float(np.sqrt(np.mean(np.square(r))))
    return max(3.0 / budget.count, math.sqrt(2.0) * sum_scale / (spread * rms))


def improved_ratio(d: int, rho: float = RHO) -> float:
    """A2: ``c = (4 d ρ²)^(1/3)``, the optimal count : per-coordinate-sum budget ratio."""
    return (4.0 * d * rho**2) ** (1.0 / 3.0)


def improved_split(epsilon_iter: float, d: int, rho: float = RHO) -> BudgetSplit:
    """A2: ``ε_count = ε_iter·c/(d+c)``; each coordinate sum gets ``ε_iter/(d+c)``."""
    c = improved_ratio(d, rho)
    return BudgetSplit(count=epsilon_iter * c / (d + c), sum=epsilon_iter * d / (d + c), d=d)


def improved_iterations(
    epsilon: float, N: int, k: int, d: int, rho: float = RHO, t_min: int = 2, t_max: int = 7
) -> int:
    """A2: ``ε_m = sqrt(500 k³/N² (d+c)³)``; ``t = int(max(min(ε/ε_m, t_max), t_min))``."""
    c = improved_ratio(d, rho)
    eps_m = math.sqrt(500.0 * k**3 / N**2 * (d + c) ** 3)
    return int(max(min(epsilon / eps_m, t_max), t_min))


#: the estimator's improved DPLloyd makes one pass with all of ε, instead of A2's t ≥ 2,
#: where an average cluster N/k is below this many times a single pass's noise floor
#: (:func:`pass_margin`); measured on the utility battery (docs/utility.md)
SINGLE_PASS = 10.0


def pass_margin(
    N: int, k: int, d: int, epsilon_iter: float, r=1.0, rho: float = RHO, extent=None
) -> float:
    """N/k over :func:`empty_threshold` of an improved-DPLloyd pass with ``epsilon_iter``:
    how many times larger an average cluster is than the count at which its mean's noise
    is half the box's radius (``extent``: the sums' sensitivity, default Σ r_j)."""
    return (N / k) / empty_threshold(improved_split(epsilon_iter, d, rho), r, extent=extent)


def estimator_iterations(
    epsilon: float, N: int, k: int, d: int, r=1.0, rho: float = RHO, extent=None
) -> int:
    """The estimator's t for improved DPLloyd: 1 where :func:`pass_margin` of one pass with
    all of ε is below :data:`SINGLE_PASS` (the clusters are too weak to pay for a second
    noisy pass: on the battery's 7- to 34-D sets that is 1.1 to 1.8 times better), else
    A2's ε_m rule (:func:`improved_iterations`)."""
    if pass_margin(N, k, d, epsilon, r, rho, extent) < SINGLE_PASS:
        return 1
    return improved_iterations(epsilon, N, k, d, rho)


def distinct_cluster_stats(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~dpcluster.kernels.cluster_stats` of C (R, k, d), computed once per distinct
    centroid set and shared by the runs that hold it.

    Runs from the same initial set share their first iteration's exact statistics (Figure 1:
    3,000 runs, 30 distinct sets), and the hybrid's DPLloyd steps all start from one EUGkM
    output. The numbers are bit-identical to computing every run: each run is its own lane
    of the kernel, and no lane affects another. Returns counts (R, k), sums (R, k, d).
    """
    R = C.shape[0]
    distinct, which = np.unique(C.reshape(R, -1), axis=0, return_inverse=True)
    if len(distinct) == R:
        return cluster_stats(X, C)
    counts, sums = cluster_stats(X, distinct.reshape(-1, *C.shape[1:]))
    which = which.reshape(-1)
    return counts[which], sums[which]


def single_set_stats(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~dpcluster.kernels.cluster_stats_single` for C (1, k, d): threads over the
    points, for single fits on many records. Returns counts (1, k), sums (1, k, d)."""
    counts, sums = cluster_stats_single(X, C[0])
    return counts[None], sums[None]


def _as_given(data):
    return data


def _clipped_on_lattice(Z: np.ndarray, radius: float) -> np.ndarray:
    """Z clipped to the ball, then truncated onto the record lattice (the norm only
    shrinks), so the clipped records' sums stay exact (:func:`~dpcluster.privacy.
    mechanisms.snap_records`)."""
    return snap_records(clip_to_ball(Z, radius))


def dplloyd_batch(
    X: np.ndarray,
    inits: np.ndarray,
    epsilon: float,
    noise_streams: Sequence[Mapping[str, np.random.Generator]] | Mapping[str, np.random.Generator],
    iterations: int = 5,
    split: str = "sensitivity",
    rho: float = RHO,
    min_count: float | str = 0.0,
    r=1.0,
    stats=None,
    clip_radius=None,
    zcdp: float | None = None,
    delta: float = 0.0,
    shrink: bool = False,
) -> tuple[np.ndarray, Ledger]:
    """Run R independent DPLloyd runs in one pass over the data per iteration.

    X              (N, d) data in [-r, r]^d; ``r`` may be per-feature radii (d,), the
                   box ∏ [-r_j, r_j]: the sums' sensitivity is then Σ r_j.
    inits          (R, k, d) initial centroids, one set per run.
    epsilon        total budget ε of *each* run.
    noise_streams  R mappings ``{"count": Generator, "sum": Generator}``: run ρ's noise for
                   iteration i is block i of its own stream for that mechanism. One mapping
                   instead draws every run's noise from the same two streams in one call
                   (the audit's many trials).
    iterations     t.  split: ``"sensitivity"`` (A1) or ``"improved"`` (A2, uses ``rho``).
    min_count      a centre whose noisy count is ≤ this holds; ``"noise"``:
                   :func:`empty_threshold` of the iteration's budget.
    clip_radius    clip every record to the ball of this radius first
                   (:func:`~.clipping.clip_to_ball`); the sums' sensitivity is then
                   :func:`~.clipping.clipped_extent` instead of Σ r_j. The radius must be
                   public or released (docs/methods.md M4).
    stats          ``stats(X, C (R, k, d)) -> (counts (R, k), sums (R, k, d))``; default
                   :func:`distinct_cluster_stats` in the first iteration and
                   :func:`~dpcluster.kernels.cluster_stats` after it (runs in SIMD
                   lanes). :func:`dplloyd` passes the point-parallel single-set kernel.
    zcdp, delta    Gaussian noise instead of Laplace (docs/privacy.md, "(ε, δ)"): the run
                   spends ``zcdp`` ρ in zCDP, ρ/t per iteration split count : sums as
                   :func:`gaussian_split`, with L2 sensitivities 1 and the records' largest
                   L2 norm; the ledger converts the group at ``delta``. ``epsilon`` and
                   ``split`` are then unused.
    shrink         the last iteration's centres are shrunk toward their pooled mean by
                   :func:`~.shrinkage.shrink_to_pooled` (post-processing; off in the papers).
    Returns (centroids (R, k, d), the ledger of one run; every run spends identically).
    """

    def stats_at(it: int):
        # runs share centroid sets before the first noise (one initial set for many runs,
        # or the hybrid's one EUGkM output); after it, looking for shared sets costs more
        # than it saves (the numbers are the same either way)
        if stats:
            return stats
        return distinct_cluster_stats if it == 0 else cluster_stats

    X = checks.records(X)
    C = np.array(checks.centroid_sets(inits, X.shape[1]), dtype=np.float64, copy=True)
    if C.ndim != 3:
        raise ValueError(f"inits must be (R, k, d), got shape {C.shape}")
    R, k, d = C.shape
    first = None  # the first iteration's (counts, sums), when the input check gives them
    if stats is single_set_stats and R == 1 and clip_radius is None:
        # one pass over the records both checks them and gives the first statistics
        # (the initial centroids are public); bad data are refused before anything is booked
        X, counts, sums = checks.points_and_stats(X, C[0], r)
        first = counts[None], sums[None]
    else:
        X = checks.points(X, r)
    extent, prepared = checks.extent(d, r), _as_given  # prepared: what the queries read
    if clip_radius is not None:
        extent = clipped_extent(d, r, clip_radius)
        prepared = functools.partial(_clipped_on_lattice, radius=clip_radius)
        X = prepared(X)
    shared = isinstance(noise_streams, Mapping)
    if not shared and len(noise_streams) != R:
        raise ValueError(f"need one noise-stream mapping per run: {len(noise_streams)} != {R}")
    if zcdp is not None:
        count_mech, sum_mech, floor = gaussian_mechanisms(
            zcdp, delta, iterations, d, r, clip_radius
        )
        min_count = floor if min_count == "noise" else min_count
        ledger = Ledger(delta=delta)
    else:
        count_mech, sum_mech, min_count = _laplace_mechanisms(
            epsilon, iterations, split, d, r, rho, extent, min_count
        )
        ledger = Ledger()
    return _iterate(
        X,
        C,
        iterations,
        count_mech,
        sum_mech,
        noise_streams,
        min_count,
        r,
        stats_at,
        first,
        prepared,
        ledger,
        shrink,
    )


def _laplace_mechanisms(epsilon, iterations, split, d, r, rho, extent, min_count):
    """(count mechanism, sum mechanism, hold floor) of a Laplace DPLloyd: ε/t per
    iteration split by ``split``, t rounds booking at most ε exactly."""
    eps_iter = epsilon / iterations
    if split == "sensitivity":
        budget = sensitivity_split(eps_iter, d, r)
    elif split == "improved":
        budget = improved_split(eps_iter, d, rho)
    else:
        raise ValueError(f"split must be 'sensitivity' or 'improved', got {split!r}")
    count_share, sum_share = within(epsilon, [budget.count, budget.sum], iterations)
    budget = BudgetSplit(count=count_share, sum=sum_share, d=d)
    if min_count == "noise":
        min_count = empty_threshold(budget, r, extent=extent)
    count_mech = LaplaceMechanism(budget.count, sensitivity=1.0)
    sum_mech = LaplaceMechanism(budget.sum, sensitivity=extent, coordinates=d)
    return count_mech, sum_mech, min_count


#: the Gaussian DPLloyd's count : sum ρ ratio is this over √d: the split that minimises a
#: centre's noise (d σ_s² + ||o||² σ_c²)/n² when a centre's norm ||o|| is about half the
#: records' largest L2 norm (the Gaussian analogue of A2's c; docs/privacy.md)
GAUSS_COUNT_RATIO = 0.5


def gaussian_split(rho_iter: float, d: int) -> tuple[float, float]:
    """(ρ_count, ρ_sums) of one Gaussian iteration, ρ_count/ρ_sums = 0.5/√d, exact sum
    at most ρ_iter."""
    q = GAUSS_COUNT_RATIO / math.sqrt(d)
    count, sums = within(rho_iter, [rho_iter * q / (1 + q), rho_iter / (1 + q)])
    return count, sums


def gaussian_mechanisms(zcdp: float, delta: float, iterations: int, d: int, r, clip_radius=None):
    """(count mechanism, sum mechanism, hold floor) of a Gaussian DPLloyd spending ``zcdp``
    over ``iterations``: L2 sensitivity 1 for the counts and the records' largest L2 norm
    (min(R, ||r||₂) when clipped to a ball of radius R) for the sums. A centre holds where
    its noisy count is below three count σ's or where its mean's per-coordinate noise
    would exceed half the box's root-mean-square radius."""
    from ..privacy.gaussian import GaussianMechanism

    rho_iter = within(zcdp, [zcdp / iterations], iterations)[0]
    rho_count, rho_sums = gaussian_split(rho_iter, d)
    l2 = checks.l2_extent(d, r)
    if clip_radius is not None:
        l2 = min(l2, float(clip_radius))
    count_mech = GaussianMechanism(rho_count, 1.0, 1, delta)
    sum_mech = GaussianMechanism(rho_sums, l2, d, delta)
    rms = r if np.isscalar(r) else float(np.sqrt(np.mean(np.square(r))))
    floor = max(3.0 * count_mech.sigma, sum_mech.sigma / (0.5 * rms))
    return count_mech, sum_mech, floor


def _iterate(
    X,
    C,
    iterations,
    count_mech,
    sum_mech,
    noise_streams,
    min_count,
    r,
    stats_at,
    first,
    prepared,
    ledger,
    shrink=False,
):
    """The t noisy Lloyd iterations of :func:`dplloyd_batch` with the given mechanisms."""
    R, k, d = C.shape
    shared = isinstance(noise_streams, Mapping)
    if shared:
        noise_count = count_mech.noise(noise_streams["count"], (R, iterations, k))
        noise_sum = sum_mech.noise(noise_streams["sum"], (R, iterations, k, d))
    else:
        noise_count = np.stack(
            [count_mech.noise(s["count"], (iterations, k)) for s in noise_streams]
        )
        noise_sum = np.stack([sum_mech.noise(s["sum"], (iterations, k, d)) for s in noise_streams])
    for it in range(iterations):
        stats_it = stats_at(it)
        counts, sums = first if it == 0 and first is not None else stats_it(X, C)
        ledger.record(count_mech, "cluster counts", round=it)
        ledger.record(sum_mech, "cluster coordinate sums", round=it)
        noisy_c = count_mech.add(counts, noise_count[:, it])
        noisy_s = sum_mech.add(sums, noise_sum[:, it])
        state = C  # the public centroids this iteration's queries are asked at
        noisy_c = release(
            count_mech,
            "cluster counts",
            noisy_c,
            lambda data, C=state, stats=stats_it: stats(prepared(data), C)[0],
            batch=True,
        )
        noisy_s = release(
            sum_mech,
            "cluster coordinate sums",
            noisy_s,
            lambda data, C=state, stats=stats_it: stats(prepared(data), C)[1],
            batch=True,
        )
        ok = noisy_c > min_count
        if shrink and it == iterations - 1:  # the last pass's centres, shrunk
            var_s, var_c = noise_variance(sum_mech), noise_variance(count_mech)
            pooled = pooled_mean(noisy_s, noisy_c, var_s, var_c)
            means = shrink_to_pooled(noisy_s, noisy_c, ok, var_s, var_c, pooled)
            C = fill_held(C, np.clip(means, -r, r), np.clip(pooled, -r, r))
        else:
            means = np.clip(noisy_s / np.where(ok, noisy_c, 1.0)[..., None], -r, r)
            C = np.where(ok[..., None], means, C)
    return C, ledger


def dplloyd(
    X: np.ndarray,
    k: int,
    epsilon: float,
    init: np.ndarray,
    rng: np.random.Generator,
    iterations: int = 5,
    min_count: float | str = 0.0,
    r=1.0,
    zcdp: float | None = None,
    delta: float = 0.0,
    clip_radius=None,
) -> DPResult:
    """DPLloyd (A1) from one initial set ``init`` (k, d). Noise comes from ``rng``: one child
    stream for the counts and one for the sums (``rng.spawn(2)``). ``zcdp``, ``delta``,
    ``clip_radius``: see :func:`dplloyd_batch`."""
    init = np.asarray(init, dtype=np.float64).reshape(k, -1)
    count_rng, sum_rng = rng.spawn(2)
    C, ledger = dplloyd_batch(
        X,
        init[None],
        epsilon,
        [{"count": count_rng, "sum": sum_rng}],
        iterations=iterations,
        min_count=min_count,
        r=r,
        stats=single_set_stats,
        zcdp=zcdp,
        delta=delta,
        clip_radius=clip_radius,
    )
    return DPResult(C[0], ledger, iterations, {"split": "sensitivity"})


def dplloyd_improved(
    X: np.ndarray,
    k: int,
    epsilon: float,
    init: np.ndarray,
    rng: np.random.Generator,
    rho: float = RHO,
    min_count: float | str = 0.0,
    r=1.0,
    iterations: int = 0,
    clip_radius=None,
    n: float | None = None,
    zcdp: float | None = None,
    delta: float = 0.0,
    shrink: bool = False,
) -> DPResult:
    """Improved DPLloyd (A2) from ``init`` (k, d; use a sphere-packing set for the paper's
    variant): count:sum split ``(4dρ²)^(1/3) : 1`` per coordinate, t = ``iterations``, or
    from the ε_m rule when it is 0: on the record count ``n`` (public, or released before)
    or, when None, on the exact N as the paper does, which is booked as an exact read
    (:func:`~dpcluster.privacy.ledger.book_exact_count`). ``clip_radius``: see
    :func:`dplloyd_batch`; so is ``shrink``."""
    init = np.asarray(init, dtype=np.float64).reshape(k, -1)
    N, d = checks.records(X).shape  # the values are checked by dplloyd_batch
    exact_read = iterations <= 0 and n is None
    t = (
        iterations
        if iterations > 0
        else improved_iterations(epsilon, N if n is None else n, k, d, rho)
    )
    count_rng, sum_rng = rng.spawn(2)
    C, ledger = dplloyd_batch(
        X,
        init[None],
        epsilon,
        [{"count": count_rng, "sum": sum_rng}],
        iterations=t,
        split="improved",
        rho=rho,
        min_count=min_count,
        r=r,
        stats=single_set_stats,
        clip_radius=clip_radius,
        zcdp=zcdp,
        delta=delta,
        shrink=shrink,
    )
    if exact_read:
        book_exact_count(ledger, "A2's iteration count t")
    return DPResult(C[0], ledger, t, {"split": "improved", "c": improved_ratio(d, rho)})


def gaussian_budget(epsilon: float, delta: float, before: tuple = ()) -> dict:
    """The keyword arguments that make a DPLloyd spend (ε, δ) with Gaussian noise: the
    largest zCDP ρ whose Gaussian releases are (ε, δ)-DP, by their privacy-loss
    distribution or the zCDP conversion, whichever allows more (docs/privacy.md); {} when
    δ = 0 (Laplace). ``before``: the ε's of pure releases the same fit booked first, out
    of a total of ε + Σ before; the Gaussian group then gets the largest ρ whose PLD
    composition with them stays within that total (never less than ε alone allows)."""
    if not delta:
        return {}
    from ..privacy import pld
    from ..privacy.gaussian import zcdp_budget

    rho = max(zcdp_budget(epsilon, delta), pld.largest_rho((), epsilon, delta))
    if before:
        total = math.fsum([epsilon, *before])
        rho = max(rho, pld.largest_rho(tuple(before), total, delta))
    return {"zcdp": rho, "delta": delta}
