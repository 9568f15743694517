"""One fit per central k-means method, on records already in the working cube, with the
public box they live in: what the registry's entries declare as their ``fit``, so what
:class:`~dpcluster.DPKMeans` runs by name, and what ``auto`` runs.

The records lie in the centred public box ∏ [-r_j, r_j] inside [-1, 1]^d. Starts are drawn
inside it and are data-independent, so they cost nothing. DPLloyd, LSH-splits and the
private mean take the per-feature radii r_j: their coordinate sums then have L1
sensitivity Σ r_j instead of d, which is what keeps narrow features from getting the
widest feature's noise under common scaling.
"""

from __future__ import annotations

import numpy as np

from ..data import sphere_packing
from ..privacy import Ledger
from ..privacy.budget import split
from . import checks
from .capped import ALPHA, capped_dplloyd, iterations_for
from .clipping import clipped_extent, private_radius, worth_clipping
from .dplloyd import (
    RHO,
    DPResult,
    dplloyd,
    dplloyd_improved,
    estimator_iterations,
    gaussian_budget,
    improved_iterations,
    improved_split,
)
from .dpm import LEVELS as DPM_LEVELS
from .dpm import dpm
from .eugkm import eugkm
from .gkm import gkm
from .hybrid import hybrid
from .lsh_gaussian import MAX_DEPTH as GAUSSIAN_DEPTH
from .lsh_gaussian import lsh_splits_gaussian
from .lsh_splits import lsh_splits
from .pe_lloyd import MUTATION_START as PE_LLOYD_MUTATION
from .pe_lloyd import POPULATION as PE_LLOYD_POPULATION
from .pe_lloyd import SEARCH_START_SHARE, pe_lloyd, searched, searched_start
from .pe_means import MAX_POPULATION as PE_MAX_POPULATION
from .pe_means import pe_means
from .pgkm import genetic_kmeans
from .plan import COUNT_SHARE, decide, plan
from .reference import private_mean

#: the share of ε on Ñ when δ > 0 (``auto``, PE-means): about one LSH tree level's, since
#: Ñ is then the tree's root count, and under Rényi composition a release costs ε², so the
#: 5 % of the pure rule would cost as much as the tree's 20 other levels together
GAUSSIAN_COUNT_SHARE = 0.01


def packed_start(k: int, box, rng: np.random.Generator) -> np.ndarray:
    """A sphere-packing start (docs/methods.md A0) drawn in [-1, 1]^d and mapped onto the
    box (lo, hi): (k, d)."""
    lo, hi = box
    P = sphere_packing(k, len(lo), rng)[0]
    return lo + (P + 1.0) / 2.0 * (hi - lo)


def radius(r, d: int) -> float | np.ndarray:
    """The records' radii: 1.0 when every feature spans [-1, 1] (the methods then take
    their one-radius path, the papers' arithmetic), else the (d,) per-feature radii."""
    r = np.broadcast_to(np.asarray(r, dtype=np.float64), (d,))
    return 1.0 if np.all(r == 1.0) else np.array(r)


def _box(r, d: int) -> tuple[np.ndarray, np.ndarray]:
    hi = np.broadcast_to(np.asarray(r, dtype=np.float64), (d,))
    return -hi, hi


def _lloyd_start(k: int, Z: np.ndarray, r, rng, init: str) -> np.ndarray:
    box = _box(r, Z.shape[1])
    if init == "sphere_packing":
        return packed_start(k, box, rng)
    return rng.uniform(box[0], box[1], size=(k, Z.shape[1]))


def fit_dplloyd(
    Z,
    k,
    epsilon,
    rng,
    r=1.0,
    init="sphere_packing",
    min_count="noise",
    delta=0.0,
    ball=None,
    **params,
):
    """A1 from a sphere-packing start (``init: uniform`` is the paper's), holding a centre
    whose noisy count is noise (``min_count: 0`` is the paper's). ``delta`` > 0: Gaussian
    noise spending (ε, δ) in zCDP; ``ball``: the records lie in the public ball of this
    radius (an L2-ball domain), which bounds the sums' sensitivity."""
    start = _lloyd_start(k, Z, r, rng, init)
    return dplloyd(
        Z,
        k,
        epsilon,
        start,
        rng,
        r=r,
        min_count=min_count,
        clip_radius=ball,
        **gaussian_budget(epsilon, delta),
        **params,
    )


