"""An append-only privacy ledger that travels with every result.

Every noisy release records one immutable :class:`Spend`. A spend holds what *provably*
holds for the release (``epsilon``, ``delta``) and, where a paper claims something else, the
claim beside it (``claimed_epsilon``, ``claimed_delta``, ``claim``), marked as a claim.
Totals use basic sequential composition (sums). A release that covers disjoint parts of the
data (every cell of a histogram) is one spend whose sensitivity accounts for that; a release
that depends on one record several times (a record in many pairs) is one spend with
``repeats`` > 1, charged ``repeats`` times.

Neighbouring relations (docs/privacy.md):

* :data:`CENTRAL` (Paper A): D ~ D' iff one equals the other plus one tuple (docs/methods.md A0).
* :data:`LOCAL` (Paper B): the randomiser's input changes from any value x of one
  attribute to any other value x' of the same public domain (local DP).
* :data:`LOCAL_RECORD` (one-round LDP k-means): a user's whole record changes to any
  other record of the public domain [-1, 1]^d (local DP).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, field

CENTRAL = "add/remove one tuple (unbounded DP)"
LOCAL = "local: any two values of one attribute"
LOCAL_RECORD = "local: any two records of one user"


#: the note of a ledger whose records were scaled by their own min and max (bounds: data)
DATA_BOUNDS_NOTE = (
    "ε assumes public bounds: the data were scaled by their own min and max (bounds: data)"
)


def check_epsilon(value) -> str | None:
    """What is wrong with ``value`` as a privacy budget ε, or None: every ε a user gives
    (spec, CLI, estimator) and every ε a release books must be a positive finite number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return "must be a positive finite number"
    if not (math.isfinite(value) and value > 0):
        return "must be a positive finite number"
    return None


#: the budgets a user may ask for (spec, CLI, estimator): outside it no analysis means
#: anything, and double precision gives way. ε = 1e-320 made EUGkM's centres NaN and
#: summed DPLloyd's subnormal splits to more than ε; ε = 1e308 overflowed EUGkM's grid.
USER_EPSILON = (1e-12, 1e12)


def check_user_epsilon(value) -> str | None:
    """:func:`check_epsilon`, and within :data:`USER_EPSILON`."""
    if problem := check_epsilon(value):
        return problem
    lo, hi = USER_EPSILON
    if not lo <= value <= hi:
        return f"must be between {lo:g} and {hi:g} (double precision gives way outside)"
    return None


@dataclass(frozen=True)
class Spend:
    """One noisy release: purpose, mechanism, what provably holds and what is claimed.

    epsilon, delta      what provably holds for this release under the ledger's relation,
                        already multiplied by ``repeats``
    claimed_epsilon,    what the source paper claims for it (equal to the provable values
    claimed_delta       unless ``claim`` names the source of a stronger claim)
    sensitivity, scale  the mechanism's own (Laplace: L1 sensitivity and b; randomised
                        response: 1 and the flip probability q)
    repeats             how many times the release touches the worst-case record
    """

    purpose: str
    mechanism: str
    epsilon: float
    sensitivity: float
    scale: float
    round: int = 0
    delta: float = 0.0
    claimed_epsilon: float = 0.0
    claimed_delta: float = 0.0
    claim: str = ""
    repeats: int = 1
    #: mechanism-specific facts (randomised response: per-bit ε, m_max, the exact δ at the
    #: claimed ε)
    details: dict = field(default_factory=dict)
    #: the zCDP ρ of a Gaussian release (0 for every pure-ε release): such entries compose
    #: in zCDP as one group, whose (ε, δ) the ledger's totals convert at ``Ledger.delta``
    rho: float = 0.0


