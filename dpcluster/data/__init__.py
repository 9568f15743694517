"""Datasets: one schema (:mod:`.schema`), one source protocol (:mod:`.sources`), and its
implementations: the bundled files and user files (:mod:`.bundled`), the generators
(:mod:`.generators`), the user's csv (:mod:`.user_csv`) and labelled benchmark sets
(:mod:`.benchmark`).

Every source yields a :class:`Dataset` scaled into [-1, 1]^d under a bounds policy
(``bounds``: ``"data"`` or ``"public"``, docs/privacy.md) with the source's declared public
box (its ``domain``).
"""

from .bundled import DATA_DIR, FILES, USER_FILES, FileSource, load_user_file
from .generators import (
    GENERATORS,
    generator_problem,
    physical_memory,
    sphere_packing,
    synthetic,
    uniform,
)
from .schema import (
    BOUNDS,
    CLIPPED_WARN_SHARE,
    SCALINGS,
    DataBoundsWarning,
    Dataset,
    check_finite,
    check_k,
    content_digest,
    file_sha256,
    freeze,
    normalise,
    read_checked,
    scale,
    scaling_factors,
    span_overflows,
    warnings_for,
    working_space,
)
from .sources import SOURCES, Source, describe, has_classes, load, names

__all__ = [
    "BOUNDS",
    "CLIPPED_WARN_SHARE",
    "SCALINGS",
    "DATA_DIR",
    "FILES",
    "GENERATORS",
    "SOURCES",
    "USER_FILES",
    "DataBoundsWarning",
    "Dataset",
    "FileSource",
    "Source",
    "check_finite",
    "check_k",
    "content_digest",
    "describe",
    "file_sha256",
    "freeze",
    "generator_problem",
    "has_classes",
    "load",
    "load_user_file",
    "names",
    "normalise",
    "physical_memory",
    "read_checked",
    "scale",
    "scaling_factors",
    "span_overflows",
    "sphere_packing",
    "synthetic",
    "uniform",
    "warnings_for",
    "working_space",
]
