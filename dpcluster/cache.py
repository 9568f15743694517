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
import pickle
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
COMPILED = ("kernels", "ldp", "privacy")


#: this package's folder
PACKAGE = Path(__file__).resolve().parent


@functools.cache
def _install_key() -> str:
    """The content of the compiled sources (never their folder): two checkouts of one
    commit share numba's cache (:func:`share_numba_cache`) and these marks."""
    package = PACKAGE
    digest = hashlib.sha256()
    for path in sorted(p for sub in COMPILED for p in (package / sub).rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def share_numba_cache() -> None:
    """Make numba cache the functions of :data:`COMPILED` under ``$NUMBA_CACHE_DIR`` in a
    folder named by their sources' content (:func:`_install_key`) instead of their path,
    so a second checkout of the same commit on this machine compiles nothing. numba's
    index still checks each file's content hash and the CPU it compiled for. The key covers
    every compiled source, so a changed helper also gives a fresh folder (numba alone
    re-checks only the file of the function it loads). Called by :mod:`dpcluster.kernels`,
    :mod:`dpcluster.ldp` and :mod:`dpcluster.privacy.sampling` before their first
    ``@njit``; without ``NUMBA_CACHE_DIR``, or with a numba whose cache internals differ,
    numba's own locators apply."""
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - numba is a dependency
        return
    base = getattr(caching, "UserProvidedCacheLocator", None)
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    if base is None or impl is None or not isinstance(impl._locator_classes, list):
        return
    if any(getattr(c, "dpcluster", False) for c in impl._locator_classes):
        return

    class ContentKeyedLocator(base):
        dpcluster = True

        @classmethod
        def get_suitable_cache_subpath(cls, py_file):
            relative = Path(py_file).resolve().parent.relative_to(PACKAGE)
            return f"dpcluster_{'_'.join(relative.parts)}_{_install_key()}"

        @classmethod
        def from_function(cls, py_func, py_file):
            try:
                Path(py_file).resolve().parent.relative_to(PACKAGE)
            except (ValueError, OSError):
                return None
            return super().from_function(py_func, py_file)

    impl._locator_classes.insert(0, ContentKeyedLocator)
    _recompile_damaged(caching)


#: what reading a damaged cache file raises in numba's loader
_DAMAGE = (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, OSError)


def _recompile_damaged(caching) -> None:
    """Make a damaged file of numba's on-disk cache a cache miss: numba then compiles the
    kernel again and its save overwrites the damaged index and data, and one warning
    names the file. Without this, numba raises while loading, and every cell of that
    kernel fails."""
    files = getattr(caching, "IndexDataCacheFile", None)
    if files is None or getattr(files, "dpcluster_tolerant", False):
        return
    load_index, load = files._load_index, files.load

    def _load_index(self):
        try:
            return load_index(self)
        except FileNotFoundError:
            return {}
        except _DAMAGE as exc:
            _say_damaged(self._index_path, exc)
            return {}

    def _load(self, key):
        try:
            return load(self, key)
        except _DAMAGE as exc:
            _say_damaged(getattr(self, "_index_path", "numba's cache"), exc)
            return None

    files._load_index, files.load, files.dpcluster_tolerant = _load_index, _load, True


def _say_damaged(path, exc: BaseException) -> None:
    import warnings

    warnings.warn(
        f"a compiled kernel's cache file {path} is damaged ({type(exc).__name__}); the "
        "kernel is compiled again and the file replaced",
        RuntimeWarning,
        stacklevel=2,
    )


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
