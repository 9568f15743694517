"""What the audit runs: the :class:`Target` protocol and the central targets (Paper B's
local ones are in :mod:`.local_targets`, the generic one in :mod:`.generic`).

A target fixes a worst-case neighbouring pair and runs the *registered* algorithm code
many times on each side, batched where the algorithm allows it:

* central (Paper A): a small dataset D in the interior of [-1, 1]^d and D' = D plus one
  record at the corner (1, …, 1), the farthest a record can be from the interior;
* local (Paper B): two values x, x' whose clean encodings differ in m_max bits
  (:meth:`~dpcluster.ldp.bitvector.BVCodec.worst_pair`).

Sizes are small on purpose (the audit checks privacy, not utility): N = 200 records, d = 2,
k = 2, s = 1,000 bits for one attribute and 256 per attribute for records. Every target
says which registry entries it covers. Runs observe their releases (for the white-box
bound) unless the target is black-box only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..algorithms.clipping import MIN_N_EPSILON
from ..algorithms.dplloyd import dplloyd_batch, improved_iterations
from ..algorithms.eugkm import eugkm
from ..algorithms.gkm import gkm, gkm_aggregate
from ..algorithms.hybrid import hybrid
from ..algorithms.methods import auto, fit_dplloyd_improved, fit_hybrid
from ..algorithms.pgkm import genetic_kmeans
from ..algorithms.plan import COUNT_SHARE
from ..algorithms.reference import private_mean
from ..privacy.budget import split
from .comparator_targets import comparator_targets
from .pe_targets import pe_targets
from .switches import pair_at, rules, switch_points
from .target import Target
from .tree_targets import (
    CAPPED_ITERATIONS,
    GAUSSIAN_DELTA,
    capped_one,
    dpm_one,
    lsh_gaussian_one,
    lsh_one,
)

# --- central pairs -------------------------------------------------------------------------

N_CENTRAL, D_CENTRAL, K_CENTRAL = 200, 2, 2


def central_pair(
    N: int = N_CENTRAL, d: int = D_CENTRAL, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """D: N records uniform on [-0.5, 0.5]^d (fixed seed); D' = D plus the corner (1, …, 1).
    On the record lattice (:func:`~dpcluster.privacy.mechanisms.snap_records`), so the
    queries the white-box evaluates on them are the ones the algorithms answer."""
    return pair_at(N, d, seed)


def _inits(n_sets: int, k: int = K_CENTRAL, d: int = D_CENTRAL) -> np.ndarray:
    """Fixed public initial sets (S, k, d), the same for both sides."""
    return np.random.default_rng(1).uniform(-1, 1, (n_sets, k, d))


class TrialIndex:
    """Set by per-trial runs so the observer knows which trial a release belongs to; runs
    that report a discrete path per trial (:func:`path_of`) append it to ``paths``."""

    def __init__(self):
        self.current = 0
        self.paths: list[str] = []


def path_of(res) -> str:
    """A run's discrete outputs as one label: the method it ran, its iteration count, its
    ledger's shape (each release's purpose and round) and how many distinct centres it
    returned. Under DP these are outputs like any other: neighbours must not be told
    apart by them (docs/audit.md)."""
    C = np.asarray(res.centroids, dtype=np.float64).reshape(len(res.centroids), -1)
    shape = ";".join(f"{e.purpose}#{e.round}" for e in res.ledger.entries)
    distinct = len(np.unique(C, axis=0))
    return f"{res.info.get('chosen', '')}|t={res.iterations}|{shape}|distinct={distinct}"


def _dplloyd(improved: bool, iterations: int = 5):
    def run(X, epsilon, rng, n, trial=None):
        k, d = K_CENTRAL, X.shape[1]
        if improved:
            # t follows N; the audit's D and D' give the same t (checked), as it must be for
            # the transcripts to be comparable: the ledger treats N as public (docs/privacy.md)
            t = improved_iterations(epsilon, N_CENTRAL, k, d)
            if improved_iterations(epsilon, N_CENTRAL + 1, k, d) != t:
                raise ValueError("audit pair changes improved DPLloyd's t; pick another N")
        else:
            t = iterations
        count, total = rng.spawn(2)
        inits = np.repeat(_inits(1), n, axis=0)
        C, ledger = dplloyd_batch(
            X,
            inits,
            epsilon,
            {"count": count, "sum": total},
            iterations=t,
            split="improved" if improved else "sensitivity",
        )
        return C.reshape(n, -1), ledger

    return run


def _dplloyd_gaussian(X, epsilon, rng, n, trial=None, delta=GAUSSIAN_DELTA):
    """A1 with Gaussian noise spending (ε, δ) in zCDP (δ = 1e-6 unless ``dpcluster audit
    --delta`` says otherwise), batched over the trials."""
    from ..algorithms.methods import gaussian_budget

    count, total = rng.spawn(2)
    inits = np.repeat(_inits(1), n, axis=0)
    C, ledger = dplloyd_batch(
        X,
        inits,
        epsilon,
        {"count": count, "sum": total},
        iterations=5,
        **gaussian_budget(epsilon, delta),
    )
    return C.reshape(n, -1), ledger


def _per_trial(one: Callable[[np.ndarray, float, np.random.Generator], tuple]):
    """A run that loops over trials: ``one(X, ε, rng) -> (centroids, ledger)``, or
    ``(centroids, ledger, path)`` with the trial's discrete path (:func:`path_of`)."""

    def run(X, epsilon, rng, n, trial: TrialIndex | None = None):
        out, ledger = [], None
        for i, g in enumerate(rng.spawn(n)):
            if trial is not None:
                trial.current = i
            C, ledger, *path = one(X, epsilon, g)
            if trial is not None and path:
                trial.paths.append(path[0])
            out.append(np.asarray(C, float).reshape(-1))
        return np.array(out), ledger

    return run


