"""Mutation score of the privacy-critical modules (``make mutation``; docs/testing.md).

Runs mutmut over the files listed under ``[tool.mutmut] only_mutate`` in pyproject.toml,
with the in-process test files listed there, then prints killed / total per module and
every surviving mutant's name (``mutmut show NAME`` prints its diff). mutmut resumes where
it stopped, so an interrupted run loses nothing.

    python scripts/mutation.py [--jobs 2] [--survivors]
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"^\s+(?P<name>[\w.]+?)__mutmut_\d+: (?P<status>[\w ]+)$")


def mutmut(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mutmut")
    # mutmut forks a worker per mutant after running the tests in the parent. A thread team
    # the parent started does not exist in the child: GNU OpenMP (numba's layer when it can
    # have it) kills a forked child that uses it again, and scikit-learn's KMeans, whose
    # OpenMP team the Paper-B baselines start, left forked children waiting at its barrier
    # forever. One OpenMP thread (and one BLAS thread) runs those regions in the caller.
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(ROOT / ".numba-cache"),
        "NUMBA_THREADING_LAYER": "workqueue",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }
    return subprocess.run(
        [str(exe), *args], cwd=ROOT, env=env, text=True, capture_output=True, check=False
    )


def module_of(name: str) -> str:
    """``dpcluster.privacy.ledger.x_spent`` / ``…ledger.xǁLedgerǁrecord`` → the module."""
    parts = name.split(".")
    while parts and (parts[-1].startswith("x_") or "ǁ" in parts[-1]):
        parts.pop()
    return ".".join(parts)


def sampled(spec: str) -> list[str]:
    """The unchecked mutants to run for ``--sample MODULE:N`` (see there)."""
    import random

    module, n = spec.rsplit(":", 1)
    unchecked = [
        m["name"] + line.split(":")[0].split(m["name"], 1)[1]
        for line in mutmut("results", "--all", "true").stdout.splitlines()
        if (m := LINE.match(line)) and m["status"].strip() == "not checked"
    ]
    theirs = sorted(u for u in unchecked if module_of(u.split("__mutmut_")[0]) == module)
    others = [u for u in unchecked if u not in set(theirs)]
    chosen = random.Random(0).sample(theirs, min(int(n), len(theirs)))
    print(f"{len(others)} unchecked mutants elsewhere; {len(chosen)} of {module}'s {len(theirs)}")
    return others + chosen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--survivors", action="store_true", help="list every surviving mutant")
    ap.add_argument("--no-run", action="store_true", help="summarise the last run only")
    ap.add_argument(
        "--sample",
        metavar="MODULE:N",
        help="run every unchecked mutant except MODULE's, and N of MODULE's drawn at random "
        "(seed 0): an unbiased estimate of a module too slow to run whole",
    )
    args = ap.parse_args()
    if not args.no_run:
        names = sampled(args.sample) if args.sample else []
        run = mutmut("run", "--max-children", str(args.jobs), *names)
        if run.returncode not in (0, 1):
            sys.stderr.write(run.stdout[-4000:] + run.stderr[-4000:])
            return run.returncode
    listing = mutmut("results", "--all", "true")
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    survivors = []
    for line in listing.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        module, status = module_of(m["name"]), m["status"].strip()
        counts[module][status] += 1
        if status == "survived":
            survivors.append(line.strip().split(":")[0])
    total = collections.Counter()
    print(
        "| module | killed | timeout | survived | no tests | not checked "
        "| score (killed + timeout) / checked |"
    )
    print("|---|---|---|---|---|---|---|")
    for module in sorted(counts):
        c = counts[module]
        total.update(c)
        _row(module, c)
    _row("all", total)
    if args.survivors:
        print("\nsurviving mutants (mutmut show NAME):")
        for name in survivors:
            print("  " + name)
    return 0


def _row(module: str, c: collections.Counter) -> None:
    """A mutant that makes the tests time out is detected, as one they fail on; "no tests"
    (no selected test reaches the code) and "not checked" (the run stopped first) are
    listed, not scored."""
    killed, timeout, survived = c["killed"], c["timeout"], c["survived"]
    judged = killed + timeout + survived
    score = f"{100 * (killed + timeout) / judged:.1f} %" if judged else "–"
    print(
        f"| {module} | {killed} | {timeout} | {survived} | {c['no tests']} | "
        f"{c['not checked']} | {score} |"
    )


if __name__ == "__main__":
    sys.exit(main())
