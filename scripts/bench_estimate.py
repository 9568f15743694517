"""How close ``dpcluster run --dry-run`` comes to the real wall time, spec by spec.

For each spec: the dry-run estimate (``harness.estimate``) is taken in an empty folder, so
nothing is reused or calibrated, as on a fresh clone; then the spec runs there with the same
``--jobs`` (a fresh process, as a user would start it) and its wall time is measured. The
table gives the estimate over the measured time; the issue's target is a ratio within
[0.5, 2] on every bundled spec.

    python scripts/bench_estimate.py configs/smoke*.yaml configs/fig4.yaml --jobs 2
    python scripts/bench_estimate.py configs/fig1-s1.yaml --cold   # empty kernel cache too
    python scripts/bench_estimate.py configs/fig2.yaml --cold --keep /tmp/est  # keep results

``--cold`` points ``DPCLUSTER_CACHE`` at a new folder for both the estimate and the run, so
the first compilations are measured (and predicted) as a new user meets them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_ESTIMATE = """
import json, sys
from dpcluster import harness, spec
from dpcluster.harness.estimate import estimate
cells = harness.expand(spec.load(sys.argv[1]))
e = estimate(cells, int(sys.argv[2]))
print(json.dumps({"cells": e.cells, "wall_s": e.wall_s, "core_s": e.core_s,
                  "compile_s": e.compile_s}))
"""


def _env(cache: Path | None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if cache is not None:
        env["DPCLUSTER_CACHE"] = str(cache)
    return env


def measure(spec: Path, jobs: int, cold: bool, keep: Path | None = None) -> tuple[dict, float]:
    """(the estimate, the measured wall seconds) of one spec run in a new empty folder,
    a temporary one, or ``keep/<spec>`` (which must not exist) to keep its results."""
    import json

    with tempfile.TemporaryDirectory(prefix="dpc-est-") as tmp:
        work = Path(tmp) if keep is None else keep / spec.stem
        work.mkdir(parents=True, exist_ok=keep is None)
        cache = work / "cache" if cold else None
        env = _env(cache)
        out = subprocess.run(
            [sys.executable, "-c", _ESTIMATE, str(spec), str(jobs)],
            cwd=work,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        guess = json.loads(out.stdout.strip().splitlines()[-1])
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "dpcluster.cli", "run", str(spec), "--jobs", str(jobs), "-q"],
            cwd=work,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return guess, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cold", action="store_true", help="an empty kernel cache for each spec")
    ap.add_argument(
        "--keep", type=Path, help="run each spec in KEEP/<spec name> and keep its results there"
    )
    args = ap.parse_args()
    print("| spec | cells | estimate (s) | compiling (s) | measured (s) | estimate / measured |")
    print("|---|---|---|---|---|---|")
    worst = 1.0
    for spec in args.specs:
        guess, wall = measure(spec.resolve(), args.jobs, args.cold, args.keep)
        ratio = guess["wall_s"] / wall
        worst = max(worst, ratio, 1 / ratio)
        print(
            f"| {spec.stem} | {guess['cells']} | {guess['wall_s']:.1f} | "
            f"{guess['compile_s']:.1f} | {wall:.1f} | "
            f"{ratio:.2f} |",
            flush=True,
        )
    print(f"\nworst factor either way: {worst:.2f} (--jobs {args.jobs}, cold={args.cold})")


if __name__ == "__main__":
    main()
