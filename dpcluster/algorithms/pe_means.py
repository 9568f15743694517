"""PE-means: k-means by private evolution (Humphries et al., "PE-means: Improved
Differentially Private k-Means Clustering through Private Evolution", arXiv 2606.00342,
2026; their artefact, t3humphries/PE-means, read for its parameters; docs/methods.md
"PE-means").

The algorithm, on records in a public domain (the box ∏ [-r_j, r_j], or the L2 ball of
radius R when ``ball`` is given):

1. **Sizes from Ñ.** L = max(⌊Ñ/(5k)⌋, 4) mutants per parent and a population of
   P = (L + 1)·k candidates (at most :data:`MAX_POPULATION`, with L ≥ 4 kept); T
   generations: ⌊4√d⌋ for ε ≤ 1 and ⌊ε·4√d⌋ above, at least 1 and at most
   :data:`MAX_GENERATIONS`. Ñ is the plan's noisy count (:mod:`.plan`), never N.
2. **Start.** P candidates uniform in the domain (public randomness).
3. **Each generation.**
   a. *Votes.* Each record votes for its nearest candidate; the histogram of votes (P,)
      is released with Gaussian noise of standard deviation σ (δ > 0), or Laplace noise
      (δ = 0, pure ε).
   b. *Threshold.* The largest noisy votes are kept while their running total stays
      below Ñ (the artefact's ``find_threshold``, with Ñ for N); the others, and any
      negative vote, weigh 0.
   c. *Fewer mutants when the votes are noise.* When Σ u²/(P σ_v²) < 1 (σ_v the votes'
      noise standard deviation), L halves (at least 4).
   d. *Selection.* Weighted k-means (k-means++ and Lloyd, :data:`N_INIT` starts, lowest
      weighted cost) on (candidates, kept votes) gives the k parents.
   e. *Mutation* (not after the last generation). Each parent gets L Lévy-flight mutants
      (Mantegna's algorithm, β = :data:`LEVY_BETA`, step :data:`STEP_SCALE` times the
      domain's radius), projected back into the domain; the next population is the
      parents and their mutants.
4. **Output.** The last generation's k parents.

Privacy argument. Neighbouring relation: add/remove one record of the public domain.
(a) Ñ: one Laplace count, sensitivity 1. (b) A generation's candidates are a function of
earlier releases and public randomness, so they are public when the votes are asked;
each record adds 1 to exactly one bin, so the vote histogram has L1 and L2 sensitivity 1,
and one entry changes. The T histograms are T Gaussian releases of zCDP ρ/T each, ρ the
largest that composes with Ñ's pure ε to (ε, δ) by Rényi DP
(:func:`~..privacy.rdp.largest_rho`), or T Laplace releases of (ε − ε_N)/T each with
δ = 0. (c) The threshold, the L rule, the selection and the mutation read only released
values and public randomness: post-processing. Every one of the T generations is booked.

Where this departs from the artefact (docs/decisions.md): sizes and the threshold read Ñ,
not N; σ is calibrated for every release the fit makes (the artefact's HDPE reserves
T + 2 and calibrates T); the composition is zCDP/RDP as the rest of the ledger (the
artefact uses the exact Gaussian-DP composition, √T/σ, which is a little tighter); the
start is uniform in the domain (theirs: rejection sphere packing, whose candidates are
also uniform at P ≈ N/5 points); the population is capped at :data:`MAX_POPULATION`
candidates and T at :data:`MAX_GENERATIONS`, so that a fit's cost is bounded at any N and
ε; pure ε (Laplace votes) is offered beside their Gaussian. No high-dimensional
(projected) variant is built: its final step adds one scalar of noise to a vector sum.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gamma

from ..kernels import nearest
from ..kernels.weighted import weighted_kmeans
from ..privacy import LaplaceMechanism, Ledger, release
from ..privacy.budget import remaining, within
from ..privacy.gaussian import GaussianMechanism
from ..privacy.rdp import largest_rho
from . import checks
from .dplloyd import DPResult

#: the most candidates a generation holds (the artefact's rule gives P ≈ Ñ/5)
MAX_POPULATION = 4096
#: the most generations a fit runs (the rule gives ⌊ε·4√d⌋ above ε = 1)
MAX_GENERATIONS = 200
#: mutants per parent, at least (the artefact's floor)
MIN_MUTANTS = 4
#: Lévy-flight exponent β and step size (a share of the domain's radius): the artefact's
LEVY_BETA, STEP_SCALE = 1.75, 0.01
#: when Σ u²/(P σ²) falls below this, L is multiplied by :data:`L_REDUCE_FACTOR`
L_REDUCE_THRESHOLD, L_REDUCE_FACTOR = 1.0, 0.5
#: weighted k-means starts per selection (scikit-learn's n_init in the artefact)
N_INIT = 10
#: Lloyd iterations per weighted k-means start, at most
MAX_ITER = 100


def generations(epsilon: float, d: int) -> int:
    """T: ⌊4√d⌋ for ε ≤ 1, ⌊ε·4√d⌋ above (the artefact's rule), in [1, MAX_GENERATIONS]."""
    base = int(4 * math.sqrt(d))
    t = base if epsilon <= 1.0 else int(min(epsilon, 1e9) * base)
    return int(min(max(t, 1), MAX_GENERATIONS))


def mutants_per_parent(count: float, k: int, max_population: int = MAX_POPULATION) -> int:
    """L = max(⌊Ñ/(5k)⌋, 4), lowered so that (L + 1)k ≤ ``max_population`` (never below 4)."""
    L = max(int(count / (5.0 * k)), MIN_MUTANTS)
    return max(min(L, max_population // k - 1), MIN_MUTANTS)


def threshold_votes(votes: np.ndarray, count: float) -> np.ndarray:
    """The artefact's ``find_threshold`` with Ñ for N: keep the largest noisy votes up to
    the one at which their running total reaches ``count``, zero the rest and any negative
    vote. Returns the weights (P,) ≥ 0."""
    ordered = np.sort(votes)[::-1]
    idx = int(np.searchsorted(np.cumsum(ordered), count))
    cut = 0.0 if idx >= len(ordered) else float(ordered[idx])
    return np.where(votes >= cut, np.maximum(votes, 0.0), 0.0)


def levy_steps(rng: np.random.Generator, shape: tuple, beta: float = LEVY_BETA) -> np.ndarray:
    """Lévy-flight steps by Mantegna's algorithm: u/|v|^(1/β), u ~ N(0, σ_u²), v ~ N(0, 1),
    σ_u = [Γ(1+β) sin(πβ/2) / (Γ((1+β)/2) β 2^((β−1)/2))]^(1/β); β ≥ 2 gives N(0, 1)."""
    if beta >= 2.0:
        return rng.standard_normal(shape)
    num = gamma(1 + beta) * math.sin(math.pi * beta / 2)
    den = gamma((1 + beta) / 2) * beta * 2 ** ((beta - 1) / 2)
    sigma_u = (num / den) ** (1 / beta)
    u = rng.normal(0.0, sigma_u, shape)
    v = rng.standard_normal(shape)
    return u / np.abs(v) ** (1 / beta)


class Domain:
    """The public domain the candidates live in: the box ∏ [-r_j, r_j], intersected with
    the L2 ball of radius ``ball`` about the origin when it is given."""

    def __init__(self, r: np.ndarray, ball: float | None):
        self.r = r
        self.ball = None if ball is None else float(ball)
        #: PE-means's radius, the unit of its mutation scale: the ball's, else the widest
        #: half-side of the box
        self.radius = self.ball if self.ball is not None else float(np.max(r))
        #: the largest L2 norm of a point of the domain (the box's half-diagonal, or less
        #: inside the ball): half the largest distance between two of its points
        self.l2_radius = float(np.sqrt(np.sum(np.square(r))))
        if self.ball is not None:
            self.l2_radius = min(self.l2_radius, self.ball)

    def uniform(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n points uniform in the domain (the ball's, or the box's)."""
        d = len(self.r)
        if self.ball is None:
            return rng.uniform(-self.r, self.r, size=(n, d))
        g = rng.standard_normal((n, d))
        g /= np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-300)
        return self.project(g * self.ball * rng.uniform(size=(n, 1)) ** (1.0 / d))

    def project(self, P: np.ndarray) -> np.ndarray:
        """P (n, d) into the domain: onto the ball, then into the box."""
        return np.clip(checks.project_to_ball(P, self.ball), -self.r, self.r)


def weighted_selection(
    P: np.ndarray,
    w: np.ndarray,
    k: int,
    rng: np.random.Generator,
    n_init: int = N_INIT,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Weighted k-means on candidates P (m, d) with weights w (m,) ≥ 0: greedy k-means++
    (2 + ⌊ln k⌋ trials) and Lloyd to a fixed point of the labels (at most
    :data:`MAX_ITER` passes), ``n_init`` starts, the lowest Σ w·D² kept
    (:func:`~dpcluster.kernels.weighted.weighted_kmeans`); ``start`` (k, d), when given,
    is the first start in place of a k-means++ draw. Candidates of weight 0 are left out
    (they change neither the centres nor the cost); with no positive weight every
    candidate weighs 1. Post-processing of released votes. Returns (k, d)."""
    trials = 2 + int(math.log(k))
    kept = w > 0
    if np.count_nonzero(kept):
        P, w = P[kept], w[kept]
    else:
        w = np.ones(len(P))
    U = rng.random((n_init, 1 + (k - 1) * trials))
    out = np.empty((k, P.shape[1]))
    given = start is not None
    first = np.ascontiguousarray(start if given else out, dtype=np.float64)
    weighted_kmeans(
        np.ascontiguousarray(P, dtype=np.float64),
        np.ascontiguousarray(w, dtype=np.float64),
        k,
        trials,
        U,
        first,
        given,
        MAX_ITER,
        out,
    )
    return out


def vote_mechanisms(
    epsilon: float, delta: float, before: tuple, steps: int, share: float = 1.0
) -> tuple[list, float]:
    """(the T vote mechanisms, what is left for later releases). The budget is the largest
    zCDP ρ that composes with the pure releases ``before`` to (ε, δ) by Rényi DP (δ > 0),
    or ε − Σ before (δ = 0); ``share`` of it goes to the votes, ρ/T or ε/T each
    (Gaussian or Laplace, sensitivity 1), and the rest (0 when ``share`` is 1) is returned,
    its exact sum with the votes' at most the budget."""
    total = (
        largest_rho(tuple(before), epsilon, delta)
        if delta > 0
        else remaining(epsilon, list(before))
    )
    if share < 1.0:
        votes, rest = within(total, [share * total, (1.0 - share) * total])
    else:
        votes, rest = total, 0.0
    per = within(votes, [votes / steps], steps)[0]
    mech = GaussianMechanism(per, 1.0, 1, delta) if delta > 0 else LaplaceMechanism(per, 1.0)
    return [mech] * steps, rest


def pe_means(
    X: np.ndarray,
    k: int,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    count: float,
    r=1.0,
    ball: float | None = None,
    before: tuple = (),
    generations_: int = 0,
    max_population: int = MAX_POPULATION,
    n_init: int = N_INIT,
) -> DPResult:
    """PE-means on X (N, d) in the box ∏ [-r_j, r_j] (and the ball ``ball``): k centres
    (k, d), with the T vote histograms booked in the ledger. ``count``: Ñ, already
    released (its ε among ``before``, the pure ε's the caller booked that (ε, δ) covers);
    ``generations_``: T (0: :func:`generations`). Info: generations, population, final L."""
    X = checks.points(X, r)
    d = X.shape[1]  # the record count is never read: sizes come from Ñ
    r_vec = np.broadcast_to(np.asarray(r, dtype=np.float64), (d,)).copy()
    X = checks.project_to_ball(X, ball)
    domain = Domain(r_vec, ball)
    steps = int(generations_) or generations(epsilon, d)
    mechs = vote_mechanisms(epsilon, delta, before, steps)[0]
    noise_sd = mechs[0].sigma if delta > 0 else math.sqrt(mechs[0].variance)
    L = mutants_per_parent(count, k, max_population)
    start_rng, vote_rng, select_rng, mutate_rng = rng.spawn(4)
    ledger = Ledger(delta=delta)
    population = domain.uniform(start_rng, (L + 1) * k)
    parents = population[:k]
    for gen in range(steps):
        mech = ledger.record(mechs[gen], "candidate votes", round=gen)
        exact = np.bincount(nearest(X, population), minlength=len(population)).astype(float)
        noisy = mech.add(exact, mech.noise(vote_rng, len(population)))
        noisy = release(
            mech,
            "candidate votes",
            noisy,
            lambda data, pop=population: np.bincount(
                nearest(checks.project_to_ball(data, ball), pop), minlength=len(pop)
            ).astype(float),
        )
        weights = threshold_votes(noisy, count)
        if float(np.sum(weights**2)) < L_REDUCE_THRESHOLD * len(population) * noise_sd**2:
            L = max(int(L_REDUCE_FACTOR * L), MIN_MUTANTS)
        parents = weighted_selection(population, weights, k, select_rng, n_init)
        if gen == steps - 1:
            break
        steps_ = levy_steps(mutate_rng, (k * L, d))
        mutants = np.repeat(parents, L, axis=0) + STEP_SCALE * domain.radius * steps_
        population = np.vstack([parents, domain.project(mutants)])
    info = {"generations": steps, "population": len(population), "mutants": L}
    return DPResult(np.clip(parents, -r_vec, r_vec), ledger, steps, info)
