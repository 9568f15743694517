"""The registry: every built-in entry (Paper A and Paper B) and the plugins (docs/plugins.md).

Paper A's entries live in :mod:`.paper_a`, Paper B's in :mod:`.paper_b`; neither imports
the other. A spec names an entry by its registry name, by an installed entry point of the
group ``dpcluster.algorithms``, or as ``"package.module:attribute"``.
"""

from __future__ import annotations

from .paper_a import PAPER_A
from .paper_b import PAPER_B
from .protocol import AlgorithmInfo

ALGORITHMS: dict[str, AlgorithmInfo] = {**PAPER_A, **PAPER_B}


# --- entries from outside the package ------------------------------------------------------

#: plugin entries resolved so far, by spec name ("pkg.module:attr" or an entry-point name)
_PLUGINS: dict[str, AlgorithmInfo] = {}
ENTRY_POINT_GROUP = "dpcluster.algorithms"


def _entry_points() -> dict:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def known_names() -> list[str]:
    """Built-in entries and installed plugins (entry points), for validation and listing."""
    return sorted({*ALGORITHMS, *_entry_points()})


def lookup(name: str, source: str = "") -> AlgorithmInfo:
    """The entry for a spec's algorithm name (docs/plugins.md).

    ``name`` is a built-in entry, an installed entry point of the group
    ``dpcluster.algorithms``, or ``"package.module:attribute"``; ``source`` is a folder to
    import that module from (the spec's folder), so worker processes can import it too.
    The attribute is an :class:`AlgorithmInfo` (``dpcluster.plugins.algorithm`` makes one).
    Raises KeyError for an unknown name, TypeError for an object of another kind.
    """
    if name in ALGORITHMS:
        return ALGORITHMS[name]
    if name in _PLUGINS:
        return _PLUGINS[name]
    if ":" in name:
        import importlib
        import sys

        module, _, attr = name.partition(":")
        if source and source not in sys.path:
            sys.path.insert(0, source)
        try:
            obj = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise KeyError(f"{name}: cannot import ({type(exc).__name__}: {exc})") from None
    else:
        eps = _entry_points()
        if name not in eps:
            raise KeyError(name)
        obj = eps[name].load()
    if not isinstance(obj, AlgorithmInfo):
        raise TypeError(
            f"{name} is a {type(obj).__name__}, not an algorithm entry; decorate "
            "its cell runner with dpcluster.plugins.algorithm(...)"
        )
    _PLUGINS[name] = obj
    return obj
