"""Lower bounds on ε from audit trials (docs/audit.md).

Both bounds split the trials of each side in two: the first half chooses the test (its
threshold, and for the black-box bound its direction and score), the second half alone
certifies it, so choosing cannot inflate what is certified.

* Black-box (:func:`blackbox_epsilon`): a threshold test ``score ≥ c`` on the outputs.
  (ε, δ)-DP requires ``P_D'(S) ≤ e^ε P_D(S) + δ`` for every event S, so with one-sided
  Clopper–Pearson bounds (each from a two-sided 95 % interval, jointly ≥ 95 %)
  ``ε_lb = ln((P_D'(S)_low − δ) / P_D(S)_high)``. With n held-out trials P_D(S)_high is at
  least about 3.7/n, so ε_lb can never exceed about ln(n/3.7): :func:`blackbox_ceiling`.
* White-box (:func:`whitebox_epsilon`): ``L = ln(dP_D/dP_D')`` of a run's whole transcript,
  computed exactly. For ``S = {L ≥ τ}``, ``P_D'(S) ≤ e^{−τ} P_D(S)`` holds exactly, so
  (ε, δ)-DP would need ``P_D(S)(1 − e^{ε−τ}) ≤ δ``; a lower confidence bound p on P_D(S)
  therefore certifies a violation of every ε < ``τ + ln(1 − δ/p)``. That is ε_lb, with no
  ln(n) ceiling.
"""

from __future__ import annotations

import math

import numpy as np

CONFIDENCE = 0.95


