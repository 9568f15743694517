"""PE-means and PE-Lloyd (dpcluster/algorithms/pe_means.py, pe_lloyd.py, refine.py;
docs/methods.md "PE-means", "PE-Lloyd")."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from dpcluster import DPKMeans
from dpcluster.algorithms import checks
from dpcluster.algorithms import pe_lloyd as PL
from dpcluster.algorithms import pe_means as PE
from dpcluster.algorithms import refine as RF
from dpcluster.algorithms.methods import fit_pe_lloyd, fit_pe_means
from dpcluster.algorithms.shrinkage import noise_variance
from dpcluster.kernels import labels, nearest
from dpcluster.kernels.weighted import kmeanspp, lloyd
from dpcluster.privacy import Ledger, observe

FITS = {"pe_means": fit_pe_means, "pe_lloyd": fit_pe_lloyd}


def _blobs(seed=0, k=4, n=500, d=6, std=0.02):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.5, 0.5, (k, d)) / np.sqrt(d)
    X = np.repeat(centres, n, axis=0) + rng.normal(0, std, (k * n, d))
    return np.clip(X, -1, 1), centres


@pytest.mark.parametrize("method", sorted(FITS))
@pytest.mark.parametrize("delta", [0.0, 1e-6])
@pytest.mark.parametrize("epsilon", [0.05, 1.0, 7.3])
def test_the_ledger_books_at_most_epsilon_and_delta_and_every_generation(method, delta, epsilon):
    X, _ = _blobs(n=100)
    res = FITS[method](X, 4, epsilon, np.random.default_rng(1), delta=delta, ball=1.0, n_init=1)
    purposes = [e.purpose for e in res.ledger.entries]
    assert purposes.count("candidate votes") == res.info["generations"] == res.iterations
    assert purposes[0] == "record count Ñ (plans the fit)"
    assert res.ledger.total_epsilon <= epsilon and res.ledger.total_delta <= delta
    assert any(e.rho for e in res.ledger.entries) == bool(delta)
    if method == "pe_lloyd":
        base = PL.STEPS_GAUSSIAN if delta else PL.STEPS
        assert base <= res.info["steps"] <= max(base, PL.MAX_FREE_STEPS)
        assert purposes.count("clipped displacement sums (refinement)") == res.info["steps"]


@pytest.mark.parametrize("method", sorted(FITS))
def test_sizes_read_the_noisy_count_never_n(method):
    """Given the same released Ñ, a neighbour one record larger makes the same number of
    releases of the same shapes: nothing switches on the exact N."""
    X, _ = _blobs(n=60)
    shapes = []
    for data in (X, np.vstack([X, np.full((1, X.shape[1]), 0.9)])):
        seen = []
        with observe(seen.append):
            FITS[method](data, 4, 1.0, np.random.default_rng(3), n=250.0, before=(0.05,), n_init=1)
        shapes.append([(r.purpose, np.shape(r.output)) for r in seen])
    assert shapes[0] == shapes[1]


@pytest.mark.parametrize("votes", [PL.nearest_votes, None])
def test_one_record_moves_one_vote(votes):
    """The vote histograms' sensitivity: a record added changes one bin by exactly 1,
    for the global and the family votes."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (300, 5))
    pop = rng.uniform(-1, 1, (3 * 9, 5))
    count = votes or (lambda data, p: PL.family_votes(data, p, 3))
    for _ in range(20):
        extra = rng.uniform(-1, 1, (1, 5))
        diff = count(np.vstack([X, extra]), pop) - count(X, pop)
        assert np.abs(diff).sum() == 1.0 and diff.max() == 1.0


def test_every_release_is_announced_with_a_query_that_reproduces_it():
    X, _ = _blobs(n=80)
    seen = []
    with observe(seen.append):
        res = fit_pe_lloyd(X, 4, 1e6, np.random.default_rng(5), delta=1e-6, n_init=2)
    assert len(seen) == len(res.ledger.entries)
    snapped = checks.points(X)  # the records as the mechanisms see them, on their lattice
    for r in seen:
        answer = np.asarray(r.query(snapped), float)
        if r.purpose.startswith("displacement radius"):
            continue  # an index chosen by the exponential mechanism, not a noisy answer
        assert np.allclose(answer, r.output, atol=8 * r.mechanism.scale), r.purpose


