"""The audit driver: run each target on both neighbours, bound ε from below, compare.

For every (target, ε) the driver draws ``trials`` runs on D and on D' from streams keyed by
(seed, target, ε, side), records every run's exact transcript log-likelihood ratio through
the release hook (:mod:`dpcluster.privacy.transcript`), and computes

* the black-box bound from the outputs alone (a linear score fitted on the first halves:
  the mean difference of the output features over their pooled variance);
* the white-box bound from the log-likelihood ratios, in both directions.

The verdict compares the larger bound with the ε the run's ledger claims and with the ε it
proves (docs/audit.md). Results do not depend on ``jobs``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..exits import Exit
from ..privacy import observe
from ..rng import stream
from .catalogue import not_private, targets
from .stats import blackbox_ceiling, blackbox_epsilon, discrete_epsilon, whitebox_epsilon
from .targets import Target, TrialIndex

DEFAULT_EPSILONS = (0.5, 1.0, 2.0)
DEFAULT_SEED = 20261201
#: exit statuses of ``dpcluster audit`` (also in the CLI help and docs/audit.md)
EXIT_CONSISTENT, EXIT_CLAIM_VIOLATED, EXIT_PROVABLE_VIOLATED = (
    Exit.OK,
    Exit.CLAIM_VIOLATED,
    Exit.PROVABLE_VIOLATED,
)
#: relative slack for floating-point rounding in a log-likelihood ratio at its maximum
ROUNDING = 1e-9

COLUMNS = [
    "algorithm",
    "covers",
    "kind",
    "params",
    "epsilon",
    "epsilon_claimed",
    "epsilon_provable",
    "delta_claimed",
    "trials",
    "epsilon_lb_blackbox",
    "blackbox_ceiling",
    "epsilon_lb_whitebox",
    "epsilon_lb_discrete",
    "release_lb_over_booked",
    "verdict",
    "note",
    "seconds",
]


class TranscriptLLR:
    """Release observer: ``ln P(transcript | data) − ln P(transcript | other)`` per trial.

    Every release carries its query as a function of a dataset; evaluating it on both
    inputs and the mechanism's exact log-likelihood of the released output gives each
    release's contribution. Batched releases carry the trial axis first; per-trial runs set
    :attr:`trial` before each trial.
    """

    def __init__(self, data, other, n: int, per_trial: bool):
        self.data, self.other, self.n, self.per_trial = data, other, n, per_trial
        self.llr = np.zeros(n)
        self.trial = TrialIndex()
        self.releases = 0
        #: each release's own LLR per trial, keyed by (purpose, its ordinal in the run), and
        #: the ε its mechanism books: a release is checked against its own ledger entry
        self.per_release: dict[tuple[str, int, float], np.ndarray] = {}
        self.release_epsilon: dict[tuple[str, int, float], float] = {}
        self.release_delta: dict[tuple[str, int, float], float] = {}
        self._ordinal: dict[str, int] = {}
        self._trial_seen = -1
        #: the first release whose drawn noise gives more than its mechanism books
        self.miscalibrated = ""

    def __call__(self, rel) -> None:
        mech = rel.mechanism
        if not self.miscalibrated and (found := miscalibration(mech)):
            self.miscalibrated = f"release '{rel.purpose}': {found}"
        ll = np.asarray(mech.log_likelihood(rel.output, rel.query(self.data)), float) - np.asarray(
            mech.log_likelihood(rel.output, rel.query(self.other)), float
        )
        if self.per_trial and self.trial.current != self._trial_seen:
            self._ordinal, self._trial_seen = {}, self.trial.current
        ordinal = self._ordinal.get(rel.purpose, 0)
        self._ordinal[rel.purpose] = ordinal + 1
        # trials of a planned fit take different paths, so the same ordinal may book
        # different ε: a release is compared with trials that booked the same
        key = (rel.purpose, ordinal, float(mech.epsilon))
        own = self.per_release.setdefault(key, np.zeros(self.n))
        # a batched release with r rows per trial is r reports of its mechanism (local
        # targets encode several values per trial); elsewhere one row is one trial
        rows = np.shape(rel.output)[0] if rel.batch and np.ndim(rel.output) else self.n
        reports = max(1, rows // self.n) if rel.batch and not self.per_trial else 1
        self.release_epsilon[key] = float(mech.epsilon) * reports
        # a Gaussian release's ε is stated at its δ, and is checked at that δ
        self.release_delta[key] = float(mech.delta) * reports if getattr(mech, "rho", 0) else 0.0
        if rel.batch and not self.per_trial:
            per_trial = ll.reshape(self.n, -1).sum(axis=1)
            self.llr += per_trial
            own += per_trial
        else:
            self.llr[self.trial.current] += float(ll.sum())
            own[self.trial.current] += float(ll.sum())
        self.releases += 1

    def worst_release(self) -> tuple[float, str]:
        """The largest ratio of a release's certified ε_lb (white-box, δ = 0) to the ε its
        ledger entry books, and which release it is. Above 1 a ledger entry understates
        its release: with exact likelihoods one trial past the booked ε proves it."""
        worst, which = 0.0, ""
        for key, llr in self.per_release.items():
            booked = self.release_epsilon[key]
            if booked > 0:
                ratio = whitebox_epsilon(llr, self.release_delta[key]) / booked
                if ratio > worst:
                    worst, which = ratio, f"{key[0]} #{key[1] + 1}"
        return worst, which


def miscalibration(mech) -> str:
    """What a mechanism's drawn noise gives beyond what it books, or "": a Gaussian's
    Δ_γ²/(2σ²) against its ρ, a Laplace's Δ_γ/σ against its ε (exact, no trials)."""
    if getattr(mech, "rho", 0) and hasattr(mech, "drawn_rho"):
        drawn, booked, what = mech.drawn_rho, float(mech.rho), "ρ"
    elif hasattr(mech, "drawn_epsilon"):
        drawn, booked, what = mech.drawn_epsilon, float(mech.epsilon), "ε"
    else:
        return ""
    if drawn > booked * (1 + ROUNDING):
        return f"its noise gives {what} = {drawn:.6g}, above the {booked:.6g} it books"
    return ""