def _eugkm_one(X, epsilon, rng):
    res = eugkm(X, K_CENTRAL, epsilon, _inits(4), rng, max_iter=10, distances="float64")
    return res.centroids, res.ledger


def _hybrid_one(X, epsilon, rng):
    res = hybrid(
        X,
        K_CENTRAL,
        epsilon,
        _inits(4),
        rng,
        lloyd_runs=1,
        force=True,
        max_iter=10,
        distances="float64",
    )[0]
    return res.centroids, res.ledger


def _pgkm_one(X, epsilon, rng):
    res = genetic_kmeans(X, K_CENTRAL, rng, epsilon, pool=20, selected=4, iterations=3)
    return res.centroids, res.ledger


def _lsh_gaussian(X, epsilon, rng, n, trial=None, delta=GAUSSIAN_DELTA):
    return _per_trial(lsh_gaussian_one(K_CENTRAL, delta))(X, epsilon, rng, n, trial)


def _capped_gaussian(X, epsilon, rng, n, trial=None, delta=GAUSSIAN_DELTA):
    return _per_trial(capped_one(K_CENTRAL, delta))(X, epsilon, rng, n, trial)


def _clipped_one(X, epsilon, rng):
    res = fit_dplloyd_improved(X, K_CENTRAL, epsilon, rng, clip=0.5)
    return res.centroids, res.ledger


def _mean_one(X, epsilon, rng):
    res = private_mean(X, K_CENTRAL, epsilon, rng)
    return res.centroids, res.ledger


def _auto_one(X, epsilon, rng):
    res = auto(X, K_CENTRAL, epsilon, rng)
    return res.centroids, res.ledger, path_of(res)


#: the estimator's fits a switch target may run
SWITCH_FITS = {"auto": auto, "dplloyd_improved": fit_dplloyd_improved, "hybrid": fit_hybrid}


def _fit_in(method: str, k: int):
    fit = SWITCH_FITS[method]

    def one(X, epsilon, rng):
        res = fit(X, k, epsilon, rng)
        return res.centroids, res.ledger, path_of(res)

    return one


#: (rule, k, d) of the switch targets: each puts its pair at the rule's first switch
#: (rule, k, d, which switch: 0 the first) of the switch targets; EUGkM's m first switches
#: where auto's method does (a grid becomes possible), so its target takes the second
SWITCHES = (
    ("auto", "auto's method", 2, 2, 0),
    ("hybrid", "the hybrid switch", 2, 2, 0),
    ("auto", "EUGkM's grid m", 2, 2, 1),
    ("auto", "the clip share", 3, 5, 0),
    ("dplloyd_improved", "improved DPLloyd's passes t", 3, 5, 0),
)


