"""What the audit runs: one :class:`Target` per private mechanism of both papers.

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

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..algorithms.dplloyd import dplloyd_batch, improved_iterations
from ..algorithms.eugkm import eugkm
from ..algorithms.gkm import gkm, gkm_aggregate
from ..algorithms.hybrid import hybrid
from ..algorithms.lsh_splits import lsh_splits
from ..algorithms.methods import auto
from ..algorithms.pgkm import genetic_kmeans
from ..algorithms.reference import private_mean
from ..errors import DpclusterError
from ..ldp.bitvector import BVCodec, RecordCodec, unpack_bits
from ..ldp.parties import decomposition_codec
from ..privacy import LOCAL, Ledger

#: what a target's run returns: outputs as features (n, p) and the ledger of one trial
RunResult = tuple[np.ndarray, Ledger]


@dataclass(frozen=True)
class Target:
    """One audited mechanism.

    name      audit row name (a registry entry, or the mechanism Paper B's entries share)
    covers    registry entries whose privacy this target checks
    kind      "central" or "local"
    params    the audited configuration, as shown in audit.csv
    trials    default trials per side
    run       ``run(data, epsilon, rng, n) -> (features (n, p), ledger of one trial)``;
              a local target's ``data`` holds every trial's input, trial after trial
    pair      ``pair() -> (D, D')``: the two neighbouring inputs
    whitebox  False when a run's releases are not functions of ``data`` (GkM's shuffle):
              then only the black-box bound applies
    per_trial True when ``run`` loops over trials itself and sets the observer's trial index
    note      what a reader should know about this target's bound
    """

    name: str
    covers: tuple[str, ...]
    kind: str
    params: dict
    trials: int
    run: Callable[..., RunResult]
    pair: Callable[[], tuple[np.ndarray, np.ndarray]]
    whitebox: bool = True
    per_trial: bool = False
    note: str = ""
    private: bool = True
    extra: dict = field(default_factory=dict)


# --- central pairs -------------------------------------------------------------------------

N_CENTRAL, D_CENTRAL, K_CENTRAL = 200, 2, 2


def central_pair(
    N: int = N_CENTRAL, d: int = D_CENTRAL, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """D: N records uniform on [-0.5, 0.5]^d (fixed seed); D' = D plus the corner (1, …, 1)."""
    D = np.random.default_rng(seed).uniform(-0.5, 0.5, (N, d))
    return D, np.vstack([D, np.ones((1, d))])


def _inits(n_sets: int, k: int = K_CENTRAL, d: int = D_CENTRAL) -> np.ndarray:
    """Fixed public initial sets (S, k, d), the same for both sides."""
    return np.random.default_rng(1).uniform(-1, 1, (n_sets, k, d))


class TrialIndex:
    """Set by per-trial runs so the observer knows which trial a release belongs to."""

    current = 0


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


def _per_trial(one: Callable[[np.ndarray, float, np.random.Generator], tuple]):
    """A run that loops over trials: ``one(X, ε, rng) -> (centroids, ledger)``."""

    def run(X, epsilon, rng, n, trial: TrialIndex | None = None):
        out, ledger = [], None
        for i, g in enumerate(rng.spawn(n)):
            if trial is not None:
                trial.current = i
            C, ledger = one(X, epsilon, g)
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


def _lsh_one(X, epsilon, rng):
    res = lsh_splits(X, K_CENTRAL, epsilon, rng, n_init=1)
    return res.centroids, res.ledger


def _mean_one(X, epsilon, rng):
    res = private_mean(X, K_CENTRAL, epsilon, rng)
    return res.centroids, res.ledger


def _auto_one(X, epsilon, rng):
    res = auto(X, K_CENTRAL, epsilon, rng)
    return res.centroids, res.ledger


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


# --- local (Paper B) -----------------------------------------------------------------------


def _codec(s: int = 1000, t: float = 8.0, lo: float = 0.0, hi: float = 16.0) -> BVCodec:
    """One digits attribute: [0, 16], t = 8 (half the range, as the Paper-B specs use)."""
    return BVCodec.draw(s, t, lo, hi, np.random.default_rng(7))


def _dpbv_attribute():
    codec = _codec()

    def pair():
        x, x2 = codec.worst_pair()
        return np.array([x]), np.array([x2])

    def run(values, epsilon, rng, n, trial=None):
        ledger = Ledger(LOCAL)
        bits = codec.encode(values, epsilon, rng, ledger)
        return unpack_bits(bits, codec.s), ledger

    return (
        pair,
        run,
        {"s": codec.s, "t": codec.t, "domain": [codec.lo, codec.hi], "m_max": codec.m_max},
    )


RECORD_ATTRIBUTES = 4


def _dpbv_record():
    """A record of 4 digits attributes, s = 256 each: what a custodian releases per record
    in the horizontal setting, and Bob per record without decomposition."""
    codec = RecordCodec.draw(
        256,
        8.0,
        np.zeros(RECORD_ATTRIBUTES),
        np.full(RECORD_ATTRIBUTES, 16.0),
        np.random.default_rng(8),
    )
    worst = [c.worst_pair() for c in codec.attributes]

    def pair():
        return (np.array([[w[0] for w in worst]]), np.array([[w[1] for w in worst]]))

    def run(records, epsilon, rng, n, trial=None):
        ledger = Ledger(LOCAL)
        bits = codec.encode(records, epsilon, rng, ledger)
        return unpack_bits(bits, codec.s).reshape(n, -1), ledger

    return (
        pair,
        run,
        {
            "attributes": RECORD_ATTRIBUTES,
            "s": codec.s,
            "t": 8.0,
            "m_max": [c.m_max for c in codec.attributes],
        },
    )


PAIRS_PER_RECORD = 10


def _decomposition():
    """Bob's decomposition release for one record in c = 10 pairs (b-fig6: about 10 per
    record on average). R² of each pair is encoded on the [0, Z] codec; the record moves
    from Bob's lower corner (R² = 0 against partners there) to the upper one (R² = Z)."""
    widths = np.full(2, 25.0)  # two of Bob's attributes on [0, 25], as in b-fig6
    codec = decomposition_codec(widths, 256, np.random.default_rng(9))
    c = PAIRS_PER_RECORD

    def pair():
        return np.zeros(c), np.full(c, codec.hi)

    def run(r2, epsilon, rng, n, trial=None):
        bits = codec.encode(r2, epsilon, rng)
        ledger = Ledger(LOCAL)
        ledger.record(codec.mechanism(epsilon), "DPBV of R² per pair", repeats=c)
        return unpack_bits(bits, codec.s).reshape(n, -1), ledger

    return pair, run, {"pairs_per_record": c, "s": codec.s, "Z": codec.hi, "m_max": codec.m_max}


def targets() -> dict[str, Target]:
    """Every audited mechanism, by name."""
    central = {"N": N_CENTRAL, "d": D_CENTRAL, "k": K_CENTRAL, "neighbour": "D + corner"}
    dpbv_pair, dpbv_run, dpbv_params = _dpbv_attribute()
    rec_pair, rec_run, rec_params = _dpbv_record()
    dec_pair, dec_run, dec_params = _decomposition()
    return {
        t.name: t
        for t in [
            Target(
                "dplloyd",
                ("dplloyd",),
                "central",
                {**central, "iterations": 5},
                100_000,
                _dplloyd(False),
                central_pair,
            ),
            Target(
                "dplloyd_improved",
                ("dplloyd_improved",),
                "central",
                central,
                100_000,
                _dplloyd(True),
                central_pair,
            ),
            Target(
                "eugkm",
                ("eugkm",),
                "central",
                {**central, "init_sets": 4, "max_iter": 10},
                3_000,
                _per_trial(_eugkm_one),
                central_pair,
                per_trial=True,
            ),
            Target(
                "hybrid",
                ("hybrid",),
                "central",
                {**central, "force": True, "init_sets": 4},
                3_000,
                _per_trial(_hybrid_one),
                central_pair,
                per_trial=True,
            ),
            Target(
                "pgkm",
                ("pgkm",),
                "central",
                {**central, "pool": 20, "selected": 4, "iterations": 3},
                1_000,
                _per_trial(_pgkm_one),
                central_pair,
                per_trial=True,
                note="white-box sums the exact exponential-mechanism selection probabilities",
            ),
            Target(
                "lsh_splits",
                ("lsh_splits",),
                "central",
                {**central, "n_init": 1},
                1_000,
                _per_trial(_lsh_one),
                central_pair,
                per_trial=True,
            ),
            Target(
                "private_mean",
                ("private_mean",),
                "central",
                central,
                5_000,
                _per_trial(_mean_one),
                central_pair,
                per_trial=True,
            ),
            Target(
                "auto",
                ("auto",),
                "central",
                central,
                500,
                _per_trial(_auto_one),
                central_pair,
                per_trial=True,
                note="the method auto chooses at this (N, d, k, ε); the choice is public",
            ),
            Target(
                "gkm (aggregation)",
                ("gkm", "gkm_3k"),
                "central",
                {
                    "blocks": GKM_BLOCKS,
                    "k": K_CENTRAL,
                    "d": D_CENTRAL,
                    "neighbour": "one block output -r -> +r",
                },
                5_000,
                _per_trial(_gkm_aggregate_one),
                gkm_block_pair,
                per_trial=True,
                note="the private step alone, at worst-case block outputs",
            ),
            Target(
                "gkm",
                ("gkm",),
                "central",
                {**central, "block": "N^0.6"},
                2_000,
                _per_trial(_gkm_one("N^0.6")),
                central_pair,
                whitebox=False,
                per_trial=True,
                note="whole algorithm, black-box only: block outputs move far less than the "
                "sensitivity bound on ordinary data",
            ),
            Target(
                "gkm_3k",
                ("gkm_3k",),
                "central",
                {**central, "block": "3k"},
                2_000,
                _per_trial(_gkm_one("3k")),
                central_pair,
                whitebox=False,
                per_trial=True,
                note="whole algorithm, black-box only",
            ),
            Target(
                "dpbv (one attribute)",
                ("dpbv_error", "dp_kcluster", "dp_dbscan", "dp_agglomerative"),
                "local",
                dpbv_params,
                10_000,
                dpbv_run,
                dpbv_pair,
            ),
            Target(
                "dpbv (record, horizontal / vertical non-decomposition)",
                ("dp_kcluster", "dp_dbscan", "dp_agglomerative", "vertical_error"),
                "local",
                rec_params,
                10_000,
                rec_run,
                rec_pair,
            ),
            Target(
                "vertical decomposition",
                ("vertical_error",),
                "local",
                dec_params,
                10_000,
                dec_run,
                dec_pair,
            ),
        ]
    }


def not_private() -> dict[str, str]:
    """Registry entries that release something non-private: listed, not audited."""
    from ..experiments import ALGORITHMS

    out = {name: info.summary for name, info in ALGORITHMS.items() if not info.private}
    out["gkm_noise"] = "diagnostic: perturbs non-private centroids"
    return out


# --- any registry entry, plugins included -------------------------------------------------


class _LedgerTotals:
    """The totals of a ledger dict (what a registry entry's cell runner returns)."""

    def __init__(self, ledger: dict):
        self.total_epsilon = float(ledger.get("total_epsilon", math.inf))
        self.claimed_epsilon = float(ledger.get("claimed_epsilon", self.total_epsilon))
        self.total_delta = float(ledger.get("total_delta", 0.0))
        self.claimed_delta = float(ledger.get("claimed_delta", self.total_delta))


def entry_target(name: str, info, params: dict | None = None, trials: int = 2_000) -> Target:
    """A central target for any registry entry (a plugin's too): one cell of ``repeat`` 1
    per trial on the standard pair (D, D + corner), streams from the trial's generator.
    The black-box bound needs the run's output: a ``centroids`` value in its row (a list
    or a JSON string); the metrics are no output (NICV is computed on the private data
    itself). The white-box bound applies when the entry releases through dpcluster's
    mechanisms and ``release`` hook, as the built-ins do."""
    from ..data import Dataset
    from ..experiments import CellContext
    from ..plugins import enforce
    from ..rng import StreamFactory

    values = {key: p.default for key, p in info.params.items()}
    values.update(params or {})

    def run(X, epsilon, rng, n, trial=None):
        d = X.shape[1]
        ds = Dataset("audit", X, K_CENTRAL, "audit pair", -np.ones(d), np.ones(d), bounds="public")
        out, ledger = [], None
        for i, g in enumerate(rng.spawn(n)):
            if trial is not None:
                trial.current = i
            streams = StreamFactory(int(g.integers(2**63 - 1)), ("audit", name))
            ctx = CellContext(
                ds,
                K_CENTRAL,
                float(epsilon),
                values,
                1,
                4,
                "uniform",
                streams,
                StreamFactory(0, ("audit-public",)),
            )
            try:
                rows, ledger = info.run_cell(ctx)
                enforce(name, info, ctx, rows, ledger)  # finite (k, d) centres, ledger ε
            except Exception as exc:  # noqa: BLE001 - the entry's fault, named in one line
                raise DpclusterError(
                    f"{name}: failed during the audit ({type(exc).__name__}: {exc})"
                ) from None
            centres = rows[0].get("centroids")  # the run's output, if the entry returns it
            if isinstance(centres, str):
                centres = json.loads(centres)
            out.append(np.ravel(np.asarray(centres, dtype=float)) if centres is not None else [])
        return np.array(out, dtype=float).reshape(n, -1), _LedgerTotals(ledger or {})

    central = {"N": N_CENTRAL, "d": D_CENTRAL, "k": K_CENTRAL, "neighbour": "D + corner"}
    return Target(
        name,
        (name,),
        "central",
        {**central, **values},
        trials,
        run,
        central_pair,
        per_trial=True,
        note="generic target",
    )