def test_the_threshold_keeps_the_largest_votes_up_to_the_count():
    votes = np.array([5.0, -2.0, 40.0, 30.0, 1.0, 30.0])
    w = PE.threshold_votes(votes, count=80.0)
    assert list(w) == [0.0, 0.0, 40.0, 30.0, 0.0, 30.0]
    assert list(PE.threshold_votes(votes, count=1e9)) == [5.0, 0.0, 40.0, 30.0, 1.0, 30.0]


def test_the_clipped_sums_move_by_at_most_tau_per_record():
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, (200, 4))
    C = rng.uniform(-1, 1, (3, 4))
    for _ in range(20):
        extra = rng.uniform(-1, 1, (1, 4))
        c0, s0 = RF.clipped_stats(X, C, 0.1)
        c1, s1 = RF.clipped_stats(np.vstack([X, extra]), C, 0.1)
        assert np.abs(c1 - c0).sum() == 1.0
        assert np.linalg.norm(s1 - s0, axis=1).max() <= 0.1


@pytest.mark.kernel
def test_nearest_is_labels():
    rng = np.random.default_rng(7)
    for d in (1, 3, 17):
        X = rng.integers(-3, 4, (500, d)).astype(float)  # lattice points: many ties
        C = rng.integers(-3, 4, (40, d)).astype(float)
        assert np.array_equal(nearest(X, C), labels(X, C))


@pytest.mark.kernel
def test_the_weighted_kernels_match_a_plain_reference():
    rng = np.random.default_rng(8)
    P, w = rng.normal(size=(60, 3)), rng.uniform(0, 2, 60)
    k, trials = 4, 3
    u = rng.random(1 + (k - 1) * trials)
    C = np.empty((k, 3))
    kmeanspp(P, w, k, trials, u, C)
    # the reference: the same inverse-cdf draws and greedy choice, in NumPy
    ref = [P[np.searchsorted(np.cumsum(w), u[0] * w.sum(), side="right")]]
    d2 = ((P - ref[0]) ** 2).sum(1)
    for j in range(1, k):
        mass = np.cumsum(w * d2)
        picks = [
            np.searchsorted(mass, u[1 + (j - 1) * trials + t] * mass[-1], side="right")
            for t in range(trials)
        ]
        costs = [(w * np.minimum(d2, ((P - P[p]) ** 2).sum(1))).sum() for p in picks]
        ref.append(P[picks[int(np.argmin(costs))]])
        d2 = np.minimum(d2, ((P - ref[-1]) ** 2).sum(1))
    assert np.array_equal(C, np.array(ref))
    cost = lloyd(P, w, C, 100)
    km = KMeans(k, init=np.array(ref), n_init=1, algorithm="lloyd", tol=0).fit(P, sample_weight=w)
    assert np.allclose(C, km.cluster_centers_) and cost == pytest.approx(km.inertia_)


@pytest.mark.parametrize("method", sorted(FITS))
def test_it_finds_clear_blobs(method):
    X, centres = _blobs(seed=9, n=2500, d=8)
    res = FITS[method](X, 4, 1.0, np.random.default_rng(10), delta=1e-6, ball=1.0)
    gap = np.linalg.norm(centres[:, None] - res.centroids[None], axis=2).min(axis=1)
    assert gap.max() < 0.05


@pytest.mark.slow
@pytest.mark.parametrize(("k", "d"), [(2, 2), (16, 2), (5, 5), (16, 5), (5, 16), (16, 64)])
def test_at_huge_epsilon_auto_is_k_means(k, d):
    """ε → ∞ means k-means quality: at ε = 10⁶ auto (which runs PE-Lloyd there) is within
    5 % of KMeans(n_init=10) in at least 9 of 10 seeds on clear blobs."""
    good = 0
    for seed in range(10):
        X, _ = make_blobs(3000, d, centers=k, cluster_std=1.0, random_state=seed)
        ref = KMeans(k, n_init=10, random_state=0).fit(X).inertia_
        box = (X.min() - 1, X.max() + 1)
        km = DPKMeans(k, epsilon=1e6, bounds=box, random_state=seed).fit(X)
        assert km.method_ == "pe_lloyd"
        good += km.inertia_ <= 1.05 * ref
    assert good >= 9


