"""Every plot kind and what it needs: the one table that spec validation
(dpcluster/spec/plot.py) and drawing (:func:`dpcluster.plotting.render`) both read. No
matplotlib here, so validating a spec does not load it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """One plot kind.

    draw    the function of :mod:`.figures` that draws it, called as
            ``draw(spec, summary, out)``; "" draws nothing
    feeds   the built-in entries whose rows it draws, and what those rows carry ("" when
            any entry's rows do); a spec with a plugin is not refused, as a plugin may
            carry them too
    x       what ``plot.x`` must be: "" (nothing), "one" (one parameter or run column), or
            "k_or_d" (a list of dataset parameters among k, d)
    """

    draw: str
    feeds: tuple[str, ...] = ()
    carries: str = ""
    x: str = ""


KINDS: dict[str, Kind] = {
    "nicv_vs_epsilon": Kind("draw_nicv_vs_epsilon"),
    "gap_vs_param": Kind("draw_gap_vs_param", x="k_or_d"),
    "nicv_vs_step": Kind(
        "draw_nicv_vs_step", ("lloyd_steps", "gene"), "a row per iteration (step)"
    ),
    "nicv_vs_block": Kind(
        "draw_nicv_vs_block", ("gkm", "gkm_3k", "gkm_sag", "gkm_noise"), "a block size"
    ),
    "time_vs_epsilon": Kind("draw_time_vs_epsilon"),
    "lines": Kind("draw_lines", x="one"),
    "scatter": Kind("draw_scatter"),
    "table": Kind("draw_table"),
    "none": Kind(""),
}

#: run columns a ``lines`` plot can put on its x axis besides the parameters
LINE_COLUMNS = ("epsilon", "step", "N", "d", "k")
