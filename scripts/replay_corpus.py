"""The planted-bug corpus (tests/mutants.py) under both audits: which catches each bug.

Prints a markdown table, bug x audit: the replay audit's verdict and first finding, and
the statistical audit's verdict and white-box/black-box bounds at the same ε. The clean
algorithm is the reference row. Run from the repository root:

    .venv/bin/python scripts/replay_corpus.py [--epsilon 1] [--trials 1000] [--jobs 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from joblib import Parallel, delayed  # noqa: E402

from dpcluster.audit.generic import entry_target  # noqa: E402
from dpcluster.audit.replay import replay_target  # noqa: E402
from dpcluster.audit.run import audit_target  # noqa: E402
from tests import mutants  # noqa: E402


def one(bug: str, epsilon: float, trials: int) -> dict:
    delta = 1e-6 if bug in mutants.GAUSSIAN_BUGS else 0.0
    target = entry_target(
        "planted_kmeans", mutants.planted_kmeans, {"bug": bug, "delta": delta}, trials, delta
    )
    start = time.perf_counter()
    replay = replay_target(target, epsilon)
    replay_s = time.perf_counter() - start
    try:
        stat = audit_target(target, epsilon, trials)
        verdict = stat["verdict"]
        bounds = f"{stat['epsilon_lb_whitebox']:.2f} / {stat['epsilon_lb_blackbox']:.2f}"
    except Exception as exc:  # noqa: BLE001 - a run the statistical audit cannot make
        verdict, bounds = f"error ({type(exc).__name__})", ""
    return {
        "bug": bug or "(clean)",
        "line": mutants.BUGS.get(bug, ""),
        "replay": replay["verdict"],
        "finding": replay["finding"].split(": ", 1)[-1][:90],
        "replay_s": replay_s,
        "statistical": verdict,
        "bounds": bounds,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    bugs = ["", *mutants.BUGS]
    rows = Parallel(n_jobs=args.jobs)(delayed(one)(b, args.epsilon, args.trials) for b in bugs)
    print(f"ε = {args.epsilon:g}, {args.trials} trials per side for the statistical audit\n")
    print("| bug | the one line | replay | statistical audit | ε_lb white / black |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['bug']} | `{r['line']}` | {r['replay']} | {r['statistical']} | {r['bounds']} |"
        )
    caught = sum(r["replay"] == "violation" for r in rows if r["bug"] != "(clean)")
    stat = sum(r["statistical"].startswith("violation") for r in rows if r["bug"] != "(clean)")
    print(f"\nreplay catches {caught} of {len(bugs) - 1}; the statistical audit {stat}")


if __name__ == "__main__":
    main()
