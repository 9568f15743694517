"""Another library's mechanisms, made visible to dpcluster's release hook, so that the
replay audit (:mod:`.replay`) can run that library's code as shipped.

:func:`diffprivlib_hooked` wraps diffprivlib 0.6.6's ``GeometricFolded.randomise`` and
``LaplaceBoundedDomain.randomise`` (the two mechanisms its KMeans draws from) for the
duration of a block: each call announces one release with the mechanism's own ε and
sensitivity and the answer it was given, and returns what the hook returns, so that a
replayed neighbour is handed the recorded value. diffprivlib's source is not changed.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..privacy import release


@dataclass(frozen=True)
class ForeignMechanism:
    """What a foreign mechanism declares: its kind, ε, δ and sensitivity."""

    kind: str
    epsilon: float
    sensitivity: float
    delta: float = 0.0


#: the purposes under which diffprivlib's two mechanisms are announced
COUNT_PURPOSE = "diffprivlib cluster count (GeometricFolded)"
SUM_PURPOSE = "diffprivlib coordinate sum (LaplaceBoundedDomain)"


@contextmanager
def diffprivlib_hooked():
    """Within the block, every draw of diffprivlib's KMeans mechanisms is a release."""
    from ..algorithms.comparators import load_diffprivlib_kmeans

    load_diffprivlib_kmeans()  # imports diffprivlib with scikit-learn's missing names supplied
    from diffprivlib.mechanisms import GeometricFolded, LaplaceBoundedDomain

    originals = {cls: cls.randomise for cls in (GeometricFolded, LaplaceBoundedDomain)}
    purposes = {GeometricFolded: COUNT_PURPOSE, LaplaceBoundedDomain: SUM_PURPOSE}

    def wrap(cls):
        inner = originals[cls]

        def randomise(self, value):
            out = inner(self, value)
            mech = ForeignMechanism(
                cls.__name__, float(self.epsilon), float(self.sensitivity), float(self.delta)
            )
            return release(mech, purposes[cls], out, _unaskable, answer=np.float64(value))

        return randomise

    try:
        for cls in originals:
            cls.randomise = wrap(cls)
        yield
    finally:
        for cls, method in originals.items():
            cls.randomise = method


def _unaskable(data):
    raise TypeError("a foreign release's query cannot be re-asked; its answer is announced")


def diffprivlib_split_check(seen, epsilon: float) -> str:
    """The split diffprivlib's KMeans draws against the one it documents (Su et al.'s A2:
    the count gets c·u, each coordinate sum u, c = (4dρ²)^(1/3)): a finding when the
    count's ε over a coordinate's is 1/c instead of c, i.e. the split is swapped."""
    from ..algorithms.comparators import RHO

    count = [s for s in seen if s.signature["purpose"] == COUNT_PURPOSE]
    sums = [s for s in seen if s.signature["purpose"] == SUM_PURPOSE]
    if not count or not sums:
        return ""
    e_count = float(count[0].signature["epsilon"])
    e_sum = float(sums[0].signature["epsilon"])
    d = max(1, round(len(sums) / len(count)))
    c = float(np.cbrt(4 * d * RHO**2))
    if abs(e_count / e_sum - c) <= 1e-9 * c:
        return ""
    return (
        f"release #{seen.index(count[0]) + 1} '{COUNT_PURPOSE}' at {count[0].site} is drawn "
        f"at ε = {e_count:.6g} and each coordinate sum at {e_sum:.6g}: the documented "
        f"split (Su et al. A2) gives the count c = {c:.4g} times a coordinate's, this "
        f"gives it {e_count / e_sum:.4g} (the split is swapped)"
    )
