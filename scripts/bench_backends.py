"""Benchmark the Dask backend against the local joblib pool on the same cells.

For each spec, both backends compute every cell from scratch into temporary folders
(2 workers each; the LocalCluster's start-up is included, as a user would pay it), and the
table shows wall seconds, seconds per cell and the Dask/local ratio.

    python scripts/bench_backends.py [SPEC ...]   # default: every smoke spec, then fig1-s1
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcluster import harness, spec  # noqa: E402


def timed(specs, backend: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        harness.run_specs([(sp, Path(tmp) / sp.name) for sp in specs], jobs=2, backend=backend)
        return time.perf_counter() - start


def main() -> None:
    paths = sys.argv[1:] or [
        *sorted(str(p) for p in (ROOT / "configs").glob("smoke*.yaml")),
        str(ROOT / "configs" / "fig1-s1.yaml"),
    ]
    groups = {
        "all smoke specs": [p for p in paths if "smoke" in Path(p).name],
        **{Path(p).stem: [p] for p in paths if "smoke" not in Path(p).name},
    }
    timed([spec.load(paths[0])], "local")  # compile the kernels before timing anything
    print("| specs | cells | local s | dask s | local s/cell | dask s/cell | dask / local |")
    print("|---|---|---|---|---|---|---|")
    for label, group in groups.items():
        if not group:
            continue
        specs = [spec.load(p) for p in group]
        cells = len({c.id for sp in specs for c in harness.expand(sp)})
        local, dask = timed(specs, "local"), timed(specs, "dask")
        print(
            f"| {label} | {cells} | {local:.1f} | {dask:.1f} | {local / cells:.3f} | "
            f"{dask / cells:.3f} | {dask / local:.2f}x |"
        )


if __name__ == "__main__":
    main()
