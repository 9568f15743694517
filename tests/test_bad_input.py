"""The bad-input corpus: every case gets a documented exit code and one line naming the
file (and key or value where there is one), never a traceback, and nothing is computed
before the error where it can be caught first."""

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from dpcluster.privacy.mechanisms import snap_records
from tests.cli import run_cli as _cli

GOOD = {
    "name": "corpus",
    "seed": 1,
    "epsilon": [1.0],
    "datasets": [{"name": "synthetic", "params": {"N": 200, "k": 3, "d": 2}}],
    "algorithms": [{"name": "lloyd"}, {"name": "dplloyd", "repeat": 2}],
    "init": {"sets": 2},
    "plot": {"kind": "none"},
}


def _spec(tmp_path, raw=None, text=None, name="s.yaml"):
    p = tmp_path / name
    p.write_text(text if text is not None else yaml.safe_dump(raw or GOOD))
    return p


def _user_file(tmp_path, lines, gz=False, cut=False):
    blob = ("x,y\n" + "\n".join(lines) + "\n").encode()
    if gz:
        blob = gzip.compress(blob)
        blob = blob[: len(blob) // 2] if cut else blob
    p = tmp_path / ("u.csv.gz" if gz else "u.csv")
    p.write_bytes(blob)
    return p


def _tiger(tmp_path, path):
    return {**GOOD, "datasets": [{"name": "tiger", "params": {"path": str(path)}}]}


CASES = {
    "duplicate yaml key": (
        lambda t: _spec(t, text=yaml.safe_dump(GOOD) + "seed: 2\n"),
        ["'seed'", "twice"],
    ),
    "duplicate algorithm": (
        lambda t: _spec(t, {**GOOD, "algorithms": GOOD["algorithms"] * 2}),
        ["algorithms[2]", "twice"],
    ),
    "empty epsilon": (
        lambda t: _spec(t, {**GOOD, "epsilon": []}),
        ["key 'epsilon':", "is an empty list", "(got [])", "give at least one value"],
    ),
    "no epsilon for a private algorithm": (
        lambda t: _spec(t, {k: v for k, v in GOOD.items() if k != "epsilon"}),
        ["key 'epsilon':", "is required when a private algorithm runs", "(got None)"],
    ),
    "epsilon twice": (
        lambda t: _spec(t, {**GOOD, "epsilon": [1, 1.0]}),
        ["key 'epsilon':", "has duplicate values", "(got [1, 1.0])"],
    ),
    "metric misspelt": (
        lambda t: _spec(t, {**GOOD, "metrics": ["nicc"]}),
        ["key 'metrics[0]':", "unknown metric", "(got 'nicc')", "Did you mean 'nicv'?"],
    ),
    "metric twice": (
        lambda t: _spec(t, {**GOOD, "metrics": ["nicv", "nicv"]}),
        ["key 'metrics[1]':", "is listed twice", "(got 'nicv')"],
    ),
    "metrics not a list": (
        lambda t: _spec(t, {**GOOD, "metrics": "nicv"}),
        ["key 'metrics':", "must be a non-empty list of metric names", "(got 'nicv')"],
    ),
    "metric no algorithm reports": (
        lambda t: _spec(t, {**GOOD, "metrics": ["mae"]}),
        ["key 'metrics[0]':", "is not reported by algorithm 'lloyd' (it reports nicv)"],
    ),
    # below, EUGkM's centres were NaN and DPLloyd's subnormal splits summed past ε; above,
    # EUGkM's grid size overflowed to a traceback
    "epsilon subnormal": (
        lambda t: _spec(t, {**GOOD, "epsilon": [1e-320]}),
        ["'epsilon[0]'", "between 1e-12 and 1e+12"],
    ),
    "epsilon near the float maximum": (
        lambda t: _spec(t, {**GOOD, "epsilon": [1.0, 1e308]}),
        ["'epsilon[1]'", "1e+12"],
    ),
    "k above N": (
        lambda t: _spec(
            t, {**GOOD, "datasets": [{"name": "synthetic", "params": {"N": 5, "k": 8, "d": 2}}]}
        ),
        ["datasets[0].params.k", "N = 5"],
    ),
    "too many runs": (
        lambda t: _spec(t, {**GOOD, "algorithms": [{"name": "dplloyd", "repeat": 10**9}]}),
        ["algorithms[dplloyd].repeat", "init.sets = ", "GiB", "lower repeat or init.sets"],
    ),
    "spec not a regular file": (lambda t: Path("/dev/null"), ["/dev/null", "not a regular file"]),
    "non-utf8 spec": (
        lambda t: (t / "b.yaml").write_bytes(b"name: \xff\n") and t / "b.yaml",
        ["UTF-8"],
    ),
    "nan in a user file": (
        lambda t: _spec(t, _tiger(t, _user_file(t, ["1,2", "nan,3", "4,5"]))),
        ["row 2", "column 1", "finite"],
    ),
    "inf in a user file": (
        lambda t: _spec(t, _tiger(t, _user_file(t, ["1,2", "3,inf"]))),
        ["column 2", "finite"],
    ),
    "truncated gz user file": (
        lambda t: _spec(
            t, _tiger(t, _user_file(t, [f"{i},{i}" for i in range(200)], gz=True, cut=True))
        ),
        ["gzip"],
    ),
}


def _with(**changes):
    return lambda t: _spec(t, {**GOOD, **changes})


def _algorithm(name, **params):
    return _with(algorithms=[{"name": name, "repeat": 1, "params": params}])


def _dataset(name, **params):
    return _with(datasets=[{"name": name, "params": params}])


def _csv(text, gz=False, **params):
    """A spec over a csv file ``text`` (``gz="raw"``: ``text`` is the .gz file's bytes)."""

    def make(t):
        blob = text.encode() if isinstance(text, str) else text
        path = "p.csv.gz" if gz else "p.csv"
        (t / path).write_bytes(gzip.compress(blob) if gz is True else blob)
        entry = {"name": "csv", "params": {"path": path, "k": 2, **params}}
        return _spec(t, {**GOOD, "datasets": [entry]})

    return make


POINTS = "x,y\n" + "\n".join(f"{i % 7},{i % 5}" for i in range(40)) + "\n"


def _benchmark(data: bytes, labels: bytes, **params):
    """A spec over a benchmark set ``fam/s`` whose two files hold ``data`` and ``labels``
    (gzip'd here)."""

    def make(t):
        (t / "b" / "fam").mkdir(parents=True)
        (t / "b" / "fam" / "s.data.gz").write_bytes(gzip.compress(data))
        (t / "b" / "fam" / "s.labels0.gz").write_bytes(gzip.compress(labels))
        entry = {"name": "benchmark", "params": {"battery": "b", "set": "fam/s", **params}}
        return _spec(t, {**GOOD, "datasets": [entry]})

    return make


ROWS = "\n".join(f"{i % 7} {i % 5}" for i in range(40)).encode()
LABELS = "\n".join(str(1 + i % 2) for i in range(40)).encode()

#: values that once validated and then crashed, or ran and gave a silent wrong number
CASES.update(
    {
        "theta nan": (_algorithm("eugkm", theta=float("nan")), ["theta", "finite"]),
        "iterations float": (_algorithm("dplloyd", iterations=2.5), ["iterations", "integer"]),
        "rho zero": (_algorithm("dplloyd_improved", rho=0.0), ["rho", "[1e-6, 1e6]"]),
        "grid too large": (_algorithm("eugkm", theta=1e-9), ["theta", "grid"]),
        "selected above pool": (_algorithm("pgkm", pool=2, selected=10), ["selected", "pool"]),
        "uniform lo above hi": (_dataset("uniform", lo=5.0, hi=1.0), ["params.hi", "lo < hi"]),
        "uniform constant": (_dataset("uniform", lo=1.0, hi=1.0), ["params.hi", "lo < hi"]),
        "uniform overflow": (_dataset("uniform", lo=-1e308, hi=1e308), ["overflows"]),
        "negative spread": (_dataset("blobs", spread=-1.0), ["params.spread"]),
        "generator too large": (_dataset("synthetic", N=10**12), ["params.N", "GiB"]),
        "empty metric list": (_with(metrics=[]), ["'metrics'", "non-empty"]),
        "second metric unreported": (_with(metrics=["nicv", "ari"]), ["metrics[1]", "lloyd"]),
        "class metric without classes": (
            _with(algorithms=[{"name": "kmeans"}], metrics=["ari"]),
            ["metrics[0]", "classes"],
        ),
        "undrawable title": (
            _with(plot={"kind": "nicv_vs_epsilon", "title": "$\\foo$"}),
            ["plot.title", "math"],
        ),
        "step plot without steps": (_with(plot={"kind": "nicv_vs_step"}), ["plot.kind"]),
        "lines x unknown": (_with(plot={"kind": "lines", "x": "bogus"}), ["plot.x"]),
        "plot not a mapping": (_with(plot=5), ["key 'plot':", "mapping", "(got 5)"]),
        "plot unknown key": (
            _with(plot={"kind": "none", "colour": "red"}),
            ["key 'plot.colour':", "unknown key", "(got 'red')", "'xlabel'"],
        ),
        "plot kind misspelt": (
            _with(plot={"kind": "nicv_vs_epsilo"}),
            ["key 'plot.kind':", "unknown plot kind", "Did you mean 'nicv_vs_epsilon'?"],
        ),
        "gap plot without x": (
            _with(plot={"kind": "gap_vs_param"}),
            ["key 'plot.x':", "gap_vs_param needs x", "among 'k', 'd'", "(got None)"],
        ),
        "gap plot x not k or d": (
            _with(plot={"kind": "gap_vs_param", "x": ["k", "s"]}),
            ["key 'plot.x':", "(got ['k', 's'])"],
        ),
        "lines with two x": (
            _with(plot={"kind": "lines", "x": ["N", "d"]}),
            ["key 'plot.x':", "lines needs x: one", "(got ['N', 'd'])"],
        ),
        "lines x misspelt": (
            _with(plot={"kind": "lines", "x": "epsilom"}),
            ["key 'plot.x':", "no parameter or run column", "(got 'epsilom')", "'epsilon'"],
        ),
        "plot log_y not a bool": (
            _with(plot={"kind": "nicv_vs_epsilon", "log_y": 1}),
            ["key 'plot.log_y':", "true or false", "(got 1)"],
        ),
        "plot log_x not a bool": (
            _with(plot={"kind": "nicv_vs_epsilon", "log_x": "no"}),
            ["key 'plot.log_x':", "true or false", "(got 'no')"],
        ),
        "plot title not text": (
            _with(plot={"kind": "nicv_vs_epsilon", "title": 5}),
            ["key 'plot.title':", "must be a string", "(got 5)"],
        ),
        "plot xlabel math": (
            _with(plot={"kind": "nicv_vs_epsilon", "xlabel": "$\\bad$"}),
            ["key 'plot.xlabel':", "cannot be drawn", "write \\$ for a dollar sign"],
        ),
        "block plot without GkM": (
            _with(plot={"kind": "nicv_vs_block"}),
            ["key 'plot.kind':", "draws a block size", "gkm", "none of the spec's", "(got"],
        ),
        "description not text": (_with(description=[1, 2]), ["description"]),
        "name escapes": (_with(name=".."), ["'name'", "plain folder name"]),
        "dpbv too large": (
            _with(
                datasets=[{"name": "uniform", "params": {"N": 200, "d": 2}}],
                algorithms=[{"name": "dpbv_error", "params": {"s": 10**9, "pairs": 10}}],
                metrics=["mae"],
            ),
            ["params.s", "GiB"],
        ),
        "dpbv m_max search too large": (  # few values, but s = 10^6: the farthest pair
            _with(
                datasets=[{"name": "uniform", "params": {"N": 20, "d": 1}}],
                algorithms=[{"name": "dp_dbscan", "params": {"s": 10**6}}],
                metrics=["silhouette"],
            ),
            ["params.s", "to find m_max"],
        ),
        "vertical on one attribute": (
            _with(
                datasets=[{"name": "uniform", "params": {"N": 200, "d": 1}}],
                algorithms=[{"name": "vertical_error", "params": {"s": 16, "pairs": 10}}],
                metrics=["mae"],
            ),
            ["d >= 2"],
        ),
        "csv range overflows": (_csv("x,y\n1e308,1\n-1e308,2\n3,4\n"), ["column 1", "overflows"]),
        "csv damaged gz": (_csv(b"\x1f\x8b" + bytes(range(99)), gz="raw"), ["cannot read"]),
        "csv truncated gz": (_csv(gzip.compress(POINTS.encode())[:30], gz="raw"), ["cannot"]),
        "csv columns not a list": (_csv(POINTS, columns=5), ["params.columns"]),
        "csv header not bool": (_csv(POINTS, header="yes"), ["params.header"]),
        "csv delimiter not a character": (_csv(POINTS, delimiter=3), ["params.delimiter"]),
        "csv bounds reversed": (_csv(POINTS, bounds=[5, 1]), ["params.bounds", "lo < hi"]),
        "csv empty": (_csv(""), ["p.csv"]),
        "csv empty field": (_csv("x,y\n1,2\n,3\n4,5\n"), ["line 3", "'x'", "empty or NaN"]),
        "csv short row": (_csv("x,y\n1,2\n3\n4,5\n"), ["line 3 has 1 field where the header"]),
        "csv short row in a column not used": (
            _csv("x,y,z\n1,2,3\n4,5\n6,7,8\n", columns=["x"]),
            ["line 3 has 2 fields where the header has 3 fields"],
        ),
        # pandas would index by the first column and shift every value one column left
        "csv first record longer than the header": (
            _csv("x,y\n1,2,3\n4,5,6\n7,8,9\n"),
            ["line 2 has 3 fields where the header has 2 fields"],
        ),
        "csv later record longer": (_csv("x,y\n1,2\n3,4\n5,6,7\n"), ["line 4 has 3 fields"]),
        "csv no header, longer record": (
            _csv("1,2\n3,4\n5,6,7\n", header=False),
            ["line 3 has 3 fields where line 1 has 2 fields"],
        ),
        "csv blank lines before a bad value": (
            _csv("x,y\n1,2\n\n\n3,nan\n4,5\n"),
            ["line 5, column 'y'"],
        ),
        "csv quoted field over two lines": (
            _csv('x,y\n"1\n",2\n3,4\n5,a\n'),
            ["column 'y' is text (line 5: 'a')"],
        ),
        "csv semicolons": (_csv("x;y\n1;2\n3;4\n"), ["is the delimiter ';'?"]),
        "csv delimiter ending every line": (
            _csv("x,y,\n1,2,\n3,4,\n5,6,\n"),
            ["column 'Unnamed: 2' is empty on every line", "params.columns"],
        ),
        "csv class missing": (
            _csv("x,y,c\n1,2,0\n3,4,\n5,6,1\n", columns=["x", "y"], classes="c"),
            ["line 3, class column 'c': empty"],
        ),
        "csv k above N": (
            _csv("x,y\n1,2\n3,4\n", k=3),
            ["datasets[csv].params.k", "N = 2 records"],
        ),
        "csv inf": (_csv("x,y\n1,2\n3,-inf\n4,5\n"), ["line 3", "'y'", "-inf"]),
        "csv sha256 of other bytes": (
            _csv(POINTS, sha256="ab" * 32),
            ["params.sha256", "does not match the file p.csv", "its sha256 is"],
        ),
        "csv sha256 not hex": (_csv(POINTS, sha256="xyz"), ["params.sha256", "64 hex digits"]),
        "csv path a folder": (_csv(POINTS, path="."), ["params.path", "file not found"]),
        "csv path empty": (_csv(POINTS, path=""), ["params.path", "required"]),
        "csv path not text": (_csv(POINTS, path=5), ["params.path", "must be a file path"]),
        "benchmark set missing": (
            _benchmark(ROWS, LABELS, set="fam/t"),
            ["params.set", "t.data.gz"],
        ),
        "benchmark set escapes": (_benchmark(ROWS, LABELS, set="../x"), ["params.set", "family"]),
        "benchmark labels short": (_benchmark(ROWS, b"1\n2\n"), ["s.labels0.gz", "2 labels"]),
        "benchmark text value": (_benchmark(b"1 2\n3 x\n", b"1\n2\n"), ["s.data.gz", "numbers"]),
        "benchmark k not integer": (_benchmark(ROWS, LABELS, k=2.5), ["params.k", "integer"]),
        "benchmark battery not text": (_benchmark(ROWS, LABELS, battery=3), ["params.battery"]),
        "benchmark set empty": (_benchmark(ROWS, LABELS, set=""), ["params.set", "required"]),
        "benchmark set with a space": (_benchmark(ROWS, LABELS, set="fam/a b"), ["params.set"]),
        "csv k an empty list": (_csv(POINTS, k=[]), ["params.k", "empty list"]),
        "csv domain with equal ends": (_csv(POINTS, domain=[1, 1]), ["params.domain", "lo < hi"]),
        "csv domain overflows": (_csv(POINTS, domain=[-1e308, 1e308]), ["overflows"]),
        "csv domain not a pair": (_csv(POINTS, domain=[0, 1, 2]), ["params.domain", "[lo, hi]"]),
        "csv domain lists of two lengths": (
            _csv(POINTS, domain=[[0, 0], [9, 9, 9]]),
            ["params.domain", "differ in length"],
        ),
        "csv bounds and domain both": (
            _csv(POINTS, bounds=[0, 9], domain=[0, 9]),
            ["params.bounds", "repeats params.domain"],
        ),
        "csv classes not a column": (_csv(POINTS, classes=1.5), ["params.classes"]),
        "csv delimiter a quote": (_csv(POINTS, delimiter='"'), ["params.delimiter"]),
        "csv label not text": (_csv(POINTS, label=5), ["params.label", "string"]),
        "csv column index negative": (_csv(POINTS, columns=[-1]), ["params.columns"]),
        "csv column true": (_csv(POINTS, columns=[True]), ["params.columns"]),
        "csv column named twice": (_csv(POINTS, columns=["x", "x"]), ["names a column twice"]),
        "csv k list with a bad k": (_csv(POINTS, k=[2, 0]), ["params.k"]),
        "benchmark public bounds": (
            lambda t: _spec(
                t, {**yaml.safe_load(_benchmark(ROWS, LABELS)(t).read_text()), "bounds": "public"}
            ),
            ["bounds", "no public domain"],
        ),
        "csv binary": (_csv(bytes(range(256)) * 3), ["p.csv", "cannot read"]),
        "csv name heads two columns": (
            _csv("x,x,y\n" + "".join(f"{i},{i % 3},{i % 5}\n" for i in range(9)), columns=["x"]),
            ["columns 0, 1", "'x'"],
        ),
        "csv domain of another width": (
            _csv(POINTS, domain=[[0, 0, 0], [9, 9, 9]]),
            ["domain", "2 columns"],
        ),
        "private iterations beyond the cap": (
            _algorithm("dplloyd", iterations=10**8),
            ["params.iterations", "<= 10,000", "ledger"],
        ),
        "pgkm pool too large": (_algorithm("pgkm", pool=10**11), ["params.pool", "GiB"]),
    }
)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_exit_2(tmp_path, case):
    make, words = CASES[case]
    spec_path = make(tmp_path)
    proc = _cli("run", str(spec_path), cwd=tmp_path)
    err = proc.stderr.strip()
    assert proc.returncode == 2, (case, proc.stdout, err)
    assert "Traceback" not in proc.stderr and err.startswith("error: ") and "\n" not in err
    assert str(spec_path.name) in err or "u.csv" in err
    for w in words:
        assert w in err, (case, err)
    assert not (tmp_path / "results" / "corpus" / "cells").exists() or not any(
        (tmp_path / "results" / "corpus" / "cells").glob("*.csv")
    )


def test_unwritable_or_blocked_out_fails_before_work(tmp_path):
    spec_path = _spec(tmp_path)
    (tmp_path / "afile").write_text("x")
    proc = _cli("run", str(spec_path), "--out", str(tmp_path / "afile" / "sub"), cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "afile" in proc.stderr and "cannot write" in proc.stderr


def test_a_folder_of_another_spec_is_not_overwritten(tmp_path):
    first = _spec(tmp_path, name="first.yaml")
    assert _cli("run", str(first), "-q", cwd=tmp_path).returncode == 0
    second = _spec(tmp_path, {**GOOD, "seed": 2}, name="second.yaml")
    proc = _cli("run", str(second), "-q", cwd=tmp_path)
    assert proc.returncode == 2 and "first.yaml" in proc.stderr and "second.yaml" in proc.stderr
    assert _cli("run", str(second), "-q", "--force", cwd=tmp_path).returncode == 0


def test_files_respect_the_umask(tmp_path):
    spec_path = _spec(tmp_path)
    code = (
        "import os, sys; os.umask(0o022); from dpcluster.cli import main; "
        f"sys.argv = ['dpcluster', 'run', {str(spec_path)!r}, '-q']; main()"
    )
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=False, capture_output=True)
    mode = (tmp_path / "results" / "corpus" / "summary.csv").stat().st_mode & 0o777
    assert mode == 0o644


def test_verify_catches_damage_and_names_the_file(tmp_path):
    spec_path = _spec(tmp_path)
    assert _cli("run", str(spec_path), "-q", cwd=tmp_path).returncode == 0
    ok = _cli("verify", "results", cwd=tmp_path)
    assert ok.returncode == 0 and "1 spec folder(s) checked, ok" in ok.stdout
    cell = sorted((tmp_path / "results" / "corpus" / "cells").glob("*.csv"))[0]
    cell.write_bytes(cell.read_bytes()[:-20])
    bad = _cli("verify", "results/corpus", cwd=tmp_path)
    assert bad.returncode == 5 and cell.name in bad.stderr
    summary = tmp_path / "results" / "corpus" / "summary.csv"
    _cli("run", str(spec_path), "-q", cwd=tmp_path)  # recomputes the damaged cell
    assert _cli("verify", "results", cwd=tmp_path).returncode == 0
    summary.write_text(summary.read_text().replace("1.0", "1.5", 1))
    bad = _cli("verify", "results", cwd=tmp_path)
    assert bad.returncode == 5 and "summary.csv" in bad.stderr


@pytest.mark.slow
@pytest.mark.serial
@pytest.mark.parametrize(
    "sig,code,word",
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")],
    ids=["SIGTERM", "SIGINT (Ctrl-C)"],
)
def test_signal_exits_with_its_code_and_keeps_finished_cells(tmp_path, sig, code, word):
    raw = {
        **GOOD,
        "epsilon": [0.1, 0.2, 0.5, 1.0, 2.0, 4.0],
        "datasets": [{"name": "synthetic", "params": {"N": 3000, "k": 4, "d": 3}}],
        "algorithms": [{"name": "pgkm", "repeat": 30}],
    }
    spec_path = _spec(tmp_path, raw)
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpcluster.cli", "run", str(spec_path), "--jobs", "2", "-q"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a shell without job control starts background jobs with SIGINT ignored, and the
        # child would inherit that: give it the default, as a terminal would
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    cells = tmp_path / "results" / "corpus" / "cells"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(cells.glob("*.json")):
        time.sleep(0.2)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code and word in err and "Traceback" not in err
    assert list(cells.glob("*.json"))
    out = subprocess.run(["pgrep", "-f", "loky"], capture_output=True, text=True, check=False)
    deadline = time.monotonic() + 60  # the workers exit on their own; poll, do not guess
    while (mine := [p for p in out.stdout.split() if str(tmp_path) in _cmdline(p)]) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.1)
    assert not mine
    resumed = _cli("run", str(spec_path), "-q", cwd=tmp_path)
    assert resumed.returncode == 0
    meta = json.loads((tmp_path / "results" / "corpus" / "meta.json").read_text())
    assert meta["cells_resumed"] >= 1


