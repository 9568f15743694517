"""Release observation: the hook through which ``dpcluster audit`` sees every noisy release.

A mechanism's call site announces each release with :func:`release`: the mechanism, the
query as a function of a dataset (so the auditor can evaluate it on a neighbour), and the
output actually released. Outside an :func:`observe` block this costs one context-variable
read and does nothing. Inside one, the observer receives a :class:`Release` and can compute
the exact log-likelihood ratio of the run's whole transcript between two neighbours, given
the released values: every later query is a function of earlier outputs (post-processing),
so the query closure captures the public state it was asked in.

:func:`release` returns the value the caller goes on with: the output, unless the observer
returns another. The replay audit (:mod:`dpcluster.audit.replay`) uses this to run a
neighbour with the same randomness *and* the same released values, so that everything
after a release is the same post-processing on both sides and any difference in the run
comes from the data itself. Call sites therefore continue with what :func:`release`
returns, never with the value they passed in.
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
    rng        the generator the release drew from, when how much it drew depends on the
               data (the exponential mechanism's rejection sampling): a replay sets its
               state after the release to the one the recorded side reached
    answer     the answer the caller computed, when the query cannot be re-asked (another
               library's mechanism, announced by :mod:`dpcluster.audit.foreign`)
    """

    mechanism: Any
    purpose: str
    output: Any
    query: Callable[[Any], Any]
    batch: bool = False
    rng: Any = None
    answer: Any = None


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
    mechanism,
    purpose: str,
    output,
    query: Callable[[Any], Any],
    batch: bool = False,
    rng=None,
    answer=None,
):
    """Announce one release to the active observer, if any, and return the value the
    caller goes on with: ``output``, or what a replaying observer substitutes for it."""
    observer = _OBSERVER.get()
    if observer is None:
        return output
    replaced = observer(Release(mechanism, purpose, output, query, batch, rng, answer))
    return output if replaced is None else replaced
