"""The replay audit: run a mechanism on neighbours with the same randomness and the same
released values, and check every release against what it declares (docs/audit.md,
"Replay").

A grey-box record/replay audit in the manner of Cebere, Erb, Desfontaines, Bellet and
Fitzsimons (arXiv 2602.17454). For a target and a neighbouring pair (D, D'):

1. **Record.** Run on D with a generator from (seed, target, ε). The release hook
   (:mod:`dpcluster.privacy.transcript`) records each release: its mechanism, purpose,
   shape, ε, δ, sensitivity and scale, the value released and, for a release whose draws
   depend on the data (the exponential mechanism), the generator's state after it.
2. **Replay.** Run on D' with a generator in the same state. At the i-th release the hook
   requires the same mechanism, purpose, shape, ε, δ, sensitivity and scale as D's i-th,
   measures the query difference (below), and hands the algorithm D's released value, so
   that everything after it is the same post-processing on both sides. Additive noise
   drawn from the same generator state is the same on both sides, so for a Laplace or
   Gaussian release the difference of the two *outputs* is the difference of the answers
   the code actually computed, in lattice steps: no trust in the declared query is needed.
   For the exponential mechanism the declared loss is evaluated on both sides; for
   randomised response the two outputs' Hamming distance is that of the clean encodings.
3. **Conclude.** With every release replayed, the run's output must be bit-identical on
   both sides, and so must its ledger: a difference means the output read the data outside
   the hook (an exact count, a cluster skipped without noise, a release that bypasses the
   hook). The measured differences, composed (each pure release ε·m/Δ, each Gaussian
   ρ·(m/Δ)²), must not exceed what the ledger books.

Two more runs check the randomness itself: the same seed must reproduce every release (no
randomness from outside the generator passed in, numpy's and Python's global generators
untouched), and another seed must change every noisy release (noise that ignores the
generator passed in is caught).

Pairs: the target's own pair both ways, and, for central targets on records in [-1, 1]^d,
D plus each corner (±1, …, ±1), D plus a record drawn at random in the box, D plus a copy
of one of its records, and D less one record. A target placed at a rule's switch (the
N-scan of :mod:`.switches`) brings that pair with it.

Verdicts: ``clean``; ``books ∞`` (an exact read the ledger books as unbounded: reported,
not a violation); ``not replayable`` (a target whose releases are not functions of the data
under fixed randomness, e.g. GkM's shuffle); ``violation`` (the first failure, with the
release, its source location and both values).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
import random
import time
from dataclasses import dataclass, field

import numpy as np

from ..privacy import observe
from ..privacy.mechanisms import snap_records
from ..rng import stream
from .replay_checks import (
    SLACK,
    Seen,
    _equal,
    _first_difference,
    _kind,
    _noise_problem,
    _noisy,
    _off_lattice,
    _site,
    measure,
    signature,
)
from .target import Target
from .targets import TrialIndex

#: trials per run: enough to exercise a batched target's run axis, few enough to be quick
REPLAY_TRIALS = 2


class _ProbeEnds(BaseException):
    """Ends an other-seed probe where the run's public randomness (not its releases) took
    another path: what was compared up to there stands."""


class Diverged(BaseException):
    """Raised inside a replayed run at its first failure. A BaseException, so that an
    algorithm's (or plugin's) own ``except Exception`` cannot swallow it."""


class Recorder:
    """Observer of the recorded side."""

    def __init__(self, trial: TrialIndex):
        self.seen: list[Seen] = []
        self.trial = trial

    def __call__(self, rel) -> None:
        state = rel.rng.bit_generator.state if rel.rng is not None else None
        self.seen.append(
            Seen(
                signature(rel),
                copy.deepcopy(rel.output),
                copy.deepcopy(getattr(rel, "answer", None)),
                copy.deepcopy(state),
                _site(),
                self.trial.current,
                _noisy(rel.mechanism),
            )
        )


@dataclass
class Cost:
    """What one pair's measured differences compose to, per trial (module docstring)."""

    pure: np.ndarray
    rho: np.ndarray


