"""``run``'s progress bar on stderr."""

from __future__ import annotations

import sys
import threading
import time

import click

from ..harness.run import WRITING


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
        self.phase = ""
        self.last = float("-inf")  # when a line was last drawn
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __call__(self, cells_done: int, cells_total: int, work: float, phase: str = ""):
        if not self.enabled:
            return
        now = time.monotonic() - self.start
        eta = now / work * (1 - work) if 0 < work < 1 else None
        with self.lock:
            self.state = (cells_done, cells_total, work, now, eta)
            self.phase = phase
        # the last call: the harness's final phase, or every cell done when it names none
        finished = phase == WRITING if phase else cells_done == cells_total
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
                f"{_clock(now)}  {left}" + (f"  {self.phase}" if self.phase else "")
            )
            if self.tty:
                click.echo("\r" + line + ("\n" if final else ""), nl=False, err=True)
            else:
                click.echo(line, err=True)
            self.last = now

    def close(self):
        self.stop.set()
