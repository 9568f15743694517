"""``pe_lloyd``: private evolution to find the clusters, clipped Lloyd steps to place the
centres (docs/methods.md "PE-Lloyd"; dpcluster's own method, built on PE-means and on
Lloyd steps over clipped displacements).

1. **Ñ**, one noisy count (:mod:`.plan`); every size below reads it, never N.
2. **Search** (:mod:`.pe_means`'s evolution, cheaper): a population of at most
   :data:`POPULATION` candidates, :func:`search_generations` generations. Generation 0's
   candidates are uniform in the domain and every record votes for its nearest one. From
   generation 1 on the population is k *families*, a parent and its L Lévy mutants, and a
   record votes for the nearest member of its nearest parent's family: still one vote per
   record, at a cost of N·(k + L) distances instead of N·k·(L + 1). A selection starts
   once from the last parents (warm start) and ``n_init`` − 1 times from k-means++
   (:data:`BETWEEN_STARTS_GAUSSIAN` − 1 between generations with Gaussian votes).
3. **Placement** (:mod:`.refine`): τ near the 90th percentile of the records' distances to
   the k parents, then :data:`STEPS` (δ = 0) or :data:`STEPS_GAUSSIAN` (δ > 0) Lloyd
   steps on displacements clipped to τ, whose noise scales with τ rather than with the
   domain; up to :data:`MAX_FREE_STEPS` where an average cluster's step errs by at most
   :data:`NEGLIGIBLE_STEP_NOISE`·τ (:func:`free_steps`), so that as ε → ∞ the steps
   converge as Lloyd's do.

Privacy argument. Neighbouring relation: add/remove one record of the public domain. Ñ is
one Laplace count (sensitivity 1). Each generation's candidates and families are public
(functions of earlier releases and public randomness), and every record adds 1 to exactly
one bin of the vote histogram: L1 and L2 sensitivity 1, one entry. τ and the steps are
argued in :mod:`.refine`. With δ > 0 the votes and steps are Gaussian, ρ the largest that
composes with the pure releases (Ñ, τ) to (ε, δ) by Rényi DP, :data:`SEARCH_SHARE_GAUSSIAN`
of it to the search; with δ = 0 they are Laplace, :data:`SEARCH_SHARE` of what Ñ and τ
leave of ε to the search. Every release is booked whether or not a later step needs it.
"""

from __future__ import annotations

import math

import numpy as np

from ..kernels import nearest, nearest_member
from ..privacy import Ledger
from . import checks, refine
from .auto import pe_signal
from .dplloyd import DPResult
from .pe_means import (
    L_REDUCE_FACTOR,
    L_REDUCE_THRESHOLD,
    MIN_MUTANTS,
    STEP_SCALE,
    Domain,
    levy_steps,
    mutants_per_parent,
    threshold_votes,
    vote_mechanisms,
    weighted_selection,
)
from .shrinkage import noise_variance

