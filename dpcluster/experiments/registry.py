"""The registry: every built-in entry (Paper A and Paper B) and the plugins (docs/plugins.md).

Paper A's entries live in :mod:`.paper_a`, Paper B's in :mod:`.paper_b`; neither imports
the other. A spec names an entry by its registry name, by an installed entry point of the
group ``dpcluster.algorithms``, or as ``"package.module:attribute"``.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path

from .ldp_modern import LDP_MODERN
from .modern import MODERN
from .paper_a import PAPER_A
from .paper_b import PAPER_B
from .protocol import AlgorithmInfo

ALGORITHMS: dict[str, AlgorithmInfo] = {**PAPER_A, **PAPER_B, **MODERN, **LDP_MODERN}


# --- entries from outside the package ------------------------------------------------------

#: plugin entries resolved so far: (spec name, folder) -> (entry, its code digest, the
#: (file, mtime_ns, size) of its files when that digest was taken)
_PLUGINS: dict[tuple[str, str], tuple[AlgorithmInfo, str, tuple]] = {}
ENTRY_POINT_GROUP = "dpcluster.algorithms"


def _entry_points() -> dict:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def known_metrics(algorithms=()) -> set[str]:
    """Every metric a built-in entry reports, and those of ``algorithms`` (entries, such
    as a spec's plugins): the one list of metric names."""
    return {m for info in (*ALGORITHMS.values(), *algorithms) for m in info.metrics}


def describe_entry(info: AlgorithmInfo) -> dict:
    """An entry as ``dpcluster list --json`` shows it: name, privacy, summary, repeat,
    metrics and each parameter's default, type, meaning, choices, minimum and maximum
    (``params``: the papers' pipeline; ``estimator_params``: the estimator pipeline's and
    ``DPKMeans``'s, for an entry with a central fit)."""

    def table(params: dict) -> dict:
        return {
            n: {
                "default": p.default,
                "type": p.kind.__name__,
                "doc": p.doc,
                "choices": list(p.choices) if p.choices else None,
                "minimum": p.minimum,
                "maximum": p.maximum,
            }
            for n, p in params.items()
        }

    out = {
        "name": info.name,
        "private": info.private,
        "summary": info.summary,
        "repeat_default": info.repeat_default,
        "metrics": list(info.metrics),
        "params": table(info.params),
    }
    if info.fit is not None:  # what pipeline: estimator and DPKMeans's method_params take
        out["estimator_params"] = table(info.fit.params)
    return out


def known_names() -> list[str]:
    """Built-in entries and installed plugins (entry points), for validation and listing."""
    return sorted({*ALGORITHMS, *_entry_points()})


def _module_file(module: str, root: Path) -> Path | None:
    """The source file of ``module`` (dotted) under ``root``, or None when it is not there."""
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imported_names(path: Path, module: str) -> set[str]:
    """Every module name an ``import`` statement of the file names (absolute, with
    relative imports resolved against ``module``), whether or not it exists."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError):
        return set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join([*parts, *([base] if base else [])])
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}
    for name in list(names):  # importing a.b.c imports a and a.b
        parts = name.split(".")
        names |= {".".join(parts[:i]) for i in range(1, len(parts))}
    return {n for n in names if n}


def code_files(module: str, root: Path) -> dict[str, Path]:
    """The plugin module's source and every module under ``root`` it imports, directly or
    through another such module: module name -> file. Read from the files (``ast``), so the
    answer does not depend on what happens to be imported already."""
    found: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        path = _module_file(name, root)
        if path is None:
            continue
        found[name] = path
        todo += sorted(_imported_names(path, name) - set(found))
    return found


def code_digest(files: dict[str, Path], root: Path) -> tuple[tuple[str, str], ...]:
    """(path relative to ``root``, sha256) of each file, sorted: a plugin's code identity."""
    out = []
    for path in files.values():
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        out.append((Path(os.path.relpath(path, root)).as_posix(), digest))
    return tuple(sorted(out))


def _import_root(module: str, source: str) -> Path | None:
    """The folder a plugin module is imported from: the spec's folder when the module is
    there, else the folder above its top-level package (an installed plugin)."""
    if source and _module_file(module, Path(source)) is not None:
        return Path(source)
    spec = importlib.util.find_spec(module.split(".")[0])
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    origin = Path(spec.origin)
    return origin.parent.parent if origin.name == "__init__.py" else origin.parent


def plugin_code(name: str, source: str = "") -> tuple[tuple[str, str], ...]:
    """A plugin's code identity (:func:`code_digest`): its module's file and the modules it
    imports from the same folder; () for a built-in entry or code with no source file."""
    if name in ALGORITHMS:
        return ()
    if ":" in name:
        module = name.partition(":")[0]
        if not all(part.isidentifier() for part in module.split(".")):
            return ()
    else:
        eps = _entry_points()
        if name not in eps:
            return ()
        module = eps[name].value.partition(":")[0]
    root = _import_root(module, source)
    if root is None:
        return ()
    return code_digest(code_files(module, root), root)


def _forget(module: str, root: Path) -> None:
    """Drop ``module`` and the modules of ``root`` it imports from ``sys.modules``, so the
    next import reads the files as they are now."""
    for name in code_files(module, root):
        sys.modules.pop(name, None)
    importlib.invalidate_caches()


@contextlib.contextmanager
def _process_settings_kept():
    """Run a plugin's import with the process-wide settings it could change restored after
    it: numpy's floating-point error handling, print options and legacy global seed,
    the warnings filters and the working folder. Its module-level code (``np.seterr(all=
    "raise")``, ``warnings.simplefilter("error")``, ``os.chdir``) then reaches no built-in
    cell that runs in this process; its cells run in processes of their own
    (:mod:`dpcluster.harness.isolated`)."""
    import warnings

    import numpy as np

    errors, printing, state = np.geterr(), np.get_printoptions(), np.random.get_state()
    cwd = os.getcwd()
    try:
        with warnings.catch_warnings():  # restores the filters on the way out
            yield
    finally:
        np.seterr(**errors)
        np.set_printoptions(**printing)
        np.random.set_state(state)
        if os.getcwd() != cwd:
            os.chdir(cwd)


def lookup(name: str, source: str = "") -> AlgorithmInfo:
    """The entry for a spec's algorithm name (docs/plugins.md).

    ``name`` is a built-in entry, an installed entry point of the group
    ``dpcluster.algorithms``, or ``"package.module:attribute"``; ``source`` is a folder to
    import that module from (the spec's folder), so worker processes can import it too.
    The attribute is an :class:`AlgorithmInfo` (``dpcluster.plugins.algorithm`` makes one).
    A plugin whose code changed on disk since it was imported (:func:`plugin_code`) is
    imported again, and a module of the same name from another folder is not reused.
    Raises KeyError for an unknown name or a module that cannot be imported (the message
    says why and where), TypeError for an object of another kind.
    """
    if name in ALGORITHMS:
        return ALGORITHMS[name]
    cached = _PLUGINS.get((name, source))
    if cached is not None and _stats(cached[2]) == cached[2]:
        return cached[0]
    code = _code_or_none(name, source)
    if cached is not None and cached[1] == code:
        _PLUGINS[(name, source)] = (cached[0], code, _stats(cached[2]))
        return cached[0]
    if ":" in name:
        module, _, attr = name.partition(":")
        if not (all(part.isidentifier() for part in module.split(".")) and attr.isidentifier()):
            raise KeyError(f"{name}: not 'module:attribute' (dotted Python names)")
        if source:  # first on the path: a same-named module of another spec's folder
            if source in sys.path:  # must not shadow this spec's
                sys.path.remove(source)
            sys.path.insert(0, source)
        root = _import_root(module, source)
        loaded = sys.modules.get(module)
        if root is not None and (
            cached is not None
            or (loaded is not None and _module_file(module, root) != _file_of(loaded))
        ):
            _forget(module, root)
        bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__
        try:  # in the user's folder: dpcluster writes only under the results folder
            with _process_settings_kept():
                obj = getattr(importlib.import_module(module), attr)
        # sys.exit at import is the plugin's error too, not dpcluster's exit code
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - shown in one line
            raise KeyError(f"{name}: cannot import ({_where(exc)})") from None
        finally:
            sys.dont_write_bytecode = bytecode
    else:
        eps = _entry_points()
        if name not in eps:
            raise KeyError(name)
        try:
            obj = eps[name].load()
        except (Exception, SystemExit) as exc:  # noqa: BLE001
            raise KeyError(f"{name}: cannot import ({_where(exc)})") from None
    if not isinstance(obj, AlgorithmInfo):
        raise TypeError(
            f"{name} is a {type(obj).__name__}, not an algorithm entry; decorate "
            "its cell runner with dpcluster.plugins.algorithm(...)"
        )
    root = _import_root(name.partition(":")[0], source) if ":" in name else None
    files = tuple(code_files(name.partition(":")[0], root).values()) if root else ()
    _PLUGINS[(name, source)] = (obj, code, _stats(tuple((f, 0, 0) for f in files)))
    return obj


def _stats(seen: tuple) -> tuple:
    """(file, mtime_ns, size) now, for the files of ``seen``: a cheap test that a plugin's
    code is unchanged since it was imported (its digest is computed only when it moved)."""
    out = []
    for path, _, _ in seen:
        try:
            st = os.stat(path)
            out.append((path, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((path, -1, -1))
    return tuple(out)


def _code_or_none(name: str, source: str) -> str:
    try:
        return repr(plugin_code(name, source))
    except (OSError, ValueError, ImportError):
        return ""


def _file_of(module) -> Path | None:
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if file else None


def _where(exc: BaseException) -> str:
    """``Type: message`` and the plugin's own file and line where it was raised."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{text.splitlines()[0]}"
    frames = traceback.extract_tb(exc.__traceback__)
    package = str(Path(__file__).resolve().parent.parent)
    own = [f for f in frames if "importlib" not in f.filename and package not in f.filename]
    if own:
        return f"{text} at {Path(own[-1].filename).name}:{own[-1].lineno}"
    return text
