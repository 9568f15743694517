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

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from . import data
from .estimator_checks import (  # noqa: F401 - central_methods is re-exported
    _CentralMethod,
    _check_bounds,
    _method_params,
    _rng,
    central_methods,
)
from .experiments.pipeline import fit_central
from .kernels import labels, nicv
from .privacy import LOCAL, USER_EPSILON, ExactRelease, Ledger
from .privacy.accountant import BudgetAccountant

#: the method names as of import (``central_methods()`` is the live list)
METHODS = tuple(central_methods())


#: a ball whose diameter is more than 1/this of the records' span along some feature is
#: warned about (:meth:`DPKMeans._warn_if_ball_dwarfs_the_data`)
BALL_EXTENT_SHARE = 0.1
#: above this share of records outside the public bounds, a fit warns that they were
#: clipped (the count is the data holder's, like ``labels_``; it is not released)
CLIPPED_WARN_SHARE = data.CLIPPED_WARN_SHARE


class DegenerateFitWarning(UserWarning):
    """A fit whose output cannot reflect the data well: records clipped by bounds that
    miss them, or a grid whose centres depend on a count only."""


SCALINGS = data.SCALINGS
#: the methods that take ``delta`` (Gaussian noise) and a ball domain
GAUSSIAN_METHODS = (
    "dplloyd",
    "dplloyd_improved",
    "dplloyd_capped",
    "lsh_splits_gaussian",
    "dpm",
    "pe_means",
    "pe_lloyd",
    "auto",
)
#: the methods whose sensitivities follow a ball domain (``radius``)
BALL_METHODS = (*GAUSSIAN_METHODS, "lsh_splits")
#: the methods that spend (ε, δ) only: they need ``delta`` > 0
DELTA_ONLY = ("lsh_splits_gaussian",)


