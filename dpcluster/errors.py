"""One exception hierarchy. Every user-facing message names the file, the key and the value.

The CLI maps :class:`DpclusterError` subclasses to exit code 2 (bad input) and prints only
the message, never a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class DpclusterError(Exception):
    """Base class for errors caused by user input (spec, data files, CLI usage)."""


class SpecError(DpclusterError):
    """A spec file is malformed: the message names the file, the key path and the value."""

    def __init__(self, file: str, key: str, value: object, problem: str, hint: str = ""):
        self.file, self.key, self.value, self.problem, self.hint = file, key, value, problem, hint
        msg = f"{file}: key '{key}': {problem} (got {value!r})"
        if hint:
            msg += f". {hint}"
        super().__init__(msg)


class DataError(DpclusterError):
    """A dataset file is missing, corrupt (checksum mismatch) or unparsable."""


class ResultsError(DpclusterError):
    """A results folder cannot be written, belongs to another spec, holds the spec's own
    inputs, or is being written by another run."""


class VerifyError(DpclusterError):
    """A results file does not verify against the cells it was made from (exit code 5)."""


class WriteError(DpclusterError):
    """A write failed in the middle of a run (a full disk, a quota): finished cells are
    kept, and a rerun resumes (exit code 6)."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return 'Did you mean 'x'?' for the closest choice (compared case-blind, so
    'DPLloyd' finds 'dplloyd'), or list the valid ones."""
    choices = sorted(choices)
    if not choices:
        return "None is valid here."
    folded = {c.lower(): c for c in reversed(choices)}
    close = difflib.get_close_matches(str(word).lower(), list(folded), n=1, cutoff=0.6)
    if close:
        return f"Did you mean '{folded[close[0]]}'?"
    return "Valid: " + ", ".join(repr(c) for c in choices)