#: the most candidates per generation
POPULATION = 1024
#: the most mutants per parent: a family's members beyond it hardly move the selection
#: (measured in docs/decisions.md), and every one costs N·d distances per generation
MAX_MUTANTS = 64
#: the most search generations
MAX_SEARCH = 64
#: the search's share of the votes' and steps' ε (δ = 0) and of the Gaussian ρ (δ > 0):
#: with Laplace votes 0.4 did best on both hash halves of the three batteries' PE-Lloyd
#: cells, each calibrating the other (docs/decisions.md)
SEARCH_SHARE, SEARCH_SHARE_GAUSSIAN = 0.4, 0.5
#: clipped Lloyd steps after the search, with δ = 0 (Laplace) and δ > 0 (Gaussian): a
#: Laplace step's noise grows as the number of steps, a Gaussian one's as its root, and
#: on both batteries one Laplace step and two Gaussian ones did best (docs/decisions.md)
STEPS, STEPS_GAUSSIAN = 1, 2
#: at most this many clipped steps where their noise is negligible: as ε → ∞ the steps
#: are Lloyd's, and one step from the search's parents left 16 blobs in 2-D at ε = 10⁶
#: above 1.05 times k-means' cost in 3 of 30 seeds, eight steps in 1 (docs/decisions.md)
MAX_FREE_STEPS = 8
#: a step's noise is negligible when an average cluster's (Ñ/k records) noisy mean
#: displacement errs by at most this fraction of τ (its root-mean-square length)
NEGLIGIBLE_STEP_NOISE = 0.01
#: weighted k-means starts of the last selection (the first from the last parents)
N_INIT = 10
#: the starts of the selections between generations with Gaussian votes (δ > 0), at most
#: ``n_init``: the k-means++ seeding of 2k centres is most of a generation's time, and on
#: PE-means's protocol 5 starts instead of 10 gained 2 % for 1.3 times the speed at 64
#: clusters in 64-D; with Laplace votes they cost 1.5 % at ε = 1 over three batteries, so
#: there every selection takes ``n_init`` (docs/decisions.md)
BETWEEN_STARTS_GAUSSIAN = 5
#: the first mutation's length is this times the median distance from a uniform point of
#: the domain to its nearest generation-0 candidate (a public gap: both are drawn without
#: the data), falling geometrically to PE-means's STEP_SCALE at the last mutation.
#: PE-means's fixed STEP_SCALE moves a parent about 0.005 radii a generation toward a
#: cluster 1.6 radii away (20-D, 30 blobs: no cluster reached in 8 generations, even at
#: ε = 8); steps near half the gap close about a tenth of it a generation
#: (docs/decisions.md)
MUTATION_START = 0.5
#: uniform points whose distances to generation 0 give the gap
GAP_PROBES = 256
#: the search keeps this many times k families, and its last selection takes k: over-
#: seeding, so that two parents in one cluster do not leave another cluster without one
OVERSAMPLE = 2


def search_generations(epsilon: float, d: int, delta: float) -> int:
    """T of the search: PE-means's ⌊4√d⌋, times ε above ε = 1, at most
    16·max(1, log₁₀ ε) and :data:`MAX_SEARCH`; with δ = 0 (Laplace votes, whose noise
    grows as T, not √T) half of that. Up to ε = 10 at most 16 generations, each with more
    of the budget; above, more generations let the mutation reach clusters that
    generation 0's candidates missed (at ε = 10⁶, 16 generations left 4 of 10 fits of 16
    blobs in 5-D above 1.05× k-means' cost, 64 none: docs/decisions.md)."""
    eps = min(max(epsilon, 1.0), 1e9)
    t = int(4 * math.sqrt(d)) * eps
    t = min(t, 16.0 * max(1.0, math.log10(eps)))
    if not delta > 0:
        t /= 2
    return int(min(max(t, 1), MAX_SEARCH))


def free_steps(
    base: int, budget: float, delta: float, count: float, k: int, d: int, tau, l1_diameter
) -> int:
    """The clipped steps: ``base``, raised to the most s ≤ :data:`MAX_FREE_STEPS` at which
    one step's noise on an average cluster's mean displacement (Ñ/k records; √(d·σ²)/(Ñ/k)
    from the sums' per-coordinate noise variance σ² when ``budget``, the steps' ε or ρ, is
    split s ways) is at most :data:`NEGLIGIBLE_STEP_NOISE`·τ. Public: Ñ, k, d, the budget
    and the released τ."""
    steps = base
    for s in range(base + 1, MAX_FREE_STEPS + 1):
        _, sums = refine.step_mechanisms(budget, delta, s, d, tau, l1_diameter)[0]
        error = math.sqrt(d * noise_variance(sums)) / (max(count, 1.0) / k)
        if error > NEGLIGIBLE_STEP_NOISE * tau:
            break
        steps = s
    return steps


def public_gap(domain: Domain, candidates: np.ndarray, rng: np.random.Generator) -> float:
    """The median distance from :data:`GAP_PROBES` uniform points of ``domain`` to their
    nearest of ``candidates`` (n, d): how far a cluster typically lies from generation 0.
    Reads no record."""
    probes = domain.uniform(rng, GAP_PROBES)
    gaps = probes - candidates[nearest(probes, candidates)]
    return float(np.median(np.sqrt(np.einsum("ij,ij->i", gaps, gaps))))


