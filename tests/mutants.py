"""A planted-bug corpus for the replay audit: one plugin, ``planted_kmeans``, a small private
k-means written as a user would write one with dpcluster's mechanisms and release hook,
and :data:`BUGS`, each a one-line change a real implementation could make.

The clean algorithm, per run (neighbouring relation: add/remove one record in [-1, 1]^d):
Ñ by Laplace (ε/10, sensitivity 1); a clipping radius τ by the exponential mechanism (ε/10,
loss |#{‖x‖ ≤ τ} − 0.9Ñ|, sensitivity 1); then T = 3 Lloyd steps from fixed public
centres, each spending ε_t = 0.8ε/T: the k counts at c·u (L1 sensitivity 1) and each
coordinate's k sums at u (L1 sensitivity min(τ, 1)), c = 2, u = ε_t/(c + d), or (δ > 0)
all k·d sums as one Gaussian release of L2 sensitivity min(τ, √d). The public centres put
one cluster where the audit's D has no record and D + (1, …, 1) has one.

The corpus is what ``tests/test_replay.py`` replays; ``scripts/replay_corpus.py`` also
runs the statistical audit on it for docs/audit.md's table.
"""

from __future__ import annotations

import json
import math

import numpy as np

from dpcluster.plugins import Param, algorithm
from dpcluster.privacy import ExponentialMechanism, LaplaceMechanism, Ledger, release, spent
from dpcluster.privacy.gaussian import GaussianMechanism
from dpcluster.privacy.rdp import largest_rho

#: bug name -> the one line it changes, as the docs' table shows it
BUGS = {
    "swapped_split": "eps_coord, eps_count = c * u, u  (the ledger books the documented split)",
    "iterations_from_n": "T = max(2, int(eps * N / 50))  (the exact N)",
    "empty_cluster_exact": "ok = counts > 0  (an empty cluster held on the exact count)",
    "scalar_noise": "noise = mech.noise(rng, 1)  (one draw for a vector)",
    "count_sensitivity_halved": "LaplaceMechanism(eps_count, 0.5)",
    "coordinate_sensitivity_halved": "LaplaceMechanism(eps_coord, 0.5 * sens)",
    "gaussian_sensitivity_over_sqrt_d": "GaussianMechanism(rho, l2 / sqrt(d), ...)",
    "clip_not_applied": "Xc = X",
    "delta_not_counted": "ledger.record(LaplaceMechanism(share, l2))  (booked as pure)",
    "float_laplace": "noise = rng.laplace(0, mech.scale, k)",
    "generator_not_passed": "np.random.default_rng().  (a fresh, unseeded generator)",
    "generator_fixed": "np.random.default_rng(0)  (a fixed generator)",
    "numpy_global": "np.random.laplace(0, mech.scale, k)",
    "release_bypasses_hook": "noisy_c = mech.add(counts, noise)  (not announced)",
    "exact_count_divisor": "C = noisy_s / counts  (the exact counts)",
    "entry_without_noise": "noisy[0] = sums[0]",
    "radius_candidates_from_data": "radii = np.linspace(0.1, norms.max(), 16)",
    "em_sensitivity_halved": "ExponentialMechanism(eps_tau, 0.5)",
    "record_in_two_clusters": "counts += bincount(second nearest)",
    "ledger_understates": "ledger.record(LaplaceMechanism(u / 2, sens))",
    "init_from_data": "C = Xc[:k]  (centres from the records)",
    "radius_exact": "tau = norms.max()  (τ read exactly)",
}

#: the bugs that need the Gaussian branch (δ > 0)
GAUSSIAN_BUGS = {"gaussian_sensitivity_over_sqrt_d", "delta_not_counted"}
#: c: a count's share of an iteration over one coordinate's
COUNT_WEIGHT = 2.0
ITERATIONS = 3


def _check_bug(value):
    return None if value in ("", *BUGS) else f"unknown bug {value!r}"


def _nearest(X, C):
    return np.argmin(((X[:, None, :] - C[None]) ** 2).sum(axis=2), axis=1)


def _clip(X, tau):
    norms = np.sqrt((X**2).sum(axis=1))
    return X * np.minimum(1.0, tau * (1 - 1e-12) / np.maximum(norms, 1e-300))[:, None]


def _stats(X, C, k, tau, bug):
    """(counts (k,), sums (k, d)) of the records X clipped to τ."""
    Xc = X if bug == "clip_not_applied" else _clip(X, tau)
    labels = _nearest(Xc, C)
    counts = np.bincount(labels, minlength=k).astype(float)
    if bug == "record_in_two_clusters":
        far = np.argsort(((Xc[:, None, :] - C[None]) ** 2).sum(axis=2), axis=1)[:, 1]
        counts += np.bincount(far, minlength=k)
    sums = np.stack([np.bincount(labels, weights=Xc[:, j], minlength=k) for j in range(X.shape[1])])
    return counts, sums.T


def _noise(mech, rng, shape, bug):
    if bug == "float_laplace":
        return rng.laplace(0, mech.scale, shape)
    if bug == "generator_not_passed":
        return mech.noise(np.random.default_rng(), shape)
    if bug == "generator_fixed":
        return mech.noise(np.random.default_rng(0), shape)
    if bug == "numpy_global":
        return np.random.laplace(0, mech.scale, shape)
    return mech.noise(rng, shape)


