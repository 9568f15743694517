"""``dpcluster audit``: lower bounds on ε against the claimed and provable ε."""

from __future__ import annotations

import sys

import click

from ..audit.run import DEFAULT_EPSILONS, DEFAULT_SEED
from ..errors import DpclusterError
from .base import _fail_on, _float_list, _jobs_option, _load_spec, main


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
    help="comma-separated ε values [default: "
    + ",".join(f"{e:g}" for e in DEFAULT_EPSILONS)
    + ", or the SPEC's grid]",
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
@click.option(
    "--delta",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=None,
    help="δ of the Gaussian targets' (ε, δ) [default: 1e-6]; the bounds are taken at it",
)
@click.option(
    "--replay",
    is_flag=True,
    help="the replay audit instead: each target on neighbours with the same randomness "
    "and the same released values, every release checked against its declared "
    "sensitivity (OUT/replay.csv, replay.md; docs/audit.md)",
)
@_jobs_option("the bounds")
@click.option(
    "--seed",
    default=DEFAULT_SEED,
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
    delta: float | None,
    replay: bool,
):
    """Audit the privacy of every private algorithm: 95 % lower bounds on ε (black-box from
    outputs, white-box from exact transcript likelihoods) against the claimed and the
    provable ε. Writes OUT/audit.csv, audit.md and audit.png (docs/audit.md).

    Exit status: 0 every verdict consistent; 3 a claimed ε is violated (Paper B's DPBV
    always is; with --replay, a target whose ledger books ∞, such as diffprivlib's); 4 a
    provable ε is violated, which means a bug in dpcluster (or in the plugin named).
    """
    import os

    from .. import audit as audit_mod
    from ..audit.choose import blame_lines, choose_targets, verdict_lines

    if delta is not None and not 0 < delta < 1:  # click's range lets NaN through
        raise click.BadParameter(f"{delta!r} is not in the range 0<x<1", param_hint="'--delta'")
    names = [n.strip() for n in algorithms.split(",") if n.strip()] if algorithms else None
    if algorithms is not None and not names:
        raise click.BadParameter(
            f"{algorithms!r} names no target; give comma-separated names (`dpcluster list`)",
            param_hint="'--algorithms'",
        )
    eps = _float_list(epsilons) if epsilons else None
    sp = _load_spec(spec_path) if spec_path is not None else None
    if sp is not None:
        eps = eps or list(sp.epsilon)
    try:
        names, extra = choose_targets(names, sp, os.getcwd())
        if replay:
            sys.exit(_replay(names, extra, eps, jobs, seed, out))
        table = audit_mod.run_audit(
            names, eps or DEFAULT_EPSILONS, trials, jobs, seed, extra, delta
        )
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


def _replay(names, extra, eps, jobs: int, seed: int, out: str) -> int:
    """``dpcluster audit --replay``: write replay.csv and replay.md, print the verdicts,
    return the exit status."""
    from ..audit import replay_report as replay_mod
    from ..audit.run import _targets, select

    chosen = [_targets()[n] for n in select(names)] if names is None or names else []
    chosen += list(extra or [])
    table = replay_mod.run_replay(chosen, eps or replay_mod.REPLAY_EPSILONS, seed, jobs)
    for path in replay_mod.write_replay(table, out):
        click.echo(str(path))
    for line in replay_mod.verdict_lines(table):
        click.echo(line)
    return replay_mod.replay_exit(table)
