"""``LDPKMeans``: one-round local-DP k-means as a scikit-learn estimator
(docs/methods.md L1–L3; docs/api.md)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from . import data
from .estimator_checks import _check_bounds, _rng
from .ldp.one_round import grid_oracle_kmeans, input_perturbation_kmeans, one_round_kmeans
from .privacy import USER_EPSILON

METHODS = {
    "one_round": one_round_kmeans,
    "grid": grid_oracle_kmeans,
    "perturb": input_perturbation_kmeans,
}


class LDPKMeans(ClusterMixin, BaseEstimator):
    """k-means in which every record is its own user's one ε-LDP message.

    ``method``: ``"one_round"`` (Chang et al. ICML 2021, practical form), ``"grid"`` (an
    OLH histogram of a public grid, then weighted k-means) or ``"perturb"`` (Laplace input
    perturbation, then k-means). ``bounds``: the public box (lo, hi) of the records (None:
    their own min and max, which is not private: ``ledger_.bounds`` says so).

    After ``fit``: ``labels_`` (n,) each user's cluster (the user's own nearest centre,
    post-processing); ``cluster_centers_`` (k, d) in the data's units (None for
    ``"grid"``, whose centres live in the projected space: ``projected_centers_``);
    ``ledger_`` one pure ε-LDP message per user, neighbouring relation "any two records of
    one user".
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, *USER_EPSILON, closed="both")],
        "method": [StrOptions(set(METHODS))],
        "bounds": ["array-like", None],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self, n_clusters=8, epsilon=1.0, method="one_round", bounds=None, random_state=None
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.method = method
        self.bounds = bounds
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=np.float64)
        if self.bounds is None:
            Z, lo, hi = data.normalise(X, "data")
        else:
            _check_bounds(self.bounds, X.shape[1])
            Z, lo, hi = data.normalise(X, self.bounds)
        rng = _rng(self.random_state)
        users, public = rng.spawn(2)
        res = METHODS[self.method](Z, int(self.n_clusters), float(self.epsilon), users, public)
        half = np.where(hi > lo, (hi - lo) / 2.0, 0.0)
        self.labels_ = res.labels
        self.ledger_ = res.ledger
        if self.bounds is None:
            self.ledger_.bounds = "data"
        if res.space == "original":
            self.cluster_centers_ = (lo + hi) / 2.0 + res.centres * half
            self.projected_centers_ = res.info.get("projected_centres")
        else:
            self.cluster_centers_ = None
            self.projected_centers_ = res.centres
        return self

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_

    def predict(self, X):
        """The nearest released centre of each record (the user's own post-processing);
        ``"grid"`` has no centres in the data's units and cannot predict."""
        check_is_fitted(self, "labels_")
        if self.cluster_centers_ is None:
            raise ValueError("method 'grid' releases centres in the projected space only")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        d2 = ((X[:, None, :] - self.cluster_centers_[None]) ** 2).sum(axis=2)
        return np.argmin(d2, axis=1)