class DPKMeans(ClusterMixin, TransformerMixin, BaseEstimator):
    """Differentially private k-means (Paper A's algorithms) with scikit-learn's vocabulary.

    Parameters
    ----------
    n_clusters : int >= 1, k.
    epsilon : float in [1e-12, 1e12]: the total privacy budget ε of the fit (central DP,
        add/remove one record; docs/privacy.md).
    method : ``"auto"`` (the default; docs/utility.md) or any registry entry that declares a
        central fit (:data:`METHODS`): ``"dplloyd"`` (A1), ``"dplloyd_improved"`` (A2),
        ``"eugkm"`` (A3), ``"hybrid"`` (A7), ``"gkm"`` (A4), ``"pgkm"`` (A5),
        ``"lsh_splits"``, ``"lsh_splits_gaussian"`` (needs ``delta``), ``"dpm"``,
        ``"pe_means"`` (PE-means, M6), ``"pe_lloyd"`` (its search, then clipped Lloyd
        steps, M7),
        ``"private_mean"``, ``"diffprivlib"`` (IBM's KMeans as shipped: the ``compare``
        extra; its ledger books what it really spends, docs/privacy.md).
    bounds : ``(lo, hi)``, scalars or one value per feature: the public domain of the data,
        a box. None (and no ``radius``) takes the data's own min and max (not private;
        warns).
    delta : float in [0, 1), default 0: pure ε. Above 0, the methods of
        :data:`GAUSSIAN_METHODS` (DPLloyd, improved and capped DPLloyd, LSH-splits with
        Gaussian sums, DPM, PE-means, PE-Lloyd and ``auto``) add Gaussian noise and spend
        (ε, δ), composed in zCDP or Rényi DP (docs/privacy.md); the other methods stay
        pure ε.
    radius, center : the public domain as the L2 ball of this radius about ``center``
        (default the origin) instead of a box; records outside it are projected onto it,
        with a warning that counts them. The sums' sensitivities of DPLloyd, LSH-splits
        and DPM then follow the ball (L2: the radius; L1: √d times it).
    accountant : a :class:`~dpcluster.privacy.accountant.BudgetAccountant`: the fit is
        refused before any release when its (ε, δ) would overspend what is left, and
        books what its ledger proves after.
    random_state : None (fresh entropy), int, RandomState or Generator.
    method_params : dict of the method's own parameters (``dpcluster list`` shows them,
        e.g. ``{"iterations": 5}`` for dplloyd, ``{"theta": 10}`` for eugkm), checked
        against the same table as a spec's.

    Parameters are checked at ``fit`` by scikit-learn's own constraint machinery
    (``_parameter_constraints``); an error names the parameter.

    Attributes
    ----------
    cluster_centers_ : (k, d) centres in the data's units: **the private release**, with
        ``ledger_``.
    labels_ : (N,) nearest centre of each training record, in the scaled space the
        algorithm works in. **Not private**: an exact function of the training data
        (scikit-learn's convention), for the data holder's own use.
    inertia_ : sum of squared distances of the records to their closest centre, in the
        data's units (scikit-learn's definition; with ``scaling="per_feature"`` the closest
        centre in data units need not be ``labels_``'s). **Not private**, as ``labels_``.
    nicv_ : the paper's NICV of the fit on the scaled training data. **Not private**.
    n_clipped_ : records outside the public bounds (or ball), clipped (projected) into
        them; above 2 % of them a :class:`DegenerateFitWarning` says so. **Not private**, as
        ``labels_``: it is for the data holder and is not part of the release.
    n_iter_, method_, reason_ : iterations the method ran, what ``auto`` chose and why:
        functions of the fit's noisy releases (the plan's noisy count Ñ, docs/privacy.md),
        so post-processing.
    ledger_ : the :class:`~dpcluster.privacy.Ledger` of the fit; ``ledger_.total_epsilon``
        is what provably holds under add/remove one record. With ``bounds=None`` the
        data's own min and max are read exactly, and it is ``inf`` (the ε asked for is
        ``ledger_.claimed_epsilon``).
    bounds_ : (lo, hi) arrays used for scaling.
    n_features_in_, feature_names_in_ : as scikit-learn's estimators set them.
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, *USER_EPSILON, closed="both")],
        "method": [_CentralMethod()],
        "scaling": [StrOptions(set(SCALINGS))],
        "bounds": ["array-like", None],
        "random_state": ["random_state", np.random.Generator],
        "method_params": [dict, None],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "radius": [Interval(Real, 0, None, closed="neither"), None],
        "center": ["array-like", None],
        "accountant": [BudgetAccountant, None],
    }

    def __init__(
        self,
        n_clusters=8,
        epsilon=1.0,
        method="auto",
        bounds=None,
        random_state=None,
        method_params=None,
        scaling="common",
        delta=0.0,
        radius=None,
        center=None,
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.method = method
        self.bounds = bounds
        self.scaling = scaling
        self.random_state = random_state
        self.method_params = method_params
        self.delta = delta
        self.radius = radius
        self.center = center
        self.accountant = accountant

    def _scale(self, X) -> np.ndarray:
        """Records into the working cube [-1, 1]^d (clipped into the public box first; a
        ball domain maps onto the unit ball, records outside it projected onto it)."""
        if self.radius is not None:
            Z = (np.asarray(X, dtype=np.float64) - self._centre) / self._half
            norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))
            outside = norms > 1.0
            if outside.any():
                Z[outside] /= norms[outside, None] * (1.0 + 1e-12)
            self._outside = int(outside.sum())
            return np.ascontiguousarray(Z)
        lo, hi = self.bounds_
        # the spec's datasets compute the same: data.normalise, then data.working_space
        normalised = data.normalise(np.asarray(X, dtype=np.float64), (lo, hi))[0]
        return data.working_space(normalised, lo, hi, self.scaling)

    def _domain_and_delta(self, d: int) -> dict:
        """The fit's extra keyword arguments (``delta``, ``ball``) for the methods that
        use them, after every refusal that must come before a release: a ball with
        bounds, an accountant that cannot book the fit."""
        if self.radius is not None and self.bounds is not None:
            raise ValueError("give the public domain as bounds (a box) or radius (a ball)")
        gaussian = self.method in GAUSSIAN_METHODS
        if self.accountant is not None:
            if self.bounds is None and self.radius is None:
                raise ValueError(
                    "an accountant books what a fit proves: give public bounds or a radius "
                    "(bounds from the data prove nothing)"
                )
            if self.method in ("gkm", "gkm_3k"):
                raise ValueError(f"an accountant cannot book {self.method}: it reads the exact N")
            if self.method == "diffprivlib":
                raise ValueError(
                    "an accountant cannot book diffprivlib: its code spends more than the "
                    "epsilon it is given (docs/privacy.md)"
                )
            self.accountant.check(*self._declared())
        extra = {}
        if gaussian and self.delta > 0:
            extra["delta"] = float(self.delta)
        elif self.delta > 0:  # said, not silently dropped
            warnings.warn(
                f"method {self.method!r} spends pure ε: delta={self.delta:g} is not used "
                "(its ledger books δ = 0)",
                UserWarning,
                stacklevel=3,
            )
        if self.method in BALL_METHODS and self.radius is not None:
            extra["ball"] = 1.0  # the unit ball of the working space
        elif self.radius is not None:
            warnings.warn(
                f"method {self.method!r} does not use a ball domain: it runs in the ball's "
                f"bounding box (center ± {self.radius:g} per feature), whose sensitivities "
                "are larger",
                UserWarning,
                stacklevel=3,
            )
        return extra

    def _warn_if_ball_dwarfs_the_data(self, X: np.ndarray) -> None:
        """A ball takes one radius for every feature: on anisotropic data its sums' noise
        follows the widest feature. Where the records span less than
        :data:`BALL_EXTENT_SHARE` of the ball's diameter along some feature, say so (the
        data holder's check, like the clipped count; it releases nothing)."""
        span = np.ptp(X, axis=0)
        narrow = np.flatnonzero(span < BALL_EXTENT_SHARE * 2.0 * float(self.radius))
        if len(narrow):
            shown = ", ".join(str(int(j)) for j in narrow[:5]) + (", …" if len(narrow) > 5 else "")
            warnings.warn(
                DegenerateFitWarning(
                    f"the records span less than {BALL_EXTENT_SHARE:.0%} of the ball's "
                    f"diameter along feature(s) {shown}: a ball's noise follows its one "
                    "radius, so public per-feature bounds=(lo, hi) may cost far less here "
                    "(docs/api.md, 'Box or ball')"
                ),
                stacklevel=3,
            )

    def _declared(self) -> tuple[float, float]:
        """The (ε, δ) this fit declares: what an accountant reserves before it runs."""
        gaussian = self.method in GAUSSIAN_METHODS
        return float(self.epsilon), float(self.delta) if gaussian else 0.0

    def _set_ball(self, d: int) -> None:
        """The affine map x -> (x - center)/radius onto the unit ball, inside [-1, 1]^d."""
        centre = np.zeros(d) if self.center is None else np.asarray(self.center, float)
        if centre.ndim > 1 or centre.size not in (1, d):
            raise ValueError(
                f"center must be one number or one per feature (d = {d}), got shape {centre.shape}"
            )
        centre = np.broadcast_to(centre, (d,)).astype(np.float64)
        if not np.all(np.isfinite(centre)):
            raise ValueError(f"center must be finite, got {self.center!r}")
        if not (math.isfinite(1.0 / float(self.radius)) and math.isfinite(float(self.radius))):
            raise ValueError(
                f"radius={self.radius!r}: 1/radius is not a finite double, so (x - center)"
                "/radius cannot be computed; give a radius in data units above 1e-300"
            )
        self._centre = centre
        self._half = np.full(d, float(self.radius))
        self._radius = np.ones(d)
        self.bounds_ = (centre - self.radius, centre + self.radius)

    def _unscale(self, Z) -> np.ndarray:
        return self._centre + Z * self._half

    def _set_scaling(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """The affine map x -> (x - centre)/half of ``scaling``: ``"common"`` divides every
        feature by one factor, half the widest public range, so distances in the working
        space are distances in data units divided by that factor and the k-means objective
        is the data's own; ``"per_feature"`` maps each feature's range onto [-1, 1] (the
        papers' normalisation), which minimises k-means in a space stretched feature by
        feature (docs/api.md). A feature with no range maps to 0."""
        self._centre = (lo + hi) / 2.0
        # the box is ∏ [-radius_j, radius_j]; one unit there is half_j data units
        self._radius, self._half = data.scaling_factors(lo, hi, self.scaling)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=0)
        # no check of n_clusters against N: N is private, and every private method releases
        # k centres from any number of records, none included (docs/privacy.md)
        params = _method_params(self.method, self.method_params)
        extra = self._domain_and_delta(X.shape[1])
        if self.radius is not None:
            self._set_ball(X.shape[1])
        elif self.bounds is None:
            _, lo, hi = data.normalise(X)  # warns: bounds from the data are not private
            self.bounds_ = (lo, hi)
            self._set_scaling(lo, hi)
        else:
            _check_bounds(self.bounds, X.shape[1])
            _, lo, hi = data.normalise(X, self.bounds)
            self.bounds_ = (lo, hi)
            self._set_scaling(lo, hi)
        if self.radius is None:  # the data holder's count of records the box clips
            lo, hi = self.bounds_
            self._outside = int(np.count_nonzero(np.any((X < lo) | (X > hi), axis=1)))
        Z = self._scale(X)
        if self.radius is not None and len(X) > 1:
            self._warn_if_ball_dwarfs_the_data(X)
        if self.radius is not None and self._outside:
            warnings.warn(
                DegenerateFitWarning(
                    f"{self._outside} of {len(X)} records lie outside the ball of radius "
                    f"{self.radius:g} and were projected onto it"
                ),
                stacklevel=2,
            )
        elif self._outside > CLIPPED_WARN_SHARE * len(X):
            warnings.warn(
                DegenerateFitWarning(
                    f"{self._outside} of {len(X)} records ({self._outside / len(X):.0%}) lie "
                    "outside the public bounds and were clipped into them: the centres fit "
                    "the clipped records; check the bounds"
                ),
                stacklevel=2,
            )
        hold = self.accountant.reserve(*self._declared()) if self.accountant else None
        try:
            centres, res = fit_central(
                central_methods()[self.method].fit,
                Z,
                int(self.n_clusters),
                float(self.epsilon),
                _rng(self.random_state),
                self._radius,
                params,
                delta=extra.get("delta", 0.0),
                ball=extra.get("ball"),
            )
        except (ArithmeticError, MemoryError) as exc:
            # parameters inside their declared ranges can still combine past what the
            # arithmetic or the memory holds: one line that names them, not a traceback
            raise ValueError(
                f"method {self.method!r} with n_clusters={self.n_clusters}, "
                f"epsilon={self.epsilon}, method_params={self.method_params!r} failed: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        public = self.bounds is not None or self.radius is not None
        res.ledger.bounds = "public" if public else "data"
        if hold is not None:
            hold.settle(res.ledger)
        if not public:  # the scaling read the data's exact min and max
            res.ledger.record(
                ExactRelease(
                    "the data's min and max (bounds=None)",
                    claim="bounds=None treats the data's range as public",
                    claimed_epsilon=0.0,
                ),
                "the data's min and max, read exactly to scale it (bounds=None)",
            )
        self.ledger_ = res.ledger
        self.n_clipped_ = self._outside
        if res.info.get("m") == 1 and (self.method == "eugkm" or res.info.get("fell_back")):
            warnings.warn(
                DegenerateFitWarning(
                    "EUGkM's grid has one cell per axis at this (N, d, ε): every centre is "
                    "a function of one noisy count, not of where the records lie; try "
                    "method='dplloyd_improved' or 'auto'"
                ),
                stacklevel=2,
            )
        self.method_ = str(res.info.get("chosen", self.method))
        self.reason_ = str(res.info.get("reason", ""))
        self.n_iter_ = int(res.iterations)
        self._centres_scaled = centres
        self.cluster_centers_ = self._unscale(centres)
        self.labels_ = self._nearest(Z)
        self.inertia_ = self._inertia(X)
        self.nicv_ = float(nicv(Z, self._centres_scaled)) if len(Z) else math.nan
        return self

    def _nearest(self, Z) -> np.ndarray:
        """Nearest centre (lowest index on ties) by the assignment kernel: one pass over
        the records, not an (N, k, d) array of differences."""
        return labels(Z, self._centres_scaled)

    def _inertia(self, X) -> float:
        """Σ_i min_j ||x_i − c_j||² in the data's units."""
        closest = labels(np.ascontiguousarray(X), self.cluster_centers_)
        return float(((X - self.cluster_centers_[closest]) ** 2).sum())

    def predict(self, X):
        check_is_fitted(self, "cluster_centers_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._nearest(self._scale(X))

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_

    def score(self, X, y=None):
        """Negative inertia of X against the fitted centres (scikit-learn's KMeans sign)."""
        check_is_fitted(self, "cluster_centers_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return -self._inertia(X)

    def transform(self, X):
        """(n, k) Euclidean distance of each record to each centre, in the data's units, as
        scikit-learn's ``KMeans.transform``. Post-processing of the released centres: it
        costs no ε (what it reveals about X is the caller's to release)."""
        from sklearn.metrics import euclidean_distances

        check_is_fitted(self, "cluster_centers_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return euclidean_distances(X, self.cluster_centers_)


class DPBVEncoder(TransformerMixin, BaseEstimator):
    """Paper B's DPBV encoding as a transformer (local DP; docs/privacy.md).

    ``fit`` draws the public codec (s centres per feature over ``bounds``, half-window t:
    None = half of each feature's range); ``transform`` returns each record's randomised
    encodings, packed (n, d, ceil(s/64)) uint64. ``ledger_`` books one report per record:
    Σ_feature m_max·ε holds, the paper claims d·ε.
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, *USER_EPSILON, closed="both")],
        "s": [Interval(Integral, 1, None, closed="left")],
        "t": [Interval(Real, 0, None, closed="neither"), "array-like", None],
        "bounds": ["array-like", None],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(self, epsilon=2.0, s=1000, t=None, bounds=None, random_state=None):
        self.epsilon = epsilon
        self.s = s
        self.t = t
        self.bounds = bounds
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        from .ldp.bitvector import RecordCodec

        X = validate_data(self, X, dtype=np.float64)
        if self.t is not None and not np.all(np.isfinite(self.t) & (np.asarray(self.t) > 0)):
            raise ValueError(f"t must be positive and finite, got {self.t!r}")
        if self.bounds is None:
            _, lo, hi = data.normalise(X)
        else:
            _check_bounds(self.bounds, X.shape[1])
            _, lo, hi = data.normalise(X, self.bounds)
        hi = np.where(hi > lo, hi, lo + 1.0)
        t = (hi - lo) / 2.0 if self.t is None else self.t
        self._rng = _rng(self.random_state)
        self.codec_ = RecordCodec.draw(int(self.s), t, lo, hi, self._rng.spawn(1)[0])
        return self

    def transform(self, X):
        check_is_fitted(self, "codec_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
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
