"""The one per-user cache of compiled kernels, shared by ``make``, the command line, the
estimators and the tests' own runs: ``$DPCLUSTER_CACHE``, else
``$XDG_CACHE_HOME/dpcluster`` (``~/.cache/dpcluster``), else a folder in the temp
directory when neither is writable. It holds ``numba/`` (numba's cache of compiled
functions), ``kernels/`` (the generated per-(k, d) kernel sources; docs/performance.md) and
``warm/`` (which entries and shapes this install has compiled, for ``run --dry-run``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK)


def cache_root() -> Path:
    """The cache folder (module docstring); created if missing."""
    env = os.environ.get("DPCLUSTER_CACHE")
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    candidates = [Path(env)] if env else []
    candidates += [home / "dpcluster", Path(tempfile.gettempdir()) / "dpcluster-cache"]
    for folder in candidates:
        if _writable(folder):
            return folder
    raise OSError(f"no writable cache folder among {', '.join(map(str, candidates))}")


def use_for_numba() -> None:
    """Point numba's cache at ``<cache>/numba`` unless ``NUMBA_CACHE_DIR`` is set already;
    called before numba is first imported (dpcluster/__init__.py)."""
    if "NUMBA_CACHE_DIR" not in os.environ:
        try:
            os.environ["NUMBA_CACHE_DIR"] = str(cache_root() / "numba")
        except OSError:  # numba then caches beside the sources, as it does by default
            pass


#: the packages whose sources numba compiles
COMPILED = ("kernels", "ldp")


@functools.cache
def _install_key() -> str:
    """This install's compiled sources: their folder and content. numba keeps one cache
    per source folder and recompiles a file it sees edited, so marks are kept per (folder,
    content)."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256(str(package).encode())
    for path in sorted(p for sub in COMPILED for p in (package / sub).rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _marks() -> Path:
    return cache_root() / "warm" / _install_key()


def _mark_file(key: str) -> Path:
    return _marks() / hashlib.sha256(key.encode()).hexdigest()[:24]


def mark_warm(key: str) -> None:
    """Record that this install has compiled what ``key`` (an entry and a data shape)
    needs, for ``run --dry-run``'s estimate of the first compilations. Best effort."""
    try:
        path = _mark_file(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:
        pass


def is_warm(key: str) -> bool:
    """Whether :func:`mark_warm` recorded ``key`` for this install."""
    try:
        return _mark_file(key).is_file()
    except OSError:
        return False


def any_warm() -> bool:
    """Whether this install has compiled anything yet (its shared kernels included)."""
    try:
        return any(_marks().iterdir())
    except OSError:
        return False
