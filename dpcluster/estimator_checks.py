"""Checks of :class:`~dpcluster.estimator.DPKMeans`'s parameters: the method name (with
the closest to a misspelling), its ``method_params`` against the registry, the public
bounds, and the generator from ``random_state``."""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from . import data
from .errors import did_you_mean
from .experiments import ALGORITHMS


def central_methods() -> dict:
    """The registry entries DPKMeans runs by name: those that declare a central ``fit``
    (read from the registry at each use, so an entry added there needs no other edit)."""
    return {name: info for name, info in ALGORITHMS.items() if info.fit is not None}


class _CentralMethod(StrOptions):
    """scikit-learn's string-options constraint over the live :func:`central_methods`."""

    def __init__(self):
        super().__init__(set(central_methods()))

    def is_satisfied_by(self, val):
        self.options = set(central_methods())
        self._given = val  # for the message: scikit-learn formats it from str(self)
        return super().is_satisfied_by(val)

    def __str__(self) -> str:
        names = sorted(self.options)
        hint = did_you_mean(str(getattr(self, "_given", "")), names)
        listed = ", ".join(repr(n) for n in names)
        return f"one of the {len(names)} methods {listed}" + (
            f" ({hint})" if hint.startswith("Did") else ""
        )


def _rng(random_state) -> np.random.Generator:
    """A generator from ``random_state``: None gives fresh OS entropy (what a real private
    release should use); an int or Generator makes the run reproducible; a RandomState
    seeds one from 128 bits it draws (not a 31-bit seed)."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        words = random_state.randint(0, 2**32, size=4, dtype=np.uint64)
        return np.random.default_rng([int(w) for w in words])
    return np.random.default_rng(random_state)


def _method_params(method: str, given) -> dict:
    """``method_params`` checked against the method's registry declaration
    (:attr:`~dpcluster.experiments.AlgorithmInfo.fit`): integers are integers, minimums and
    choices hold, floats are finite; a ValueError names the parameter."""
    from .experiments.protocol import ParamError

    table = central_methods()[method].fit.params
    out = {}
    for key, value in dict(given or {}).items():
        if key not in table:
            if not table:
                raise ValueError(
                    f"method_params: method {method!r} takes none; name a method to tune it"
                )
            raise ValueError(
                f"method_params[{key!r}] is not a parameter of method {method!r}; "
                f"it takes {', '.join(table)}"
            )
        try:
            out[key] = table[key].coerce(value)
        except ParamError as exc:
            raise ValueError(f"method_params[{key!r}] = {value!r}: {exc}") from None
    return out


def _check_bounds(bounds, d: int) -> None:
    """Public bounds ``(lo, hi)``: finite, one value or one per feature, lo < hi."""
    try:
        lo, hi = (np.asarray(b, dtype=np.float64) for b in bounds)
        lo, hi = np.broadcast_to(lo, (d,)), np.broadcast_to(hi, (d,))
    except (TypeError, ValueError):
        raise ValueError(
            f"bounds must be (lo, hi), scalars or one value per feature ({d}), got {bounds!r}"
        ) from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError(f"bounds must be finite numbers, got {bounds!r}")
    if np.any(lo >= hi):
        raise ValueError(f"bounds need lo < hi for every feature, got {bounds!r}")
    if data.span_overflows(lo, hi):
        raise ValueError(f"bounds: hi - lo overflows a float, got {bounds!r}")
