"""``dpcluster audit``: empirical lower bounds on the ε of every private mechanism
(black-box from outputs, white-box from exact transcript likelihoods); docs/audit.md."""

from .catalogue import targets
from .run import (
    DEFAULT_EPSILONS,
    EXIT_CLAIM_VIOLATED,
    EXIT_CONSISTENT,
    EXIT_PROVABLE_VIOLATED,
    TranscriptLLR,
    audit_target,
    exit_status,
    run_audit,
    write_audit,
)
from .stats import blackbox_ceiling, blackbox_epsilon, clopper_pearson, whitebox_epsilon
from .targets import Target

__all__ = [
    "DEFAULT_EPSILONS",
    "EXIT_CLAIM_VIOLATED",
    "EXIT_CONSISTENT",
    "EXIT_PROVABLE_VIOLATED",
    "Target",
    "TranscriptLLR",
    "audit_target",
    "blackbox_ceiling",
    "blackbox_epsilon",
    "clopper_pearson",
    "exit_status",
    "run_audit",
    "targets",
    "whitebox_epsilon",
    "write_audit",
]
