"""An out-of-tree algorithm for dpcluster: DPLloyd with a chosen count/sum budget split.

Each of t iterations spends ε/t: ``count_share`` of it on the k noisy counts (L1
sensitivity 1) and the rest on the k·d noisy coordinate sums (L1 sensitivity d, data in
[-1, 1]^d). Neighbouring relation: add/remove one record. Basic composition gives ε.
"""

import json

import numpy as np

from dpcluster.kernels import cluster_stats
from dpcluster.plugins import Param, algorithm
from dpcluster.privacy import LaplaceMechanism, Ledger, release, spent


@algorithm(
    private=True,
    summary="DPLloyd with a chosen count/sum budget split",
    repeat=20,
    params={
        "iterations": Param(5, int, "t, iterations (ε/t each)", minimum=1),
        "count_share": Param(
            0.3, float, "share of each iteration's ε for the counts", minimum=1e-6
        ),
    },
)
def split_dplloyd(ctx):
    X, d = ctx.dataset.X, ctx.dataset.d
    t, share = ctx.params["iterations"], ctx.params["count_share"]
    inits = ctx.init_sets()
    rows, ledger = [], None
    for rep in range(ctx.repeat):
        rng = ctx.streams.child("run", rep)
        C = inits[rep % len(inits)].copy()
        ledger = Ledger()
        counts_mech = LaplaceMechanism(ctx.epsilon / t * share, 1.0)
        sums_mech = LaplaceMechanism(ctx.epsilon / t * (1 - share), float(d))
        for it in range(t):
            counts, sums = cluster_stats(X, C[None])
            ledger.record(counts_mech, "counts", it)
            ledger.record(sums_mech, "sums", it)
            noisy_c = counts_mech.add(counts, counts_mech.noise(rng, counts.shape))
            noisy_s = sums_mech.add(sums, sums_mech.noise(rng, sums.shape))
            # go on with what release() returns: the replay audit hands back recorded values
            state = C[None].copy()
            noisy_c = release(
                counts_mech, "counts", noisy_c, lambda D, S=state: cluster_stats(D, S)[0]
            )
            noisy_s = release(sums_mech, "sums", noisy_s, lambda D, S=state: cluster_stats(D, S)[1])
            ok = noisy_c[0] > 0
            C = np.where(
                ok[:, None], np.clip(noisy_s[0] / np.where(ok, noisy_c[0], 1)[:, None], -1, 1), C
            )
        inertia = ((X[:, None, :] - C[None]) ** 2).sum(axis=2).min(axis=1).mean()
        rows.append(
            {
                "init": rep % len(inits),
                "rep": rep,
                "nicv": float(inertia),
                "iterations": t,
                **spent(ledger),
                "centroids": json.dumps(np.round(C, 6).tolist()),
            }
        )  # the output
    return rows, ledger