@dataclass
class Ledger:
    """Append-only list of :class:`Spend` records for one run.

    ``bounds`` says where the scaling bounds of the data came from (``"public"`` or
    ``"data"``); with ``"data"`` every ε is conditional on those bounds being public.
    """

    neighbouring: str = CENTRAL
    entries: list[Spend] = field(default_factory=list)
    bounds: str = ""
    #: public decisions that shaped the releases (``auto``'s choice and its reason)
    choices: list[str] = field(default_factory=list)
    #: the δ at which the zCDP group of Gaussian releases is converted to (ε, δ)
    #: (docs/privacy.md); unused while the ledger holds no Gaussian release
    delta: float = 0.0

    def record(self, mech, purpose: str, round: int = 0, repeats: int = 1):
        """Append the spend of ``mech`` and return the mechanism, so draws read
        ``ledger.record(m, ..).noise(rng, shape)``.

        ``mech`` exposes ``epsilon``, ``delta``, ``sensitivity`` and ``scale`` (what holds);
        ε must be positive and finite (an :class:`ExactRelease` books ∞) and δ in [0, 1),
        else ValueError;
        it may also expose ``claimed_epsilon``, ``claimed_delta`` and ``claim`` when its
        source paper claims more. ``repeats`` charges the release that many times (basic
        composition over the releases one record takes part in); a paper's claim is
        recorded once, as the paper states it.
        """
        repeats = int(repeats)
        if repeats < 1:
            raise ValueError(f"repeats must be >= 1, got {repeats}")
        eps, delta = float(mech.epsilon) * repeats, float(mech.delta) * repeats
        exact = getattr(mech, "exact", False) and eps == math.inf
        if not exact and check_epsilon(eps):
            raise ValueError(
                f"{purpose}: a release must book a positive finite ε, got {mech.epsilon!r}"
                " (a negative, zero or NaN entry would hide another release's cost; an "
                "unbounded one is an ExactRelease)"
            )
        if not (math.isfinite(delta) and 0 <= delta < 1):
            raise ValueError(f"{purpose}: a release's δ must lie in [0, 1), got {mech.delta!r}")
        claim = str(getattr(mech, "claim", ""))
        self.entries.append(
            Spend(
                purpose=purpose,
                mechanism=type(mech).__name__,
                epsilon=eps,
                sensitivity=float(mech.sensitivity),
                scale=float(mech.scale),
                round=int(round),
                delta=delta,
                # a paper's claim is per release: it never charges the repeats
                claimed_epsilon=float(getattr(mech, "claimed_epsilon", mech.epsilon))
                if claim
                else eps,
                claimed_delta=float(getattr(mech, "claimed_delta", mech.delta)) if claim else delta,
                claim=claim,
                repeats=repeats,
                details=dict(getattr(mech, "details", {})),
                rho=float(getattr(mech, "rho", 0.0)) * repeats,
            )
        )
        return mech

    def extend(self, other: Ledger) -> Ledger:
        """Append every spend of ``other`` (sequential composition of two runs' releases);
        a zCDP group's δ comes along when this ledger has none."""
        self.entries.extend(other.entries)
        self.delta = self.delta or other.delta
        return self

    @property
    def rho(self) -> float:
        """The zCDP ρ of the Gaussian releases, added (zCDP composes by addition)."""
        return math.fsum(e.rho for e in self.entries)

    def _group_epsilon(self) -> list[float]:
        """[the (ε at :attr:`delta`) of the zCDP group], or [] without one."""
        if not any(e.rho for e in self.entries):
            return []
        from .gaussian import zcdp_epsilon
        from .pld import gaussian_epsilon, rho_up

        # the zCDP conversion, or the group's exact Gaussian curve (GDP), the smaller
        return [
            min(zcdp_epsilon(self.rho, self.delta), gaussian_epsilon(rho_up(self.rho), self.delta))
        ]

    def _composed(self, pure: list[float]) -> float:
        """The pure releases ``pure`` (ε's) with the zCDP group: the smallest of basic
        composition (their sum plus the group's ε at :attr:`delta`), Rényi composition of
        them all (:mod:`.rdp`) and their privacy-loss distribution (:mod:`.pld`, the
        tightest, on which the Gaussian methods calibrate). The last two apply when no
        pure release books a δ of its own. All are valid bounds."""
        basic = math.fsum(pure + self._group_epsilon())
        if not self._group_epsilon() or any(e.delta for e in self.entries if not e.rho):
            return basic
        from . import pld
        from .rdp import composed_epsilon

        return min(
            basic,
            composed_epsilon(tuple(pure), self.rho, self.delta),
            pld.composed_epsilon(pure, self.rho, self.delta),
        )

    def dp_event(self):
        """Everything released, as a ``dp_accounting.DpEvent`` (:func:`.pld.ledger_event`):
        any accountant can recompute the fit's (ε, δ) from it; :func:`.pld.event_epsilon`
        gives its PLD ε under add/remove-one neighbours."""
        from .pld import ledger_event

        return ledger_event(self.to_dict())

    @property
    def total_epsilon(self) -> float:
        """What provably holds: every pure release's provable ε and the zCDP group of
        Gaussian releases at :attr:`delta`, composed by :meth:`_composed`."""
        return self._composed([e.epsilon for e in self.entries if not e.rho])

    @property
    def total_delta(self) -> float:
        pure = [e.delta for e in self.entries if not e.rho]
        return math.fsum(pure + ([self.delta] if self._group_epsilon() else []))

    @property
    def claimed_epsilon(self) -> float:
        """What the papers claim for the same releases (equal to :attr:`total_epsilon`
        where every claim holds)."""
        return self._composed([e.claimed_epsilon for e in self.entries if not e.rho])

    @property
    def claimed_delta(self) -> float:
        pure = [e.claimed_delta for e in self.entries if not e.rho]
        return math.fsum(pure + ([self.delta] if self._group_epsilon() else []))

    def to_dict(self) -> dict:
        out = {
            "neighbouring": self.neighbouring,
            "total_epsilon": self.total_epsilon,
            "total_delta": self.total_delta,
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_delta": self.claimed_delta,
            "entries": [_entry_dict(e) for e in self.entries],
        }
        if self.rho:
            out["rho"], out["delta"] = self.rho, self.delta
        if self.choices:
            out["choices"] = list(self.choices)
        if self.bounds:
            out["bounds"] = self.bounds
            if self.bounds == "data":
                out["note"] = DATA_BOUNDS_NOTE
        return out