def _planned(method, Z, k, epsilon, rng, r, params, n=None, count_share=COUNT_SHARE):
    """(the fit's :class:`~.plan.Plan`, its ledger so far). ``n``: a count the caller
    already released (``auto`` passes its Ñ on), decided from with all of ε; None: the
    plan releases Ñ from its own child of ``rng`` when a rule needs a size."""
    ledger = Ledger()
    if n is not None:
        return decide(method, max(1.0, float(n)), k, np.shape(Z)[1], epsilon, r, params), ledger
    count_rng = rng.spawn(1)[0]
    return plan(method, Z, k, epsilon, count_rng, ledger, r, params, count_share), ledger


def _joined(ledger: Ledger, res: DPResult, **info) -> DPResult:
    """``res`` with its ledger appended to the plan's ``ledger`` and ``info`` added."""
    return DPResult(res.centroids, ledger.extend(res.ledger), res.iterations, {**res.info, **info})


def fit_dplloyd_improved(
    Z,
    k,
    epsilon,
    rng,
    r=1.0,
    init="searched",
    min_count="noise",
    single_pass=True,
    iterations=0,
    clip=0.0,
    n=None,
    delta=0.0,
    ball=None,
    before=(),
    shrink=True,
    **params,
):
    """A2 with :func:`fit_dplloyd`'s start and hold, and one pass with all of ε where the
    clusters are weak (:func:`~.dplloyd.estimator_iterations`; ``single_pass: false``
    keeps A2's t rule). ``iterations`` > 0 fixes t. ``clip`` > 0 spends that share of ε on
    a private radius near the 90th percentile of the records' norms and clips the records
    to it (:mod:`.clipping`): the sums' sensitivity drops from Σ r_j to min(√d·R, Σ r_j),
    and DPLloyd gets the rest of ε. Where Ñ·clip·ε is too small to pick the radius
    reliably (:func:`~.clipping.worth_clipping`), nothing is clipped and DPLloyd gets all
    of ε. Every rule reads the plan's noisy Ñ (:mod:`.plan`), never N. ``delta`` > 0: the
    DPLloyd passes use Gaussian noise on what is left of (ε, δ); ``ball``: a public
    L2-ball domain of that radius (a private radius can only shrink it). ``before``: the
    ε's of pure releases booked for this fit outside it (``auto``'s Ñ), composed in when
    the Gaussian noise is calibrated. ``shrink``: the last pass's centres are shrunk
    toward their pooled mean (:mod:`.shrinkage`, post-processing)."""
    rho = params.get("rho", RHO)
    p, ledger = _planned(
        "dplloyd_improved", Z, k, epsilon, rng, r, {"iterations": iterations, "clip": clip}, n
    )
    epsilon, count = p.epsilon, p.count
    d = np.shape(Z)[1]
    if init == "searched" and count is not None and searched(count, d, epsilon):
        eps_start, epsilon = split(epsilon, SEARCH_START_SHARE)
        Z = checks.points(Z, r)
        start = searched_start(Z, k, eps_start, count, rng, ledger, r, ball)
    else:
        start = _lloyd_start(k, Z, r, rng, "sphere_packing" if init == "searched" else init)
    radius, extent, info = None, None, {}
    if clip > 0 and worth_clipping(count, clip * epsilon):
        Z = checks.points(Z, r)  # in the box before a radius is read from it
        eps_radius, epsilon = split(epsilon, clip)
        radius = private_radius(Z, eps_radius, rng, ledger, r)
        radius = radius if ball is None else min(radius, float(ball))
        extent, info = clipped_extent(d, r, radius), {"radius": radius}
    elif ball is not None:
        radius, extent = float(ball), clipped_extent(d, r, float(ball))
    if iterations == 0:  # the released radius is public: t may use it
        iterations = (
            estimator_iterations(epsilon, count, k, d, r, rho, extent)
            if single_pass
            else improved_iterations(epsilon, count, k, d, rho)
        )
    res = dplloyd_improved(
        Z,
        k,
        epsilon,
        start,
        rng,
        r=r,
        min_count=min_count,
        iterations=iterations,
        clip_radius=radius,
        shrink=shrink,
        **gaussian_budget(epsilon, delta, (*before, *(e.epsilon for e in ledger.entries))),
        **params,
    )
    return _joined(ledger, res, **info, **({"noisy_count": count} if count else {}))


