"""Every audit target by name: the dedicated central and local targets, then a generic one
for each private registry entry that none of them covers; and the entries not audited."""

from __future__ import annotations

from ..experiments import ALGORITHMS
from .comparator_targets import unavailable
from .generic import entry_target
from .ldp_targets import ldp_targets
from .local_targets import local_targets
from .targets import Target, central_targets


def targets() -> dict[str, Target]:
    """Every audited mechanism, by name: the dedicated targets, then a generic
    :func:`~.generic.entry_target` for every private registry entry none of them covers,
    so an entry declared in the registry alone is audited too."""
    own = {t.name: t for t in [*central_targets(), *local_targets(), *ldp_targets()]}
    covered = {c for t in own.values() for c in (t.name, *t.covers)} | set(not_private())
    covered |= set(unavailable())  # an optional comparator that is not installed
    for name, info in ALGORITHMS.items():
        if info.private and name not in covered:
            own[name] = entry_target(name, info)
    return own


def not_private() -> dict[str, str]:
    """Registry entries that release something non-private: listed, not audited."""
    out = {name: info.summary for name, info in ALGORITHMS.items() if not info.private}
    out["gkm_noise"] = "diagnostic: perturbs non-private centroids"
    return out
