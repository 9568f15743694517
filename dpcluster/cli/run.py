"""``dpcluster run``: every cell of one or more specs in one worker pool."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import click

from ..errors import DpclusterError
from ..harness.backends import BACKENDS
from ..harness.estimate import usable_cpus
from .base import (
    _SET,
    EXIT_FAILED_RUNS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    Terminated,
    _fail,
    _fail_on,
    _jobs_option,
    _on_sigterm,
    main,
)
from .progress import Progress


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
    type=click.Choice(BACKENDS),
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

    Several SPECs share one worker pool: the heaviest cells start first (with kernels not
    compiled yet, one cell per kernel leads), and a cell that two specs share is computed
    once. The last line says how long the cells spent compiling kernels, if at all.
    """
    from .. import harness, spec

    if out is not None and len(spec_paths) > 1:
        _fail(
            f"--out takes a single SPEC, got {len(spec_paths)}; without --out each spec "
            "writes to results/<name>"
        )
    try:
        sets = spec.parse_overrides(overrides)
        specs = [spec.load(path, sets) for path in spec_paths]  # every error before any work
        if dry_run:
            from ..harness.estimate import estimate
            from ..results import cell_done

            every, todo = [], []
            for sp in specs:
                cells = harness.expand(sp)
                every += cells
                folder = Path(out) if out is not None else sp.default_out
                done = set() if force else {c.id for c in cells if cell_done(folder, c.id)}
                todo += [c for c in cells if c.id not in done]
                costs = {c.id: harness.cell_cost(c) for c in cells}  # one per computation
                for c in cells:
                    state = "done" if c.id in done else f"~{costs[c.id]:8.1f}s"
                    click.echo(f"{c.id}  {c.n_runs:6d} runs  {state:>10}  {c.describe(brief=True)}")
                click.echo(
                    f"{sp.path}: {len(cells)} cells ({len(costs)} distinct "
                    f"computations), {sum(c.n_runs for c in cells):,} runs; {len(done)} of "
                    f"{len(cells)} cells already done in {folder}"
                )
            if not todo:
                click.echo("nothing to compute: every cell is done (--force recomputes them)")
                return
            guess = estimate(todo, jobs)
            basis = (
                f"the cost model scaled by {guess.factor:.2g}, from {guess.measured_cells} "
                "cells this machine measured (results/*/timing.csv)"
                if guess.measured_cells
                else "the cost model as fitted (no cell measured on this machine yet)"
            )
            click.echo(
                f"estimate for the {len(todo)} cells not done: about {_duration(guess.wall_s)} "
                "wall with "
                f"--jobs {jobs} ({guess.core_s / 60:.1f} core-minutes of cells"
                + (
                    f", plus about {_duration(guess.compile_s)} compiling kernels"
                    if guess.compile_s
                    else ""
                )
                + f"); {basis}"
            )
            return
        for sp in specs:  # data, k ≤ N and size errors surface before any work
            for warning in harness.check_spec(sp):
                click.echo(f"warning: {warning}", err=True)
        cpus = usable_cpus()
        if backend == "local" and jobs > cpus:
            click.echo(
                f"warning: --jobs {jobs} is more than the {cpus} CPUs this process may use: "
                "the workers share them, and each holds its own data and kernels",
                err=True,
            )
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
                on_warning=lambda message: click.echo(f"warning: {message}", err=True),
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
        compiled = (
            f"; {_duration(report.compile_s)} of the cells' time compiled kernels, once for "
            "this machine"
            if report.compile_s >= 1.0
            else ""
        )
        click.echo(
            f"{report.out}: {report.cells_computed} cells computed, "
            f"{report.cells_resumed} reused, {len(report.failures)} failed{compiled}"
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
        if report.degenerate:
            click.echo(
                f"  DEGENERATE: {report.degenerate} run(s) took their centres from a grid of one "
                "cell per axis: they depend on one noisy count, not on where the records lie "
                "(counted in meta.json's degenerate_runs); fewer dimensions or more ε give the "
                "grid cells",
                err=True,
            )
        failed = failed or bool(report.failures) or bool(report.nonfinite)
    sys.exit(EXIT_FAILED_RUNS if failed else EXIT_OK)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
