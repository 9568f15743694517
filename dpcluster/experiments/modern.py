"""Registry entries beyond the two papers, each declared once with
:func:`~.protocol.central_method`: LSH-splits (a modern central-DP baseline), the
private-mean reference, diffprivlib's KMeans as shipped, and ``auto`` (docs/utility.md;
privacy arguments in dpcluster/algorithms/lsh_splits.py, reference.py, comparators.py and
auto.py)."""

from __future__ import annotations

from ..algorithms import methods
from ..algorithms.capped import ALPHA as CAPPED_ALPHA
from ..algorithms.comparators import diffprivlib_problem, fit_diffprivlib
from ..algorithms.dpm import LEAF_RULES as DPM_LEAF_RULES
from ..algorithms.dpm import LEVELS as DPM_LEVELS
from ..algorithms.lsh_gaussian import MAX_DEPTH as GAUSSIAN_DEPTH
from ..algorithms.lsh_splits import COUNT_SHARE, MAX_DEPTH, lsh_splits
from ..algorithms.pe_means import MAX_GENERATIONS as PE_MAX_GENERATIONS
from ..algorithms.pe_means import MAX_POPULATION as PE_MAX_POPULATION
from .protocol import AlgorithmInfo, Param, central_fit, central_method

_LSH_PARAMS = {
    "depth": Param(
        0,
        int,
        "hash length D (0: ceil(log2 k) + 3)",
        minimum=0,
        maximum=MAX_DEPTH,
        maximum_reason="node ids are 63-bit integers",
    ),
    "count_share": Param(
        COUNT_SHARE,
        float,
        "share of ε on the tree's counts (the rest on the leaves' sums)",
        check=lambda v: None if 0 < v < 1 else "must lie in (0, 1)",
    ),
    "n_init": Param(10, int, "k-means++ restarts on the coreset (post-processing)", minimum=1),
}

_LSH_GAUSSIAN_PARAMS = {
    "depth": Param(
        GAUSSIAN_DEPTH,
        int,
        "hash length, the tree's last level (the published 20)",
        minimum=1,
        maximum=MAX_DEPTH,
        maximum_reason="node ids are 63-bit integers",
    ),
    "n_init": Param(10, int, "k-means++ restarts on the coreset (post-processing)", minimum=1),
}

_DPM_PARAMS = {
    "levels": Param(
        DPM_LEVELS,
        int,
        "split levels L (0: ceil(log2 k) + 1, the published 7 at k = 64)",
        minimum=0,
        maximum=20,
        maximum_reason="2^L leaves at most",
    ),
    "n_init": Param(10, int, "k-means++ restarts on the leaves (post-processing)", minimum=1),
    "leaf_rule": Param(
        "published",
        str,
        "a split with a half at or below the leaf limit: 'published' closes the node, "
        "'child' closes that half and the other recurses (auto's), docs/methods.md",
        choices=DPM_LEAF_RULES,
    ),
}

_PE_PARAMS = {
    "generations": Param(
        0,
        int,
        "T vote histograms (0: the artefact's rule, floor(4 sqrt d), times ε above ε = 1)",
        minimum=0,
        maximum=PE_MAX_GENERATIONS,
        maximum_reason="a fit's cost grows with T",
    ),
    "max_population": Param(
        PE_MAX_POPULATION,
        int,
        "the most candidates per generation (the rule gives (L + 1)k, L = Ñ/5k)",
        minimum=1,
    ),
    "n_init": Param(10, int, "weighted k-means starts per selection (post-processing)", minimum=1),
}

_PE_LLOYD_PARAMS = {
    "generations": Param(
        0,
        int,
        "T search generations (0: PE-means's rule, at most 16, 8 in pure ε)",
        minimum=0,
        maximum=PE_MAX_GENERATIONS,
        maximum_reason="a fit's cost grows with T",
    ),
    "population": Param(1024, int, "the most candidates per generation", minimum=1),
    "steps": Param(
        0,
        int,
        "clipped Lloyd steps after the search (0: 1 with delta = 0, 2 with delta > 0, "
        "up to 8 where their noise is negligible)",
        minimum=0,
        maximum=20,
        maximum_reason="each step takes a share of the budget",
    ),
    "n_init": Param(10, int, "weighted k-means starts per selection (post-processing)", minimum=1),
    "shrink": Param(
        True,
        bool,
        "shrink each step's mean displacement toward zero by positive-part James–Stein "
        "(post-processing; docs/methods.md M8); false: the raw steps",
    ),
    "mutation_start": Param(
        0.5,
        float,
        "the first mutation's length over the median distance from a uniform point to "
        "generation 0, falling to PE-means's 0.01 radii at the last (0: 0.01 throughout)",
        check=lambda v: None if 0 <= v <= 1 else "must be in [0, 1]",
    ),
}