def switch_pair(rule: str, k: int, d: int, nth: int = 0, planned: bool = True):
    """``pair(ε)``: D and D + corner at the ``nth`` N where ``rule`` switches at (k, d)
    and the ε it reads: what is left after Ñ when ``planned`` (the plan's rules), else ε
    (the standard N when the scan finds none)."""

    def pair(epsilon):
        used = split(epsilon, COUNT_SHARE)[1] if planned else epsilon
        points = switch_points(rules(k, d, used)[rule])
        return pair_at(points[nth] if len(points) > nth else N_CENTRAL, d)

    return pair


def switch_targets() -> list[Target]:
    """The estimator's planned fits at a switch of each of their size rules, found by
    scanning N (:mod:`.switches`): the discrete test sees a path that one side takes and
    the other does not, and the white-box refuses when that happens."""
    return [
        Target(
            name=f"{method} @ {rule}",
            covers=(method,),
            kind="central",
            params={"k": k, "d": d, "neighbour": "D + corner at the rule's first switch"},
            trials=200 if method == "hybrid" else 300,
            run=_per_trial(_fit_in(method, k)),
            pair=switch_pair(rule, k, d, nth),
            per_trial=True,
            at_epsilon=True,
            note=f"pair at the first switch of {rule} (scanned N)",
        )
        for method, rule, k, d, nth in SWITCHES
    ]


def _gkm_one(block: str):
    def one(X, epsilon, rng):
        res = gkm(X, K_CENTRAL, epsilon, rng, block=block)
        return res.centroids, res.ledger

    return one


# --- GkM's aggregation step at worst-case block outputs -------------------------------------

GKM_BLOCKS = 10


def gkm_block_pair() -> tuple[np.ndarray, np.ndarray]:
    """Block outputs (l, k, d): every block at the centre, except block 0, which sits at the
    corner -r in D and at +r in D'. Alignment leaves a corner block unchanged, so the
    average moves by 2r/l in every one of the k·d coordinates: the full sensitivity."""
    D = np.zeros((GKM_BLOCKS, K_CENTRAL, D_CENTRAL))
    D2 = D.copy()
    D[0], D2[0] = -1.0, 1.0
    return D, D2


def _gkm_aggregate_one(outputs, epsilon, rng):
    res = gkm_aggregate(outputs, epsilon, rng)
    return res.centroids, res.ledger


