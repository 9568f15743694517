"""What the replay audit (:mod:`.replay`) checks of one release: its signature, its
measured query difference against its declared sensitivity, its lattice, its noise under
another seed, and where in the source it was made (docs/audit.md, "Replay")."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: relative slack on a measured difference (floating-point error in a declared loss)
SLACK = 1e-9


def _site() -> str:
    """Where the release was made: the first frame outside the hook and its wrappers."""
    frame = sys._getframe(1)
    skip = ("transcript.py", "replay.py", "foreign.py")
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.endswith(skip) and frame.f_code.co_name != "announce":
            parts = Path(name).parts
            shown = parts[-1]
            for root, skip_root in (("site-packages", 1), ("dpcluster", 0)):
                if root in parts:  # a package's file from its package's folder
                    shown = "/".join(parts[parts.index(root) + skip_root :])
                    break
            return f"{shown}:{frame.f_lineno} in {frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


def _kind(mech) -> str:
    return type(mech).__name__


def signature(rel) -> dict:
    """What must be the same for a release on both sides: everything but its value."""
    mech = rel.mechanism
    out = {
        "mechanism": _kind(mech),
        "purpose": rel.purpose,
        "shape": tuple(np.shape(rel.output)),
        "batch": bool(rel.batch),
    }
    for name in ("epsilon", "delta", "sensitivity", "scale", "coordinates", "rho"):
        value = getattr(mech, name, None)
        if value is not None:
            out[name] = repr(float(value))
    return out


@dataclass
class Seen:
    """One recorded release."""

    signature: dict
    output: object
    answer: object
    rng_state: dict | None
    site: str
    trial: int
    noisy: bool


def _noisy(mech) -> bool:
    """Whether a release draws noise that another seed must change."""
    if getattr(mech, "exact", False) or getattr(mech, "data_free", False):
        return False
    return _kind(mech) != "ExponentialMechanism"  # a choice may repeat by chance


def _rows(a, batch: bool, n: int) -> np.ndarray:
    """A release's values as (trials, values): batched releases carry the trials first."""
    a = np.asarray(a)
    if batch and a.ndim and a.shape[0] % n == 0:
        return a.reshape(n, -1)
    return a.reshape(1, -1)


def measure(rel, seen: Seen, data, other, n: int) -> tuple[np.ndarray, float, str]:
    """(measured difference per trial, declared bound, what was measured) of one release
    between the recorded side (``other`` = D) and this side (``data`` = D')."""
    mech, kind = rel.mechanism, _kind(rel.mechanism)
    if kind == "LaplaceMechanism" or kind == "GaussianMechanism":
        g = mech.lattice
        diff = _rows(rel.output, rel.batch, n).astype(np.float64) - _rows(
            seen.output, rel.batch, n
        ).astype(np.float64)
        steps = np.abs(diff) / g
        if kind == "LaplaceMechanism":
            bound = math.ceil(mech.sensitivity / g) + 2 * int(mech.coordinates)
            return steps.sum(axis=1), float(bound), "L1 of the answers' difference, lattice steps"
        bound = float(mech._steps)
        return (
            np.sqrt((steps**2).sum(axis=1)),
            bound,
            "L2 of the answers' difference, lattice steps",
        )
    if kind == "ExponentialMechanism":
        s1 = mech.steps(rel.query(other))
        s2 = mech.steps(rel.query(data))
        bound = math.ceil(mech.sensitivity / mech.lattice) + 2
        return (
            np.array([float(np.abs(s2 - s1).max())]),
            float(bound),
            "largest loss difference, lattice steps",
        )
    if kind == "BitVectorResponse":
        a, b = np.asarray(rel.output, bool), np.asarray(seen.output, bool)
        flipped = (a != b).reshape(a.shape[0] if rel.batch else 1, -1).sum(axis=1)
        return flipped.astype(float), float(mech.sensitivity), "Hamming distance of the encodings"
    if kind == "LocalHash":  # one cell id per user: a changed cell is one unit
        a, b = np.asarray(rel.query(other)), np.asarray(rel.query(data))
        return (a != b).reshape(len(a), -1).any(axis=1).astype(float), 1.0, "cells changed"
    if kind == "DuchiCoordinate":  # the sampled coordinate's change, at most 2
        j = np.asarray(rel.output)[:, 0]
        a, b = np.asarray(rel.query(other), float), np.asarray(rel.query(data), float)
        rows = np.arange(len(j))
        return np.abs(a[rows, j] - b[rows, j]), float(mech.sensitivity), "sampled coordinate"
    answer = getattr(rel, "answer", None)
    if answer is not None and seen.answer is not None:  # a foreign mechanism's own answer
        diff = np.abs(np.asarray(answer, float) - np.asarray(seen.answer, float))
        return np.array([float(diff.sum())]), float(mech.sensitivity), "L1 of the answers"
    diff = np.abs(np.asarray(rel.output, float) - np.asarray(seen.output, float))
    return _rows(diff, rel.batch, n).sum(axis=1), float(mech.sensitivity), "L1 of the outputs"


def _off_lattice(rel) -> str:
    """For dpcluster's Laplace and Gaussian: an output off the mechanism's lattice γℤ,
    which its exact sampler never gives (floating-point noise, or noise added outside
    :meth:`add`), or ""."""
    if _kind(rel.mechanism) not in ("LaplaceMechanism", "GaussianMechanism"):
        return ""
    g = rel.mechanism.lattice
    steps = np.asarray(rel.output, dtype=np.float64) / g
    if np.all(steps == np.round(steps)):
        return ""
    return (
        f"the release is off its mechanism's lattice γ = {g:.3g}: its noise is not the "
        "mechanism's exact sampler's, or was not added by its add()"
    )


def _noise_problem(a, b, entrywise: bool = True) -> str:
    """What is wrong with a noisy release's values ``a`` and ``b`` under two seeds, or "":
    an entry that did not change (noise that ignores the generator passed in, or an entry
    released without noise), or every entry moved by the same amount (one draw of noise
    added to a whole vector). Independent noise of 2^12 or more lattice steps makes either
    an event of probability below 2^-12 per entry. Not ``entrywise`` (randomised response,
    a foreign mechanism): only a whole release that did not change."""
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    same = a == b
    if same.all():
        return (
            "another seed releases the same value (its noise does not come from the "
            "generator passed in)"
        )
    if not entrywise:
        return ""
    if same.any():
        j = int(np.argmax(same))
        return f"entry {j} is the same under another seed (released without noise)"
    moved = b - a
    if moved.size > 1 and np.all(moved == moved[0]):
        return (
            "under another seed every entry moves by the same amount (one draw of noise "
            "for the whole vector)"
        )
    return ""


def _equal(a, b) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))
    except TypeError:
        return a == b


def _first_difference(a: np.ndarray, b: np.ndarray) -> str:
    if a.shape != b.shape:
        return f"shape {a.shape} on D, {b.shape} on D'"
    idx = np.argwhere(~((a == b) | (np.isnan(a) & np.isnan(b))))[0]
    where = tuple(int(i) for i in idx)
    return f"output {where}: {a[where]!r} on D, {b[where]!r} on D'"
