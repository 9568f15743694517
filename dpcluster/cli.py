"""Command line: a thin layer over :mod:`dpcluster.harness`.

Exit codes: dpcluster/exits.py (docs/cli.md lists them with every command's help).
"""

from __future__ import annotations

import signal
import sys
import threading
import time

import click

from . import data
from .errors import DpclusterError
from .exits import MEANING, Exit
from .privacy import check_epsilon

EXIT_OK, EXIT_FAILED_RUNS, EXIT_BAD_INPUT = Exit.OK, Exit.FAILED_RUNS, Exit.BAD_INPUT
EXIT_VERIFY_FAILED, EXIT_WRITE_FAILED = Exit.VERIFY_FAILED, Exit.WRITE_FAILED
EXIT_INTERRUPTED, EXIT_TERMINATED = Exit.INTERRUPTED, Exit.TERMINATED
#: every exit status and what it means (dpcluster/exits.py)
EXIT_CODES = {int(code): meaning for code, meaning in MEANING.items()}


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that the worker pool is shut down like on
    Ctrl-C (joblib terminates its workers when the consuming loop is interrupted)."""


def _on_sigterm(signum, frame):
    raise Terminated()


def _fail(msg: str, code: int = EXIT_BAD_INPUT) -> None:
    one_line = " ".join(str(msg).split())  # a library's multi-line message stays one line
    click.echo(f"error: {one_line}", err=True)
    sys.exit(code)


def _fail_on(exc: DpclusterError) -> None:
    """One line for a DpclusterError, with its exit code (a failed write: 6; else 2)."""
    from .errors import WriteError

    _fail(str(exc), EXIT_WRITE_FAILED if isinstance(exc, WriteError) else EXIT_BAD_INPUT)


def _clock(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}" if m >= 60 else f"{m}:{s:02d}"


class Progress:
    """A one-line progress bar on stderr: cells, share of this run's work, elapsed and ETA.

    The work share weights each computed cell by its cost estimate, so resumed cells and
    cheap cells do not make the ETA optimistic. Between cell completions a heartbeat thread
    keeps the clock moving (the ETA counts down from the last estimate): every second on a
    terminal, and as a new line every 30 s otherwise (logs, CI).
    """

    def __init__(self, enabled: bool = True, tick: float | None = None):
        self.enabled = enabled
        self.start = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.tick = tick if tick is not None else (1.0 if self.tty else 30.0)
        self.state: tuple[int, int, float, float, float | None] | None = None
        self.last = float("-inf")  # when a line was last drawn
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __call__(self, cells_done: int, cells_total: int, work: float):
        if not self.enabled:
            return
        now = time.monotonic() - self.start
        eta = now / work * (1 - work) if 0 < work < 1 else None
        with self.lock:
            self.state = (cells_done, cells_total, work, now, eta)
        finished = cells_done == cells_total
        if self.tty or finished or now - self.last >= self.tick:
            self._draw(final=finished)
        if finished:
            self.stop.set()
        elif self.thread is None:
            self.thread = threading.Thread(target=self._heartbeat, daemon=True)
            self.thread.start()

    def _heartbeat(self):
        while not self.stop.wait(self.tick):
            self._draw(final=False)

    def _draw(self, final: bool):
        with self.lock:
            if self.state is None:
                return
            cells_done, cells_total, work, at, eta = self.state
            now = time.monotonic() - self.start
            left = f"ETA {_clock(max(0.0, eta - (now - at)))}" if eta is not None else "ETA  -  "
            bar = "#" * int(work * 24)
            line = (
                f"[{bar:<24}] cells {cells_done}/{cells_total}  work {100 * work:3.0f}%  "
                f"{_clock(now)}  {left}"
            )
            if self.tty:
                click.echo("\r" + line + ("\n" if final else ""), nl=False, err=True)
            else:
                click.echo(line, err=True)
            self.last = now

    def close(self):
        self.stop.set()


def _load_spec(spec_path: str, overrides=()):
    """The validated spec, or exit 2 with the one-line message (file, key, value)."""
    from . import spec

    try:
        return spec.load(spec_path, spec.parse_overrides(overrides))
    except DpclusterError as exc:
        _fail(str(exc))


_SET = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="override a spec key (repeatable; YAML value; dotted path, list "
    "index or entry name: epsilon=[0.5,1], seed=3, "
    "algorithms.dplloyd.repeat=10, datasets.0.params.N=5000). The "
    "results go to results/<name>--set-<hash>",
)


def _jobs_option(what: str):
    """``--jobs/-j N``: worker processes, of which ``what`` does not depend."""
    return click.option(
        "--jobs",
        "-j",
        default=1,
        show_default=True,
        type=click.IntRange(1, None),
        help=f"parallel worker processes ({what} do not depend on it)",
    )


@click.group()
@click.version_option(package_name="dpcluster")
def main() -> None:
    """dpcluster: run, compare and reproduce private clustering algorithms from YAML specs."""


@main.command()
@click.argument(
    "spec_paths", metavar="SPEC...", nargs=-1, required=True, type=click.Path(dir_okay=False)
)
@_jobs_option("results")
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="output folder for a single SPEC [default: results/<spec name>]",
)
@click.option("--force", is_flag=True, help="recompute cells that are already finished")
@click.option(
    "--dry-run", is_flag=True, help="list the cells, run counts and estimated cost; compute nothing"
)
@click.option("--quiet", "-q", is_flag=True, help="no progress bar")
@click.option(
    "--traceback",
    "show_traceback",
    is_flag=True,
    help="print each failed cell's traceback (meta.json and cells/<id>.failed.json keep it)",
)
@click.option(
    "--backend",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="where cells run: this machine's process pool, or a Dask cluster (docs/cluster.md)",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="with --backend dask: a scheduler address (tcp://host:8786) or scheduler "
    "file; default: a LocalCluster of --jobs workers",
)
@_SET
def run(
    spec_paths: tuple[str, ...],
    jobs: int,
    out: str | None,
    force: bool,
    dry_run: bool,
    quiet: bool,
    show_traceback: bool,
    backend: str,
    scheduler: str | None,
    overrides: tuple[str, ...],
):
    """Run every cell of each SPEC and write tables and figures under results/<name>/.

    Several SPECs share one worker pool: the heaviest cells start first, and a cell that
    two specs share is computed once.
    """
    from . import harness, spec

    if out is not None and len(spec_paths) > 1:
        _fail(
            f"--out takes a single SPEC, got {len(spec_paths)}; without --out each spec "
            "writes to results/<name>"
        )
    try:
        sets = spec.parse_overrides(overrides)
        specs = [spec.load(path, sets) for path in spec_paths]  # every error before any work
        if dry_run:
            for sp in specs:
                cells = harness.expand(sp)
                costs = {c.id: harness.cell_cost(c) for c in cells}  # one per computation
                for c in cells:
                    click.echo(f"{c.id}  {c.n_runs:6d} runs  ~{costs[c.id]:9.1f}s  {c.describe()}")
                click.echo(
                    f"{sp.path}: {len(cells)} cells ({len(costs)} distinct "
                    f"computations), {sum(c.n_runs for c in cells):,} runs, "
                    f"~{sum(costs.values()) / 60:.1f} core-minutes if nothing is reused"
                )
            return
        for sp in specs:  # data, k ≤ N and size errors surface before any work
            for warning in harness.check_spec(sp):
                click.echo(f"warning: {warning}", err=True)
        progress = Progress(not quiet)
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            if backend == "dask":
                try:
                    import distributed  # noqa: F401
                except ImportError:
                    _fail(
                        "--backend dask needs dask's distributed scheduler: "
                        "pip install -e '.[dask]'"
                    )
            elif scheduler:
                _fail("--scheduler needs --backend dask")
            reports = harness.run_specs(
                [(sp, out) for sp in specs],
                jobs=jobs,
                force=force,
                progress=progress,
                backend=backend,
                scheduler=scheduler,
            )
        finally:
            signal.signal(signal.SIGTERM, previous)
            progress.close()
    except DpclusterError as exc:
        _fail_on(exc)
    except Terminated:
        click.echo("\nterminated: finished cells are kept; rerun to resume", err=True)
        sys.exit(EXIT_TERMINATED)
    except KeyboardInterrupt:
        click.echo("\ninterrupted: finished cells are kept; rerun to resume", err=True)
        sys.exit(EXIT_INTERRUPTED)
    failed = False
    for report in reports:
        click.echo(
            f"{report.out}: {report.cells_computed} cells computed, "
            f"{report.cells_resumed} reused, {len(report.failures)} failed"
        )
        for failure in report.failures:
            click.echo(f"  FAILED {failure.what}: {failure.error}", err=True)
            if show_traceback and failure.traceback:
                click.echo(failure.traceback.rstrip(), err=True)
        if report.failures and not show_traceback:
            click.echo("  (run again with --traceback to see where each failure arose)", err=True)
        if report.nonfinite:
            click.echo(
                f"  NON-FINITE: {report.nonfinite} metric value(s) are inf or NaN, left out of "
                f"the statistics and counted in {report.out / 'summary.csv'}'s n_nonfinite",
                err=True,
            )
        failed = failed or bool(report.failures) or bool(report.nonfinite)
    sys.exit(EXIT_FAILED_RUNS if failed else EXIT_OK)


_JSON = click.option("--json", "as_json", is_flag=True, help="print JSON instead of text")


def _echo_json(obj) -> None:
    import json

    click.echo(json.dumps(obj, indent=1, default=str))


@main.command()
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@_SET
@_JSON
def validate(spec_path: str, overrides: tuple[str, ...], as_json: bool):
    """Check SPEC without running it."""
    from . import harness

    sp = _load_spec(spec_path, overrides)
    try:
        warnings = harness.check_spec(sp)
    except DpclusterError as exc:
        _fail(str(exc))
    cells = harness.expand(sp)
    runs = sum(c.n_runs for c in cells)
    if as_json:
        _echo_json(
            {
                "spec": spec_path,
                "ok": True,
                "name": sp.name,
                "hash": sp.hash,
                "cells": len(cells),
                "runs": runs,
                "out": str(sp.default_out),
                "warnings": warnings,
            }
        )
        return
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"{spec_path}: ok ({len(cells)} cells, {runs:,} runs)")


@main.command()
@click.argument(
    "root", metavar="[DIR]", required=False, default="results", type=click.Path(file_okay=False)
)
@_JSON
def results(root: str, as_json: bool):
    """List the result folders under DIR: spec, hash, cells done of total, commit, date."""
    from . import harness

    rows = harness.list_results(root)
    if as_json:
        _echo_json(rows)
        return
    if not rows:
        click.echo(f"{root}: no results (no folder whose meta.json dpcluster run wrote)")
    for r in rows:
        click.echo(
            f"{r['folder']:<40} {r['spec_name']:<22} {r['spec_hash'][:12]}  cells "
            f"{r['cells_done']}/{r['cells_total']}  {str(r['git_commit'])[:10]}  "
            f"{r['finished']}"
        )


@main.command(name="list")
@_JSON
def list_(as_json: bool) -> None:
    """List datasets, algorithms and their parameters."""
    from .experiments import describe_entry, known_names, lookup

    if as_json:
        entries = [lookup(name) for name in known_names()]
        _echo_json(
            {
                "datasets": data.describe(),
                "algorithms": [describe_entry(i) for i in entries],
            }
        )
        return
    click.echo("Datasets:")
    for row in data.describe():
        click.echo(
            f"  {row['name']:<10} k={row['k']!s:<6} {row['label']}  [{row['source']}]"
            f"  params: {row['params']}"
        )
    click.echo("\nAlgorithms:")
    for info in (lookup(name) for name in known_names()):
        kind = "private" if info.private else "non-private"
        click.echo(f"  {info.name:<17} {kind}; {info.summary}")
        click.echo(f"    repeat (default {info.repeat_default}): {info.repeat_doc}")
        for name, p in info.params.items():
            choices = f" {{{', '.join(map(str, p.choices))}}}" if p.choices else ""
            click.echo(f"    {name} = {p.default!r}{choices}: {p.doc}")


@main.command()
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="the results folder to read summary.csv from and draw into [default: results/<spec name>]",
)
@_SET
def plot(spec_path: str, out: str | None, overrides: tuple[str, ...]):
    """Redraw SPEC's figure from its saved summary.csv, without recomputing."""
    from pathlib import Path

    import pandas as pd

    from . import plotting

    sp = _load_spec(spec_path, overrides)
    folder = Path(out) if out else sp.default_out
    table = folder / "summary.csv"
    if not table.is_file():
        _fail(f"{table}: no saved summary; run `dpcluster run {spec_path}` first")
    for path in plotting.render(sp, pd.read_csv(table), folder):
        click.echo(str(path))