def mutation_scale(top: float, floor: float, gen: int, T: int) -> float:
    """The per-coordinate mutation scale of generation ``gen`` of T: ``top`` falling
    geometrically to ``floor`` at the last mutation (generation T − 2), never below it."""
    if top <= floor:
        return floor
    return top * (floor / top) ** (gen / max(T - 2, 1))


def spacing_cap(parents: np.ndarray, start: float) -> float:
    """``start`` times the median distance from a parent (p, d) to its nearest distinct
    parent, per coordinate (∞ when all coincide): a mutation should not leap into a
    neighbouring family's cluster. The
    parents are public (selected from noisy votes). Row by row, not a matrix product,
    so the bits do not depend on the BLAS."""
    p, d = parents.shape
    if p < 2:
        return math.inf
    nearest_sq = np.empty(p)
    for i in range(p):
        diff = parents - parents[i]
        sq = np.einsum("ij,ij->i", diff, diff)
        sq[sq == 0.0] = np.inf  # itself, and copies: a selection of more parents than
        nearest_sq[i] = sq.min()  # voted candidates repeats some
    return start * float(np.median(np.sqrt(nearest_sq))) / math.sqrt(d)


#: a family whose votes sum to less than this many standard deviations of m members'
#: vote noise is noise, when at least k families stand above it
FAMILY_HOLD_SIGMAS = 3.0


def drop_noise_families(weights: np.ndarray, families: int, noise_sd: float, k: int) -> np.ndarray:
    """(P,) ``weights`` of ``families`` equal families with every family whose sum is below
    :data:`FAMILY_HOLD_SIGMAS`·σ·√m (m members, σ a vote's noise) set to zero, where at
    least k families are above it; else unchanged. A spare parent that wandered where no
    records are keeps only noise votes, and the last selection of k would otherwise spend
    a centre on it. Post-processing of the noisy votes."""
    m = len(weights) // families
    mass = weights.reshape(families, m).sum(axis=1)
    live = mass >= FAMILY_HOLD_SIGMAS * noise_sd * math.sqrt(m)
    if live.sum() < k:
        return weights
    return (weights.reshape(families, m) * live[:, None]).ravel()


def family_votes(X: np.ndarray, population: np.ndarray, k: int) -> np.ndarray:
    """(P,) vote counts: each record votes for the nearest member of its nearest parent's
    family. ``population`` is k families of equal size (L + 1), parent first."""
    size = len(population) // k
    families = population.reshape(k, size, -1)
    parent = nearest(X, families[:, 0])
    member = nearest_member(X, parent, families)
    return np.bincount(parent * size + member, minlength=len(population)).astype(np.float64)


def nearest_votes(X: np.ndarray, population: np.ndarray) -> np.ndarray:
    """(P,) vote counts: each record votes for its nearest candidate."""
    return np.bincount(nearest(X, population), minlength=len(population)).astype(np.float64)


