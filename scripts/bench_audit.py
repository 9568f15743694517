"""Benchmark `dpcluster audit`: seconds per target, and the smallest overspend it detects.

Part 1 times every audit target at its default trials (both sides, white-box observation
included) against a reference timed in the same run: the same number of plain runs of the
algorithm's single-run API, one call per trial, no observer (for the batched targets that
is what the audit would cost without batching).

Part 2 plants overspends in copies of the mechanisms (never in the registry) and reports
the audit's ε_lb at a claimed ε = 1: a Laplace scale divided by f (true ε = f) for DPLloyd
and EUGkM, and diffprivlib's swapped count/sum split for improved DPLloyd at d = 10
(true ε = 1.21 × claimed).

    python scripts/bench_audit.py [--only timing|overspend] [--reference-trials N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the planted bugs' home
from dpcluster.algorithms.dplloyd import dplloyd, improved_ratio  # noqa: E402
from dpcluster.audit import audit_target, targets  # noqa: E402
from dpcluster.audit.run import DEFAULT_EPSILONS  # noqa: E402
from dpcluster.privacy import LaplaceMechanism  # noqa: E402
from tests import planted  # noqa: E402


def _reference_per_trial(name: str, target, n: int) -> float:
    """Seconds per trial of the plain single-run path (no observer, no batching)."""
    D, _ = target.pair()
    rng = np.random.default_rng(0)
    if name in ("dplloyd", "dplloyd_improved"):
        init = np.random.default_rng(1).uniform(-1, 1, (2, 2))
        start = time.perf_counter()
        for g in rng.spawn(n):
            dplloyd(D, 2, 1.0, init, g)
        return (time.perf_counter() - start) / n
    if target.kind == "local":  # one trial's input, repeated trial by trial, as the audit does
        D = np.concatenate([np.asarray(D)] * n)
    start = time.perf_counter()
    target.run(D, 1.0, rng, n)  # per-trial targets and local batches: one side, unobserved
    return (time.perf_counter() - start) / n


def timing(reference_trials: int) -> None:
    print("| target | trials/side | audit s (3 ε) | audit s/trial | reference s/trial | ratio |")
    print("|---|---|---|---|---|---|")
    total = 0.0
    for name, t in targets().items():
        secs = sum(audit_target(t, e)["seconds"] for e in DEFAULT_EPSILONS)
        total += secs
        per_trial = secs / (len(DEFAULT_EPSILONS) * 2 * t.trials)
        ref = _reference_per_trial(name, t, min(reference_trials, t.trials))
        print(
            f"| {name} | {t.trials:,} | {secs:.1f} | {per_trial:.2e} | {ref:.2e} "
            f"| {ref / per_trial:.1f}x |"
        )
    print(f"\nall targets, ε ∈ {DEFAULT_EPSILONS}, one process: {total:.0f} s")


def overspend() -> None:
    t = targets()
    print("| planted bug | true ε at claimed 1 | ε_lb white-box | ε_lb black-box | verdict |")
    print("|---|---|---|---|---|")
    for f in (1.1, 1.15, 1.2, 1.3, 1.5, 2.0):
        for name, module in (("dplloyd", planted.dplloyd_module), ("eugkm", planted.eugkm_module)):
            with mock.patch.object(module, "LaplaceMechanism", planted.scaled_laplace(f)):
                row = audit_target(t[name], 1.0)
            print(
                f"| {name}: Laplace scale / {f} | {f} | {row['epsilon_lb_whitebox']:.3f} "
                f"| {row['epsilon_lb_blackbox']:.3f} | {row['verdict']} |"
            )
    d = 10
    c = improved_ratio(d)
    target = planted.improved_target_in(d)
    for label, patch in (
        ("correct split", LaplaceMechanism),
        ("swapped split", planted.swapped_split(d)),
    ):
        with mock.patch.object(planted.dplloyd_module, "LaplaceMechanism", patch):
            row = audit_target(target, 1.0)
        true = 1.0 if patch is LaplaceMechanism else (1 + d * c) / (d + c)
        print(
            f"| improved DPLloyd, {label}, d = {d} | {true:.3f} "
            f"| {row['epsilon_lb_whitebox']:.3f} | {row['epsilon_lb_blackbox']:.3f} "
            f"| {row['verdict']} (worst release {row['release_lb_over_booked']:.3f}×) |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("timing", "overspend"))
    ap.add_argument("--reference-trials", type=int, default=2000)
    args = ap.parse_args()
    if args.only != "overspend":
        timing(args.reference_trials)
        print()
    if args.only != "timing":
        overspend()


if __name__ == "__main__":
    main()