@main.command()
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@_JSON
def analyze(spec_path: str, as_json: bool):
    """Print docs/methods.md A6's closed-form MSE predictions for SPEC's datasets and ε grid."""
    import math

    import pandas as pd

    from . import analysis, data

    sp = _load_spec(spec_path)
    pd.set_option("display.width", 200)
    out = []
    for ds_spec in sp.datasets:
        try:
            ds = data.load(ds_spec.name, **ds_spec.kwargs)
        except DpclusterError as exc:
            _fail(str(exc))
        rows = [analysis.predictions(ds.N, ds.k, ds.d, e) for e in sp.epsilon if math.isfinite(e)]
        if as_json:
            out.append(
                {"dataset": ds_spec.key, "N": ds.N, "d": ds.d, "k": ds.k, "predictions": rows}
            )
            continue
        click.echo(
            f"\n{ds.label}: N={ds.N:,} d={ds.d} k={ds.k}  "
            f"(hybrid switches on at ε ≥ {rows[0]['switch_on_eps']:.3g}; "
            f"θ* = {rows[0]['theta_star']:.3g})"
        )
        table = pd.DataFrame(rows).drop(columns=["switch_on_eps", "theta_star"])
        click.echo(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if as_json:
        _echo_json(out)


def _float_list(value: str) -> list[float]:
    try:
        out = [float(v) for v in value.split(",") if v.strip()]
    except ValueError:
        _fail(f"--epsilon {value!r}: expected comma-separated positive numbers")
    if not out or any(check_epsilon(v) for v in out):
        _fail(f"--epsilon {value!r}: expected comma-separated positive finite numbers")
    return out


@main.command()
@click.argument("spec_path", metavar="[SPEC]", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--algorithms",
    "-a",
    default=None,
    help="comma-separated audit targets or registry names [default: all, or the "
    "SPEC's private algorithms]",
)
@click.option(
    "--epsilon",
    "epsilons",
    default=None,
    help="comma-separated ε values [default: 0.5,1,2, or the SPEC's grid]",
)
@click.option(
    "--trials",
    type=click.IntRange(20, None),
    default=None,
    help="trials per side for every target [default: each target's own]",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default="results/audit",
    show_default=True,
    help="folder for audit.csv, audit.md and audit.png",
)
@_jobs_option("the bounds")
@click.option(
    "--seed",
    default=20261201,
    show_default=True,
    type=click.IntRange(0, None),
    help="root seed; each (target, ε, side) draws its own stream from it",
)
def audit(
    spec_path: str | None,
    algorithms: str | None,
    epsilons: str | None,
    trials: int | None,
    out: str,
    jobs: int,
    seed: int,
):
    """Audit the privacy of every private algorithm: 95 % lower bounds on ε (black-box from
    outputs, white-box from exact transcript likelihoods) against the claimed and the
    provable ε. Writes OUT/audit.csv, audit.md and audit.png (docs/audit.md).

    Exit status: 0 every verdict consistent; 3 a claimed ε is violated (Paper B's DPBV
    always is); 4 a provable ε is violated, which means a bug in dpcluster.
    """
    import os

    from . import audit as audit_mod
    from .audit.choose import blame_lines, choose_targets, verdict_lines
    from .audit.run import DEFAULT_EPSILONS

    names = [n.strip() for n in algorithms.split(",") if n.strip()] if algorithms else None
    eps = _float_list(epsilons) if epsilons else None
    sp = _load_spec(spec_path) if spec_path is not None else None
    if sp is not None:
        eps = eps or list(sp.epsilon)
    try:
        names, extra = choose_targets(names, sp, os.getcwd())
        table = audit_mod.run_audit(names, eps or DEFAULT_EPSILONS, trials, jobs, seed, extra)
    except DpclusterError as exc:
        _fail_on(exc)
    for path in audit_mod.write_audit(table, out):
        click.echo(str(path))
    for line in verdict_lines(table):
        click.echo(line)
    status = audit_mod.exit_status(table)
    for line in blame_lines(table):
        click.echo(line, err=True)
    sys.exit(status)


@main.command()
@click.argument(
    "folder", metavar="[DIR]", required=False, default="results", type=click.Path(file_okay=False)
)
def verify(folder: str):
    """Check a results folder (one spec's, or a root of several): every cell's CSV against
    its sha256 record, and runs.csv and summary.csv against the cells. Exit 5 on any
    mismatch, naming each file."""
    from pathlib import Path

    from . import harness

    if not Path(folder).is_dir():
        _fail(f"{folder}: no such results folder")
    checked, problems = harness.verify_folder(folder)
    for problem in problems:
        click.echo(f"  {problem}", err=True)
    if not checked:
        _fail(f"{folder}: no spec results (no meta.json) found")
    click.echo(
        f"{folder}: {checked} spec folder(s) checked, "
        f"{'ok' if not problems else f'{len(problems)} problem(s)'}"
    )
    sys.exit(EXIT_VERIFY_FAILED if problems else EXIT_OK)


@main.command()
@click.option(
    "--results",
    "results_dir",
    type=click.Path(file_okay=False),
    default="results",
    show_default=True,
    help="the results root, one folder per spec (as make reproduce-all writes it)",
)
def report(results_dir: str):
    """Write RESULTS/REPORT.md: every figure and the papers' claims checked from the tables."""
    from .report import write_report

    click.echo(str(write_report(results_dir)))


if __name__ == "__main__":
    main()