def _cmdline(pid: str) -> str:
    try:
        return open(f"/proc/{pid}/cmdline").read()
    except OSError:
        return ""


if os.name != "posix":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX signals and modes")


def test_python_api_refuses_data_that_break_the_sensitivity():
    import numpy as np

    from dpcluster.algorithms import dplloyd, eugkm

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (50, 2))
    init = rng.uniform(-1, 1, (3, 2))
    with pytest.raises(ValueError, match="non-finite value at row 4"):
        dplloyd(np.where(np.arange(50)[:, None] == 4, np.nan, X), 3, 1.0, init, rng)
    with pytest.raises(ValueError, match=r"must lie in \[-1, 1\]\^d"):
        dplloyd(X * 3, 3, 1.0, init, rng)
    with pytest.raises(ValueError, match="match X's d = 2"):
        eugkm(X, 3, 1.0, rng.uniform(-1, 1, (4, 3, 5)), rng)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 2.5 * (1 + 1e-9), -3.0])
def test_one_bad_entry_in_a_later_block_is_found(bad):
    """The one-pass scan (dpcluster/kernels/scan.py) over several blocks: one entry that is
    not finite or outside [-r, r] is counted wherever it is; the bound itself is inside."""
    from dpcluster.algorithms import checks
    from dpcluster.kernels.scan import SCAN_BLOCK, count_outside

    X = np.random.default_rng(1).uniform(-2.5, 2.5, (2 * SCAN_BLOCK + 3, 3))
    X[0, 0], X[1, 1] = 2.5, -2.5
    assert count_outside(X, 2.5) == 0
    # the records come back on the lattice every Laplace release assumes
    np.testing.assert_array_equal(checks.points(X, r=2.5), snap_records(X))
    X[SCAN_BLOCK + 7, 2] = bad
    assert count_outside(X, 2.5) == 1
    with pytest.raises(
        ValueError,
        match="non-finite value at row"
        if np.isnan(bad) or np.isinf(bad)
        else r"must lie in \[-2.5, 2.5\]",
    ):
        checks.points(X, r=2.5)