def central_targets() -> list[Target]:
    """The central (Paper A and beyond) targets: worst-case pair D, D + corner."""
    central = {"N": N_CENTRAL, "d": D_CENTRAL, "k": K_CENTRAL, "neighbour": "D + corner"}
    return [
        Target(
            name="dplloyd",
            covers=("dplloyd",),
            kind="central",
            params={**central, "iterations": 5},
            trials=100_000,
            run=_dplloyd(False),
            pair=central_pair,
        ),
        Target(
            name="dplloyd_improved",
            covers=("dplloyd_improved",),
            kind="central",
            params=central,
            trials=100_000,
            run=_dplloyd(True),
            pair=central_pair,
        ),
        Target(
            name="dplloyd (gaussian)",
            covers=("dplloyd",),
            kind="central",
            params={**central, "iterations": 5, "delta": GAUSSIAN_DELTA},
            trials=40_000,
            run=_dplloyd_gaussian,
            pair=central_pair,
            takes_delta=True,
            note="discrete Gaussian noise on the lattice, composed in zCDP; bounds at δ",
        ),
        Target(
            name="eugkm",
            covers=("eugkm",),
            kind="central",
            params={**central, "init_sets": 4, "max_iter": 10},
            trials=3_000,
            run=_per_trial(_eugkm_one),
            pair=central_pair,
            per_trial=True,
        ),
        Target(
            name="hybrid",
            covers=("hybrid",),
            kind="central",
            params={**central, "force": True, "init_sets": 4},
            trials=3_000,
            run=_per_trial(_hybrid_one),
            pair=central_pair,
            per_trial=True,
        ),
        Target(
            name="pgkm",
            covers=("pgkm",),
            kind="central",
            params={**central, "pool": 20, "selected": 4, "iterations": 3},
            trials=1_000,
            run=_per_trial(_pgkm_one),
            pair=central_pair,
            per_trial=True,
            note="white-box sums the exact exponential-mechanism selection probabilities",
        ),
        *(
            Target(
                name="lsh_splits" + ("" if ball is None else " (ball)"),
                covers=("lsh_splits",),
                kind="central",
                params={**central, "n_init": 1, **({} if ball is None else {"ball": ball})},
                trials=1_000,
                run=_per_trial(lsh_one(K_CENTRAL, ball=ball)),
                pair=central_pair,
                per_trial=True,
                note=note,
            )
            for ball, note in (
                (None, ""),
                (1.0, "records projected into the unit ball; Laplace sums charged min(d, √d·R)"),
            )
        ),
        Target(
            name="lsh_splits (gaussian)",
            covers=("lsh_splits_gaussian",),
            kind="central",
            params={**central, "n_init": 1, "delta": GAUSSIAN_DELTA},
            trials=1_000,
            run=_lsh_gaussian,
            pair=central_pair,
            per_trial=True,
            takes_delta=True,
            note="Gaussian leaf sums and 21 levels of Laplace counts, composed by Rényi "
            "DP; bounds at δ",
        ),
        *(
            Target(
                name="dpm" + ("" if rule == "published" else f" ({rule} leaves)"),
                covers=("dpm",),
                kind="central",
                params={**central, "n_init": 1, "leaf_rule": rule},
                trials=1_000,
                run=_per_trial(functools.partial(dpm_one, K_CENTRAL, leaf_rule=rule)),
                pair=central_pair,
                per_trial=True,
                note=note,
            )
            for rule, note in (
                ("published", "pure ε: the gap quantile, 3 count and 2 split levels (k = 2)"),
                ("child", "auto's leaf rule: a half at the leaf limit closes alone"),
            )
        ),
        Target(
            name="dplloyd_capped",
            covers=("dplloyd_capped",),
            kind="central",
            params={**central, "iterations": CAPPED_ITERATIONS},
            trials=2_000,
            run=_per_trial(capped_one(K_CENTRAL)),
            pair=central_pair,
            per_trial=True,
            note="Laplace counts and shifted sums, each record's shift capped",
        ),
        Target(
            name="dplloyd_capped (gaussian)",
            covers=("dplloyd_capped",),
            kind="central",
            params={**central, "iterations": CAPPED_ITERATIONS, "delta": GAUSSIAN_DELTA},
            trials=2_000,
            run=_capped_gaussian,
            pair=central_pair,
            per_trial=True,
            takes_delta=True,
            note="Gaussian counts and shifted sums in zCDP; bounds at δ",
        ),
        *pe_targets(central, central_pair, _per_trial),
        Target(
            name="dplloyd_improved (clip)",
            covers=("dplloyd_improved",),
            kind="central",
            params={**central, "clip": 0.5},
            trials=1_000,
            run=_per_trial(_clipped_one),
            pair=central_pair,
            per_trial=True,
            note="the estimator's opt-in clipping: a private radius, then DPLloyd on the "
            f"clipped records (clipped where N·clip·ε ≥ {MIN_N_EPSILON:.3g}: at every ε here)",
        ),
        Target(
            name="private_mean",
            covers=("private_mean",),
            kind="central",
            params=central,
            trials=5_000,
            run=_per_trial(_mean_one),
            pair=central_pair,
            per_trial=True,
        ),
        Target(
            name="auto",
            covers=("auto",),
            kind="central",
            params=central,
            trials=500,
            run=_per_trial(_auto_one),
            pair=central_pair,
            per_trial=True,
            note="the method auto chooses from its noisy count Ñ: a function of a release",
        ),
        *switch_targets(),
        Target(
            name="gkm (aggregation)",
            covers=("gkm", "gkm_3k"),
            kind="central",
            params={
                "blocks": GKM_BLOCKS,
                "k": K_CENTRAL,
                "d": D_CENTRAL,
                "neighbour": "one block output -r -> +r",
            },
            trials=5_000,
            run=_per_trial(_gkm_aggregate_one),
            pair=gkm_block_pair,
            per_trial=True,
            note="the private step alone, at worst-case block outputs",
        ),
        Target(
            name="gkm",
            covers=("gkm",),
            kind="central",
            params={**central, "block": "N^0.6"},
            trials=2_000,
            run=_per_trial(_gkm_one("N^0.6")),
            pair=central_pair,
            whitebox=False,
            per_trial=True,
            note="whole algorithm, black-box only: block outputs move far less than the "
            "sensitivity bound on ordinary data",
        ),
        Target(
            name="gkm_3k",
            covers=("gkm_3k",),
            kind="central",
            params={**central, "block": "3k"},
            trials=2_000,
            run=_per_trial(_gkm_one("3k")),
            pair=central_pair,
            whitebox=False,
            per_trial=True,
            note="whole algorithm, black-box only",
        ),
        *comparator_targets(),
    ]