class Replayer:
    """Observer of the replayed side: checks each release against the recorded one,
    measures it, and returns the recorded value."""

    def __init__(
        self,
        seen: list[Seen],
        data,
        other,
        n: int,
        trial: TrialIndex,
        per_trial: bool,
        probe: str = "",
    ):
        self.seen, self.data, self.other, self.n, self.trial = seen, data, other, n, trial
        self.per_trial = per_trial
        #: "same seed" or "other seed": the same data again, checking the noise instead
        self.probe = probe
        self.i = 0
        self.worst = (0.0, "")
        self.cost = Cost(np.zeros(n), np.zeros(n))

    def _compose(self, mech, share: np.ndarray) -> None:
        """Add one release's measured cost to each trial: ε·m/Δ (pure) or ρ·(m/Δ)²."""
        rho = float(getattr(mech, "rho", 0.0) or 0.0)
        eps = float(mech.epsilon)
        if not rho and not math.isfinite(eps):
            return
        cost = rho * share**2 if rho else eps * share
        if cost.size % self.n == 0 and cost.size >= self.n:
            per_trial = cost.reshape(self.n, -1).sum(axis=1)  # a trial's reports add up
        elif self.per_trial:
            per_trial = np.zeros(self.n)
            per_trial[self.trial.current] = cost.sum()
        else:
            per_trial = np.full(self.n, cost.sum())  # one release all trials share
        if rho:
            self.cost.rho += per_trial
        else:
            self.cost.pure += per_trial

    def _probe(self, rel, seen: Seen) -> None:
        """The same data, every earlier release replayed: this release's value differs from
        the recorded one by the noise alone. Under the same seed it must not differ (no
        randomness from outside the generator passed in); under another it must differ in
        every entry, not by one shared amount (:func:`_noise_problem`)."""
        if self.probe == "same seed":
            if not _equal(rel.output, seen.output):
                self._fail(
                    rel,
                    "a second run with the same generator releases another value "
                    "(randomness from outside the generator passed in)",
                )
        elif seen.noisy:
            additive = _kind(rel.mechanism) in ("LaplaceMechanism", "GaussianMechanism")
            if problem := _noise_problem(seen.output, rel.output, entrywise=additive):
                self._fail(rel, problem)

    def _fail(self, rel, what: str):
        raise Diverged(f"release #{self.i + 1} '{rel.purpose}' at {_site()}: {what}")

    def __call__(self, rel):
        if self.i >= len(self.seen):
            self._fail(rel, f"D' makes more releases than D ({len(self.seen)})")
        seen = self.seen[self.i]
        sig = signature(rel)
        if sig != seen.signature and self.probe == "other seed":
            raise _ProbeEnds  # public randomness took another path: nothing more to compare
        if sig != seen.signature:
            keys = [k for k in {**sig, **seen.signature} if sig.get(k) != seen.signature.get(k)]
            shown = "; ".join(f"{k} {seen.signature.get(k)} on D, {sig.get(k)} on D'" for k in keys)
            self._fail(rel, f"the release differs between neighbours: {shown}")
        if problem := _off_lattice(rel):
            self._fail(rel, problem)
        if self.probe:
            self._probe(rel, seen)
            self.i += 1
            return copy.deepcopy(seen.output)
        measured, bound, what = measure(rel, seen, self.data, self.other, self.n)
        ratio = measured / bound if bound > 0 else np.where(measured > 0, np.inf, 0.0)
        top = float(np.max(ratio)) if ratio.size else 0.0
        if top > self.worst[0]:
            self.worst = (top, f"#{self.i + 1} {rel.purpose}")
        if top > 1 + SLACK:
            self._fail(
                rel,
                f"{what} is {float(np.max(measured)):.6g}, above the declared "
                f"{bound:.6g} (sensitivity {getattr(rel.mechanism, 'sensitivity', '?')})",
            )
        self._compose(rel.mechanism, np.minimum(ratio, 1.0))
        if rel.rng is not None and seen.rng_state is not None:
            rel.rng.bit_generator.state = copy.deepcopy(seen.rng_state)
        self.i += 1
        return copy.deepcopy(seen.output)


@dataclass
class Side:
    """One run of a target."""

    features: np.ndarray
    ledger: object
    seen: list[Seen] = field(default_factory=list)
    globals_touched: str = ""
    failure: str = ""
    replayer: Replayer | None = None


def _global_states():
    return np.random.get_state(), random.getstate()