@pytest.mark.parametrize("n_rows", ["scan", "fused"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 2.5 * (1 + 1e-9), -3.0])
def test_the_check_that_gives_first_statistics_refuses_what_points_refuses(bad, n_rows):
    """checks.points_and_stats (the single fit's first pass, which checks the records while
    it accumulates them) against checks.points: the same refusals with the same messages,
    the bound itself inside, and for good data the statistics of cluster_stats_single.
    "fused" is large enough for the generated kernel that counts on the values it adds."""
    from dpcluster.algorithms import checks
    from dpcluster.kernels import cluster_stats_single, points

    N = points.GENERATED_MIN_POINTS + 3 if n_rows == "fused" else 1000
    X = np.random.default_rng(2).uniform(-2.5, 2.5, (N, 3))
    X[0, 0], X[1, 1] = 2.5, -2.5
    C = np.random.default_rng(3).uniform(-2.5, 2.5, (4, 3))
    Y, counts, sums = checks.points_and_stats(X, C, r=2.5)
    np.testing.assert_array_equal(Y, snap_records(X))  # on the records' lattice
    ref = cluster_stats_single(Y, C)
    np.testing.assert_array_equal(counts, ref[0])
    np.testing.assert_array_equal(sums, ref[1])
    X[N - 2, 2] = bad
    with pytest.raises(ValueError) as by_points:
        checks.points(X, r=2.5)
    with pytest.raises(ValueError) as by_stats:
        checks.points_and_stats(X, C, r=2.5)
    assert str(by_stats.value) == str(by_points.value)


