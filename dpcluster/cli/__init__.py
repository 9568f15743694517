"""Command line: a thin layer over the harness, the audit and the report; each command
parses, delegates, and maps errors to exit statuses (dpcluster/exits.py; docs/cli.md lists
them with every command's help)."""

from . import audit, inspect, run  # noqa: F401 - each module registers its commands
from .base import EXIT_CODES, main
from .progress import Progress

__all__ = ["EXIT_CODES", "Progress", "main"]
