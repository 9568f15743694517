"""Run the command line as a user would: a fresh interpreter, captured output, no check."""

import subprocess
import sys


def run_cli(*args, cwd=None, timeout=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dpcluster.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=timeout,
    )