def test_a_large_single_fit_refuses_bad_data_before_booking():
    """dplloyd on data large enough for the fused check: one NaN in the last record is
    refused with the check's message, and no release reaches an observer."""
    from dpcluster.algorithms import dplloyd
    from dpcluster.kernels import points
    from dpcluster.privacy import transcript

    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (points.GENERATED_MIN_POINTS + 1, 2))
    X[-1, 1] = np.nan
    seen = []
    with transcript.observe(seen.append):
        with pytest.raises(ValueError, match=f"non-finite value at row {len(X) - 1}, column 1"):
            dplloyd(X, 3, 1.0, rng.uniform(-1, 1, (3, 2)), rng)
        dplloyd(X[:-1], 3, 1.0, rng.uniform(-1, 1, (3, 2)), rng)
    assert len(seen) == 2 * 5  # the good data: counts and sums in each of 5 iterations


@pytest.mark.parametrize(
    "args,words",
    [
        (("run",), ["Missing argument 'SPEC...'", "run --help"]),
        (("run", "s.yaml", "--jobs", "0"), ["'--jobs'", "0 is not in the range"]),
        (("audit", "s.yaml", "--trials", "5"), ["'--trials'", "5"]),
        (("plot", "s.yaml", "--bogus"), ["No such option '--bogus'"]),
        (("nosuchcommand",), ["No such command 'nosuchcommand'"]),
    ],
)
def test_a_usage_error_is_one_line_exit_2(tmp_path, args, words):
    """click's own errors (a missing argument, an unknown option or command, a value out of
    range) read like every other bad input: one ``error:`` line, exit 2."""
    proc = _cli(*args, cwd=tmp_path)
    err = proc.stderr.strip()
    assert proc.returncode == 2, (args, err)
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    for w in words:
        assert w in err, (args, err)