def planted_fit(X, k, eps, delta, rng, bug=""):
    """One run: (centres (k, d), ledger). ``bug``: one of :data:`BUGS`, or "" (clean)."""
    X = np.asarray(X, dtype=np.float64)
    N, d = X.shape
    ledger = Ledger(delta=delta)
    count_rng, tau_rng, noise_rng = rng.spawn(3)
    n_mech = ledger.record(LaplaceMechanism(0.1 * eps, 1.0), "record count")
    n_noisy = n_mech.add(N, n_mech.noise(count_rng, 1))
    n_noisy = float(release(n_mech, "record count", n_noisy, lambda D: np.array([len(D)]))[0])
    norms = np.sqrt((X**2).sum(axis=1))
    radii = np.linspace(0.1, math.sqrt(d), 16)
    if bug == "radius_candidates_from_data":
        radii = np.linspace(0.1, norms.max(), 16)
    em = ExponentialMechanism(0.1 * eps, 0.5 if bug == "em_sensitivity_halved" else 1.0)
    ledger.record(em, "clip radius")

    def loss(D, radii=radii):
        inside = (np.sqrt((np.asarray(D) ** 2).sum(axis=1))[:, None] <= radii).sum(axis=0)
        return np.abs(inside - 0.9 * n_noisy)

    i = release(em, "clip radius", em.select(tau_rng, loss(X)), loss, rng=tau_rng)
    tau = float(norms.max()) if bug == "radius_exact" else float(radii[i])
    C = np.array([[0.2] * d, [0.99] * d])[:k]
    if bug == "init_from_data":
        C = _clip(X, tau)[:k].copy()
    T = max(2, int(eps * N / 50)) if bug == "iterations_from_n" else ITERATIONS
    eps_t = 0.8 * eps / T
    u = eps_t / (COUNT_WEIGHT + d)
    eps_count, eps_coord = COUNT_WEIGHT * u, u
    if bug == "swapped_split":
        eps_coord, eps_count = COUNT_WEIGHT * u, u
    sens = min(tau, 1.0)
    gaussian = delta > 0
    if gaussian:
        pure = [0.1 * eps, 0.1 * eps] + [COUNT_WEIGHT * u] * T
        rho = largest_rho(tuple(pure), eps, delta) / T
        l2 = min(tau, math.sqrt(d))
        declared = l2 / math.sqrt(d) if bug == "gaussian_sensitivity_over_sqrt_d" else l2
        gauss = GaussianMechanism(rho, declared, k * d, delta)
    for it in range(T):
        counts, sums = _stats(X, C, k, tau, bug)
        mech = LaplaceMechanism(eps_count, 0.5 if bug == "count_sensitivity_halved" else 1.0)
        ledger.record(LaplaceMechanism(COUNT_WEIGHT * u, 1.0), "cluster counts", it)
        noisy_c = mech.add(counts, _noise(mech, noise_rng, k, bug))
        if bug != "release_bypasses_hook":
            noisy_c = release(
                mech, "cluster counts", noisy_c, lambda D, C=C: _stats(D, C, k, tau, bug)[0]
            )
        if gaussian:
            if bug == "delta_not_counted":
                share = (eps - sum(pure)) / T  # booked as pure ε at its share, δ dropped
                ledger.record(LaplaceMechanism(share, l2, k * d), "sums", it)
            else:
                ledger.record(gauss, "sums", it)
            noisy_s = gauss.add(sums, gauss.noise(noise_rng, sums.shape))
            noisy_s = release(gauss, "sums", noisy_s, lambda D, C=C: _stats(D, C, k, tau, bug)[1])
        else:
            columns = []
            for j in range(d):
                half = bug == "coordinate_sensitivity_halved"
                mech = LaplaceMechanism(eps_coord, 0.5 * sens if half else sens)
                booked = u / 2 if bug == "ledger_understates" else u
                ledger.record(LaplaceMechanism(booked, sens), "coordinate sums", it)
                shape = 1 if bug == "scalar_noise" else k
                noisy = mech.add(sums[:, j], _noise(mech, noise_rng, shape, bug))
                if bug == "entry_without_noise":
                    noisy[0] = sums[0, j]
                noisy = release(
                    mech,
                    "coordinate sums",
                    noisy,
                    lambda D, C=C, j=j: _stats(D, C, k, tau, bug)[1][:, j],
                )
                columns.append(noisy)
            noisy_s = np.stack(columns, axis=1)
        ok = noisy_c > 1.0
        if bug == "empty_cluster_exact":
            ok = counts > 0
        divisor = counts if bug == "exact_count_divisor" else noisy_c
        means = np.clip(noisy_s / np.maximum(divisor, 1.0)[:, None], -1, 1)
        C = np.where(ok[:, None], means, C)
    return C, ledger


@algorithm(
    private=True,
    summary="planted-bug corpus (tests/mutants.py): a small private k-means",
    repeat=1,
    params={
        "bug": Param("", str, "the planted bug (tests/mutants.py BUGS), or '' for none"),
        "delta": Param(0.0, float, "δ: > 0 releases the sums with Gaussian noise", minimum=0.0),
    },
)
def planted_kmeans(ctx):
    bug, delta = ctx.params["bug"], float(ctx.params["delta"])
    if problem := _check_bug(bug):
        raise ValueError(problem)
    rows, ledger = [], None
    for rep in range(ctx.repeat):
        rng = ctx.streams.child("run", rep)
        C, ledger = planted_fit(ctx.dataset.X, ctx.k, ctx.epsilon, delta, rng, bug)
        rows.append(
            {
                "init": 0,
                "rep": rep,
                "nicv": 0.0,
                **spent(ledger),
                "centroids": json.dumps(C.tolist()),
            }
        )
    return rows, ledger