def search(
    X: np.ndarray,
    k: int,
    votes_mechs: list,
    count: float,
    rngs: tuple,
    ledger: Ledger,
    domain: Domain,
    announce,
    population: int = POPULATION,
    n_init: int = N_INIT,
    oversample: int = OVERSAMPLE,
    mutation_start: float = MUTATION_START,
    between: int = N_INIT,
) -> tuple[np.ndarray, int]:
    """PE-Lloyd's search (module docstring, step 2) on X (N, d), already in the domain:
    (k parents (k, d), the last L). One generation per mechanism of ``votes_mechs`` (its
    T noisy vote histograms, sensitivity 1, each booked in ``ledger`` and passed to
    ``announce``, the release hook); ``count``: Ñ, which every size reads; ``rngs``: the
    (start, vote, selection, mutation) generators; ``mutation_start``: the first
    mutation's length over the public gap (:data:`MUTATION_START`; 0: PE-means's fixed
    scale throughout); ``between``: the starts of the selections before the last (at most
    ``n_init``)."""
    d = X.shape[1]
    T = len(votes_mechs)
    m0 = votes_mechs[0]
    noise_sd = math.sqrt(getattr(m0, "variance", m0.scale**2))
    start_rng, vote_rng, select_rng, mutate_rng = rngs
    ks = max(1, int(oversample)) * k  # the search's families; the last selection takes k
    L = min(mutants_per_parent(count, ks, population), max(MAX_MUTANTS, MIN_MUTANTS))
    # generation 0 is searched exhaustively, so it may hold PE-means's Ñ/5 candidates
    first = int(min(max(population, (L + 1) * ks), max((L + 1) * ks, count / 5.0)))
    pop = domain.uniform(start_rng, first)
    floor = STEP_SCALE * domain.radius
    top = 0.0
    if T > 1 and mutation_start > 0:  # public: probes and candidates ignore the data
        top = mutation_start * public_gap(domain, pop, mutate_rng) / math.sqrt(d)
    parents = None
    for gen in range(T):
        mech = ledger.record(votes_mechs[gen], "candidate votes", round=gen)
        families = gen > 0
        exact = family_votes(X, pop, ks) if families else nearest_votes(X, pop)
        noisy = mech.add(exact, mech.noise(vote_rng, len(pop)))
        noisy = announce(
            mech,
            "candidate votes",
            noisy,
            (lambda data, p=pop: family_votes(data, p, ks))
            if families
            else (lambda data, p=pop: nearest_votes(data, p)),
        )
        weights = threshold_votes(noisy, count)
        if families and gen == T - 1:
            weights = drop_noise_families(weights, ks, noise_sd, k)
        if float(np.sum(weights**2)) < L_REDUCE_THRESHOLD * len(pop) * noise_sd**2:
            L = max(int(L_REDUCE_FACTOR * L), MIN_MUTANTS)
        if gen == T - 1:
            parents = weighted_selection(pop, weights, k, select_rng, n_init)
            break
        starts = min(n_init, between)
        parents = weighted_selection(pop, weights, ks, select_rng, starts, start=parents)
        scale = mutation_scale(top, floor, gen, T)
        # the spacing cap can only lower the scale, and never below the floor
        scale = (
            max(min(scale, spacing_cap(parents, mutation_start)), floor) if scale > floor else floor
        )
        moves = scale * levy_steps(mutate_rng, (ks * L, d))
        mutants = domain.project(np.repeat(parents, L, axis=0) + moves).reshape(ks, L, d)
        pop = np.concatenate([parents[:, None, :], mutants], axis=1).reshape(-1, d)
    return parents, L


