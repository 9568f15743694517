"""Reading a spec file: YAML under size, depth and alias limits, with duplicate keys refused,
and ``--set`` overrides applied to the loaded document."""

from __future__ import annotations

import copy
import re
from typing import Any

import yaml

from ..errors import SpecError, did_you_mean

#: limits of a spec document (and of one ``--set`` value): bytes of text, nesting depth,
#: aliases, and nodes once every alias is expanded. A real spec is a few hundred bytes,
#: depth 5 and a few hundred nodes; an "alias bomb" of 500 bytes expands to 10^9 nodes.
MAX_SPEC_BYTES = 1 << 20

MAX_DEPTH = 32

MAX_ALIASES = 100

MAX_NODES = 100_000


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses duplicate keys (PyYAML silently keeps the last one), and
    documents nested deeper than :data:`MAX_DEPTH`, with more than :data:`MAX_ALIASES`
    aliases or more than :data:`MAX_NODES` nodes once aliases are expanded, before any
    Python object is built (see :func:`_load_yaml`)."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def _refuse(self, value: str, problem: str) -> SpecError:
        """A SpecError at the line of the next YAML event."""
        mark = self.peek_event().start_mark
        return SpecError(self.name, f"line {mark.line + 1}", value, problem)

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise self._refuse(
                    f"{self._aliases} aliases",
                    f"has more than {MAX_ALIASES} YAML aliases (*name); a spec needs few",
                )
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise self._refuse(f"depth {self._depth}", f"nests deeper than {MAX_DEPTH} levels")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _expanded_size(node, memo: dict) -> int:
    """Nodes of a composed YAML graph with every alias expanded (memoised per node, so a
    shared subtree is counted as often as it is referenced without walking it again)."""
    key = id(node)
    if key in memo and memo[key] is None:
        raise ValueError(f"line {node.start_mark.line + 1}")
    if key not in memo:
        memo[key] = None  # in progress: meeting it again below is a recursive alias
        size = 1
        if isinstance(node, yaml.SequenceNode):
            size += sum(_expanded_size(n, memo) for n in node.value)
        elif isinstance(node, yaml.MappingNode):
            size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
        memo[key] = size
    return memo[key]


def _load_yaml(text: str, file: str, where: str = "(file)"):
    """One YAML document under the limits above; a SpecError naming ``file`` otherwise."""
    if len(text) > MAX_SPEC_BYTES:
        raise SpecError(
            file, where, f"{len(text):,} characters", f"is longer than {MAX_SPEC_BYTES:,}"
        )
    loader = _UniqueKeyLoader(text)
    loader.name = file
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            size = _expanded_size(node, {})
        except ValueError as exc:
            raise SpecError(
                file, str(exc), "a recursive alias", "refers to itself (an endless document)"
            ) from None
        if size > MAX_NODES:
            raise SpecError(
                file,
                where,
                f"{size:,} nodes",
                f"expands (through its aliases) to more than {MAX_NODES:,} YAML nodes",
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _mapping_without_duplicates(loader, node, deep=False):
    seen = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            raise SpecError(
                loader.name,
                f"line {key_node.start_mark.line + 1}",
                key,
                "is not a valid key (a list or mapping cannot be a key)",
            ) from None
        if key in seen:
            raise SpecError(
                loader.name,
                str(key),
                key,
                f"is given twice (lines "
                f"{seen[key] + 1} and {key_node.start_mark.line + 1}); YAML would "
                "silently keep the last",
            )
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates
)

#: YAML 1.2's floats without a dot (``1e-3``, ``2E+5``), which PyYAML's YAML 1.1 rules read
#: as strings, so that ``epsilon: [1e-3]`` is a number as a reader expects
_EXPONENT_FLOAT = re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$")
_UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", _EXPONENT_FLOAT, list("-+0123456789")
)


def apply_overrides(raw: Any, overrides, file: str) -> Any:
    """Apply ``--set key=value`` overrides to a loaded spec document.

    ``key`` is a dotted path: mapping keys, list indices (``datasets.0.params.N``) or, in a
    list of entries, an entry's ``name`` (``algorithms.dplloyd.repeat`` sets it on every
    entry of that name). ``value`` is YAML (``[0.5, 1]``, ``3``, ``public``). Missing
    mapping keys are created; everything is validated afterwards like the file itself.
    """
    raw = copy.deepcopy(raw) if raw is not None else {}
    for key, text in overrides:
        where = f"--set {key}"
        try:
            value = _load_yaml(text, file, where)
        except yaml.YAMLError:
            raise SpecError(file, where, text, "is not a YAML value") from None
        parts = [p for p in key.split(".") if p]
        if not parts:
            raise SpecError(file, where, text, "needs a key: --set key=value")
        targets = [raw]
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            nxt = []
            for node in targets:
                if isinstance(node, dict):
                    if last:
                        node[part] = value
                    else:
                        nxt.append(node.setdefault(part, {}))
                elif isinstance(node, list):
                    if part.lstrip("-").isdigit():
                        idx = int(part)
                        if not -len(node) <= idx < len(node):
                            raise SpecError(
                                file,
                                where,
                                text,
                                f"index {idx} is outside the list of {len(node)} entries",
                            )
                        if last:
                            node[idx] = value
                        else:
                            nxt.append(node[idx])
                    else:
                        named = [e for e in node if isinstance(e, dict) and e.get("name") == part]
                        if not any(isinstance(e, dict) for e in node):
                            raise SpecError(
                                file,
                                where,
                                text,
                                f"{part!r} is not a number: this list holds {len(node)} "
                                "plain value(s), indexed from 0",
                            )
                        if not named:
                            raise SpecError(
                                file,
                                where,
                                text,
                                f"no entry named {part!r}",
                                did_you_mean(
                                    part, [str(e.get("name")) for e in node if isinstance(e, dict)]
                                ),
                            )
                        if last:
                            raise SpecError(
                                file,
                                where,
                                text,
                                "names an entry; set one of "
                                "its keys, e.g. .repeat or .params.<name>",
                            )
                        nxt += named
                else:
                    raise SpecError(
                        file, where, text, f"{'.'.join(parts[:i])} is not a mapping or a list"
                    )
            targets = nxt
    return raw


def parse_overrides(items) -> tuple[tuple[str, str], ...]:
    """``["a.b=1", …]`` -> ``(("a.b", "1"), …)``; a SpecError for an item without '='."""
    out = []
    for item in items:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise SpecError("--set", str(item), item, "must look like key=value")
        out.append((key.strip(), value))
    return tuple(out)