def fit_dplloyd_capped(
    Z,
    k,
    epsilon,
    rng,
    r=1.0,
    iterations=0,
    alpha=ALPHA,
    min_count=0.0,
    delta=0.0,
    n=None,
    ball=None,
):
    """Capped DPLloyd (FastLloyd's radius-constrained step, :mod:`.capped`) from a
    sphere-packing start. ``iterations`` 0: the artefact's T rule on the plan's noisy Ñ.
    ``delta`` > 0: Gaussian noise spending what Ñ leaves of (ε, δ) in zCDP."""
    p, ledger = _planned("dplloyd_capped", Z, k, epsilon, rng, r, {"iterations": iterations}, n)
    d = np.shape(Z)[1]
    if iterations == 0:
        iterations = iterations_for(p.count, k, d, p.epsilon, delta, alpha)
    start = packed_start(k, _box(r, d), rng)
    res = capped_dplloyd(
        Z,
        k,
        p.epsilon,
        start,
        rng,
        iterations,
        r=r,
        alpha=alpha,
        min_count=min_count,
        **gaussian_budget(p.epsilon, delta, tuple(e.epsilon for e in ledger.entries)),
    )
    return _joined(ledger, res, **({"noisy_count": p.count} if p.count else {}))


def fit_eugkm(Z, k, epsilon, rng, r=1.0, init_sets=30, n=None, seeding="synopsis", **params):
    """A3 with its grid size M from the plan's noisy Ñ (:mod:`.plan`), Lloyd from
    ``init_sets`` sets uniform in the box (``seeding: given``, the paper's), half of them
    redrawn by k-means++ on the synopsis's clear cells (``synopsis``, unless fewer than k
    cells clear the noise; :func:`~dpcluster.algorithms.eugkm.synopsis_seeds`)."""
    p, ledger = _planned("eugkm", Z, k, epsilon, rng, r, params, n)
    box = _box(r, Z.shape[1])
    inits = rng.uniform(box[0], box[1], size=(init_sets, k, Z.shape[1]))
    res = eugkm(Z, k, p.epsilon, inits, rng, n=p.count, seeding=seeding, **params)
    return _joined(ledger, res, noisy_count=p.count)


def fit_hybrid(Z, k, epsilon, rng, r=1.0, init_sets=30, n=None, seeding="synopsis", **params):
    """A7 with its switch and grid from the plan's noisy Ñ (:mod:`.plan`), its EUGkM
    seeded as :func:`fit_eugkm`'s."""
    p, ledger = _planned("hybrid", Z, k, epsilon, rng, r, params, n)
    box = _box(r, Z.shape[1])
    inits = rng.uniform(box[0], box[1], size=(init_sets, k, Z.shape[1]))
    res = hybrid(Z, k, p.epsilon, inits, rng, n=p.count, seeding=seeding, **params)[0]
    return _joined(ledger, res, noisy_count=p.count)


def fit_gkm(Z, k, epsilon, rng, r=1.0, **params):
    """A4."""
    return gkm(Z, k, epsilon, rng, **params)


def fit_pgkm(Z, k, epsilon, rng, r=1.0, **params):
    """A5."""
    return genetic_kmeans(Z, k, rng, epsilon, **params)


def fit_lsh_splits(Z, k, epsilon, rng, r=1.0, ball=None, **params):
    """LSH-splits (docs/methods.md M1) with the box's radii, and a public L2 ball of radius
    ``ball`` when the records also lie in one (it bounds the sums' sensitivity)."""
    return lsh_splits(Z, k, epsilon, rng, r=r, ball=ball, **params)