@dataclass
class SideRuns:
    features: np.ndarray
    llr: np.ndarray
    ledger: object
    worst_release: tuple[float, str] = (0.0, "")
    #: the first release whose noise gives more than it books (:func:`miscalibration`)
    miscalibrated: str = ""
    #: each trial's discrete path (:func:`~.targets.path_of`), when the target reports it
    paths: tuple = ()


def _run_side(
    target: Target, data, other, epsilon: float, n: int, seed: int, side: str
) -> SideRuns:
    rng = stream(seed, "audit", target.name, repr(float(epsilon)), side)
    if target.kind == "local":  # one trial's input, repeated trial by trial (trial-major)
        data, other = (np.concatenate([np.asarray(x)] * n) for x in (data, other))
    rec = TranscriptLLR(data, other, n, target.per_trial)
    if target.whitebox:
        with observe(rec):
            features, ledger = target.run(data, epsilon, rng, n, rec.trial)
    else:
        features, ledger = target.run(data, epsilon, rng, n, rec.trial)
    return SideRuns(
        np.asarray(features),
        rec.llr,
        ledger,
        rec.worst_release() if target.whitebox else (0.0, ""),
        rec.miscalibrated,
        tuple(rec.trial.paths),
    )


def linear_scores(F: np.ndarray, F2: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Black-box statistics, each fitted on the first halves only: the linear score
    ``F @ w`` with ``w = (mean F2 − mean F)/(pooled variance)``, and its distance from the
    fitting halves' median, which sees a side whose outputs spread wider on both tails
    (:func:`~.stats.blackbox_epsilon` tries both directions of each)."""
    h, h2 = len(F) // 2, len(F2) // 2
    a = F[:h].astype(np.float64)
    b = F2[:h2].astype(np.float64)
    var = (a.var(axis=0) + b.var(axis=0)) / 2.0
    w = (b.mean(axis=0) - a.mean(axis=0)) / (var + 1e-12)
    s, s2 = F.astype(np.float64) @ w, F2.astype(np.float64) @ w
    centre = float(np.median(np.concatenate([s[:h], s2[:h2]]))) if h + h2 else 0.0
    return [(s, s2), (np.abs(s - centre), np.abs(s2 - centre))]


def paths_differ(a: tuple, b: tuple, share: float = 0.05, least: int = 20) -> str:
    """A path (:func:`~.targets.path_of`) taken by at least ``share`` of one side's trials,
    and by ``least`` of them, and by none of the other's, or "" (a path seen that often
    under one neighbour cannot be absent under the other by chance at the audited ε).
    The white-box likelihood assumes that every decision is a function of earlier
    releases, so both sides would take the same path given the same releases; a path
    only one side ever takes means a decision read the data, and the white-box bound is
    then refused (docs/audit.md)."""
    for one, other in ((a, b), (b, a)):
        if not one:
            continue
        values, counts = np.unique(np.asarray(one, dtype=str), return_counts=True)
        seen = set(other)
        for v, c in zip(values, counts, strict=True):
            if c >= max(share * len(one), least) and v not in seen:
                return str(v)
    return ""


def verdict(lb_claimed: float, lb_provable: float, claimed: float, provable: float) -> str:
    """``consistent``, ``violation`` (the claimed ε is exceeded) or ``violation of
    provable ε`` (a bug in dpcluster's accounting or mechanisms). Each bound is computed at
    the δ of the ε it is compared with."""
    if lb_provable > provable * (1 + ROUNDING) + 1e-12:
        return "violation of provable ε"
    if lb_claimed > claimed * (1 + ROUNDING) + 1e-12:
        return "violation"
    return "consistent"


def _bounds(a: SideRuns, b: SideRuns, scores, delta: float, whitebox: bool) -> tuple[float, float]:
    """(black-box, white-box) lower bounds at δ; white-box NaN when it does not apply.
    ``scores``: :func:`linear_scores`."""
    bb = blackbox_epsilon([s for s, _ in scores], [s2 for _, s2 in scores], delta)
    wb = (
        max(whitebox_epsilon(a.llr, delta), whitebox_epsilon(b.llr, delta))
        if whitebox
        else float("nan")
    )
    return bb, wb


def audit_target(
    target: Target,
    epsilon: float,
    trials: int | None = None,
    seed: int = DEFAULT_SEED,
    delta: float | None = None,
) -> dict:
    """One audit.csv row for ``target`` at ``epsilon`` (and, for a Gaussian target, at
    ``delta`` when given)."""
    n = int(trials or target.trials)
    if delta is not None and target.takes_delta:
        target = dataclasses.replace(target, run=functools.partial(target.run, delta=delta))
    start = time.perf_counter()
    D, D2 = target.pair(epsilon) if target.at_epsilon else target.pair()
    a = _run_side(target, D, D2, epsilon, n, seed, "D")
    b = _run_side(target, D2, D, epsilon, n, seed, "D'")
    ledger = a.ledger
    claimed, provable = ledger.claimed_epsilon, ledger.total_epsilon
    delta_claimed = ledger.claimed_delta
    notes = [target.note] if target.note else []
    scores = linear_scores(a.features, b.features)
    bb, wb = _bounds(a, b, scores, delta_claimed, target.whitebox)
    same_delta = ledger.total_delta == delta_claimed
    bb0, wb0 = (
        (bb, wb) if same_delta else _bounds(a, b, scores, ledger.total_delta, target.whitebox)
    )
    if a.features.shape[1] == 0:  # no output to look at
        bb = bb0 = float("nan")
        notes.append("no black-box bound: the entry returns no 'centroids'")
    disc = discrete_epsilon(a.paths, b.paths) if a.paths and b.paths else float("nan")
    if (only := paths_differ(a.paths, b.paths)) and target.whitebox:
        wb = wb0 = float("nan")
        notes.append(f"white-box refused: only one side took the path '{only[:80]}'")
    if target.at_epsilon:
        notes.append(f"pair at N = {len(D)} -> {len(D2)}")
    lb = np.nanmax([bb, wb, disc, 0.0])
    lb0 = np.nanmax([bb0, wb0, disc, 0.0])
    ratio, which = max(a.worst_release, b.worst_release)
    release_violated = ratio > 1 + ROUNDING  # one release leaks more than its entry books
    if release_violated:
        notes.append(f"release '{which}' certified at {ratio:.3g}x the ε its ledger entry books")
    if miscalibrated := a.miscalibrated or b.miscalibrated:
        release_violated = True
        notes.append(miscalibrated)
    ceiling = blackbox_ceiling(n)
    if bb == bb and bb >= 0.95 * ceiling:
        notes.append(f"black-box at its ln(n/3.7) ceiling ({ceiling:.2f})")
    if lb < 0.5 * min(provable, claimed):
        notes.append("loose: the bound is below half of the ε it checks")
    return {
        "algorithm": target.name,
        "covers": ",".join(target.covers),
        "kind": target.kind,
        "params": json.dumps(target.params, sort_keys=True),
        "epsilon": float(epsilon),
        "epsilon_claimed": claimed,
        "epsilon_provable": provable,
        "delta_claimed": delta_claimed,
        "trials": n,
        "epsilon_lb_blackbox": bb,
        "blackbox_ceiling": ceiling,
        "epsilon_lb_whitebox": wb,
        "epsilon_lb_discrete": disc,
        "release_lb_over_booked": ratio if target.whitebox else float("nan"),
        "verdict": "violation of provable ε"
        if release_violated
        else verdict(lb, lb0, claimed, provable),
        "note": "; ".join(notes),
        "seconds": time.perf_counter() - start,
    }


@functools.lru_cache(maxsize=1)
def _targets() -> dict[str, Target]:
    return targets()


def audit_names() -> list[str]:
    return list(_targets())


def select(names: list[str] | None) -> list[str]:
    """Target names for a list of target or registry names (None: all targets)."""
    all_targets = _targets()
    if not names:
        return list(all_targets)
    chosen = []
    for name in names:
        hits = [t.name for t in all_targets.values() if name == t.name or name in t.covers]
        if not hits and name not in not_private():
            raise KeyError(name)
        chosen += [h for h in hits if h not in chosen]
    return chosen


def run_audit(
    names: list[str] | None = None,
    epsilons=DEFAULT_EPSILONS,
    trials: int | None = None,
    jobs: int = 1,
    seed: int = DEFAULT_SEED,
    extra: list[Target] | None = None,
    delta: float | None = None,
) -> pd.DataFrame:
    """audit.csv as a table: one row per (target, ε), then one ``not private`` row per
    non-private registry entry asked for (all of them when ``names`` is None). ``extra``
    targets (plugins: :func:`~.targets.entry_target`) are audited too."""
    chosen = [_targets()[n] for n in select(names)] if names is None or names else []
    chosen += list(extra or [])
    tasks = [(t, float(e)) for t in chosen for e in epsilons]
    if jobs > 1 and len(tasks) > 1:
        from joblib import Parallel, delayed

        rows = Parallel(n_jobs=jobs)(
            delayed(audit_target)(t, e, trials, seed, delta) for t, e in tasks
        )
    else:
        rows = [audit_target(t, e, trials, seed, delta) for t, e in tasks]
    skipped = not_private()
    listed = list(skipped) if names is None else [n for n in names if n in skipped]
    rows += [
        {
            "algorithm": n,
            "covers": n,
            "kind": "",
            "params": "{}",
            "epsilon": float("nan"),
            "verdict": "not private",
            "note": skipped[n],
        }
        for n in listed
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def exit_status(table: pd.DataFrame) -> int:
    verdicts = set(table["verdict"])
    if "violation of provable ε" in verdicts:
        return EXIT_PROVABLE_VIOLATED
    if "violation" in verdicts:
        return EXIT_CLAIM_VIOLATED
    return EXIT_CONSISTENT


def write_audit(table: pd.DataFrame, out: Path | str) -> list[Path]:
    """audit.csv, audit.md and audit.png under ``out`` (atomic writes)."""
    from ..results import atomic_write_text, to_csv
    from .report import audit_figure, audit_markdown

    out = Path(out)
    atomic_write_text(out / "audit.csv", to_csv(table))
    atomic_write_text(out / "audit.md", audit_markdown(table))
    paths = [out / "audit.csv", out / "audit.md"]
    if table["epsilon"].notna().any():
        paths.append(audit_figure(table, out / "audit.png"))
    return paths
