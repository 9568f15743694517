#!/usr/bin/env python
"""Hand-written mutants of the generated kernels and their certificate (docs/testing.md).

mutmut cannot reach the generated kernels: their code is Python text built by string
formatting, and their float32 search, float64 redo and intrinsics are what keeps them
bit-identical to the loop kernels. So each mutant below is one plausible bug, written out:
the script applies it to a copy of the working tree, runs the kernel tests on the copy
(stopping at the first failure), and reports whether they caught it. A mutant the tests do
not catch is a missing test, unless its line says why it cannot change a result.

    python scripts/mutate_kernels.py [--jobs 2] [--only NAME,...]

Exit 0 when every mutant meant to be caught was caught, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: (name, file, text, replacement, what it would break). Each text must occur exactly once.
MUTANTS = [
    (
        "points-no-tolerance",
        "dpcluster/kernels/points.py",
        "return unrolled.tolerance(d, 3.0 * c), unrolled.tolerance(d, 0.5) - 1e-30",
        "return 0.0, 0.0",
        "float32 near-ties trusted without a float64 redo",
    ),
    (
        "points-never-redo",
        "dpcluster/kernels/points.py",
        'f"{pad}lab[p] = select(g, bi, {f32}(-1.0))",',
        'f"{pad}lab[p] = bi",',
        "uncertified labels kept",
    ),
    (
        "points-redo-flag-lost",
        "dpcluster/kernels/points.py",
        'f"{pad}near = bitor(near, select(g, np.int32(0), np.int32(1)))",',
        'f"{pad}near = bitor(near, np.int32(0))",',
        "uncertified labels (-1) never searched again",
    ),
    (
        "points-redo-ties-to-last",
        "dpcluster/kernels/points.py",
        "if acc < best:",
        "if acc <= best:",
        "an exact tie goes to the higher centroid index in the float64 redo",
    ),
    (
        "points-scatter-wrong-cluster",
        "dpcluster/kernels/points.py",
        'else f"{pad}add_record(ps, off + (b * {k} + j) * {W}, X, s + p, {d}, {W})",',
        'else f"{pad}add_record(ps, off + (b * {k} + (j + 1) % {k}) * {W}, X, s + p, {d}, {W})",',
        "sums added to the next cluster",
    ),
    (
        "points-tail-skipped",
        "dpcluster/kernels/points.py",
        '"            for p in range(full, m):",',
        '"            for p in range(full + 1, m):",',
        "the first record after the last full shuffle keeps a stale float32 value",
    ),
    (
        "transpose-wrong-half",
        "dpcluster/kernels/intrinsics.py",
        "_HALVES = ([0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15])",
        "_HALVES = ([0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 8, 9, 10, 11])",
        "columns 4-7 of each 8x8 block take rows 4-7 of columns 0-3",
    ),
    (
        "transpose-last-group-unshifted",
        "dpcluster/kernels/intrinsics.py",
        "*([D - 8] if D % 8 else [])",
        "*([D - D % 8] if D % 8 else [])",
        "loads run past the last record when 8 does not divide d (the values kept are right)",
    ),
    (
        "add-record-subtracts",
        "dpcluster/kernels/intrinsics.py",
        "builder.store(builder.fadd(builder.load(target, align=8), row), target, align=8)",
        "builder.store(builder.fsub(builder.load(target, align=8), row), target, align=8)",
        "the vector scatter subtracts the record",
    ),
    (
        "add-record-count-in-the-padding",
        "dpcluster/kernels/intrinsics.py",
        "value = ir.Constant(ir.DoubleType(), 1.0 if lane == D else 0.0)",
        "value = ir.Constant(ir.DoubleType(), 1.0 if lane == D + 1 else 0.0)",
        "the record's count goes to a padding lane, its count lane gets 0",
    ),
    (
        "certificate-second-best-max",
        "dpcluster/kernels/codegen.py",
        'f"{pad}{second} = select(h < {second}, h, {second})",',
        'f"{pad}{second} = select(h > {second}, h, {second})",',
        "the second best is the worst: gaps too wide, near-ties certified",
    ),
    (
        "tolerance-sixteen-times-smaller",
        "dpcluster/kernels/unrolled.py",
        "return 4.0 * (2 * d + 4) * _U32 * A + 1e-30",
        "return 0.25 * (2 * d + 4) * _U32 * A + 1e-30",
        "a tolerance below the proven float32 error bound",
    ),
    (
        "scale-without-centroid-norms",
        "dpcluster/kernels/unrolled.py",
        "return float(cn + mx @ cm)",
        "return float(mx @ cm)",
        "the error bound forgets the ||o||² term",
    ),
    (
        "unrolled-accepts-any-scale",
        "dpcluster/kernels/unrolled.py",
        "if not (np.isfinite(A) and A <= MAX_SCALE):",
        "if not np.isfinite(A):",
        "batches whose float32 squares lose the certificate's premises are not declined",
    ),
    (
        "dispatch-ignores-decline",
        "dpcluster/kernels/assign.py",
        "    if generated and accumulate_unrolled(X, w, Ct, counts, sums):\n"
        "        dispatch.ran_generated(k, d)\n        return\n",
        "    if generated:\n        accumulate_unrolled(X, w, Ct, counts, sums)\n"
        "        dispatch.ran_generated(k, d)\n        return\n",
        "a declined batch gets no statistics from the loop kernel",
    ),
    (
        "fused-check-misses-nan",
        "dpcluster/kernels/intrinsics.py",
        'outside = builder.fcmp_unordered(">", magnitude, bound)',
        'outside = builder.fcmp_ordered(">", magnitude, bound)',
        "NaN passes the check fused into a single fit's first pass",
    ),
    (
        "fused-check-boundary-excluded",
        "dpcluster/kernels/intrinsics.py",
        'outside = builder.fcmp_unordered(">", magnitude, bound)',
        'outside = builder.fcmp_unordered(">=", magnitude, bound)',
        "a record exactly on ±r refused by the fused check",
    ),
    (
        "fused-check-block-count-lost",
        "dpcluster/kernels/points.py",
        '"        outside += outside_b",',
        '"        outside += 0",',
        "the fused check's per-block counts are dropped",
    ),
    (
        "fused-check-ignored",
        "dpcluster/algorithms/checks.py",
        "    if outside:\n        _refuse_if_outside(X, r, what)\n    return X, counts, sums",
        "    return X, counts, sums",
        "a single fit's first pass counts bad entries and goes on",
    ),
    (
        "scan-boundary-excluded",
        "dpcluster/kernels/scan.py",
        "bad += not (abs(X[n, i]) <= limit)",
        "bad += not (abs(X[n, i]) < limit)",
        "a record exactly on ±r refused",
    ),
    (
        "scan-misses-nan",
        "dpcluster/kernels/scan.py",
        "bad += not (abs(X[n, i]) <= limit)",
        "bad += abs(X[n, i]) > limit",
        "NaN passes the input check",
    ),
]

TESTS = [
    "tests/test_kernels.py",
    "tests/test_bad_input.py::test_one_bad_entry_in_a_later_block_is_found",
    "tests/test_bad_input.py::test_python_api_refuses_data_that_break_the_sensitivity",
    "tests/test_bad_input.py::test_the_check_that_gives_first_statistics_refuses_what_points_refuses",
    "tests/test_bad_input.py::test_a_large_single_fit_refuses_bad_data_before_booking",
]
IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "results", "mutants", ".numba-cache", "site", "__pycache__", "*.pyc"
)


def tests_pass(tree: Path) -> tuple[bool, float, str]:
    """Run the kernel tests on the copy ``tree`` (its own package and caches)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "NUMBA_CACHE_DIR": str(tree / ".numba-cache"),
        "DPCLUSTER_KERNEL_CACHE": str(tree / ".numba-cache" / "generated"),
    }
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    cmd += ["-m", "not slow", *TESTS]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    tail = (done.stdout.strip().splitlines() or [""])[-1]
    return done.returncode == 0, time.perf_counter() - start, tail


