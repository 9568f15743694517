"""Random streams derived from a run's identity, never from execution order.

Every stream is ``numpy.random.Generator(PCG64(SeedSequence(root, spawn_key=key)))`` where
``key`` is a hash of the identity tuple, e.g. ``("s1", "dplloyd", {...}, eps, init, rep,
"count")``. Two runs with the same identity get the same stream in any process, under any
``--jobs``, in any order; two different identities get statistically independent streams
(SeedSequence's guarantee for distinct spawn keys). Nothing else in dpcluster seeds; a
plugin's cell runs under :func:`seeded_globals`, so even the global generators it may use
are fixed by its identity.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random

import numpy as np


def canonical(obj: object) -> str:
    """Stable JSON text of an identity (sorted keys, floats in repr form)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def identity_words(identity: object) -> tuple[int, ...]:
    """Hash an identity to four 32-bit words usable as a SeedSequence spawn key."""
    digest = hashlib.sha256(canonical(identity).encode()).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def identity_hex(identity: object, n: int = 16) -> str:
    """Short hex digest of an identity (file names, the ``stream`` column of runs.csv)."""
    return hashlib.sha256(canonical(identity).encode()).hexdigest()[:n]


def stream(root_seed: int, *identity: object) -> np.random.Generator:
    """The generator for ``identity`` under the spec's ``root_seed``."""
    ss = np.random.SeedSequence(int(root_seed), spawn_key=identity_words(identity))
    return np.random.Generator(np.random.PCG64(ss))


class StreamFactory:
    """Hands out generators keyed by identity *suffixes* below a fixed prefix.

    ``factory.child("init", 3)`` is the stream for ``prefix + ("init", 3)``. Algorithms take
    a factory so that each mechanism and repetition draws from its own named stream.
    """

    def __init__(self, root_seed: int, prefix: tuple = ()):
        self.root_seed = int(root_seed)
        self.prefix = tuple(prefix)

    def child(self, *suffix: object) -> np.random.Generator:
        return stream(self.root_seed, *self.prefix, *suffix)

    def key(self, *suffix: object) -> str:
        """The ``stream`` column value of the stream ``child(*suffix)`` would return."""
        return identity_hex((*self.prefix, *suffix))

    def sub(self, *suffix: object) -> StreamFactory:
        return StreamFactory(self.root_seed, self.prefix + tuple(suffix))


@contextlib.contextmanager
def seeded_globals(streams: StreamFactory):
    """Seed NumPy's legacy global generator (``np.random.rand`` …) and Python's ``random``
    from ``streams.child("global")`` for the block, then restore both.

    For code dpcluster did not write (a plugin's cell): one that draws from the global
    generators instead of ``ctx.streams`` still gets numbers fixed by the cell's identity,
    the same under any ``--jobs``, order or backend."""
    words = streams.child("global").integers(2**32, size=8, dtype=np.uint64)
    saved_np, saved_py = np.random.get_state(), random.getstate()
    np.random.seed([int(w) for w in words[:4]])
    random.seed(int.from_bytes(np.asarray(words[4:], "<u8").tobytes(), "little"))
    try:
        yield
    finally:
        np.random.set_state(saved_np)
        random.setstate(saved_py)
