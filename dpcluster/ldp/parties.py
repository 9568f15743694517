"""Distributed settings (docs/methods.md B7): custodians that exchange only encodings.

A :class:`Custodian` holds raw values privately and releases :class:`Encoded` messages,
which carry packed bit vectors and nothing else. The receiving side (:class:`Receiver`,
Alice or an aggregator) accepts only such messages, so a test can check that no raw value
ever crosses. Every DPBV release goes into the sender's ledger.

* Horizontal partition (Eq. 20): both sides encode all attributes of their records with
  the shared public codec; distances are :func:`~.distance.distance_matrix` between them.
* Vertical partition: Alice holds attributes ``0..l-1`` of every record, Bob the rest.
  Alice computes ``L² = Σ_{i<l}(a_i − b_i)²`` exactly. For ``R²`` over Bob's attributes:
  - non-decomposition (Eq. 21): Bob DPBV-encodes each of his attributes for every record;
    ``R² = Σ_i d^_E,i²``;
  - decomposition: Bob computes ``R²`` of each requested pair himself and DPBV-encodes that
    one scalar and the reference 0 on a codec over ``[0, Z]``, ``Z = Σ_i μ_i²``,
    ``t_z = Z/2`` (so ``μ_max = 2Z``); Alice debiases their Hamming distance.
  Either way ``d^_E = sqrt(L² + max(0, R²))``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..privacy import LOCAL, ExactRelease, Ledger
from .bitvector import BVCodec, RecordCodec
from .distance import distance_matrix, mediator_values, pair_estimates


@dataclass(frozen=True)
class Encoded:
    """A message between parties: packed (DP)BV bits only."""

    sender: str
    what: str
    bits: np.ndarray
    #: how many of the trailing encodings are mediators (B2), a count only
    n_mediators: int = 0

    def __post_init__(self) -> None:
        if not (isinstance(self.bits, np.ndarray) and self.bits.dtype == np.uint64):
            raise TypeError("an Encoded message carries packed uint64 bit vectors only")


@dataclass
class Custodian:
    """A data holder. ``_raw`` never leaves this object; only :meth:`encode_*` results do."""

    name: str
    _raw: np.ndarray = field(repr=False)
    epsilon: float | None
    private_rng: np.random.Generator = field(repr=False)
    ledger: Ledger = field(default_factory=lambda: Ledger(LOCAL))

    def encode_records(self, codec: RecordCodec, columns: slice = slice(None)) -> Encoded:
        """DPBV (or BV when ε is None) of the chosen attributes of every record held."""
        X = self._raw[:, columns]
        bits = codec.encode(X, self.epsilon, self.private_rng.spawn(1)[0], self.ledger)
        return Encoded(self.name, "records", bits)

    def encode_with_mediators(self, codec: RecordCodec, column: int, spacing: float) -> Encoded:
        """One attribute of every record, followed by mediator values that bridge gaps wider
        than ``spacing`` (B2's intermediate-value trick). The receiver learns how many
        mediators there are, never their values."""
        x = self._raw[:, column]
        med = mediator_values(x, spacing)
        values = np.concatenate([x, med])[:, None]
        bits = codec.encode(values, self.epsilon, self.private_rng.spawn(1)[0], self.ledger)
        # the receiver learns len(med), a deterministic function of the values: no ε bounds it
        self.ledger.record(
            ExactRelease(
                "number of mediators", claim="Sun et al.: mediators cost computation only"
            ),
            "number of mediators",
        )
        return Encoded(self.name, f"attribute {column} + mediators", bits, len(med))

    def encode_partial_sq_distances(
        self, pairs: np.ndarray, columns: slice, codec: BVCodec
    ) -> tuple[Encoded, Encoded]:
        """Decomposition: R² of each pair (P, 2) over ``columns``, encoded with ``codec``,
        plus one encoding of the reference 0 per pair (both DPBV).

        Each R² depends on both records of its pair, so a record that takes part in c pairs
        is in c releases: the ledger charges the encoding :func:`pair_multiplicity` times
        (basic composition over the worst-case record)."""
        X = self._raw[:, columns]
        r2 = ((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2).sum(axis=1)
        rng_v, rng_0 = self.private_rng.spawn(2)
        value = codec.encode(r2, self.epsilon, rng_v)
        if self.epsilon is not None:
            self.ledger.record(
                codec.mechanism(self.epsilon),
                "DPBV of R² per pair (charged once per pair of the worst-case record)",
                repeats=pair_multiplicity(pairs, len(self._raw)),
            )
        # the reference 0 is data-independent: randomising it costs no privacy budget
        zero = codec.encode(np.zeros(len(pairs)), self.epsilon, rng_0, ledger=None)
        return Encoded(self.name, "R2", value), Encoded(self.name, "R2-reference", zero)


@dataclass
class Receiver:
    """Alice or an aggregator: computes with public codecs and received encodings only."""

    name: str
    received: list[Encoded] = field(default_factory=list)

    def receive(self, msg: Encoded) -> np.ndarray:
        if not isinstance(msg, Encoded):
            raise TypeError(f"{self.name} accepts Encoded messages only, got {type(msg).__name__}")
        self.received.append(msg)
        return msg.bits


def pair_multiplicity(pairs: np.ndarray, n: int) -> int:
    """The largest number of pairs (P, 2) any one of n records takes part in (≥ 1)."""
    if len(pairs) == 0:
        return 1
    return max(1, int(np.bincount(pairs.reshape(-1), minlength=n).max()))


def decomposition_codec(mu: np.ndarray, s: int, public_rng: np.random.Generator) -> BVCodec:
    """The scalar codec for R² ∈ [0, Z], Z = Σ μ_i², t_z = Z/2, so μ_max = 2Z."""
    Z = float(np.sum(np.asarray(mu, float) ** 2))
    return BVCodec.draw(s, Z / 2.0, 0.0, Z, public_rng)


def horizontal_distances(
    alice: Custodian, bob: Custodian, codec: RecordCodec, receiver: Receiver
) -> np.ndarray:
    """Eq. 20 between every record of Alice and of Bob, from their encodings only."""
    ea = receiver.receive(alice.encode_records(codec))
    eb = receiver.receive(bob.encode_records(codec))
    return distance_matrix(codec, ea, eb, alice.epsilon)


def vertical_distances(
    alice_raw_left: np.ndarray,
    bob: Custodian,
    pairs: np.ndarray,
    l: int,
    codec_right: RecordCodec,
    method: str,
    public_rng: np.random.Generator,
    receiver: Receiver,
) -> np.ndarray:
    """Estimated distances (P,) of record pairs (P, 2) when Alice holds columns < l.

    ``alice_raw_left`` (n, l) is Alice's own data (she may use it exactly);
    ``codec_right`` encodes Bob's d − l attributes; ``method`` ``"non-decomposition"`` or
    ``"decomposition"``.
    """
    L2 = ((alice_raw_left[pairs[:, 0]] - alice_raw_left[pairs[:, 1]]) ** 2).sum(axis=1)
    eps = bob.epsilon
    if method == "non-decomposition":
        E = receiver.receive(bob.encode_records(codec_right, slice(l, None)))
        per_attr = pair_estimates(codec_right, E[pairs[:, 0]], E[pairs[:, 1]], eps)
        R2 = (np.clip(per_attr, 0.0, codec_right.widths[None, :]) ** 2).sum(axis=1)
    elif method == "decomposition":
        codec = decomposition_codec(codec_right.widths, codec_right.s, public_rng)
        v_msg, z_msg = bob.encode_partial_sq_distances(pairs, slice(l, None), codec)
        v, z = receiver.receive(v_msg), receiver.receive(z_msg)
        rc = RecordCodec((codec,))
        R2 = pair_estimates(rc, v[:, None, :], z[:, None, :], eps)[:, 0]
    else:
        raise ValueError(f"unknown method {method!r}: non-decomposition | decomposition")
    return np.sqrt(L2 + np.maximum(0.0, R2))
