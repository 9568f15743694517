"""What the PLD ledger buys (docs/privacy.md, "PLD"; docs/utility.md, "(ε, δ)").

Three tables. First, the noise: per (ε, δ), the σ of a Gaussian DPLloyd when its ρ comes
from the privacy-loss distribution over the σ the zCDP conversion (CKS Prop. 12) gives,
and the ε each route books for the issue's reference events. Second, the utility: per
(set, method, ε) at δ = 1e-6, the mean over seeds of the cost over non-private k-means'
(scikit-learn, n_init = 10), calibrated by the PLD and by the older routes alone (the
PLD's calibration switched off, which is what dpcluster did before), and their ratio.
Third (``--speed``), the seconds to build the Gaussian group's PLD and read its ε at δ
beside one pure release, by ``pld.gaussian_pld`` and by dp-accounting's own
``from_gaussian_mechanism`` (the reference, timed in the same run), and their ratio.

    python scripts/bench_pld.py --battery ../shared/battery [--sets iris,uci/wine]
        [--methods dplloyd,dplloyd_improved,auto] [--epsilons 0.5,1,2] [--seeds 6]
    python scripts/bench_pld.py --speed
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from contextlib import nullcontext
from pathlib import Path
from unittest import mock

import numpy as np
from sklearn.cluster import KMeans

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_selection import load  # noqa: E402
from bench_utility import cost  # noqa: E402

from dpcluster import DPKMeans  # noqa: E402
from dpcluster.algorithms import methods  # noqa: E402
from dpcluster.privacy import pld  # noqa: E402
from dpcluster.privacy.gaussian import zcdp_budget, zcdp_epsilon  # noqa: E402
from dpcluster.privacy.rdp import composed_epsilon as rdp_epsilon  # noqa: E402


def noise_table(epsilons, deltas) -> None:
    print("| ε | δ | σ (PLD) / σ (zCDP) |")
    print("|---|---|---|")
    for delta in deltas:
        for eps in epsilons:
            rho_pld = methods.gaussian_budget(eps, delta)["zcdp"]
            print(f"| {eps:g} | {delta:g} | {math.sqrt(zcdp_budget(eps, delta) / rho_pld):.3f} |")
    print()
    print("| event at δ = 1e-6 | PLD | Rényi | zCDP conversion |")
    print("|---|---|---|---|")
    rows = [
        ("20 Gaussians, σ/Δ = 10", (), 20 / 200.0),
        ("21 pure at ε₀ = 1/21", (1 / 21,) * 21, 0.0),
        ("Gaussian σ/Δ = 5 + 21 pure at 0.05", (0.05,) * 21, 1 / 50.0),
    ]
    for name, pure, rho in rows:
        zc = math.fsum([*pure, zcdp_epsilon(rho, 1e-6) if rho else 0.0])
        print(
            f"| {name} | {pld.composed_epsilon(pure, rho, 1e-6):.3f} | "
            f"{rdp_epsilon(pure, rho, 1e-6):.3f} | {zc:.3f} |"
        )
    print()


def utility_table(root, sets, method_names, epsilons, seeds, delta) -> None:
    print("| set | method | ε | PLD | older routes | PLD / older |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for name in sets:
        X, k, domain = load(root, name)
        ref = KMeans(k, n_init=10, random_state=0).fit(X).inertia_
        for method in method_names:
            for eps in epsilons:
                got = {}
                for route in ("pld", "older"):
                    off = mock.patch.object(pld, "_largest_rho", lambda *a: 0.0)
                    with warnings.catch_warnings(), off if route == "older" else nullcontext():
                        warnings.simplefilter("ignore")
                        fits = [
                            DPKMeans(
                                k, epsilon=eps, delta=delta, method=method, random_state=s, **domain
                            ).fit(X)
                            for s in range(seeds)
                        ]
                    got[route] = float(np.mean([cost(X, f.cluster_centers_) / ref for f in fits]))
                ratio = got["pld"] / got["older"]
                ratios.append(ratio)
                print(
                    f"| {name} | {method} | {eps:g} | {got['pld']:.3f} | {got['older']:.3f} "
                    f"| {ratio:.3f} |",
                    flush=True,
                )
    print(f"\ngeometric mean PLD / older: {math.exp(np.mean(np.log(ratios))):.3f}")


def speed_table(rhos=(0.02, 0.5, 5.0, 20.0), pure=0.5, delta=1e-6, repeats=3) -> None:
    """Seconds per Gaussian PLD (built, composed with one pure release, ε read at δ)."""
    import time

    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    def timed(build, h) -> tuple[float, float]:
        best, eps = math.inf, math.nan
        for _ in range(repeats):
            start = time.perf_counter()
            total = build(h).compose(
                dpa_pld.from_privacy_parameters(
                    common.DifferentialPrivacyParameters(pure, 0.0),
                    value_discretization_interval=h,
                )
            )
            eps = total.get_epsilon_for_delta(delta)
            best = min(best, time.perf_counter() - start)
        return best, eps

    print("| ρ | grid step | s (dp-accounting) | s (gaussian_pld) | ratio | ε (theirs, ours) |")
    print("|---|---|---|---|---|---|")
    for rho in rhos:
        h = pld.grid_interval(rho, pure, pure)
        sigma = 1.0 / math.sqrt(2.0 * rho)

        def google(h, sigma=sigma):
            return dpa_pld.from_gaussian_mechanism(
                standard_deviation=sigma, value_discretization_interval=h
            )

        ref, eps_ref = timed(google, h)
        ours, eps_ours = timed(lambda h, rho=rho: pld.gaussian_pld(rho, h), h)
        print(
            f"| {rho:g} | {h:.2g} | {ref:.3f} | {ours:.3f} | {ref / ours:.1f} | "
            f"{eps_ref:.5f}, {eps_ours:.5f} |"
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--battery", default="../shared/battery")
    ap.add_argument("--sets", default="iris,uci/wine,uci/ecoli")
    ap.add_argument("--methods", default="dplloyd,dplloyd_improved,auto")
    ap.add_argument("--epsilons", default="0.5,1,2")
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--speed", action="store_true", help="only the PLD construction timing")
    args = ap.parse_args(argv)
    if args.speed:
        speed_table()
        return 0
    epsilons = [float(e) for e in args.epsilons.split(",")]
    noise_table(epsilons, (1e-6, 1e-9))
    utility_table(
        args.battery,
        args.sets.split(","),
        args.methods.split(","),
        epsilons,
        args.seeds,
        args.delta,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
