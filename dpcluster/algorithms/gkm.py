"""GkM: GUPT's sample-and-aggregate k-means, GkM-3K, and the SAG / Noise diagnostics
(docs/methods.md A4).

Privacy argument. Neighbouring relation: add/remove one tuple, with the block partition
treated as fixed (GUPT's argument). A tuple lies in one of the l disjoint blocks, so it
changes one block's k·d output coordinates, each clamped into [-r, r], by at most 2r; the
average of the l aligned outputs moves by at most 2r/l per coordinate, i.e. by
``k·d·2r/l`` in L1. Adding ``Lap(k·d·2r/(l·ε))`` to each of the k·d coordinates (the
paper's Eq. 3) is therefore ε-DP. Su et al. know the output range (data are normalised),
so GUPT's extra factor 3 for range estimation is not used (docs/methods.md A4 ASSUMPTION).
Shuffling, the per-block k-means and the alignment look only at the data inside blocks and
are part of the aggregated function; SAG releases the noiseless average (not private) and
Noise perturbs the non-private baseline centroids (a diagnostic, not private either).
"""

from __future__ import annotations

import re

import numpy as np

from ..kernels.blocks import block_lloyd, lex_order
from ..privacy import LaplaceMechanism, Ledger, release
from ..privacy.ledger import book_exact_count
from . import checks
from .dplloyd import DPResult

MINIT = ("points", "random", "uniform")
ALIGN = ("lex0", "gupt")
_BLOCK_RULE = re.compile(r"^\s*(?:N\^(?P<exp>[0-9.]+)|(?P<mult>[0-9]*)k|(?P<size>[0-9]+))\s*$")


def block_size(rule: str | int, N: int, k: int) -> int:
    """Block size b for a rule: ``"N^a"`` → N^a (GkM: a = 0.6), ``"3k"`` → 3k (GkM-3K),
    or a plain integer. Always clamped into [1, N]."""
    m = _BLOCK_RULE.match(str(rule))
    if m is None:
        raise ValueError(f"block rule {rule!r} is not 'N^a', '<c>k' or an integer")
    if m["exp"] is not None:
        b = N ** float(m["exp"])
    elif m["size"] is not None:
        b = float(m["size"])
    else:
        b = (int(m["mult"]) if m["mult"] else 1) * k
    return int(min(max(1, round(b)), N))


