"""Shared machinery of the generated kernels (:mod:`.unrolled`, :mod:`.points`).

A generated kernel is Python source written for one shape (centroids k, dimension d, ...)
with its small loops spelled out as straight-line code, so LLVM keeps the per-centroid
values in registers and vectorises the one loop left. The source is written once to a
cache folder and imported from there, so numba's on-disk cache (``cache=True``, which
needs a real file) keeps the compiled code across processes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, overload


def select(cond, a, b):
    """``a if cond else b``. Compiled, it is one LLVM ``select`` instruction, so generated
    code has no branches (a Python conditional expression is a branch in numba's IR, and
    hundreds of them made compilation slow and, past a few hundred, recursive)."""
    return a if cond else b


@intrinsic
def _select(typingctx, cond, a, b):
    if a != b:
        return None

    def codegen(context, builder, signature, args):
        return builder.select(*args)

    return a(types.boolean, a, b), codegen


@overload(select, inline="always")
def _select_overload(cond, a, b):
    return lambda cond, a, b: _select(cond, a, b)


def fma(a, b, c):
    """``a·b + c``. Compiled, it is LLVM's ``fma`` intrinsic: one rounding, one instruction.
    Without the JIT it rounds twice; :mod:`.certified` bounds the error of either."""
    return a * b + c


@intrinsic
def _fma(typingctx, a, b, c):
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return a(a, b, c), codegen


@overload(fma, inline="always")
def _fma_overload(a, b, c):
    return lambda a, b, c: _fma(a, b, c)


def bitor(a, b):
    """``a | b`` for two integers of one type, compiled without numba's widening to int64
    (so an int32 flag reduction does not halve the vector width of a float32 loop)."""
    return a | b


@intrinsic
def _bitor(typingctx, a, b):
    if not (isinstance(a, types.Integer) and a == b):
        return None

    def codegen(context, builder, signature, args):
        return builder.or_(*args)

    return a(a, b), codegen


@overload(bitor, inline="always")
def _bitor_overload(a, b):
    return lambda a, b: _bitor(a, b)


def rows_to_lanes(X, row, xt, col, d, n):
    """``xt[i, col + p] = float32(X[row + p, i])`` for p < n, i < d: n consecutive records
    of X (N, d) float64, C-contiguous, written as float32 columns of xt (d, width).
    ``d`` and ``n`` must be integer constants. Compiled, it is one load of the n·d
    contiguous doubles, one conversion, and d shuffles that pick every d-th value; the
    element-by-element copy, which LLVM does not vectorise (a stride-d gather), was the
    point-lane kernel's largest cost (docs/performance.md)."""
    for p in range(n):
        for i in range(d):
            xt[i, col + p] = np.float32(X[row + p, i])


@intrinsic
def _rows_to_lanes(typingctx, X, row, xt, col, d, n):
    if not (isinstance(d, types.IntegerLiteral) and isinstance(n, types.IntegerLiteral)):
        return None
    if (X.ndim, X.layout, X.dtype, xt.ndim, xt.layout, xt.dtype) != (
        2,
        "C",
        types.float64,
        2,
        "C",
        types.float32,
    ):
        return None  # the one wide load needs contiguous rows
    D, L = d.literal_value, n.literal_value

    def codegen(context, builder, signature, args):
        src = context.make_array(signature.args[0])(context, builder, args[0])
        dst = context.make_array(signature.args[2])(context, builder, args[2])
        row, col = args[1], args[3]
        width = cgutils.unpack_tuple(builder, dst.shape)[1]
        start = builder.gep(src.data, [builder.mul(row, ir.Constant(row.type, D))])
        wide = ir.VectorType(ir.DoubleType(), D * L)
        values = builder.fptrunc(
            builder.load(builder.bitcast(start, wide.as_pointer()), align=8),
            ir.VectorType(ir.FloatType(), D * L),
        )
        lane = ir.VectorType(ir.FloatType(), L)
        undef = ir.Constant(values.type, ir.Undefined)
        for i in range(D):
            mask = ir.Constant(ir.VectorType(ir.IntType(32), L), [i + D * p for p in range(L)])
            column = builder.shuffle_vector(values, undef, mask)
            offset = builder.add(builder.mul(ir.Constant(width.type, i), width), col)
            target = builder.bitcast(builder.gep(dst.data, [offset]), lane.as_pointer())
            builder.store(column, target, align=4)
        return context.get_dummy_value()

    return types.none(X, row, xt, col, d, n), codegen


@overload(rows_to_lanes, inline="always", prefer_literal=True)
def _rows_to_lanes_overload(X, row, xt, col, d, n):
    return lambda X, row, xt, col, d, n: _rows_to_lanes(X, row, xt, col, d, n)


def prefetch(X, row, col):
    """Ask the CPU to bring ``X[row, col]``'s cache line closer (a hint: no effect on
    results, and no fault for an address past the end). Compiled, it is one prefetch
    instruction; without the JIT, nothing."""


@intrinsic
def _prefetch(typingctx, X, row, col):
    if not isinstance(X, types.Array) or X.ndim != 2 or X.layout != "C":
        return None

    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        width = cgutils.unpack_tuple(builder, arr.shape)[1]
        offset = builder.add(builder.mul(args[1], width), args[2])
        address = builder.bitcast(builder.gep(arr.data, [offset]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        # read, keep in all cache levels, data cache
        builder.call(fn, [address, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.none(X, types.intp, types.intp), codegen


@overload(prefetch, inline="always")
def _prefetch_overload(X, row, col):
    return lambda X, row, col: _prefetch(X, row, col)


def certified_step(pad: str, j: int, base: str, terms, best: str, second: str, label: str):
    """Source lines folding centroid ``j`` into a float32 nearest-centroid search that also
    keeps the second best (the certificate of :mod:`.unrolled` and :mod:`.points`):
    ``t = base + Σ x·c`` over ``terms`` (pairs of names) as a chain of fused multiply-adds
    in their order, then ``second = min(second, max(best, t))`` and ``best, label = t, j``
    where ``t < best`` (strict: ties keep the lower index)."""
    t = base
    for x, c in terms:
        t = f"fma({x}, {c}, {t})"
    return [
        f"{pad}t = {t}",
        f"{pad}h = select(t > {best}, t, {best})",
        f"{pad}{second} = select(h < {second}, h, {second})",
        f"{pad}g = t < {best}",
        f"{pad}{best} = select(g, t, {best})",
        f"{pad}{label} = select(g, np.float32({float(j)}), {label})",
    ]


def cache_dir() -> Path:
    """Where generated sources (and, beside them, numba's cache) live:
    ``$DPCLUSTER_KERNEL_CACHE``, else ``~/.cache/dpcluster/kernels``, else a temp folder."""
    env = os.environ.get("DPCLUSTER_KERNEL_CACHE")
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    candidates = [Path(env)] if env else []
    candidates += [
        home / "dpcluster" / "kernels",
        Path(tempfile.gettempdir()) / "dpcluster-kernels",
    ]
    for folder in candidates:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if os.access(folder, os.W_OK):
                return folder
        except OSError:
            continue
    raise OSError(f"no writable folder for generated kernels among {candidates}")


def load(text: str, stem: str):
    """Import generated source ``text`` as a module from ``<cache_dir>/<stem>_<hash>.py``
    (written atomically if missing), so numba can cache what it compiles from it."""
    name = f"{stem}_{hashlib.sha256(text.encode()).hexdigest()[:12]}"
    path = cache_dir() / f"{name}.py"
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
