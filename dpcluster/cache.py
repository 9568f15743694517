"""The one per-user cache of compiled kernels, shared by ``make``, the command line, the
estimators and the tests' own runs: ``$DPCLUSTER_CACHE``, else
``$XDG_CACHE_HOME/dpcluster`` (``~/.cache/dpcluster``), else a folder in the temp
directory when neither is writable. It holds ``numba/`` (numba's cache of compiled
functions) and ``kernels/`` (the generated per-(k, d) kernel sources; docs/performance.md).
"""

from __future__ import annotations

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
