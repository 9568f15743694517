"""Run the command line as a user would: a fresh interpreter, captured output, no check.

With ``DPCLUSTER_TEST_CLI=inprocess`` (set by ``scripts/mutation.py``) the command runs in
the test's own interpreter through click's runner instead: a mutant is only seen by code
that runs in the process mutmut forked, so the command-line tests would otherwise test
the unmutated package and every mutant of the spec parser they cover would survive.
"""

import os
import subprocess
import sys
import traceback


def run_cli(*args, cwd=None) -> subprocess.CompletedProcess:
    if os.environ.get("DPCLUSTER_TEST_CLI") == "inprocess":
        return _in_process([str(a) for a in args], cwd)
    return subprocess.run(
        [sys.executable, "-m", "dpcluster.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def _in_process(args: list[str], cwd) -> subprocess.CompletedProcess:
    """The command through click's runner in ``cwd``, shaped like a finished process: an
    exception the command line lets escape is a traceback on stderr and exit code 1."""
    from click.testing import CliRunner

    from dpcluster.cli import main

    here = os.getcwd()
    os.chdir(cwd or here)
    try:
        result = CliRunner().invoke(main, args, catch_exceptions=True)
    finally:
        os.chdir(here)
        _stop_local_pool()
    stderr, code = result.stderr, result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "Traceback (most recent call last):\n"
        stderr += "".join(traceback.format_exception(result.exception))
        code = 1
    return subprocess.CompletedProcess(args, code, result.stdout, stderr)


def _stop_local_pool() -> None:
    """Stop loky's process-wide pool that a ``run --jobs N`` left behind. mutmut forks a
    child per mutant from this process, and a child that found the parent's pool would
    wait forever for workers and threads the fork did not copy."""
    from joblib.externals.loky import reusable_executor

    executor = reusable_executor._executor
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=True)
        reusable_executor._executor = None