@pytest.mark.slow
@pytest.mark.parametrize(("k", "d"), [(5, 5), (16, 5), (5, 16)])
def test_at_huge_epsilon_improved_dplloyd_is_k_means(k, d):
    """ε → ∞ for improved DPLloyd too: its searched start (docs/methods.md M7) finds the
    blobs a single sphere-packing start misses (2 of 10 seeds of 5 blobs in 5-D)."""
    good = 0
    for seed in range(10):
        X, _ = make_blobs(3000, d, centers=k, cluster_std=1.0, random_state=seed)
        ref = KMeans(k, n_init=10, random_state=0).fit(X).inertia_
        box = (X.min() - 1, X.max() + 1)
        km = DPKMeans(k, epsilon=1e6, bounds=box, method="dplloyd_improved", random_state=seed)
        good += km.fit(X).inertia_ <= 1.05 * ref
    assert good >= 9


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_free_steps_are_booked_within_epsilon_and_delta(delta):
    """Where the free steps come (a large budget), every one is booked and the ledger
    still ends at most at (ε, δ)."""
    X, _ = _blobs(n=100)
    epsilon = 1e4
    res = fit_pe_lloyd(X, 4, epsilon, np.random.default_rng(5), delta=delta, ball=1.0, n_init=1)
    purposes = [e.purpose for e in res.ledger.entries]
    assert res.info["steps"] > (PL.STEPS_GAUSSIAN if delta else PL.STEPS)
    assert purposes.count("clipped displacement sums (refinement)") == res.info["steps"]
    assert res.ledger.total_epsilon <= epsilon and res.ledger.total_delta <= delta


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_free_steps_come_only_where_a_steps_noise_is_negligible(delta):
    """One step (two with Gaussian noise) at a common budget; up to MAX_FREE_STEPS where
    an average cluster's step errs by at most NEGLIGIBLE_STEP_NOISE·τ; never fewer steps
    for more records or more budget; and the bound holds at the steps chosen."""
    base = PL.STEPS_GAUSSIAN if delta else PL.STEPS
    budget = 0.2 if delta else 0.45  # ρ or ε: a fit at ε = 1
    assert PL.free_steps(base, budget, delta, 3000.0, 8, 5, 0.3, 10.0) == base
    assert PL.free_steps(base, 1e5, delta, 3000.0, 8, 5, 0.3, 10.0) == PL.MAX_FREE_STEPS
    counts = [1e3, 1e4, 1e5, 1e6, 1e7]
    chosen = [PL.free_steps(base, budget, delta, n, 8, 5, 0.3, 10.0) for n in counts]
    assert chosen == sorted(chosen) and chosen[0] == base and chosen[-1] > base
    for n, steps in zip(counts, chosen):
        if steps > base:
            _, sums = RF.step_mechanisms(budget, delta, steps, 5, 0.3, 10.0)[0]
            error = np.sqrt(5 * noise_variance(sums)) / (n / 8)
            assert error <= PL.NEGLIGIBLE_STEP_NOISE * 0.3


def test_the_mutation_gap_reads_no_record_and_the_scale_falls_to_pe_means():
    """The first mutation's length comes from public draws only (the same gap whatever the
    data), and the scale falls geometrically to PE-means's STEP_SCALE at the last
    mutation, generation T − 2, never below it."""
    d = 20
    domain = PE.Domain(np.ones(d), None)
    pop = domain.uniform(np.random.default_rng(0), 1024)
    gap = PL.public_gap(domain, pop, np.random.default_rng(1))
    assert gap == PL.public_gap(domain, pop, np.random.default_rng(1))
    # in 20-D, 1,024 uniform candidates leave a typical point more than a radius away
    assert 1.0 < gap < np.sqrt(d)
    top, floor, T = 0.5 * gap / np.sqrt(d), PE.STEP_SCALE, 8
    scales = [PL.mutation_scale(top, floor, g, T) for g in range(T - 1)]
    assert scales[0] == pytest.approx(top) and scales[-1] == pytest.approx(floor)
    assert all(a > b for a, b in zip(scales, scales[1:]))
    assert PL.mutation_scale(0.5 * floor, floor, 0, T) == floor


