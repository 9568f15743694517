"""The audit's targets for PE-means and PE-Lloyd (dpcluster/algorithms/pe_means.py,
pe_lloyd.py): the registry's fits with a few generations, in pure ε and with δ."""

from __future__ import annotations

import functools

from .target import Target
from .tree_targets import GAUSSIAN_DELTA, PE_GENERATIONS, pe_one

#: what each target releases
NOTES = {
    ("pe_means", False): "Ñ and 3 Laplace vote histograms (sensitivity 1)",
    ("pe_means", True): "Ñ and 3 Gaussian vote histograms in zCDP; bounds at δ",
    ("pe_lloyd", False): "Ñ, 3 vote histograms, τ, 2 clipped Laplace steps",
    ("pe_lloyd", True): "Ñ, τ, 3 Gaussian vote histograms, 2 clipped steps; bounds at δ",
}


def _gaussian(per_trial, k, method, X, epsilon, rng, n, trial=None, delta=GAUSSIAN_DELTA):
    return per_trial(pe_one(k, method, delta))(X, epsilon, rng, n, trial)


def pe_targets(central: dict, pair, per_trial) -> list[Target]:
    """Four targets: each method in pure ε and with δ, on the central pair ``pair``;
    ``per_trial`` wraps a one-trial function into a target's run."""
    k = int(central["k"])
    out = []
    for method in ("pe_means", "pe_lloyd"):
        for gaussian in (False, True):
            params = {**central, "generations": PE_GENERATIONS, "n_init": 1}
            run = (
                functools.partial(_gaussian, per_trial, k, method)
                if gaussian
                else per_trial(pe_one(k, method))
            )
            out.append(
                Target(
                    name=method + (" (gaussian)" if gaussian else ""),
                    covers=(method,),
                    kind="central",
                    params={**params, "delta": GAUSSIAN_DELTA} if gaussian else params,
                    trials=500,
                    run=run,
                    pair=pair,
                    per_trial=True,
                    takes_delta=gaussian,
                    note=NOTES[method, gaussian],
                )
            )
    return out
