"""No input ends in a traceback: specs, csv files, cell records and ``--set`` values drawn by
hypothesis go through the command line (in process, click's runner), and every outcome is a
documented exit status with at most one ``error:`` line, never an uncaught exception."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcluster.cli import main
from dpcluster.exits import Exit

FUZZ = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SPEC = {
    "name": "fuzz",
    "seed": 1,
    "datasets": [{"name": "synthetic", "params": {"N": 60, "k": 2, "d": 2}}],
    "epsilon": [1.0],
    "init": {"sets": 2},
    "algorithms": [{"name": "dplloyd", "repeat": 2}],
    "plot": {"kind": "none"},
}

#: YAML-like values: scalars, deep and wide nests, and strings that look like keys
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def _invoke(args, cwd: Path):
    """Run ``dpcluster ARGS`` in ``cwd``; fail on an uncaught exception or a traceback."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, args, catch_exceptions=True)
    finally:
        os.chdir(old)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(
            f"{args}: uncaught {type(result.exception).__name__}: {result.exception}"
        )
    assert result.exit_code in {int(e) for e in Exit}, (args, result.exit_code)
    assert "Traceback" not in result.output, (args, result.output)
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    if result.exit_code == Exit.BAD_INPUT:
        assert len(errors) >= 1, (args, result.output)
    return result


@FUZZ
@given(key=st.sampled_from(sorted(SPEC)), value=values)
def test_a_spec_with_any_value_at_any_key(tmp_path, key, value):
    doc = {**SPEC, key: value}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    _invoke(["validate", "s.yaml"], tmp_path)


@FUZZ
@given(text=st.text(max_size=300))
def test_a_spec_file_of_any_text(tmp_path, text):
    (tmp_path / "s.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
    _invoke(["validate", "s.yaml"], tmp_path)


@FUZZ
@given(
    blob=st.binary(max_size=400)
    | st.lists(st.lists(st.text(max_size=6), max_size=4), max_size=6).map(
        lambda rows: "\n".join(",".join(r) for r in rows).encode("utf-8", "surrogatepass")
    ),
    suffix=st.sampled_from([".csv", ".csv.gz", ".csv.bz2", ".csv.xz", ".zip"]),
)
def test_a_csv_of_any_bytes(tmp_path, blob, suffix):
    (tmp_path / f"u{suffix}").write_bytes(blob)
    doc = {**SPEC, "datasets": [{"name": "csv", "params": {"path": f"u{suffix}", "k": 2}}]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    _invoke(["validate", "s.yaml"], tmp_path)


@FUZZ
@given(
    key=st.text(st.characters(codec="ascii"), max_size=40)
    | st.lists(
        st.sampled_from(["algorithms", "0", "params", "x", "datasets", "dplloyd"]), max_size=60
    ).map(".".join),
    value=st.text(max_size=40),
)
def test_any_set_override(tmp_path, key, value):
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(SPEC))
    _invoke(["validate", "s.yaml", "--set", f"{key}={value}"], tmp_path)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A results folder of the small spec, computed once."""
    root = tmp_path_factory.mktemp("run")
    (root / "s.yaml").write_text(yaml.safe_dump(SPEC))
    assert _invoke(["run", "s.yaml", "-q"], root).exit_code == 0
    return root


@FUZZ
@given(
    record=values.map(lambda v: json.dumps(v).encode()) | st.binary(max_size=200),
    nesting=st.sampled_from([0, 0, 2_000, 200_000]),
    target=st.sampled_from(["cell", "meta", "summary-dir", "lock-dir", "audit"]),
)
def test_any_damage_to_a_results_folder(tmp_path, finished_run, record, nesting, target):
    if nesting:  # a record nested past the recursion limit
        record = b"[" * nesting + b"]" * nesting
    work = tmp_path / "w"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(finished_run, work)
    out = work / "results" / "fuzz"
    if target == "cell":
        path = next(out.rglob("*.json"))
        path.write_bytes(record)
    elif target == "meta":
        (out / "meta.json").write_bytes(record)
    elif target == "audit":  # a foreign table where the audit's would be
        (work / "results" / "audit").mkdir(parents=True, exist_ok=True)
        (work / "results" / "audit" / "audit.csv").write_bytes(record or b"a,b\n1,2\n")
    elif target == "summary-dir":
        (out / "summary.csv").unlink()
        (out / "summary.csv").mkdir()
    else:
        lock = out / ".lock"
        if lock.exists():
            lock.unlink()
        lock.mkdir()
    for args in (["verify", "results/fuzz"], ["report"], ["run", "s.yaml", "-q"]):
        _invoke(args, work)
