"""Release observation: the hook through which ``dpcluster audit`` sees every noisy release.

A mechanism's call site announces each release with :func:`release`: the mechanism, the
query as a function of a dataset (so the auditor can evaluate it on a neighbour), and the
output actually released. Outside an :func:`observe` block this costs one context-variable
read and does nothing. Inside one, the observer receives a :class:`Release` and can compute
the exact log-likelihood ratio of the run's whole transcript between two neighbours, given
the released values: every later query is a function of earlier outputs (post-processing),
so the query closure captures the public state it was asked in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Release:
    """One noisy release, as the auditor sees it.

    mechanism  the mechanism object (has ``log_likelihood(output, answer)``)
    purpose    the ledger purpose string
    output     what was released; batched call sites put the run axis first
    query      ``query(data) -> answer``, the noiseless answer on any dataset of the same
               kind (records for central algorithms, one value for local ones)
    batch      True when ``output`` and the answers carry a leading run axis
    """

    mechanism: Any
    purpose: str
    output: Any
    query: Callable[[Any], Any]
    batch: bool = False


_OBSERVER: ContextVar[Callable[[Release], None] | None] = ContextVar(
    "dpcluster_release_observer", default=None
)


@contextmanager
def observe(observer: Callable[[Release], None]) -> Iterator[Callable[[Release], None]]:
    """Send every release inside the block to ``observer``."""
    token = _OBSERVER.set(observer)
    try:
        yield observer
    finally:
        _OBSERVER.reset(token)


def release(
    mechanism, purpose: str, output, query: Callable[[Any], Any], batch: bool = False
) -> None:
    """Announce one release to the active observer, if any."""
    observer = _OBSERVER.get()
    if observer is not None:
        observer(Release(mechanism, purpose, output, query, batch))