def n_blocks(N: int, b: int) -> int:
    """l = max(1, floor(N / b)): with b = N^0.6 this is GUPT's ``int(N**0.4)`` (up to rounding)."""
    return max(1, N // b)


#: GkM's noise scale: Eq. 3 (docs/methods.md A4) or the public GUPT code's, three times it
NOISE_RULES = ("eq3", "gupt")


def noise_mechanism(
    k: int, d: int, n_block: int, epsilon: float, r: float = 1.0, rule: str = "eq3"
) -> LaplaceMechanism:
    """The Laplace mechanism on the averaged k·d vector, whose L1 sensitivity is k·d·2r/l.

    ``rule="eq3"``: all of ε, scale k·d·2r/(l·ε) (Eq. 3). ``rule="gupt"``: GUPT's runtime
    (``_privatize``) divides ε by 3 before the noise (it keeps two thirds for estimating
    output bounds privately, which public bounds make unnecessary), so the scale is
    3·k·d·2r/(l·ε) and the release spends ε/3, which is what the ledger books.
    """
    if rule not in NOISE_RULES:
        raise ValueError(f"unknown GkM noise rule {rule!r}; valid: {NOISE_RULES}")
    share = 1.0 / 3.0 if rule == "gupt" else 1.0
    return LaplaceMechanism(share * epsilon, k * d * 2.0 * r / n_block, coordinates=k * d)


def align(C: np.ndarray, rule: str = "lex0") -> np.ndarray:
    """Sort each block's k centroids so that centroid j means the same across blocks.

    C (l, k, d). ``lex0``: lexicographic by coordinate 0, ties by 1, 2, … (default,
    ASSUMPTION). ``gupt``: by coordinate 1 only (GUPT's k-means sample; coordinate 0 when
    d = 1), stable.
    """
    l, k, d = C.shape
    if rule == "gupt":
        order = np.argsort(C[:, :, min(1, d - 1)], axis=1, kind="stable")
    elif rule == "lex0":
        order = np.empty((l, k), np.int64)
        lex_order(np.ascontiguousarray(C, np.float64), order)
    else:
        raise ValueError(f"unknown alignment {rule!r}; valid: {ALIGN}")
    return np.take_along_axis(C, order[:, :, None], axis=1)


def sample_and_aggregate(
    X: np.ndarray,
    k: int,
    block: str | int,
    rng: np.random.Generator,
    minit: str = "points",
    align_rule: str = "lex0",
    max_iter: int = 10,
    r: float = 1.0,
) -> tuple[np.ndarray, int]:
    """SAG: shuffle, split into l blocks, k-means per block, clamp, align and average.

    X (N, d) in [-r, r]^d; ``rng`` drives the shuffle and the per-block initial centroids.
    minit ``points``: k distinct records of the block (SciPy ``kmeans2(minit="points")``,
    default); ``random``: k draws from a Gaussian with the block's mean and covariance
    (SciPy's ``minit="random"``, GUPT's own sample); ``uniform``: k points uniform on the
    domain. ``max_iter`` = SciPy's default 10.
    Returns (the average (k, d), l).
    """
    N, d = X.shape
    b = block_size(block, N, k)
    l = n_blocks(N, b)
    shuffle_rng, init_rng = rng.spawn(2)
    Xs = np.ascontiguousarray(X[shuffle_rng.permutation(N)])
    starts = np.linspace(0, N, l + 1).round().astype(np.int64)  # l nearly equal blocks
    if minit == "points":
        C = Xs[starts[:-1, None] + block_initial_records(np.diff(starts), k, init_rng)]
    elif minit == "random":
        C = np.empty((l, k, d))
        for j in range(l):
            B = Xs[starts[j] : starts[j + 1]]
            cov = np.atleast_2d(np.cov(B, rowvar=False)) if len(B) > 1 else np.zeros((d, d))
            C[j] = init_rng.multivariate_normal(
                B.mean(axis=0), cov, size=k, check_valid="ignore", method="eigh"
            )
    elif minit == "uniform":
        C = init_rng.uniform(-r, r, size=(l, k, d))
    else:
        raise ValueError(f"unknown minit {minit!r}; valid: {MINIT}")
    block_lloyd(Xs, starts, C, int(max_iter))
    return average_blocks(C, align_rule, r), l


def average_blocks(outputs: np.ndarray, align_rule: str = "lex0", r: float = 1.0) -> np.ndarray:
    """The aggregated function of sample-and-aggregate: clamp each block output (l, k, d)
    into [-r, r] (GUPT's ``_sanitize``), align the k centroids across blocks, average.
    Returns (k, d). One block output moves the result by at most 2r/l per coordinate."""
    return align(np.clip(outputs, -r, r), align_rule).mean(axis=0)


def block_initial_records(sizes: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k record offsets (l, k) int64 in each of l blocks of ``sizes`` (l,) records.

    A block with at least k records gets k distinct ones in uniformly random order (SciPy
    ``kmeans2(minit="points")``, i.e. ``rng.choice(size, k, replace=False)``); a smaller
    block gets k draws with replacement. Vectorised: every record gets a uniform key and a
    block picks its k smallest keys, in key order, so there is no Python loop over blocks.
    """
    pick = np.empty((len(sizes), k), np.int64)
    big = sizes >= k
    if big.any():
        size_b = sizes[big]
        smax = int(size_b.max())
        keys = rng.random((len(size_b), smax))
        keys[np.arange(smax)[None, :] >= size_b[:, None]] = np.inf  # past the end of a block
        first = (
            np.argpartition(keys, k - 1, axis=1)[:, :k]
            if smax > k
            else np.broadcast_to(np.arange(k), (len(size_b), k))
        )
        by_key = np.argsort(np.take_along_axis(keys, first, axis=1), axis=1)
        pick[big] = np.take_along_axis(first, by_key, axis=1)
    small = ~big
    if small.any():
        pick[small] = rng.integers(0, sizes[small, None], (int(small.sum()), k))
    return pick


def gkm(
    X: np.ndarray,
    k: int,
    epsilon: float,
    rng: np.random.Generator,
    block: str | int = "N^0.6",
    minit: str = "points",
    align_rule: str = "lex0",
    max_iter: int = 10,
    r: float = 1.0,
    noise: str = "eq3",
) -> DPResult:
    """GkM (block ``"N^0.6"``) or GkM-3K (block ``"3k"``): SAG plus Laplace noise at the
    scale of ``noise`` (:func:`noise_mechanism`: Eq. 3, or GUPT's three times it).

    ``rng`` is split into (sample-and-aggregate, noise) streams. Returns DPResult with info
    {blocks l, block_size}.
    """
    X = checks.points(X, r)
    if len(X) == 0:  # its blocks are sized from the exact N (booked as ε = ∞ below)
        raise ValueError("GkM needs at least one record: its blocks are cut from the exact N")
    sag_rng, noise_rng = rng.spawn(2)
    centre, l = sample_and_aggregate(X, k, block, sag_rng, minit, align_rule, max_iter, r)
    ledger = Ledger()
    out = noisy_average(centre, l, epsilon, noise_rng, ledger, r, rule=noise)
    book_exact_count(ledger, "the block size and the number of blocks l")
    return DPResult(
        out, ledger, max_iter, {"blocks": l, "block_size": block_size(block, len(X), k)}
    )


def noisy_average(
    centre: np.ndarray,
    n_block: int,
    epsilon: float,
    rng: np.random.Generator,
    ledger: Ledger,
    r: float = 1.0,
    query=None,
    rule: str = "eq3",
) -> np.ndarray:
    """Eq. 3: the averaged block centroids ``centre`` (k, d) plus ``Lap(k·d·2r/(l·ε))`` per
    coordinate, recorded in ``ledger``. ``query`` (block outputs (l, k, d) -> (k, d), default
    :func:`average_blocks`) is what the audit evaluates on neighbouring block outputs."""
    k, d = centre.shape
    mech = ledger.record(
        noise_mechanism(k, d, n_block, epsilon, r, rule),
        "averaged block centroids (k·d coordinates)",
    )
    out = mech.add(centre, mech.noise(rng, centre.shape))
    out = release(
        mech,
        "averaged block centroids (k·d coordinates)",
        out,
        query or (lambda outputs: average_blocks(outputs, "lex0", r)),
    )
    return out


def gkm_aggregate(
    outputs: np.ndarray,
    epsilon: float,
    rng: np.random.Generator,
    align_rule: str = "lex0",
    r: float = 1.0,
) -> DPResult:
    """GkM's private step alone, on given block outputs (l, k, d): average, then Eq.-3
    noise. Neighbouring relation: one block output replaced by any other in [-r, r]^{k·d}
    (GUPT's argument; one tuple lies in one block). This is what ``dpcluster audit`` checks
    white-box at worst-case block outputs."""
    ledger = Ledger()
    out = noisy_average(
        average_blocks(outputs, align_rule, r),
        len(outputs),
        epsilon,
        rng,
        ledger,
        r,
        query=lambda o: average_blocks(o, align_rule, r),
    )
    return DPResult(out, ledger, 0, {"blocks": len(outputs)})


def noise_diagnostic(
    best: np.ndarray,
    N: int,
    epsilon: float,
    block: str | int,
    rng: np.random.Generator,
    r: float = 1.0,
    noise: str = "eq3",
) -> np.ndarray:
    """Figure 3's "Noise": the baseline's best centroids (k, d) plus GkM's noise (``noise``
    rule) for the l implied by ``block``. Not private (the centroids are not); a diagnostic
    of noise size."""
    k, d = best.shape
    l = n_blocks(N, block_size(block, N, k))
    return best + noise_mechanism(k, d, l, epsilon, r, noise).noise(rng, best.shape)


__all__ = [
    "ALIGN",
    "MINIT",
    "NOISE_RULES",
    "align",
    "average_blocks",
    "block_initial_records",
    "block_size",
    "gkm",
    "gkm_aggregate",
    "n_blocks",
    "noisy_average",
    "noise_diagnostic",
    "noise_mechanism",
    "sample_and_aggregate",
]