def _entry_dict(spend: Spend) -> dict:
    """A spend as a dict; ``rho`` only where it is a Gaussian release's."""
    out = asdict(spend)
    if not out["rho"]:
        del out["rho"]
    return out


def book_exact_count(ledger: Ledger, rule: str) -> None:
    """Book that ``rule`` read the exact record count N. Under add/remove one record N is
    not public: neighbours differ in it, and a rule that switches on it can tell them
    apart, so nothing finite holds (ε = ∞). The papers treat N as public, which is booked
    as their claim (0 for this read). Under replace-one neighbours N is public, and every
    release of this package's central methods then holds at twice its booked ε
    (docs/privacy.md)."""
    from .mechanisms import ExactRelease

    what = f"record count N (read exactly by {rule})"
    ledger.record(
        ExactRelease(what, claim="the paper treats N as public", claimed_epsilon=0.0), what
    )


def spent(ledger: Ledger | None) -> dict[str, float]:
    """The four per-run columns every result row carries: the (ε, δ) the ledger proves
    (``epsilon_provable``, ``delta_provable``) and the (ε, δ) the papers claim for the same
    releases (``epsilon_claimed``, ``delta_claimed``). A run without a ledger released
    something non-private: ε is infinite and δ is 1 (nothing is claimed, nothing holds).
    """
    if ledger is None:
        return {
            "epsilon_claimed": math.inf,
            "epsilon_provable": math.inf,
            "delta_claimed": 1.0,
            "delta_provable": 1.0,
        }
    return {
        "epsilon_claimed": ledger.claimed_epsilon,
        "epsilon_provable": ledger.total_epsilon,
        "delta_claimed": ledger.claimed_delta,
        "delta_provable": ledger.total_delta,
    }


#: the row columns of a non-private run
NOT_PRIVATE = spent(None)


def not_private(note: str = "not private", neighbouring: str | None = None) -> dict:
    """The ledger record of a computation that releases its output without noise: no
    entries, and ``note`` saying why (the relation, when one is named)."""
    out: dict = {"entries": [], "note": note}
    if neighbouring is not None:
        out["neighbouring"] = neighbouring
    return out