def _same_global(a, b) -> str:
    (np_a, py_a), (np_b, py_b) = a, b
    if np_a[0] != np_b[0] or not np.array_equal(np_a[1], np_b[1]) or np_a[2:] != np_b[2:]:
        return "numpy's global generator"
    if py_a != py_b:
        return "Python's random module"
    return ""


def _prepare(target: Target, data, n: int):
    if target.kind == "local":  # one trial's input, repeated trial by trial (trial-major)
        return np.concatenate([np.asarray(data)] * n)
    return data


def _run(target: Target, data, epsilon: float, n: int, seed: int, observer_of, hook) -> Side:
    rng = stream(seed, "replay", target.name, repr(float(epsilon)))
    trial = TrialIndex()
    observer = observer_of(trial)
    before = _global_states()
    failure = ""
    features, ledger = np.zeros((n, 0)), None
    with hook(), observe(observer):
        try:
            features, ledger = target.run(data, epsilon, rng, n, trial)
        except Diverged as exc:
            failure = str(exc)
        except _ProbeEnds:
            pass
        except Exception:
            # the other-seed probe hands a run values drawn under another seed's public
            # randomness, which it may not be able to use: the probe ends there
            if getattr(observer, "probe", "") != "other seed":
                raise
    side = Side(np.asarray(features), ledger, failure=failure)
    side.globals_touched = _same_global(before, _global_states())
    if isinstance(observer, Recorder):
        side.seen = observer.seen
    else:
        side.replayer = observer
    return side


def _entries(ledger) -> list[dict] | None:
    """A ledger's entries as dicts: a :class:`~dpcluster.privacy.Ledger`'s, or those of the
    ledger dict a registry entry returns (:mod:`.generic`)."""
    if hasattr(ledger, "entries"):
        return [dataclasses.asdict(e) for e in ledger.entries]
    return getattr(ledger, "entry_dicts", None)


def _ledger_view(ledger) -> object:
    """What must be the same in two neighbours' ledgers."""
    if ledger is None:
        return None
    entries = _entries(ledger)
    if entries is None:
        return (ledger.total_epsilon, ledger.total_delta)
    keys = ("purpose", "mechanism", "epsilon", "delta", "rho", "sensitivity", "scale")
    return [tuple(e.get(key) for key in keys) for e in entries]


def _booked(ledger) -> tuple[float, float]:
    """(pure ε, ρ) the ledger books by basic composition, its entries summed."""
    entries = _entries(ledger)
    if entries is None:
        return float(ledger.total_epsilon), 0.0
    pure = sum(float(e["epsilon"]) for e in entries if not e.get("rho"))
    return float(pure), float(sum(float(e.get("rho", 0.0)) for e in entries))


def neighbour_pairs(target: Target, epsilon: float) -> list[tuple[str, object, object]]:
    """(label, D, D') pairs (module docstring)."""
    D, D2 = target.pair(epsilon) if target.at_epsilon else target.pair()
    pairs = [("the target's pair", D, D2), ("the target's pair, reversed", D2, D)]
    X = np.asarray(D)
    if (
        target.kind == "central"
        and X.ndim == 2
        and X.dtype.kind == "f"
        and len(X) > 2
        and np.all(np.abs(X) <= 1)
    ):
        d = X.shape[1]
        extra = np.random.default_rng(20261207).uniform(-1, 1, d)
        for label, record in (
            ("D + corner (1, …, 1)", np.ones(d)),
            ("D + corner (−1, …, −1)", -np.ones(d)),
            ("D + a random record", extra),
            ("D + a copy of its first record", X[0]),
        ):
            pairs.append((label, X, np.vstack([X, snap_records(record[None, :])])))
        pairs.append(("D − its last record", X, X[:-1]))
        # the same record first: an algorithm that reads records by position (centres
        # taken from the first rows) is told apart, where order must not matter
        pairs.append(("(1, …, 1) + D, the record first", X, np.vstack([np.ones((1, d)), X])))
    return pairs


def _no_hook():
    return contextlib.nullcontext()


