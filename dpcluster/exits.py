"""Every exit status of every command, and what it means: the one definition that the CLI,
the audit, docs/cli.md and the README's table are built from or checked against."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """A command's exit status; :data:`MEANING` says what each means."""

    OK = 0
    FAILED_RUNS = 1
    BAD_INPUT = 2
    CLAIM_VIOLATED = 3
    PROVABLE_VIOLATED = 4
    VERIFY_FAILED = 5
    WRITE_FAILED = 6
    INTERRUPTED = 130
    TERMINATED = 143


MEANING = {
    Exit.OK: "success",
    Exit.FAILED_RUNS: "`run`: some cells failed, the figure could not be drawn, or a metric "
    "value is inf or NaN (summary.csv's n_nonfinite); each is printed, and every other cell "
    "is written",
    Exit.BAD_INPUT: "bad spec, bad data or bad usage: one line naming the file, key and "
    "value, no traceback",
    Exit.CLAIM_VIOLATED: "`audit`: a paper's claimed ε is violated, and no provable ε is",
    Exit.PROVABLE_VIOLATED: "`audit`: a provable ε is violated: a bug in dpcluster, or in the "
    "plugin the error line names",
    Exit.VERIFY_FAILED: "`verify`, `plot`, `report`: a damaged or inconsistent results "
    "folder (each file is named; `report` still writes, flagging it)",
    Exit.WRITE_FAILED: "a write failed mid-run (a full disk, a quota): the file is named, "
    "finished cells are kept, and a rerun resumes once there is space",
    Exit.INTERRUPTED: "interrupted (Ctrl-C): workers stop, finished cells are kept, and a "
    "rerun resumes",
    Exit.TERMINATED: "terminated (SIGTERM): as for Ctrl-C",
}


def markdown_table() -> str:
    """The exit codes as the Markdown table docs/cli.md and the README show."""
    rows = ["| code | meaning |", "|---|---|"]
    rows += [f"| {int(code)} | {MEANING[code]} |" for code in Exit]
    return "\n".join(rows)
