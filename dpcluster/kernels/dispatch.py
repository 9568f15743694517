"""Compile where it pays: whether a batch of shape (k, d) takes its generated kernel
(:mod:`.unrolled`) or the loop kernel (:mod:`.assign`), and the per-process state and timing
that policy needs. The kernels stay pure; the numbers are the same on either path, only the
time differs.

``$DPCLUSTER_GENERATED``: "auto" (default), "always" or "never". With "auto" a shape takes
its generated kernel once this process has run it, or this machine compiled it before (its
mark in the kernel cache, so numba's cache loads it in well under a second), or the loop
kernel has spent :data:`~.config.COMPILE_AFTER_S` on the shape here.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager

from numba.core import event

from . import unrolled
from .config import COMPILE_AFTER_S

#: loop-kernel seconds spent per (k, d) in this process, for the policy "auto"
_loop_seconds: dict[tuple[int, int], float] = {}

#: shapes whose generated kernel has run in this process
_ran: set[tuple[int, int]] = set()


def policy() -> str:
    """``$DPCLUSTER_GENERATED``: "auto" (default), "always" or "never"."""
    value = os.environ.get("DPCLUSTER_GENERATED", "auto")
    if value not in ("auto", "always", "never"):
        raise ValueError(f"DPCLUSTER_GENERATED={value!r}: use auto, always or never")
    return value


def wanted(k: int, d: int) -> bool:
    """Whether a batch of shape (k, d) should take the generated kernel (module docstring)."""
    mode = policy()
    if mode != "auto":
        return mode == "always"
    if (k, d) in _ran or _loop_seconds.get((k, d), 0.0) >= COMPILE_AFTER_S:
        return True
    return unrolled.compiled_before(k, d)


@contextmanager
def timed_loop(k: int, d: int, counted: bool = True):
    """Count the loop kernel's time on (k, d) toward its compilation (when ``counted``)."""
    start = time.perf_counter()
    yield
    if counted:
        _loop_seconds[(k, d)] = _loop_seconds.get((k, d), 0.0) + time.perf_counter() - start


def ran_generated(k: int, d: int) -> None:
    """Record that (k, d)'s generated kernel ran here, and mark it compiled on disk."""
    if (k, d) not in _ran:
        _ran.add((k, d))
        unrolled.mark_compiled(k, d)


class CompileTimer(event.Listener):
    """Seconds numba spends compiling in the thread that installed it (nested compilations
    count once; another thread's cell is not charged here)."""

    def __init__(self):
        self.seconds = 0.0
        self._thread = threading.get_ident()
        self._depth = 0
        self._start = 0.0

    def on_start(self, ev) -> None:
        if threading.get_ident() == self._thread:
            if self._depth == 0:
                self._start = time.perf_counter()
            self._depth += 1

    def on_end(self, ev) -> None:
        if threading.get_ident() == self._thread:
            self._depth -= 1
            if self._depth == 0:
                self.seconds += time.perf_counter() - self._start


@contextmanager
def compiling():
    """``with compiling() as timer:`` the seconds the block spent compiling kernels, in
    ``timer.seconds`` (loading a kernel from numba's cache is not compiling)."""
    timer = CompileTimer()
    with event.install_listener("numba:compile", timer):
        yield timer
