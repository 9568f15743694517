"""Copy the reference results of the last full `make reproduce-all` into docs/results/.

For every paper spec (configs/fig*.yaml, numeric-checks, b-*): its summary.csv, timing.csv,
table.md, figure.png and a trimmed meta.json (spec file and hash, commit, start and finish).
Then audit.csv and audit.png, REPORT.md regenerated from the copies, and
docs/results/meta.json naming the commit, date, machine and wall time. No runs.csv and no
cells. Fails if the copies would exceed 5 MB or a spec's results are incomplete.

    python scripts/make_reference.py [--results results] [--out docs/results]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcluster import harness, report, spec  # noqa: E402

LIMIT = 5 * 2**20
FILES = ("summary.csv", "timing.csv", "table.md", "figure.png")


def paper_specs() -> list[Path]:
    configs = ROOT / "configs"
    return sorted(
        [
            *configs.glob("fig[0-9].yaml"),
            configs / "numeric-checks.yaml",
            *configs.glob("b-*.yaml"),
            configs / "ldp-modern.yaml",
        ]
    )


def _busy_seconds(runs: set[tuple[str, str]]) -> float:
    """Seconds during which at least one of the invocations (started, finished) ran: a
    later run that added cells to a spec adds its own time, not the gap before it."""
    spans = sorted((datetime.fromisoformat(a), datetime.fromisoformat(b)) for a, b in runs)
    total, (lo, hi) = 0.0, spans[0]
    for a, b in spans[1:]:
        if a > hi:
            total += (hi - lo).total_seconds()
            lo, hi = a, b
        else:
            hi = max(hi, b)
    return total + (hi - lo).total_seconds()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results"))
    args = ap.parse_args()
    results, out = Path(args.results), Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    starts, ends, commits, runs = [], [], set(), set()
    for path in paper_specs():
        sp = spec.load(path)
        src = results / sp.name
        meta = json.loads((src / "meta.json").read_text())
        if meta.get("spec_hash") != sp.hash:
            sys.exit(f"{src}: computed from another version of {path} (hash differs)")
        checked, problems = harness.verify_folder(src)
        listed = harness.list_results(src)[0]
        if problems or listed["cells_done"] != listed["cells_total"]:
            sys.exit(f"{src}: incomplete or damaged ({len(problems)} problems); rerun it")
        (out / sp.name).mkdir()
        for name in FILES:
            if (src / name).is_file():
                shutil.copy2(src / name, out / sp.name / name)
        history = meta.get("history", [])
        starts += [h["started"] for h in history]
        ends += [h["finished"] for h in history]
        runs |= {(h["started"], h["finished"]) for h in history}
        commits.add(meta.get("git_commit"))
        trimmed = {
            k: meta.get(k)
            for k in (
                "spec_file",
                "spec_hash",
                "git_commit",
                "started",
                "finished",
                "cells_total",
                "versions",
            )
        }
        (out / sp.name / "meta.json").write_text(json.dumps(trimmed, indent=1) + "\n")
    if (results / "audit" / "audit.csv").is_file():
        (out / "audit").mkdir()
        for name in ("audit.csv", "audit.png", "replay.csv", "replay.md"):
            if (results / "audit" / name).is_file():
                shutil.copy2(results / "audit" / name, out / "audit" / name)
    report.write_report(out, out / "REPORT.md")
    first = min(starts) if starts else None
    last = max(ends) if ends else None
    wall = _busy_seconds(runs) if runs else None
    (out / "meta.json").write_text(
        json.dumps(
            {
                "commits": sorted(c for c in commits if c),
                "started": first,
                "finished": last,
                "wall_time_s": wall,
                "machine": {
                    "cores": os.cpu_count(),
                    "platform": platform.platform(),
                    "python": platform.python_version(),
                },
                "command": "make reproduce-all JOBS=2 && make audit && make reference",
                "invocations": len(runs),
            },
            indent=1,
        )
        + "\n"
    )
    # REPORT.html inlines every figure again; it is rebuilt by `dpcluster report`, not kept
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and p.suffix != ".html")
    if size > LIMIT:
        sys.exit(f"{out}: {size / 2**20:.1f} MB, above the {LIMIT / 2**20:.0f} MB limit")
    print(f"{out}: {size / 2**20:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
