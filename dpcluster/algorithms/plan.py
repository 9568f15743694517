"""The one place where a central fit reads a record count: one noisy Ñ, then every rule.

Neighbouring relation: add/remove one record, so the record count N is *not* public:
neighbours differ in it, and a rule that switches on N (``auto``'s method, improved
DPLloyd's passes, the clip-or-not guard, the hybrid's switch, EUGkM's grid size M) would
tell them apart at its switch points. A fit whose rules need a size therefore

1. releases ``Ñ = N + Z`` once, Z the exact discrete Laplace of scale 1/ε_N on the
   lattice (:class:`~dpcluster.privacy.LaplaceMechanism`; L1 sensitivity 1), with
   ``ε_N = COUNT_SHARE · ε`` booked in the ledger as ``record count Ñ (plans the fit)``;
2. makes every decision from Ñ, d, k, the rest of ε and the public radii only
   (:func:`decide`): the decisions are post-processing of Ñ, so the method's name, its
   iteration count and the ledger's shape cost nothing more;
3. runs the method with what is left of ε (:func:`~dpcluster.privacy.budget.split`).

Methods whose rules read no size (DPLloyd with a fixed t, LSH-splits, PGkM) spend nothing
on Ñ. The paper's own algorithms, run through specs, keep their exact-N rules and book
that read (:func:`~dpcluster.privacy.ledger.book_exact_count`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..privacy import LaplaceMechanism, Ledger, release
from ..privacy.budget import split
from . import checks
from .auto import choose, clip_share

#: the share of ε a fit spends on Ñ when one of its rules needs a size (docs/privacy.md)
COUNT_SHARE = 0.05
#: what the count's ledger entry says
PURPOSE = "record count Ñ (plans the fit)"


@dataclass(frozen=True)
class Plan:
    """A fit's public decisions.

    method   what runs (``auto`` resolved to its choice)
    epsilon  the budget the method spends (ε less ε_N)
    count    Ñ (≥ 1), what every size rule read; None when no rule needed one
    params   the method's keyword arguments with the decisions filled in
    reason   why (``auto``'s explanation), or ""
    """

    method: str
    epsilon: float
    count: float | None
    params: dict = field(default_factory=dict)
    reason: str = ""


def release_count(
    Z: np.ndarray, epsilon: float, rng: np.random.Generator, ledger: Ledger, r=1.0
) -> float:
    """Ñ = N + discrete Laplace(1/ε) of the records Z (N, d), checked against the box
    first so that bad records are refused before anything is released; booked in
    ``ledger``. Returns Ñ clipped below at 1 (post-processing)."""
    checks.points(Z, r)
    mech = ledger.record(LaplaceMechanism(epsilon, 1.0), PURPOSE)
    noisy = mech.add(len(Z), mech.noise(rng, 1))
    noisy = release(mech, PURPOSE, noisy, lambda data: np.array([float(len(data))]))
    return max(1.0, float(noisy[0]))


def needs_count(method: str, params: dict) -> bool:
    """Whether ``method`` with ``params`` has a rule that reads a size: a public fact."""
    if method in ("auto", "eugkm", "hybrid", "private_mean", "pe_means", "pe_lloyd"):
        return True
    if method == "dplloyd_improved":
        return int(params.get("iterations", 0)) <= 0 or float(params.get("clip", 0.0)) > 0
    if method == "dplloyd_capped":
        return int(params.get("iterations", 0)) <= 0
    return False


def decide(method: str, count: float, k: int, d: int, epsilon: float, r, params: dict) -> Plan:
    """Every decision of ``method`` from Ñ = ``count``, k, d, ε (what the method spends)
    and the radii r: nothing here reads a record."""
    reason = ""
    params = dict(params)
    if method == "auto":
        method, reason = choose(
            count, k, d, epsilon, r, delta=params.pop("delta", 0.0), ball=params.pop("ball", False)
        )
        if method == "dplloyd_improved":
            params["clip"] = clip_share(count, d, epsilon)
    return Plan(method, epsilon, count, params, reason)


def plan(
    method: str,
    Z: np.ndarray,
    k: int,
    epsilon: float,
    rng: np.random.Generator,
    ledger: Ledger,
    r=1.0,
    params: dict | None = None,
    count_share: float = COUNT_SHARE,
) -> Plan:
    """The plan of one fit: Ñ released with ``count_share`` of ε when ``method`` needs a
    size (booked in ``ledger``, drawn from ``rng``), then :func:`decide`."""
    params = dict(params or {})
    if not needs_count(method, params):
        return Plan(method, epsilon, None, params)
    eps_count, rest = split(epsilon, count_share)
    count = release_count(Z, eps_count, rng, ledger, r)
    return decide(method, count, k, np.shape(Z)[1], rest, r, params)
