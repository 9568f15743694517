"""Paper B's audit targets: DPBV on one attribute, on records, and the vertical
decomposition, each at a pair of values whose clean encodings differ in m_max bits
(:meth:`~dpcluster.ldp.bitvector.BVCodec.worst_pair`)."""

from __future__ import annotations

import numpy as np

from ..ldp.bitvector import BVCodec, RecordCodec, unpack_bits
from ..ldp.parties import decomposition_codec
from ..privacy import LOCAL, Ledger
from .targets import Target


def _codec(s: int = 1000, t: float = 8.0, lo: float = 0.0, hi: float = 16.0) -> BVCodec:
    """One digits attribute: [0, 16], t = 8 (half the range, as the Paper-B specs use)."""
    return BVCodec.draw(s, t, lo, hi, np.random.default_rng(7))


def _dpbv_attribute():
    codec = _codec()

    def pair():
        x, x2 = codec.worst_pair()
        return np.array([x]), np.array([x2])

    def run(values, epsilon, rng, n, trial=None):
        ledger = Ledger(LOCAL)
        bits = codec.encode(values, epsilon, rng, ledger)
        return unpack_bits(bits, codec.s), ledger

    return (
        pair,
        run,
        {"s": codec.s, "t": codec.t, "domain": [codec.lo, codec.hi], "m_max": codec.m_max},
    )


RECORD_ATTRIBUTES = 4


def _dpbv_record():
    """A record of 4 digits attributes, s = 256 each: what a custodian releases per record
    in the horizontal setting, and Bob per record without decomposition."""
    codec = RecordCodec.draw(
        256,
        8.0,
        np.zeros(RECORD_ATTRIBUTES),
        np.full(RECORD_ATTRIBUTES, 16.0),
        np.random.default_rng(8),
    )
    worst = [c.worst_pair() for c in codec.attributes]

    def pair():
        return (np.array([[w[0] for w in worst]]), np.array([[w[1] for w in worst]]))

    def run(records, epsilon, rng, n, trial=None):
        ledger = Ledger(LOCAL)
        bits = codec.encode(records, epsilon, rng, ledger)
        return unpack_bits(bits, codec.s).reshape(n, -1), ledger

    return (
        pair,
        run,
        {
            "attributes": RECORD_ATTRIBUTES,
            "s": codec.s,
            "t": 8.0,
            "m_max": [c.m_max for c in codec.attributes],
        },
    )


PAIRS_PER_RECORD = 10


def _decomposition():
    """Bob's decomposition release for one record in c = 10 pairs (b-fig6: about 10 per
    record on average). R² of each pair is encoded on the [0, Z] codec; the record moves
    from Bob's lower corner (R² = 0 against partners there) to the upper one (R² = Z)."""
    widths = np.full(2, 25.0)  # two of Bob's attributes on [0, 25], as in b-fig6
    codec = decomposition_codec(widths, 256, np.random.default_rng(9))
    c = PAIRS_PER_RECORD

    def pair():
        return np.zeros(c), np.full(c, codec.hi)

    def run(r2, epsilon, rng, n, trial=None):
        bits = codec.encode(r2, epsilon, rng)
        ledger = Ledger(LOCAL)
        ledger.record(codec.mechanism(epsilon), "DPBV of R² per pair", repeats=c)
        return unpack_bits(bits, codec.s).reshape(n, -1), ledger

    return pair, run, {"pairs_per_record": c, "s": codec.s, "Z": codec.hi, "m_max": codec.m_max}


def local_targets() -> list[Target]:
    """Paper B's local targets: two values whose clean encodings differ in m_max bits."""
    dpbv_pair, dpbv_run, dpbv_params = _dpbv_attribute()
    rec_pair, rec_run, rec_params = _dpbv_record()
    dec_pair, dec_run, dec_params = _decomposition()
    return [
        Target(
            name="dpbv (one attribute)",
            covers=("dpbv_error", "dp_kcluster", "dp_dbscan", "dp_agglomerative"),
            kind="local",
            params=dpbv_params,
            trials=10_000,
            run=dpbv_run,
            pair=dpbv_pair,
        ),
        Target(
            name="dpbv (record, horizontal / vertical non-decomposition)",
            covers=("dp_kcluster", "dp_dbscan", "dp_agglomerative", "vertical_error"),
            kind="local",
            params=rec_params,
            trials=10_000,
            run=rec_run,
            pair=rec_pair,
        ),
        Target(
            name="vertical decomposition",
            covers=("vertical_error",),
            kind="local",
            params=dec_params,
            trials=10_000,
            run=dec_run,
            pair=dec_pair,
        ),
    ]
