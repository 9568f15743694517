"""scikit-learn-style estimators over dpcluster's algorithms.

:class:`DPKMeans` fits one private k-means run on raw data: it scales the records into
[-1, 1]^d with public ``bounds`` (docs/privacy.md; without bounds it uses the data's own
and warns that this leaks), runs the chosen algorithm, and reports the centres in the
data's units with the run's ledger. :class:`DPBVEncoder` is Paper B's DPBV encoding as a
transformer, and :func:`dpbv_distances` turns encodings into the debiased distance matrix
that scikit-learn's DBSCAN and AgglomerativeClustering accept with
``metric="precomputed"``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from . import data
from .algorithms.dplloyd import dplloyd, dplloyd_improved
from .algorithms.eugkm import eugkm
from .algorithms.gkm import gkm
from .algorithms.hybrid import hybrid
from .algorithms.pgkm import genetic_kmeans
from .data import sphere_packing
from .kernels import nicv
from .privacy import LOCAL, Ledger

METHODS = ("dplloyd", "dplloyd_improved", "eugkm", "hybrid", "gkm", "pgkm")


def _rng(random_state) -> np.random.Generator:
    """A generator from ``random_state``: None gives fresh OS entropy (what a real private
    release should use); an int or Generator makes the run reproducible."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    return np.random.default_rng(random_state)


class DPKMeans(ClusterMixin, BaseEstimator):
    """Differentially private k-means (Paper A's algorithms) with scikit-learn's vocabulary.

    Parameters
    ----------
    n_clusters : int, k.
    epsilon : float, the total privacy budget ε of the fit (central DP, add/remove one
        record; docs/privacy.md).
    method : one of ``"dplloyd"`` (A1), ``"dplloyd_improved"`` (A2), ``"eugkm"`` (A3),
        ``"hybrid"`` (A7), ``"gkm"`` (A4), ``"pgkm"`` (A5).
    bounds : ``(lo, hi)``, scalars or one value per feature: the public domain of the data.
        None takes the data's own min and max (not private; warns).
    random_state : None (fresh entropy), int or Generator.
    method_params : dict of the method's own parameters (``dpcluster list`` shows them,
        e.g. ``{"iterations": 5}`` for dplloyd, ``{"theta": 10}`` for eugkm).

    Attributes
    ----------
    cluster_centers_ : (k, d) centres in the data's units.
    labels_ : (N,) nearest centre of each training record, in the scaled space the
        algorithm works in.
    inertia_ : sum of squared distances to the assigned centres, in the data's units.
    nicv_ : the paper's NICV of the fit on the scaled training data.
    n_iter_ : iterations the method ran.
    ledger_ : the :class:`~dpcluster.privacy.Ledger` of the fit; ``ledger_.total_epsilon``
        is what holds.
    bounds_ : (lo, hi) arrays used for scaling.
    """

    def __init__(
        self,
        n_clusters=8,
        epsilon=1.0,
        method="dplloyd",
        bounds=None,
        random_state=None,
        method_params=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.method = method
        self.bounds = bounds
        self.random_state = random_state
        self.method_params = method_params

    def _scale(self, X) -> np.ndarray:
        lo, hi = self.bounds_
        span = np.where(hi > lo, hi - lo, 1.0)
        Z = 2.0 * (np.clip(X, lo, hi) - lo) / span - 1.0
        Z[:, hi <= lo] = 0.0
        return np.ascontiguousarray(Z)

    def fit(self, X, y=None):
        X = check_array(X, dtype=np.float64)
        if self.method not in METHODS:
            raise ValueError(f"method {self.method!r} is not one of {', '.join(METHODS)}")
        k = int(self.n_clusters)
        if not 1 <= k <= len(X):
            raise ValueError(f"n_clusters={self.n_clusters} must be in 1..{len(X)} (records)")
        if not (float(self.epsilon) > 0 and np.isfinite(float(self.epsilon))):
            raise ValueError(f"epsilon must be positive and finite, got {self.epsilon}")
        if self.bounds is None:
            _, lo, hi = data.normalise(X)  # warns: bounds from the data are not private
        else:
            _, lo, hi = data.normalise(X, self.bounds)
        self.bounds_ = (lo, hi)
        Z = self._scale(X)
        rng = _rng(self.random_state)
        params = dict(self.method_params or {})
        d, eps = Z.shape[1], float(self.epsilon)
        uniform = rng.uniform(-1.0, 1.0, size=(params.pop("init_sets", 30), k, d))
        if self.method == "dplloyd":
            res = dplloyd(Z, k, eps, uniform[0], rng, **params)
        elif self.method == "dplloyd_improved":
            res = dplloyd_improved(Z, k, eps, sphere_packing(k, d, rng)[0], rng, **params)
        elif self.method == "eugkm":
            res = eugkm(Z, k, eps, uniform, rng, **params)
        elif self.method == "hybrid":
            res = hybrid(Z, k, eps, uniform, rng, **params)[0]
        elif self.method == "gkm":
            res = gkm(Z, k, eps, rng, **params)
        else:
            res = genetic_kmeans(Z, k, rng, eps, **params)
        res.ledger.bounds = "public" if self.bounds is not None else "data"
        self.ledger_ = res.ledger
        self.n_iter_ = int(res.iterations)
        self._centres_scaled = np.asarray(res.centroids, dtype=np.float64)
        self.cluster_centers_ = lo + (self._centres_scaled + 1.0) * (hi - lo) / 2.0
        self.labels_ = self._nearest(Z)
        self.inertia_ = self._inertia(X, self.labels_)
        self.nicv_ = float(nicv(Z, self._centres_scaled))
        self.n_features_in_ = X.shape[1]
        return self

    def _nearest(self, Z) -> np.ndarray:
        d2 = ((Z[:, None, :] - self._centres_scaled[None, :, :]) ** 2).sum(axis=2)
        return np.argmin(d2, axis=1).astype(np.int64)

    def _inertia(self, X, labels) -> float:
        return float(((X - self.cluster_centers_[labels]) ** 2).sum())

    def predict(self, X):
        check_is_fitted(self, "cluster_centers_")
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is "
                f"expecting {self.n_features_in_} features as input."
            )
        return self._nearest(self._scale(X))

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_

    def score(self, X, y=None):
        """Negative inertia of X against the fitted centres (scikit-learn's KMeans sign)."""
        X = check_array(X, dtype=np.float64)
        return -self._inertia(X, self.predict(X))


