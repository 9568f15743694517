"""The commands that read: ``validate``, ``results``, ``list``, ``plot``, ``analyze``,
``verify`` and ``report``."""

from __future__ import annotations

import sys

import click

from .. import data
from ..errors import DpclusterError
from .base import (
    _JSON,
    _SET,
    EXIT_OK,
    EXIT_VERIFY_FAILED,
    _echo_json,
    _fail,
    _fail_on,
    _load_spec,
    main,
)


@main.command()
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@_SET
@_JSON
def validate(spec_path: str, overrides: tuple[str, ...], as_json: bool):
    """Check SPEC without running it."""
    from .. import harness

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
    from .. import harness

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
    from ..experiments import describe_entry, known_names, lookup

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
        _echo_params(info.params, "    ")
        if info.fit is not None and info.fit.params:
            click.echo("    pipeline: estimator and DPKMeans(method_params=...) take:")
            _echo_params(info.fit.params, "      ")


def _echo_params(params: dict, indent: str) -> None:
    for name, p in params.items():
        choices = f" {{{', '.join(map(str, p.choices))}}}" if p.choices else ""
        if p.maximum is not None:
            low = "" if p.minimum is None else f"{p.minimum:g}"
            choices += f" [{low}..{p.maximum:,g}]"
        click.echo(f"{indent}{name} = {p.default!r}{choices}: {p.doc}")


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
    """Redraw SPEC's figure from its saved summary.csv, without recomputing. A summary that
    does not verify against the folder's cells is refused (exit 5)."""
    from pathlib import Path

    from .. import harness, plotting

    sp = _load_spec(spec_path, overrides)
    folder = Path(out) if out else sp.default_out
    try:
        summary = harness.saved_summary(sp, folder)
        paths = plotting.render(sp, summary, folder)
    except DpclusterError as exc:
        _fail_on(exc)
    for path in paths:
        click.echo(str(path))


@main.command()
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@_JSON
def analyze(spec_path: str, as_json: bool):
    """Print docs/methods.md A6's closed-form MSE predictions for SPEC's datasets and ε grid."""
    import math

    import pandas as pd

    from .. import analysis, data

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


@main.command()
@click.argument(
    "folder", metavar="[DIR]", required=False, default="results", type=click.Path(file_okay=False)
)
def verify(folder: str):
    """Check a results folder (one spec's, or a root of several): every cell's CSV against
    its sha256 record, runs.csv and summary.csv against the cells, and every metric
    finite. Exit 5 on any mismatch or inf/NaN metric, naming each file or cell."""
    from pathlib import Path

    from .. import harness

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
    """Write RESULTS/REPORT.md: every figure and the papers' claims checked from the tables.
    Each folder with cells is verified first (its cells and summary.csv, as `verify` does;
    cells not computed yet aside); one that does not verify is flagged, its claims get no
    verdict, and the command exits 5 after writing. A drawing is taken in only when it is
    a regular file inside its run's folder and of its kind (a PNG, UTF-8 text); any other
    is left out and its folder flagged the same way."""
    from pathlib import Path

    from .. import harness
    from ..report import drawn, write_report

    if not Path(results_dir).is_dir():
        _fail(f"{results_dir}: no such results folder (run a spec first: dpcluster run SPEC)")
    unverified = harness.unverified_folders(results_dir)
    for name, reason in drawn.problems(results_dir).items():
        unverified.setdefault(name, reason)
    click.echo(str(write_report(results_dir, unverified=unverified)))
    for name, problem in unverified.items():
        click.echo(f"error: {name} does not verify: {problem}", err=True)
    sys.exit(EXIT_VERIFY_FAILED if unverified else EXIT_OK)
