"""Shared machinery of the generated kernels (:mod:`.unrolled`, :mod:`.points`).

A generated kernel is Python source written for one shape (centroids k, dimension d, ...)
with its small loops spelled out as straight-line code, so LLVM keeps the per-centroid
values in registers and vectorises the one loop left. The source is written once to a
cache folder and imported from there, so numba's on-disk cache (``cache=True``, which
needs a real file) keeps the compiled code across processes. The instructions the
generated code needs beyond numba's are in :mod:`.intrinsics`.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
from pathlib import Path

from ..cache import cache_root


def certified_step(pad: str, j: int, base: str, terms, best: str, second: str, label: str):
    """Source lines folding centroid ``j`` into a float32 nearest-centroid search that also
    keeps the second best (the certificate of :mod:`.unrolled` and :mod:`.points`):
    ``t = base + Σ x·c`` over ``terms`` (pairs of names) as a chain of fused multiply-adds
    in their order, then ``second = min(second, max(best, t))`` and ``best, label = t, j``
    where ``t < best`` (strict: ties keep the lower index)."""
    t = base
    for x, c in terms:
        t = f"fma({x}, {c}, {t})"
    return [
        f"{pad}t = {t}",
        f"{pad}h = select(t > {best}, t, {best})",
        f"{pad}{second} = select(h < {second}, h, {second})",
        f"{pad}g = t < {best}",
        f"{pad}{best} = select(g, t, {best})",
        f"{pad}{label} = select(g, np.float32({float(j)}), {label})",
    ]


def cache_dir() -> Path:
    """Where generated sources (and, beside them, numba's cache of them) live:
    ``$DPCLUSTER_KERNEL_CACHE`` when set, else ``kernels/`` in the per-user cache
    (:func:`dpcluster.cache.cache_root`)."""
    env = os.environ.get("DPCLUSTER_KERNEL_CACHE")
    folder = Path(env) if env else cache_root() / "kernels"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@functools.cache
def _kernels_stamp() -> str:
    """A hash of this package's sources. Numba's cache checks only the generated file, not
    the intrinsics and helpers it compiles in, so the stamp goes into that file: changed
    kernels code gives a new file name, never a stale compiled kernel."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _stamped(text: str, stem: str) -> tuple[str, str, Path]:
    """The file text (``text`` stamped with the kernels package's hash), its module name
    ``<stem>_<hash>`` and its path in :func:`cache_dir`."""
    text = f"{text}\n# dpcluster.kernels sources {_kernels_stamp()}\n"
    name = f"{stem}_{hashlib.sha256(text.encode()).hexdigest()[:12]}"
    return text, name, cache_dir() / f"{name}.py"


def compiled_before(text: str, stem: str) -> bool:
    """Whether :func:`mark_compiled` has recorded that this machine compiled (and so
    numba's on-disk cache holds) the kernel of ``text``."""
    return _stamped(text, stem)[2].with_suffix(".compiled").exists()


def mark_compiled(text: str, stem: str) -> None:
    """Record, beside its source, that the kernel of ``text`` was compiled and ran."""
    _stamped(text, stem)[2].with_suffix(".compiled").touch()


def load(text: str, stem: str):
    """Import generated source ``text`` as a module from ``<cache_dir>/<stem>_<hash>.py``
    (written atomically if missing), so numba can cache what it compiles from it. The file
    ends with a comment stamping the kernels package it was built against."""
    text, name, path = _stamped(text, stem)
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