_CAPPED_PARAMS = {
    "min_count": Param(
        0.0, float, "a cluster whose noisy count is <= this keeps its centroid", minimum=0
    ),
    "iterations": Param(0, int, "T (0: the artefact's rule on the noisy count, 2 to 7)", minimum=0),
    "alpha": Param(
        CAPPED_ALPHA,
        float,
        "cap after the first step: the box's diagonal times alpha/(2 k^(1/d))",
        check=lambda v: None if 1e-6 <= v <= 1e6 else "must be in [1e-6, 1e6]",
    ),
}

MODERN: dict[str, AlgorithmInfo] = {
    "lsh_splits": central_method(
        "lsh_splits",
        "LSH-splits private coreset + k-means (Chang & Kamath 2021), docs/methods.md",
        central_fit(methods.fit_lsh_splits, _LSH_PARAMS, lsh_splits),
        columns=("leaves", "depth"),
        title="LSH-splits",
    ),
    "lsh_splits_gaussian": central_method(
        "lsh_splits_gaussian",
        "LSH-splits as Google publishes it: (ε, δ), Gaussian leaf sums on an L2 ball, "
        "depth 20 (needs a spec's delta), docs/methods.md",
        central_fit(methods.fit_lsh_splits_gaussian, _LSH_GAUSSIAN_PARAMS),
        columns=("leaves",),
        title="LSH-splits (Gaussian)",
        preflight=lambda shape: (
            None
            if shape.delta > 0
            else ("", "spends (epsilon, delta) with Gaussian noise: give the spec a delta > 0")
        ),
    ),
    "dpm": central_method(
        "dpm",
        "DPM, separation by private axis cuts (Liebenow et al., CCS 2024), leaves reduced to "
        "k by weighted k-means; Gaussian leaf sums with delta, Laplace without, "
        "docs/methods.md",
        central_fit(methods.fit_dpm, _DPM_PARAMS),
        columns=("leaves",),
        title="DPM",
    ),
    "pe_means": central_method(
        "pe_means",
        "PE-means, k-means by private evolution (Humphries et al., 2026): noisy votes for "
        "candidate centres, weighted k-means, Lévy mutation; Gaussian votes with delta, "
        "Laplace without, docs/methods.md",
        central_fit(methods.fit_pe_means, _PE_PARAMS),
        columns=("generations",),
        title="PE-means",
    ),
    "pe_lloyd": central_method(
        "pe_lloyd",
        "private evolution to find the clusters (PE-means's votes, cheaper), then Lloyd "
        "steps on displacements clipped to a private radius; Gaussian with delta, Laplace "
        "without, docs/methods.md",
        central_fit(methods.fit_pe_lloyd, _PE_LLOYD_PARAMS),
        columns=("generations",),
        title="PE-Lloyd",
    ),
    "dplloyd_capped": central_method(
        "dplloyd_capped",
        "capped DPLloyd: FastLloyd's radius-constrained step (Diaa et al., USENIX Security "
        "2025); Laplace, or Gaussian with delta, docs/methods.md",
        central_fit(methods.fit_dplloyd_capped, _CAPPED_PARAMS),
        title="capped DPLloyd",
    ),
    "private_mean": central_method(
        "private_mean",
        "every centre at one ε-DP mean: the trivial private reference, docs/utility.md",
        central_fit(methods.fit_private_mean, {}),
        title="private mean",
    ),
    "diffprivlib": central_method(
        "diffprivlib",
        "IBM diffprivlib 0.6.6's KMeans as shipped (optional: pip install "
        "'dpcluster[compare]'); claims ε, its ledger books what it spends "
        "(dpcluster/algorithms/comparators.py)",
        central_fit(fit_diffprivlib, {}),
        columns=("noise_epsilon",),
        preflight=lambda shape: ("", problem) if (problem := diffprivlib_problem()) else None,
        title="diffprivlib",
    ),
    "auto": central_method(
        "auto",
        "chooses a method from a noisy count Ñ and d, k, ε (docs/utility.md); the row says which",
        central_fit(methods.fit_auto, {}),
        columns=("chosen",),
        title="auto",
    ),
}
