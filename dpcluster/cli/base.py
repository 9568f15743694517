"""What every command shares: the ``dpcluster`` group, exit statuses (dpcluster/exits.py),
one-line failures, and the common options."""

from __future__ import annotations

import os
import sys

import click

from ..errors import DpclusterError
from ..exits import MEANING, Exit
from ..privacy import USER_EPSILON, check_user_epsilon

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
    """One line for a DpclusterError, with its exit code (a failed write: 6; a results file
    that does not verify: 5; else 2)."""
    from ..errors import VerifyError, WriteError

    if isinstance(exc, WriteError):
        _fail(str(exc), EXIT_WRITE_FAILED)
    _fail(str(exc), EXIT_VERIFY_FAILED if isinstance(exc, VerifyError) else EXIT_BAD_INPUT)


def _load_spec(spec_path: str, overrides=()):
    """The validated spec, or exit 2 with the one-line message (file, key, value)."""
    from .. import spec

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


_JSON = click.option("--json", "as_json", is_flag=True, help="print JSON instead of text")


def _echo_json(obj) -> None:
    import json

    click.echo(json.dumps(obj, indent=1, default=str))


def _float_list(value: str) -> list[float]:
    try:
        out = [float(v) for v in value.split(",") if v.strip()]
    except ValueError:
        _fail(f"--epsilon {value!r}: expected comma-separated positive numbers")
    if not out or any(check_user_epsilon(v) for v in out):
        lo, hi = USER_EPSILON
        _fail(f"--epsilon {value!r}: expected comma-separated numbers from {lo:g} to {hi:g}")
    return out


class _OneLineErrors(click.Group):
    """click's group, except that a usage error (a missing argument, an unknown option, a
    value out of range) is one ``error:`` line like every other bad input, with click's
    exit code 2, instead of the usage text, a hint and the error on three more lines."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else "dpcluster"
            _fail(f"{exc.format_message()} (see '{where} --help')", exc.exit_code)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        except DpclusterError as exc:
            _fail_on(exc)
        except INPUT_FAULTS as exc:
            if _wants_traceback(args):
                raise
            _fail(_fault_line(exc))
        sys.exit(rv if isinstance(rv, int) else 0)


#: what hostile or damaged input can raise from deep inside a library (a file that is a
#: directory or a link loop, nesting past the recursion limit, a header too large to hold,
#: bytes that are not text): the last net under every command, so none ends in a traceback
INPUT_FAULTS = (OSError, RecursionError, MemoryError, UnicodeError)


def _wants_traceback(args) -> bool:
    """``--traceback`` on the command line, or ``DPCLUSTER_TRACEBACK=1``: re-raise."""
    argv = sys.argv[1:] if args is None else list(args)
    return "--traceback" in argv or os.environ.get("DPCLUSTER_TRACEBACK", "") not in ("", "0")


def _fault_line(exc: BaseException) -> str:
    """One line for an :data:`INPUT_FAULTS` exception, naming the file where it has one."""
    if isinstance(exc, RecursionError):
        return "an input is nested too deeply to read (past Python's recursion limit)"
    if isinstance(exc, MemoryError):
        return "an input is too large to read into memory"
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or type(exc).__name__}"
    return f"{type(exc).__name__}: {exc}"


@click.group(cls=_OneLineErrors)
@click.version_option(package_name="dpcluster")
def main() -> None:
    """dpcluster: run, compare and reproduce private clustering algorithms from YAML specs."""
