"""docs/specs.md: whatever ``validate`` accepts runs to the end. A generated family of
estimator specs, every central method across the documented ε range, with and without δ,
on a box and on a ball: each spec that validates runs with no failed cell."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import yaml

from dpcluster import harness
from dpcluster.errors import DpclusterError
from dpcluster.estimator import central_methods
from dpcluster.spec import load

#: the documented ε range's low end, a middle and a high value (from about 1e5 the grids sit
#: at their cell cap and a spec takes minutes; 1e12 checked by hand), and δ of none and 1e-6
EPSILONS = (1e-12, 0.7, 1e4)
DELTAS = (0.0, 1e-6)
DOMAINS = {"box": {"domain": [[-3.0, -3.0], [3.0, 3.0]]}, "ball": {"domain": {"radius": 3.0}}}
#: what an optional dependency may refuse (not installed here)
OPTIONAL = ("diffprivlib",)


def _data(folder):
    rng = np.random.default_rng(3)
    centres = np.array([[-1.5, -1.0], [1.5, 0.0], [0.0, 1.5]])
    X = centres[rng.integers(0, 3, 90)] + 0.2 * rng.standard_normal((90, 2))
    frame = pd.DataFrame(X, columns=["a", "b"])
    frame.to_csv(folder / "d.csv", index=False)


def _spec(folder, name, methods, epsilon, delta, domain) -> str:
    raw = {
        "name": name,
        "seed": 5,
        "pipeline": "estimator",
        "seeds": [0],
        "bounds": "public",
        "datasets": [{"name": "csv", "params": {"path": "d.csv", "k": 3, **DOMAINS[domain]}}],
        "epsilon": [epsilon],
        "algorithms": [{"name": m} for m in methods],
        "metrics": ["cost"],
        "plot": {"kind": "none"},
        **({"delta": delta} if delta else {}),
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return str(path)


def _validates(path) -> bool:
    try:
        harness.check_spec(load(path))
    except DpclusterError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize(("epsilon", "delta"), list(itertools.product(EPSILONS, DELTAS)))
def test_every_spec_that_validates_runs(tmp_path, epsilon, delta):
    _data(tmp_path)
    methods = sorted(m for m in central_methods() if m not in OPTIONAL)
    for domain in DOMAINS:
        valid = [
            m
            for i, m in enumerate(methods)
            if _validates(_spec(tmp_path, f"one-{domain}-{i}", [m], epsilon, delta, domain))
        ]
        assert len(valid) >= len(methods) - 3, (
            epsilon,
            delta,
            domain,
            sorted(set(methods) - set(valid)),
        )
        path = _spec(tmp_path, f"all-{domain}", valid, epsilon, delta, domain)
        report = harness.run_spec(load(path), tmp_path / "out" / domain)
        failed = {f.what: f.error for f in report.failures}
        assert not failed, failed