def test_a_right_sha256_pin_is_accepted_in_either_case(tmp_path):
    """The pin's twin of "csv sha256 of other bytes": the file's own digest, in capitals
    too, is accepted, and the path resolves against the spec's folder, not the cwd."""
    import hashlib

    from dpcluster import spec

    (tmp_path / "p.csv").write_text(POINTS)
    digest = hashlib.sha256(POINTS.encode()).hexdigest()
    for pin in (digest, digest.upper()):
        path = _csv(POINTS, sha256=pin)(tmp_path)
        (ds,) = spec.load(str(path)).datasets
        assert dict(ds.kwargs)["sha256"] == digest
        assert dict(ds.kwargs)["path"] == str((tmp_path / "p.csv").resolve())


def test_what_the_corpus_refuses_next_to_is_accepted(tmp_path):
    """The near neighbours of the csv corpus cases parse: columns by 0-based index, a
    domain of one list per column, a scalar lo against a list hi."""
    from dpcluster import spec

    for params in (
        {"columns": [0, 1]},
        {"domain": [[0, 0], [7, 5]]},
        {"domain": [0, [7, 5]]},
        {"classes": 1, "columns": [0]},
    ):
        (ds,) = spec.load(str(_csv(POINTS, **params)(tmp_path))).datasets
        assert ds.name == "csv", params


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_corpus_is_refused_in_process_before_any_work(tmp_path, case):
    """The same corpus without a subprocess: reading the spec and the checks `run` makes
    before any work raise the error the command line prints, with the same words. (Mutation
    testing traces this process, so it sees the validation code through this twin.)"""
    from dpcluster import harness, spec
    from dpcluster.errors import DpclusterError

    make, words = CASES[case]
    spec_path = make(tmp_path)
    with pytest.raises(DpclusterError) as info:
        sp = spec.load(str(spec_path))
        list(harness.check_spec(sp))
    message = str(info.value)  # the command line makes it one line
    assert spec_path.name in message or "u.csv" in message
    for w in words:
        assert w in message, (case, message)