def test_the_scheduled_search_reaches_clusters_the_fixed_scale_cannot():
    """20 dimensions, 12 clear blobs, generous ε: with PE-means's fixed 0.01 the parents
    stay near generation 0's candidates, more than a radius from every cluster; the
    scheduled mutation (mutation_start) brings them a quarter closer or more."""
    rng = np.random.default_rng(4)
    k, d = 12, 20
    centres = rng.uniform(-0.7, 0.7, (k, d))
    X = np.clip(np.repeat(centres, 300, axis=0) + rng.normal(0, 0.05, (k * 300, d)), -1, 1)
    domain = PE.Domain(np.ones(d), None)
    mechs, _ = PE.vote_mechanisms(8.0, 0.0, (), 8)
    gaps = {}
    for start in (0.0, PL.MUTATION_START):
        parents, _ = PL.search(
            X,
            k,
            mechs,
            float(len(X)),
            np.random.default_rng(5).spawn(4),
            Ledger(),
            domain,
            RF.release,
            mutation_start=start,
        )
        gaps[start] = np.median(np.linalg.norm(centres[:, None] - parents[None], axis=2).min(1))
    assert gaps[0.0] > 1.0
    assert gaps[PL.MUTATION_START] < 0.75 * gaps[0.0]


def test_family_votes_match_a_per_family_reference():
    """One threaded pass gives each record's vote to the nearest member of its nearest
    parent's family, as a loop over the records does."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (500, 5))
    pop = rng.uniform(-1, 1, (4 * 6, 5))
    families = pop.reshape(4, 6, 5)
    parent = nearest(X, families[:, 0])
    ref = np.zeros(len(pop))
    for x, j in zip(X, parent):
        ref[j * 6 + int(np.argmin(((families[j] - x) ** 2).sum(axis=1)))] += 1
    assert np.array_equal(PL.family_votes(X, pop, 4), ref)


def test_the_selection_does_not_depend_on_the_thread_count():
    """The weighted k-means starts run on separate threads; the chosen centres are the
    same bits with one thread or two."""
    import numba

    rng = np.random.default_rng(3)
    P, w = rng.normal(size=(300, 6)), rng.random(300)
    start = P[:12].copy()
    before = numba.get_num_threads()
    try:
        out = []
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            out.append(PE.weighted_selection(P, w, 12, np.random.default_rng(4), 10, start))
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(out[0], out[1])


def test_the_spacing_cap_ignores_repeated_parents():
    """A selection of more parents than voted candidates repeats some; their zero spacing
    must not pin the mutation to its floor."""
    parents = np.repeat(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]), 2, axis=0)
    assert PL.spacing_cap(parents, 0.5) == pytest.approx(0.5 * 1.0 / np.sqrt(2))
    assert PL.spacing_cap(np.zeros((4, 3)), 0.5) == np.inf


def test_pe_lloyds_parameters_reach_the_registry_and_a_ball_reaches_the_fit():
    """The registry reads a fit's keywords from its signature: every PE-Lloyd parameter
    is tunable through ``method_params`` and a public ball is passed on (a ``**params``
    signature hid them all)."""
    import inspect

    from dpcluster.estimator_checks import central_methods

    table = central_methods()["pe_lloyd"].fit.params
    expected = {"generations", "population", "steps", "n_init", "shrink", "mutation_start"}
    assert expected <= set(table)
    assert "ball" in inspect.signature(fit_pe_lloyd).parameters
    X, _ = _blobs(n=100)
    for params in ({"steps": 0, "mutation_start": 0.0}, {"steps": 3, "mutation_start": 1.0}):
        for delta in (0.0, 1e-6):
            est = DPKMeans(4, epsilon=1.0, delta=delta, radius=1.0, method="pe_lloyd")
            est.set_params(method_params=params, random_state=0).fit(X)
            assert est.ledger_.total_epsilon <= 1.0