def fit_lsh_splits_gaussian(
    Z,
    k,
    epsilon,
    rng,
    r=1.0,
    delta=0.0,
    ball=None,
    depth=GAUSSIAN_DEPTH,
    n_init=10,
    before=(),
    n=None,
):
    """LSH-splits as Google publishes it (:mod:`.lsh_gaussian`): (ε, δ) with Gaussian leaf
    sums, on the public ball ``ball`` (without one, the ball about the box's centre that
    holds the box, of radius √(Σ r_j²)). ``before``: pure ε's already booked that ε
    covers; ``n``: a noisy count among them (``auto``'s Ñ), the tree's root count."""
    if not delta > 0:
        raise ValueError(
            "lsh_splits_gaussian spends (epsilon, delta) with Gaussian noise: give delta > 0"
        )
    d = np.shape(Z)[1]
    domain = (
        float(ball)
        if ball is not None
        else float(
            np.sqrt(np.sum(np.square(np.broadcast_to(np.asarray(r, dtype=np.float64), (d,)))))
        )
    )
    return lsh_splits_gaussian(
        Z,
        k,
        epsilon,
        delta,
        rng,
        radius=domain,
        depth=depth,
        n_init=n_init,
        before=tuple(before),
        root=n,
    )


def fit_dpm(
    Z,
    k,
    epsilon,
    rng,
    r=1.0,
    delta=0.0,
    ball=None,
    levels=DPM_LEVELS,
    n_init=10,
    before=(),
    leaf_rule="published",
):
    """DPM (:mod:`.dpm`) in the box, reduced to k centres by weighted k-means on its
    leaves; Gaussian leaf sums with δ > 0, Laplace with δ = 0. ``ball``: the records also
    lie in that ball about the origin, which bounds the sums' sensitivity. ``leaf_rule``:
    :data:`~.dpm.LEAF_RULES`."""
    return dpm(
        Z,
        k,
        epsilon,
        delta,
        rng,
        r=r,
        levels=levels,
        n_init=n_init,
        ball=ball,
        before=tuple(before),
        leaf_rule=leaf_rule,
    )


def _counted(method, algorithm, Z, k, epsilon, rng, r, delta, n, before, **params):
    """``algorithm(Z, k, ε, δ, rng, Ñ, r=r, before=..., **params)`` after the plan's noisy
    Ñ (:data:`GAUSSIAN_COUNT_SHARE` of ε when δ > 0, :data:`~.plan.COUNT_SHARE` when
    δ = 0), or with ``n`` when the caller released one (its ε among ``before``): the
    algorithm calibrates to all of (ε, δ) with every pure ε booked so far composed in."""
    share = GAUSSIAN_COUNT_SHARE if delta else COUNT_SHARE
    p, ledger = _planned(method, Z, k, epsilon, rng, r, {}, n, count_share=share)
    before = tuple(before) + tuple(e.epsilon for e in ledger.entries)
    res = algorithm(Z, k, epsilon, delta, rng, p.count, r=r, before=before, **params)
    return _joined(ledger, res, noisy_count=p.count)


def fit_pe_means(
    Z,
    k,
    epsilon,
    rng,
    r=1.0,
    delta=0.0,
    ball=None,
    generations=0,
    max_population=PE_MAX_POPULATION,
    n_init=10,
    n=None,
    before=(),
):
    """PE-means (:mod:`.pe_means`): its population and threshold read the plan's noisy Ñ
    (released with :data:`GAUSSIAN_COUNT_SHARE` of ε when δ > 0, :data:`~.plan.COUNT_SHARE`
    when δ = 0), or ``n`` when the caller released one (its ε among ``before``); the vote
    histograms take what is left of (ε, δ): Gaussian with δ > 0, Laplace with δ = 0."""
    return _counted(
        "pe_means",
        pe_means,
        Z,
        k,
        epsilon,
        rng,
        r,
        delta,
        n,
        before,
        ball=ball,
        generations_=generations,
        max_population=max_population,
        n_init=n_init,
    )


