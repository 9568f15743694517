"""PGkM (PrivGene k-means) and its non-private twin Gene (docs/methods.md A5).

A *parameter* ω is one candidate solution: k centroids as a flat k·d vector in [-r, r].
Each of ``r_it`` iterations scores the whole pool with one batched SSE kernel call, selects
m' parents, and refills the pool with one-point-crossover children, each mutated in one
coordinate by ``U[-δ_i, δ_i]``, ``δ_i = r·0.7^(i-1)``.

Privacy argument (PGkM). Neighbouring relation: add/remove one tuple. The fitness
``f(ω) = SSE(ω; D)`` changes by at most the squared domain diameter ``Δf = d(2r)²`` (= 4d for
r = 1) when one tuple is added or removed. Each selection is an exponential mechanism at
``ε_sel = ε/(m'·r_it)`` with that sensitivity, and the ``m'·r_it`` selections compose
sequentially to ε. Candidate generation (crossover, mutation) uses only the previously
selected parameters and fresh randomness, so it is post-processing; the output, the first
parameter selected in the final iteration, costs nothing extra. The standard exponential
mechanism stands in for PrivGene's enhanced one (docs/methods.md A5 ASSUMPTION).
Gene replaces each selection by the deterministic choice of the m' fittest candidates.
The fitness is computed in the expanded form (:func:`~dpcluster.kernels.sse_expanded`) with
each record's term rounded to 2^-30 of Δf and the terms summed exactly: one more record moves
a fitness by its own term (≤ Δf plus a rounding) and one final rounding, below the
exponential mechanism's floating-point allowance for up to 2^32 records (docs/privacy.md,
"The exponential mechanism"), whatever the order of the sums.
"""

from __future__ import annotations

import math

import numpy as np

from ..kernels import nicv, sse_expanded
from ..privacy import ExponentialMechanism, Ledger, release
from ..privacy.budget import within
from . import checks
from .dplloyd import DPResult


def fitness_sensitivity(d: int, r: float = 1.0) -> float:
    """Δf = d·(2r)², the largest change of SSE when one tuple in [-r, r]^d is added/removed."""
    return d * (2.0 * r) ** 2


def fitness_step(d: int, r: float = 1.0) -> float:
    """The power of two each record's fitness term is rounded to: 2^(⌊log2 Δf⌋ − 30)."""
    return 2.0 ** (math.floor(math.log2(fitness_sensitivity(d, r))) - 30)


def _children(
    parents: np.ndarray, n_children: int, rng: np.random.Generator, delta: float, r: float
) -> np.ndarray:
    """One-point crossover of randomly paired parents (m', L), then one mutation each."""
    m_sel, L = parents.shape
    out = np.empty((n_children, L))
    filled = 0
    while filled < n_children:
        order = rng.permutation(m_sel)
        for a, b in zip(order[0::2], order[1::2]):
            cut = int(rng.integers(1, L)) if L > 1 else 0
            for child in (
                np.concatenate([parents[a, :cut], parents[b, cut:]]),
                np.concatenate([parents[b, :cut], parents[a, cut:]]),
            ):
                if filled < n_children:
                    out[filled] = child
                    filled += 1
        if m_sel < 2:  # nothing to pair: clone
            out[filled:] = parents[0]
            filled = n_children
    coord = rng.integers(0, L, size=n_children)
    out[np.arange(n_children), coord] += rng.uniform(-delta, delta, size=n_children)
    return np.clip(out, -r, r)


def genetic_kmeans(
    X: np.ndarray,
    k: int,
    rng: np.random.Generator,
    epsilon: float | None,
    pool: int = 200,
    selected: int = 10,
    iterations: int = 8,
    decay: float = 0.7,
    r: float = 1.0,
    trace: bool = False,
) -> DPResult:
    """PGkM (``epsilon`` finite) or Gene (``epsilon=None``).

    X (N, d) in [-r, r]^d. ``pool`` m candidates, ``selected`` m' parents per iteration,
    ``iterations`` r_it, mutation width ``r·decay^(i-1)`` at iteration i.
    Returns DPResult(centroids (k, d), ledger, r_it, info); with ``trace`` info["trace"] is
    the NICV (r_it,) of the first selected parameter of every iteration.
    """
    X = checks.points(X, r)
    N, d = X.shape
    L = k * d
    if selected > pool:
        raise ValueError(f"selected (m'={selected}) must not exceed pool (m={pool})")
    ledger = Ledger()
    mech = None
    if epsilon is not None:
        rounds = selected * iterations  # exact sum of the rounds' ε at most ε
        per = within(epsilon, [epsilon / rounds], rounds)[0]
        mech = ExponentialMechanism(per, fitness_sensitivity(d, r))
    cands = rng.uniform(-r, r, size=(pool, L))
    step = fitness_step(d, r)
    nicv_trace = []
    best = cands[0]
    for it in range(iterations):
        f = sse_expanded(X, cands.reshape(pool, k, d), step)  # one batched call for the pool
        if mech is None:
            chosen = list(np.argsort(f, kind="stable")[:selected])
        else:
            remaining = np.arange(pool)
            chosen = []
            for _ in range(selected):
                i = mech.select(rng, f[remaining])
                ledger.record(mech, "select a parameter by SSE fitness", round=it)
                i = release(
                    mech,
                    "select a parameter by SSE fitness",
                    i,
                    lambda data, pool=cands[remaining]: sse_expanded(
                        data, pool.reshape(-1, k, d), step
                    ),
                    rng=rng,
                )
                chosen.append(int(remaining[i]))
                remaining = np.delete(remaining, i)
        parents = cands[chosen]
        best = parents[0]
        if trace:
            nicv_trace.append(float(nicv(X, best.reshape(k, d))))  # exact, not the fitness
        if it < iterations - 1:
            kids = _children(parents, pool - selected, rng, r * decay**it, r)
            cands = np.concatenate([parents, kids])
    info = {"trace": nicv_trace} if trace else {}
    return DPResult(best.reshape(k, d).copy(), ledger, iterations, info)
