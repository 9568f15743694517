"""Which targets an audit runs: from ``--algorithms`` (target names, registry names or
plugins as ``module:attribute``) and a spec's private algorithms; and what its verdicts
say to the person who ran it."""

from __future__ import annotations

import pandas as pd

from ..errors import DpclusterError
from ..experiments import ALGORITHMS, lookup
from .comparator_targets import unavailable
from .generic import entry_target
from .run import audit_names, select
from .targets import Target


def choose_targets(
    names: list[str] | None, spec=None, folder: str = "."
) -> tuple[list[str] | None, list[Target]]:
    """(built-in target names, or None for all; generic targets for plugins).

    ``names`` are what ``--algorithms`` lists (None: not given); a ``module:attribute``
    name is a plugin imported from ``folder``. Without ``names``, a ``spec`` (a
    :class:`~dpcluster.spec.Spec`) contributes its private algorithms. Raises
    :class:`~dpcluster.errors.DpclusterError` (one line) for a name that is neither.
    """
    names = list(names) if names is not None else None
    extra: list[Target] = []
    for name in [n for n in names or [] if ":" in n]:
        try:
            info = lookup(name, folder)
        except (KeyError, TypeError) as exc:
            raise DpclusterError(f"--algorithms: {exc.args[0]}") from None
        if not info.private:
            raise DpclusterError(f"--algorithms: {name} is not private; there is nothing to audit")
        extra.append(entry_target(name, info, {}))
        names.remove(name)
    if spec is not None and names is None:
        names = []
        for a in spec.algorithms:
            info = lookup(a.name, a.source)
            if a.name not in ALGORITHMS:  # a plugin: a generic target
                if info.private:
                    extra.append(entry_target(a.variant, info, a.kwargs))
            elif a.name not in names:
                names.append(a.name)
    for name in names or []:
        if name in (missing := unavailable()):
            raise DpclusterError(f"--algorithms: {name} cannot be audited here: {missing[name]}")
    try:
        select(names)
    except KeyError as exc:
        raise DpclusterError(
            f"--algorithms: {exc.args[0]!r} is neither an audit target nor a private "
            f"registry entry; targets: {', '.join(audit_names())}"
        ) from None
    return names, extra


def verdict_lines(table: pd.DataFrame) -> list[str]:
    """One line per audited (target, ε): the budgets, both lower bounds and the verdict."""
    out = []
    for r in table.itertuples(index=False):
        if r.verdict == "not private":
            out.append(f"  {r.algorithm:<56} not private")
            continue
        wb = (
            "-"
            if r.epsilon_lb_whitebox != r.epsilon_lb_whitebox
            else f"{r.epsilon_lb_whitebox:.3g}"
        )
        disc = getattr(r, "epsilon_lb_discrete", float("nan"))
        paths = "" if disc != disc else f", discrete {disc:.3g}"
        out.append(
            f"  {r.algorithm:<56} eps={r.epsilon:<4g} claimed={r.epsilon_claimed:<6g} "
            f"provable={r.epsilon_provable:<7g} lb: black-box "
            f"{r.epsilon_lb_blackbox:.3g}, white-box {wb}{paths}  {r.verdict}"
        )
    return out


def blame_lines(table: pd.DataFrame) -> list[str]:
    """For each target whose provable ε is violated: whose bug that is (dpcluster's for a
    built-in entry, the plugin's for a ``module:attribute`` one)."""
    broken = sorted(set(table.loc[table["verdict"] == "violation of provable ε", "algorithm"]))
    out = []
    for name in broken:
        base = name.split("(")[0].split(" ")[0]
        whose = (
            "a bug in dpcluster" if base in ALGORITHMS or ":" not in name else "a bug in the plugin"
        )
        out.append(f"error: {name}: its provable ε is violated: {whose}")
    return out
