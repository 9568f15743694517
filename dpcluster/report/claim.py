"""A claim of a paper: the spec whose table decides it, and the check that does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from .tables import Verdict


@dataclass(frozen=True)
class Claim:
    """``check(table) -> (holds, evidence)``; holds is True, False or None ("no data")."""

    spec: str
    text: str
    check: Callable[[pd.DataFrame], Verdict]
    table: str = "summary.csv"