def pe_lloyd(
    X: np.ndarray,
    k: int,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    count: float,
    r=1.0,
    ball: float | None = None,
    before: tuple = (),
    generations: int = 0,
    population: int = POPULATION,
    steps: int = 0,
    n_init: int = N_INIT,
    oversample: int = OVERSAMPLE,
    shrink: bool = True,
    mutation_start: float = MUTATION_START,
) -> DPResult:
    """``pe_lloyd`` on X (N, d) in the box ∏ [-r_j, r_j] (and the ball ``ball``): k
    centres (k, d). ``count``: Ñ, already released, its ε among ``before`` (the pure ε's
    the caller booked that (ε, δ) covers). ``generations``: the search's T (0:
    :func:`search_generations`). ``steps``: the clipped steps (0: :data:`STEPS` or
    :data:`STEPS_GAUSSIAN`, raised by :func:`free_steps` where their noise is negligible).
    ``shrink``: each step's mean displacement is shrunk toward zero
    (:func:`~.refine.shrink_steps`, post-processing). ``mutation_start``: the search's
    first mutation over the public gap (:data:`MUTATION_START`). Info: generations, tau,
    mutants, steps."""
    X = checks.points(X, r)
    d = X.shape[1]  # the record count is never read: sizes come from Ñ
    r_vec = np.broadcast_to(np.asarray(r, dtype=np.float64), (d,)).copy()
    X = checks.project_to_ball(X, ball)
    announce = refine.ball_announcer(ball)
    domain = Domain(r_vec, ball)
    T = int(generations) or search_generations(epsilon, d, delta)
    share = refine.TAU_SHARE_GAUSSIAN if delta > 0 else refine.TAU_SHARE
    eps_tau = share * (epsilon - math.fsum(before))
    pure = (*before, eps_tau)
    search_share = SEARCH_SHARE_GAUSSIAN if delta > 0 else SEARCH_SHARE
    votes_mechs, step_budget = vote_mechanisms(epsilon, delta, pure, T, search_share)
    *search_rngs, tau_rng, step_rng = rng.spawn(6)
    ledger = Ledger(delta=delta)
    parents, L = search(
        X,
        k,
        votes_mechs,
        count,
        search_rngs,
        ledger,
        domain,
        announce,
        population,
        n_init,
        oversample,
        mutation_start,
        BETWEEN_STARTS_GAUSSIAN if delta > 0 else n_init,
    )
    tau = refine.release_tau(X, parents, eps_tau, tau_rng, ledger, domain.l2_radius, announce)
    l1_diameter = 2.0 * checks.ball_extent(d, r_vec, ball)
    if not int(steps):
        base = STEPS_GAUSSIAN if delta > 0 else STEPS
        steps = free_steps(base, step_budget, delta, count, k, d, tau, l1_diameter)
    mechs = refine.step_mechanisms(step_budget, delta, steps, d, tau, l1_diameter)
    C = refine.refine(
        X, parents, mechs, step_rng, ledger, tau, domain.project, announce, shrink=shrink
    )
    info = {"generations": len(votes_mechs), "tau": tau, "mutants": L, "steps": len(mechs)}
    return DPResult(np.clip(C, -r_vec, r_vec), ledger, T, info)


#: the share of what Ñ leaves of ε that improved DPLloyd's searched start spends
SEARCH_START_SHARE = 0.3
#: the smallest Ñ·ε_s/√d at which that start searches: the votes then stand clearly above
#: their Laplace noise (``auto``'s PE-Lloyd floor before the scheduled mutation)
SEARCH_MIN_SIGNAL = 500.0


def searched(count: float, d: int, epsilon: float) -> bool:
    """Whether improved DPLloyd's ``init: searched`` runs PE-Lloyd's search for its start:
    where Ñ·ε_s/√d, with ε_s = :data:`SEARCH_START_SHARE`·ε, reaches
    :data:`SEARCH_MIN_SIGNAL`, so that the votes stand above their noise; below, the free
    sphere-packing start. Public: Ñ, d and ε."""
    return pe_signal(count, d, SEARCH_START_SHARE * epsilon) >= SEARCH_MIN_SIGNAL


def searched_start(
    X: np.ndarray,
    k: int,
    epsilon: float,
    count: float,
    rng: np.random.Generator,
    ledger: Ledger,
    r=1.0,
    ball: float | None = None,
) -> np.ndarray:
    """k starting centres (k, d) for a Lloyd-type method: :func:`search` on X (N, d) in
    the box ∏ [-r_j, r_j] (and the ball ``ball``) with Laplace votes that spend pure
    ``epsilon`` in :func:`search_generations` equal parts, booked in ``ledger``.
    ``count``: the plan's Ñ. Privacy: as the search's (module docstring)."""
    X = checks.points(X, r)
    d = X.shape[1]
    r_vec = np.broadcast_to(np.asarray(r, dtype=np.float64), (d,)).copy()
    X = checks.project_to_ball(X, ball)
    T = search_generations(epsilon, d, 0.0)
    mechs, _ = vote_mechanisms(epsilon, 0.0, (), T)
    domain = Domain(r_vec, ball)
    announce = refine.ball_announcer(ball)
    return search(X, k, mechs, count, rng.spawn(4), ledger, domain, announce)[0]