def clopper_pearson(k, n: int, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """Exact two-sided binomial interval(s) for k successes in n trials (vectorised over k);
    the same numbers as ``scipy.stats.binomtest(k, n).proportion_ci(method="exact")``."""
    from scipy.stats import beta

    k = np.asarray(k, dtype=float)
    a = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore"):
        low = np.where(k > 0, beta.ppf(a, k, n - k + 1), 0.0)
        high = np.where(k < n, beta.ppf(1.0 - a, k + 1, n - k), 1.0)
    return low, high


def _halves(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First half chooses, second half certifies (the trials are i.i.d., order is random)."""
    h = len(x) // 2
    return x[:h], x[h:]


def blackbox_ceiling(n_trials: int) -> float:
    """The largest black-box ε_lb that n trials per side can certify: a test that separates
    the held-out halves perfectly gives ``ln(P_low(all) / P_high(none))`` ≈ ln(n_test/3.7)."""
    n_test = n_trials - n_trials // 2
    low, _ = clopper_pearson(n_test, n_test)
    _, high = clopper_pearson(0, n_test)
    return float(math.log(low / high))


def _threshold_bound(pos: np.ndarray, neg: np.ndarray, c: np.ndarray, delta: float) -> np.ndarray:
    """ln((P_pos(score ≥ c)_low − δ)/P_neg(score ≥ c)_high) for every threshold c."""
    pos_s, neg_s = np.sort(pos), np.sort(neg)
    k_pos = len(pos) - np.searchsorted(pos_s, c, side="left")
    k_neg = len(neg) - np.searchsorted(neg_s, c, side="left")
    low, _ = clopper_pearson(k_pos, len(pos))
    _, high = clopper_pearson(k_neg, len(neg))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(low > delta, np.log((low - delta) / high), -np.inf)


def blackbox_epsilon(score_d, score_d2, delta: float = 0.0) -> float:
    """95 % lower bound on ε from scalar scores of trials on D and D' (n each), or from
    a list of such (score_d, score_d2) pairs, several statistics of the same trials.

    Every statistic is tried in both directions (``score ≥ c`` more likely under D', or
    ``score ≤ c`` more likely under D); the statistic, direction and c that give the
    largest bound on the first halves are certified on the second halves, so choosing
    among them costs no confidence. Returns max(0, ε_lb).
    """
    pairs = [(score_d, score_d2)] if np.ndim(score_d) == 1 else list(zip(score_d, score_d2))
    best, choice = -np.inf, None
    for which, (s, s2) in enumerate(pairs):
        d_fit, _ = _halves(np.asarray(s, float))
        d2_fit, _ = _halves(np.asarray(s2, float))
        for sign, pos, neg in ((1.0, d2_fit, d_fit), (-1.0, -d_fit, -d2_fit)):
            c = np.unique(np.concatenate([pos, neg]))
            bounds = _threshold_bound(pos, neg, c, delta)
            i = int(np.argmax(bounds))
            if bounds[i] > best:
                best, choice = bounds[i], (which, sign, c[i])
    if choice is None:
        return 0.0
    which, sign, c = choice
    _, d_test = _halves(np.asarray(pairs[which][0], float))
    _, d2_test = _halves(np.asarray(pairs[which][1], float))
    pos, neg = (d2_test, d_test) if sign > 0 else (-d_test, -d2_test)
    return max(0.0, float(_threshold_bound(pos, neg, np.array([c]), delta)[0]))


def discrete_epsilon(labels_d, labels_d2) -> float:
    """95 % lower bound on ε from a discrete output (the method run, its iteration count,
    the ledger's shape): the event {Y = v} and its direction (more likely under D' or
    under D) are chosen on the first halves and certified on the second halves with
    Clopper–Pearson, as :func:`blackbox_epsilon` does. Returns max(0, ε_lb)."""
    a = np.asarray(labels_d, dtype=object).astype(str)
    b = np.asarray(labels_d2, dtype=object).astype(str)
    values, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    ca, cb = codes[: len(a)], codes[len(a) :]
    (a_fit, a_test), (b_fit, b_test) = _halves(ca), _halves(cb)

    def bound(pos, neg, v) -> float:
        low, _ = clopper_pearson(int((pos == v).sum()), len(pos))
        _, high = clopper_pearson(int((neg == v).sum()), len(neg))
        return math.log(low / high) if low > 0 else -math.inf

    best, choice = -math.inf, None
    for v in range(len(values)):
        for side in (0, 1):
            pos, neg = (b_fit, a_fit) if side == 0 else (a_fit, b_fit)
            value = bound(pos, neg, v)
            if value > best:
                best, choice = value, (v, side)
    if choice is None or len(a_test) == 0 or len(b_test) == 0:
        return 0.0
    v, side = choice
    pos, neg = (b_test, a_test) if side == 0 else (a_test, b_test)
    return max(0.0, bound(pos, neg, v))


def whitebox_epsilon(llr: np.ndarray, delta: float = 0.0, min_hits: int = 10) -> float:
    """95 % lower bound on ε from exact log-likelihood ratios ``ln(dP_D/dP_D')`` of n
    trials drawn from D.

    τ is chosen on the first half among values reached by at least ``min_hits`` of its
    trials (so the second half is likely to reach it too), maximising
    ``τ + ln(1 − δ/p_low)``; the second half's Clopper–Pearson lower bound p_low on
    P_D(L ≥ τ) then certifies ``ε_lb = τ + ln(1 − δ/p_low)``. Returns max(0, ε_lb).
    """
    fit, test = _halves(np.asarray(llr, float))
    if len(fit) == 0 or len(test) == 0:
        return 0.0
    tau = np.sort(fit)[::-1]  # candidate τ: the j-th largest is reached by j + 1 trials
    hits = np.arange(1, len(tau) + 1)
    keep = hits >= min(min_hits, len(tau))
    tau, hits = tau[keep], hits[keep]
    low, _ = clopper_pearson(hits, len(fit))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(low > delta, tau + np.log1p(-delta / low), -np.inf)
    i = int(np.argmax(value))
    if not np.isfinite(value[i]):
        return 0.0
    t = tau[i]
    low_test, _ = clopper_pearson(int((test >= t).sum()), len(test))
    if low_test <= delta:
        return 0.0
    return max(0.0, float(t + math.log1p(-delta / float(low_test))))
