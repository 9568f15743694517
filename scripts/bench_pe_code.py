"""Seconds per fit: ``auto`` beside PE-means's own code on PE-means's protocol sets, timed
one after the other in one run (docs/performance.md, "PE-means's protocol").

PE-means's code is not a dependency and is not in the repository. To run this benchmark,
check out github.com/t3humphries/PE-means, make a separate venv with numpy, scipy,
scikit-learn and faiss-cpu, and pass both paths:

    .venv/bin/python scripts/bench_pe_code.py --artefact ~/PE-means \\
        --python ~/pe-venv/bin/python [--fits iris@1,sk_64_64@1] [--runs 3]

The artefact imports two record classes from Google's clustering package (``Data`` and
``ClusteringResult``). This script writes a minimal stand-in for them into a temporary
folder on the artefact's path. The artefact runs with its ``run_ours.py`` settings:
T = ⌊4√d⌋·max(1, ε), L = N/5k. ``auto`` runs ``DPKMeans(k, epsilon=ε, delta=1/N^1.1,
radius=1)``; its time is the median of 5 warm fits, the artefact's the median of
``--runs``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import pe_sets  # noqa: E402

from dpcluster import DPKMeans  # noqa: E402

SHIM = {
    "__init__.py": "",
    "clustering_params.py": """import dataclasses
import numpy as np


@dataclasses.dataclass
class Data:
    datapoints: np.ndarray
    radius: float

    @property
    def dim(self):
        return self.datapoints.shape[1]

    @property
    def num_points(self):
        return self.datapoints.shape[0]


@dataclasses.dataclass
class DifferentialPrivacyParam:
    epsilon: float = 1.0
    delta: float = 1e-6
""",
    "clustering_algorithm.py": """import numpy as np


class ClusteringResult:
    def __init__(self, data, centers):
        X = data.datapoints
        d2 = (X**2).sum(1)[:, None] - 2 * X @ centers.T + (centers**2).sum(1)[None]
        self.loss = float(np.maximum(d2.min(1), 0).sum())
""",
}

RUNNER = """import json, sys, time
import numpy as np
sys.path[:0] = [sys.argv[5], sys.argv[6]]
from clustering import clustering_params
from src.pe_means_main import pe_means
from src.helpers import PE_PARAMS
X = np.load(sys.argv[1]); k, eps, runs = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
N, d = X.shape
data = clustering_params.Data(datapoints=X, radius=1.0)
base = int(4 * np.sqrt(d))
gens = max(int(eps * base), 1) if eps > 1 else max(base, 1)
priv = clustering_params.DifferentialPrivacyParam(epsilon=eps, delta=1 / N**1.1)
times = []
for run in range(runs):
    cfg = dict(PE_PARAMS, dataset_name="x", k=k, eps=eps, num_gen=gens,
               L=int(max(N / (5 * k), 4)), run_id=run)
    t = time.perf_counter()
    pe_means(k, data, cfg, priv, visualize=False)
    times.append(time.perf_counter() - t)
print(json.dumps({"median_s": float(np.median(times))}))
"""


def ours(X: np.ndarray, k: int, eps: float) -> float:
    """Median seconds of 5 warm ``auto`` fits."""
    N = len(X)

    def fit(seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DPKMeans(k, epsilon=eps, delta=1 / N**1.1, radius=1.0, random_state=seed).fit(X)

    fit(99)
    times = []
    for seed in range(5):
        start = time.perf_counter()
        fit(seed)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--artefact", required=True, help="a checkout of PE-means")
    ap.add_argument("--python", required=True, help="the Python of its venv")
    ap.add_argument("--fits", default="iris@1,iris@4,sk_4_4@1,sk_16_16@1,sk_64_64@1")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    print("| set | ε | auto median s | PE-means code median s | ratio |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        shim = Path(tmp) / "clustering"
        shim.mkdir()
        for name, text in SHIM.items():
            (shim / name).write_text(text)
        runner = Path(tmp) / "run.py"
        runner.write_text(RUNNER)
        for item in a.fits.split(","):
            name, _, eps = item.partition("@")
            X, k = pe_sets([name])[name]
            mine = ours(X, k, float(eps))
            np.save(Path(tmp) / "set.npy", X)
            cmd = [a.python, str(runner), str(Path(tmp) / "set.npy"), str(k), eps, str(a.runs)]
            out = subprocess.run(
                [*cmd, tmp, str(Path(a.artefact).resolve())],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            theirs = json.loads(out.strip().splitlines()[-1])["median_s"]
            print(f"| {name} | {eps} | {mine:.3g} | {theirs:.3g} | {theirs / mine:.1f}× |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