def fit_pe_lloyd(
    Z,
    k,
    epsilon,
    rng,
    r=1.0,
    delta=0.0,
    ball=None,
    generations=0,
    population=PE_LLOYD_POPULATION,
    steps=0,
    n_init=10,
    n=None,
    before=(),
    shrink=True,
    mutation_start=PE_LLOYD_MUTATION,
):
    """``pe_lloyd`` (:mod:`.pe_lloyd`): the search's sizes read the plan's noisy Ñ (as
    :func:`fit_pe_means`'s), or ``n`` when the caller released one (its ε among
    ``before``); Gaussian votes and steps with δ > 0, Laplace with δ = 0. The keywords are
    :func:`~.pe_lloyd.pe_lloyd`'s, named here so the registry and ``method_params`` see
    them."""
    kw = dict(ball=ball, generations=generations, population=population, n_init=n_init)
    kw.update(steps=steps, shrink=shrink, mutation_start=mutation_start)
    return _counted("pe_lloyd", pe_lloyd, Z, k, epsilon, rng, r, delta, n, before, **kw)


def fit_private_mean(Z, k, epsilon, rng, r=1.0, n=None):
    """The private-mean reference (M2) with the box's radii: its count is the plan's Ñ,
    released with improved DPLloyd's count share c/(d + c) of ε, or ``n`` when given."""
    d = np.shape(Z)[1]
    share = improved_split(1.0, d).count
    p, ledger = _planned("private_mean", Z, k, epsilon, rng, r, {}, n, count_share=share)
    return _joined(ledger, private_mean(Z, k, p.epsilon, rng, r=r, count=p.count))


def fit_auto(Z, k, epsilon, rng, r=1.0, delta=0.0, ball=None):
    """``auto`` (:func:`auto`)."""
    return auto(Z, k, epsilon, rng, r, delta=delta, ball=ball)


#: what :func:`~dpcluster.algorithms.auto.choose` may pick, and the fit that runs it (the
#: registry, dpcluster/experiments/, maps every method name to its fit)
CHOSEN = {
    "hybrid": fit_hybrid,
    "private_mean": fit_private_mean,
    "dplloyd_improved": fit_dplloyd_improved,
    "pe_lloyd": fit_pe_lloyd,
}


def auto(X: np.ndarray, k: int, epsilon: float, rng, r=1.0, delta=0.0, ball=None) -> DPResult:
    """``auto`` (docs/utility.md): the plan (:mod:`.plan`) releases Ñ with
    :data:`~.plan.COUNT_SHARE` of ε, :func:`~dpcluster.algorithms.auto.choose` picks a
    method from Ñ, d, k, the rest of ε and the radii, and the method runs with its
    defaults, its own rules reading the same Ñ. ``info`` carries ``chosen``, ``reason``
    and ``noisy_count``; the ledger's ``choices`` records the choice. ``delta`` and
    ``ball`` reach the chosen method when it is improved DPLloyd (Gaussian noise, an
    L2-ball domain) or PE-Lloyd, which is calibrated to the whole (ε, δ) with Ñ's release
    composed in; the grid stays pure ε."""
    d = np.shape(X)[1]
    r = radius(r, d)
    share = GAUSSIAN_COUNT_SHARE if delta else COUNT_SHARE
    p, ledger = _planned(
        "auto",
        X,
        k,
        epsilon,
        rng,
        r,
        {"delta": delta, "ball": ball is not None},
        count_share=share,
    )
    before = tuple(e.epsilon for e in ledger.entries)
    if p.method == "pe_lloyd":  # calibrated to all of (ε, δ), with Ñ composed in
        res = fit_pe_lloyd(X, k, epsilon, rng, r, delta=delta, ball=ball, n=p.count, before=before)
    else:
        extra = (
            {"delta": delta, "ball": ball, "before": before}
            if p.method == "dplloyd_improved"
            else {}
        )
        res = CHOSEN[p.method](X, k, p.epsilon, rng, r, n=p.count, **p.params, **extra)
    ledger.extend(res.ledger)
    ledger.choices.append(f"auto chose {p.method}: {p.reason}")
    info = {**res.info, "chosen": p.method, "reason": p.reason, "noisy_count": p.count}
    return DPResult(res.centroids, ledger, res.iterations, info)