class DPBVEncoder(TransformerMixin, BaseEstimator):
    """Paper B's DPBV encoding as a transformer (local DP; docs/privacy.md).

    ``fit`` draws the public codec (s centres per feature over ``bounds``, half-window t:
    None = half of each feature's range); ``transform`` returns each record's randomised
    encodings, packed (n, d, ceil(s/64)) uint64. ``ledger_`` books one report per record:
    Σ_feature m_max·ε holds, the paper claims d·ε.
    """

    def __init__(self, epsilon=2.0, s=1000, t=None, bounds=None, random_state=None):
        self.epsilon = epsilon
        self.s = s
        self.t = t
        self.bounds = bounds
        self.random_state = random_state

    def fit(self, X, y=None):
        from .ldp.bitvector import RecordCodec

        X = check_array(X, dtype=np.float64)
        if self.bounds is None:
            _, lo, hi = data.normalise(X)
        else:
            _, lo, hi = data.normalise(X, self.bounds)
        hi = np.where(hi > lo, hi, lo + 1.0)
        t = (hi - lo) / 2.0 if self.t is None else self.t
        self._rng = _rng(self.random_state)
        self.codec_ = RecordCodec.draw(int(self.s), t, lo, hi, self._rng.spawn(1)[0])
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        check_is_fitted(self, "codec_")
        X = check_array(X, dtype=np.float64)
        self.ledger_ = Ledger(LOCAL)
        lo = np.array([c.lo for c in self.codec_.attributes])
        hi = np.array([c.hi for c in self.codec_.attributes])
        return self.codec_.encode(
            np.clip(X, lo, hi), float(self.epsilon), self._rng.spawn(1)[0], self.ledger_
        )


def dpbv_distances(encoder: DPBVEncoder, E, F=None) -> np.ndarray:
    """The debiased estimated distance matrix (Eq. 20) between encodings E (and F), in the
    data's units; pass it to DBSCAN or AgglomerativeClustering with metric="precomputed"."""
    from .ldp.distance import distance_matrix

    check_is_fitted(encoder, "codec_")
    return distance_matrix(encoder.codec_, E, F, epsilon=float(encoder.epsilon))
