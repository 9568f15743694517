"""The package's shape: an algorithm declared once in the registry reaches every front end,
imports point one way without circles, and modules stay small (docs/architecture.md)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from dpcluster import DPKMeans, harness, spec
from dpcluster.algorithms.comparators import diffprivlib_problem
from dpcluster.algorithms.dplloyd import DPResult
from dpcluster.algorithms.reference import private_mean
from dpcluster.audit import run as audit_run
from dpcluster.audit.catalogue import not_private
from dpcluster.cli import main
from dpcluster.estimator import DELTA_ONLY
from dpcluster.experiments import ALGORITHMS
from dpcluster.experiments.protocol import Param, central_fit, central_method

PACKAGE = Path(__file__).resolve().parent.parent / "dpcluster"

#: import layers, lowest first: a module may import its own layer and those below it
LAYERS = {
    "cache": 0,
    "errors": 0,
    "exits": 0,
    "rng": 0,
    "results": 1,
    "data": 1,
    "kernels": 1,
    "privacy": 1,
    "analysis": 1,
    "algorithms": 2,
    "ldp": 2,
    "experiments": 3,
    "plugins": 4,
    "spec": 5,
    "estimator_checks": 4,
    "estimator": 5,
    "ldp_estimator": 5,
    "audit": 5,
    "report": 5,
    "plotting": 5,
    "harness": 6,
    "cli": 7,
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Every module each module imports, at the top or inside a function."""
    edges = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*parts, *([base] if base else [])])
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    found.add(full if full in modules else base)
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
        edges[name] = {m for m in found if m in modules and m != name}
    return edges


def _layer(module: str) -> int:
    parts = module.split(".")
    return -1 if len(parts) == 1 else LAYERS[parts[1]]


def test_imports_point_down_the_layers_and_form_no_circle():
    modules = _modules()
    edges = _imports(modules)
    assert {m.split(".")[1] for m in modules if "." in m} <= set(LAYERS), "a new top module"
    upward = [
        (a, b)
        for a, targets in edges.items()
        for b in targets
        if a != "dpcluster" and _layer(b) > _layer(a)  # the package face re-exports
    ]
    assert not upward
    # no circle: a depth-first search finds no back edge
    state: dict[str, int] = {}

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(edges[node]):
            assert state.get(nxt) != 1, f"import circle: {' -> '.join([*path, nxt])}"
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])


def test_no_module_is_longer_than_500_lines():
    long = {
        name: n
        for name, path in _modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert not long


def _tiny_spec(tmp_path, name: str, params: dict | None = None):
    raw = {
        "name": "reach",
        "seed": 1,
        "datasets": [{"name": "blobs", "params": {"N": 120, "k": 3}}],
        "algorithms": [{"name": name, "repeat": 1, **({"params": params} if params else {})}],
        "epsilon": [1.0],
        "init": {"sets": 1},
        "metrics": [ALGORITHMS[name].metrics[0]] if name in ALGORITHMS else ["nicv"],
        "plot": {"kind": "none"},
    }
    return spec.parse(raw, str(tmp_path / "reach.yaml"))


def _listed() -> dict:
    result = CliRunner().invoke(main, ["list", "--json"])
    assert result.exit_code == 0
    return {a["name"]: a for a in json.loads(result.output)["algorithms"]}


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_registry_entry_reaches_the_spec_the_list_the_audit_and_the_estimator(name, tmp_path):
    info = ALGORITHMS[name]
    assert _tiny_spec(tmp_path, name).algorithms[0].name == name
    assert name in _listed()
    if name == "diffprivlib" and (missing := diffprivlib_problem()):
        pytest.skip(f"the audit and the estimator run it where installed: {missing}")
    if info.private:
        assert audit_run.select([name]) or name in not_private()
    else:
        assert name in not_private()
    if info.fit is not None:
        X = np.random.default_rng(0).uniform(0, 10, size=(60, 2))
        delta = 1e-6 if name in DELTA_ONLY else 0.0  # it spends (ε, δ) only
        model = DPKMeans(
            3, epsilon=2.0, method=name, bounds=(0, 10), random_state=0, delta=delta
        ).fit(X)
        ledger = model.ledger_
        assert model.cluster_centers_.shape == (3, 2) and ledger.claimed_epsilon <= 2.0
        # what provably holds: at most ε, or ∞ where GkM's blocks read the exact N (booked)
        exact = [e for e in ledger.entries if "read exactly" in e.purpose]
        # (and diffprivlib, whose T reads N and whose update skips empty clusters exactly)
        readers = ("gkm", "gkm_3k", "diffprivlib")
        assert ledger.total_epsilon <= 2.0 or (name in readers and exact)


def _shrunk_mean(Z, k, epsilon, rng, r=1.0, shrink=0.5):
    """Every centre at shrink × the ε-DP mean (post-processing of :func:`private_mean`)."""
    res = private_mean(Z, k, epsilon, rng, r=r)
    return DPResult(res.centroids * shrink, res.ledger, 0, {})


def test_an_entry_declared_in_one_registry_line_needs_no_other_edit(tmp_path, monkeypatch):
    """The docs/architecture.md recipe: one module (here the function above) plus one
    registry line; the spec, the harness, ``list``, the audit and DPKMeans all reach it."""
    table = {"shrink": Param(0.5, float, "shrink toward 0", minimum=0.0)}
    entry = central_method("shrunk_mean", "test entry", central_fit(_shrunk_mean, table))
    monkeypatch.setitem(ALGORITHMS, "shrunk_mean", entry)
    audit_run._targets.cache_clear()
    try:
        sp = _tiny_spec(tmp_path, "shrunk_mean", {"shrink": 0.9})
        report = harness.run_spec(sp, tmp_path / "out")
        assert not report.failures and len(report.runs) == 1
        assert report.runs["epsilon_provable"].iloc[0] == pytest.approx(1.0)
        assert _listed()["shrunk_mean"]["params"]["shrink"]["default"] == 0.5
        table = audit_run.run_audit(["shrunk_mean"], [1.0], trials=100)
        assert list(table["verdict"]) == ["consistent"]
        X = np.random.default_rng(1).uniform(0, 10, size=(80, 2))
        model = DPKMeans(
            2, epsilon=1.0, method="shrunk_mean", bounds=(0, 10), method_params={"shrink": 1.0}
        ).fit(X)
        assert model.ledger_.total_epsilon == pytest.approx(1.0)
        with pytest.raises(ValueError, match="shrink"):
            DPKMeans(2, method="shrunk_mean", bounds=(0, 10), method_params={"shrink": -1}).fit(X)
    finally:
        audit_run._targets.cache_clear()
