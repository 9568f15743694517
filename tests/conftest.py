import os
import signal

import numpy as np
import pytest

# Every batch that may take a generated DPLloyd kernel takes it, so the tests exercise
# those kernels wherever a run would; the default policy, "auto", has its own tests
# (test_kernels.py). Set before any test runs; subprocesses inherit it.
os.environ.setdefault("DPCLUSTER_GENERATED", "always")

#: wall-clock seconds a test may take while mutmut runs it against a mutant
MUTANT_TEST_LIMIT_S = 120


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(autouse=True)
def _mutant_wall_clock_limit():
    """Under ``make mutation`` only: fail a test that runs longer than
    ``MUTANT_TEST_LIMIT_S``. mutmut ends a mutant by CPU time, and a mutant that blocks
    (a worker pool waiting for an answer that never comes) uses none, so without this the
    run would stall on it. Such a mutant is detected: its test fails."""
    if "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", ""):
        yield
        return

    def expire(signum, frame):
        raise TimeoutError(f"test exceeded {MUTANT_TEST_LIMIT_S} s under a mutant")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(MUTANT_TEST_LIMIT_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