def run_mutant(mutant, slot: Path) -> tuple[str, str, float, str]:
    name, rel, text, replacement, _ = mutant
    path = slot / rel
    original = path.read_text()
    if original.count(text) != 1:
        return name, "NOT APPLIED (text not found once)", 0.0, ""
    path.write_text(original.replace(text, replacement))
    try:
        passed, seconds, tail = tests_pass(slot)
    finally:
        path.write_text(original)
    return name, "SURVIVED" if passed else "caught", seconds, tail


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated mutant names")
    args = ap.parse_args()
    chosen = [m for m in MUTANTS if not args.only or m[0] in args.only.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        slots = []
        for i in range(args.jobs):
            slot = Path(tmp) / f"tree{i}"
            shutil.copytree(ROOT, slot, ignore=IGNORE)
            slots.append(slot)
        passed, seconds, tail = tests_pass(slots[0])
        print(f"unmutated copy: {'tests pass' if passed else 'TESTS FAIL'} ({seconds:.0f} s)")
        if not passed:
            print(tail)
            return 1
        free = queue.Queue()
        for slot in slots:
            free.put(slot)

        def in_a_free_slot(mutant):  # one mutant per copy at a time
            slot = free.get()
            try:
                return run_mutant(mutant, slot)
            finally:
                free.put(slot)

        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(in_a_free_slot, chosen))
    print("\n| mutant | what it breaks | result | seconds |\n|---|---|---|---|")
    for (name, status, secs, _), mutant in zip(results, chosen):
        print(f"| {name} | {mutant[4]} | {status} | {secs:.0f} |")
    missed = [r[0] for r in results if r[1] != "caught"]
    print(
        f"\n{len(results) - len(missed)} of {len(results)} caught"
        + (f"; not caught: {', '.join(missed)}" if missed else "")
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
