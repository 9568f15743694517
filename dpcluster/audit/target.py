"""The :class:`Target` protocol: one audited mechanism, its neighbouring pair and its run
(the targets themselves are in :mod:`.targets`, :mod:`.local_targets` and :mod:`.generic`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..privacy import Ledger

#: what a target's run returns: outputs as features (n, p) and the ledger of one trial
RunResult = tuple[np.ndarray, Ledger]


@dataclass(frozen=True, kw_only=True)
class Target:
    """One audited mechanism.

    name      audit row name (a registry entry, or the mechanism Paper B's entries share)
    covers    registry entries whose privacy this target checks
    kind      "central" or "local"
    params    the audited configuration, as shown in audit.csv
    trials    default trials per side
    run       ``run(data, epsilon, rng, n) -> (features (n, p), ledger of one trial)``;
              a local target's ``data`` holds every trial's input, trial after trial
    pair      ``pair() -> (D, D')``: the two neighbouring inputs; ``pair(ε)`` when
              ``at_epsilon`` (a pair placed at a rule's switch, which moves with ε)
    whitebox  False when a run's releases are not functions of ``data`` (GkM's shuffle):
              then only the black-box bound applies
    per_trial True when ``run`` loops over trials itself and sets the observer's trial index
    note      what a reader should know about this target's bound
    """

    name: str
    covers: tuple[str, ...]
    kind: str
    params: dict
    trials: int
    run: Callable[..., RunResult]
    pair: Callable[[], tuple[np.ndarray, np.ndarray]]
    whitebox: bool = True
    per_trial: bool = False
    note: str = ""
    private: bool = True
    extra: dict = field(default_factory=dict)
    at_epsilon: bool = False
    #: the run takes ``delta=``: a Gaussian target, run at ``dpcluster audit --delta``
    takes_delta: bool = False
