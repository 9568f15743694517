"""Figures drawn from ``summary.csv`` only, so ``dpcluster plot`` can redraw without
computing: the kinds and their rules (:mod:`.kinds`) and the drawing (:mod:`.figures`,
which loads matplotlib on first use)."""

from __future__ import annotations

from pathlib import Path

from .kinds import KINDS, LINE_COLUMNS, Kind


def render(spec, summary, out: Path) -> list[Path]:
    """Draw the spec's figure (``spec.plot.kind``, :data:`KINDS`) from its summary table
    into ``out``."""
    from . import figures

    name = KINDS[spec.plot.kind].draw
    return getattr(figures, name)(spec, summary, Path(out)) if name else []


__all__ = ["KINDS", "LINE_COLUMNS", "Kind", "render"]