def replay_target(
    target: Target, epsilon: float, seed: int = 20261207, trials: int = REPLAY_TRIALS
) -> dict:
    """One replay row for ``target`` at ``epsilon`` (module docstring)."""
    start = time.perf_counter()
    n = int(trials)
    hook = target.extra.get("replay_hook", _no_hook)
    row = {
        "algorithm": target.name,
        "covers": ",".join(target.covers),
        "epsilon": float(epsilon),
        "epsilon_provable": float("nan"),
        "pairs": 0,
        "releases": 0,
        "worst_ratio": 0.0,
        "worst_release": "",
        "finding": "",
    }

    findings: list[str] = []  # a target's own check (a comparator's documented split)

    def done(verdict: str, finding: str = "") -> dict:
        verdict = "violation" if findings else verdict
        row.update(verdict=verdict, seconds=time.perf_counter() - start)
        row["finding"] = "; ".join([*findings, finding] if finding else findings)
        return row

    if not target.whitebox and "replay_hook" not in target.extra:
        return done("not replayable", target.note or "its releases are not functions of the data")

    def record(trial):
        return Recorder(trial)

    first = None
    for label, D, D2 in neighbour_pairs(target, epsilon):
        data, other = _prepare(target, D, n), _prepare(target, D2, n)
        a = _run(target, data, epsilon, n, seed, record, hook)
        if first is None:
            first = a
            if a.ledger is not None:
                row["epsilon_provable"] = float(a.ledger.total_epsilon)
            check = target.extra.get("replay_check")
            if check is not None and (found := check(a.seen, epsilon)):
                findings.append(found)
        if a.failure:
            return done("violation", f"{label}: {a.failure}")
        b = _run(
            target,
            other,
            epsilon,
            n,
            seed,
            lambda t, a=a: Replayer(a.seen, other, data, n, t, target.per_trial),
            hook,
        )
        row["pairs"] += 1
        row["releases"] = max(row["releases"], len(a.seen))
        rep = b.replayer
        if rep.worst[0] > row["worst_ratio"]:
            row["worst_ratio"], row["worst_release"] = rep.worst
        where = f"{label} (N = {len(D)} -> {len(D2)})"
        if b.failure:
            return done("violation", f"{where}: {b.failure}")
        if rep.i < len(a.seen):
            nxt = a.seen[rep.i]
            return done(
                "violation",
                f"{where}: D' stops after {rep.i} releases; D's next is "
                f"'{nxt.signature['purpose']}' at {nxt.site}",
            )
        if touched := a.globals_touched or b.globals_touched:
            return done("violation", f"{where}: the run draws from {touched}")
        fa, fb = np.asarray(a.features, float), np.asarray(b.features, float)
        if fa.shape != fb.shape or not np.array_equal(fa, fb, equal_nan=True):
            j = _first_difference(fa, fb)
            return done(
                "violation",
                f"{where}: with every release replayed the output still differs ({j}): it "
                "reads the data outside the release hook",
            )
        if _ledger_view(a.ledger) != _ledger_view(b.ledger):
            return done("violation", f"{where}: the ledger differs between neighbours")
        if math.isinf(float(a.ledger.total_epsilon)):
            continue  # booked as unbounded: nothing to compose against
        pure, rho = _booked(a.ledger)
        cost = rep.cost
        if (
            float(cost.pure.max()) > pure * (1 + SLACK) + 1e-12
            or float(cost.rho.max()) > rho * (1 + SLACK) + 1e-15
        ):
            return done(
                "violation",
                f"{where}: the measured releases compose to ε = {cost.pure.max():.6g}, "
                f"ρ = {cost.rho.max():.6g}, above the ledger's ε = {pure:.6g}, ρ = {rho:.6g}",
            )
    # the randomness: the same seed reproduces every release, another changes every noisy
    # entry of every release independently
    D = _prepare(target, neighbour_pairs(target, epsilon)[0][1], n)
    for probe, probe_seed in (("same seed", seed), ("other seed", seed + 1)):
        c = _run(
            target,
            D,
            epsilon,
            n,
            probe_seed,
            lambda t, p=probe: Replayer(first.seen, D, D, n, t, target.per_trial, probe=p),
            hook,
        )
        if c.failure:
            return done("violation", f"{probe}: {c.failure}")
        if touched := c.globals_touched:
            return done("violation", f"{probe}: the run draws from {touched}")
    if math.isinf(float(first.ledger.total_epsilon)):
        return done("books ∞", "the ledger books an exact read as unbounded")
    return done("clean")
