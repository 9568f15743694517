"""Instructions for the generated kernels (:mod:`.unrolled`, :mod:`.points`) that numba
does not emit on its own: one LLVM ``select``, ``fma`` and integer ``or`` each, a shuffle
transpose of records into SIMD lanes, a vector add of a record and its count into a row of
sums (which can also count the record's values outside a bound), and a prefetch. Each is a
plain Python function (its meaning, and what runs without the JIT) with an ``@intrinsic``
that numba compiles in its place.
"""

from __future__ import annotations

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
    Without the JIT it rounds twice; :func:`.unrolled.tolerance` bounds the error of either."""
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


def _transposed_by_one_shuffle(builder, data, first, D, L):
    """The d float32 columns of L records from ``data + first``: one load of the L·D
    doubles, one conversion, and a shuffle per column picking every D-th value."""
    wide = ir.VectorType(ir.DoubleType(), D * L)
    start = builder.gep(data, [first])
    values = builder.fptrunc(
        builder.load(builder.bitcast(start, wide.as_pointer()), align=8),
        ir.VectorType(ir.FloatType(), D * L),
    )
    undef = ir.Constant(values.type, ir.Undefined)
    i32s = ir.VectorType(ir.IntType(32), L)
    return [
        builder.shuffle_vector(values, undef, ir.Constant(i32s, [i + D * p for p in range(L)]))
        for i in range(D)
    ]


#: the two-source shuffles of an 8x8 transpose (indices 8-15 pick from the second source):
#: unpack low/high, then pairs of pairs, then 128-bit halves
_UNPACK = ([0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15])
_PAIRS = ([0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15])
_HALVES = ([0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15])


def _transposed_8x8_blocks(builder, data, first, D):
    """The D ≥ 8 float32 columns of 8 records from ``data + first``: for each group of 8
    columns (the last group shifted back to end at column D, so no load leaves a row), 8
    row loads and conversions and the 24 in-lane shuffles of an 8x8 transpose (LLVM keeps
    only the shuffles whose columns are used)."""
    f8 = ir.VectorType(ir.FloatType(), 8)
    d8 = ir.VectorType(ir.DoubleType(), 8)
    i32s = ir.VectorType(ir.IntType(32), 8)

    def shuffle(a, b, mask):
        return builder.shuffle_vector(a, b, ir.Constant(i32s, mask))

    columns = {}
    for c0 in [*range(0, D - 7, 8), *([D - 8] if D % 8 else [])]:
        rows = []
        for r in range(8):
            start = builder.gep(data, [builder.add(first, ir.Constant(first.type, r * D + c0))])
            values = builder.load(builder.bitcast(start, d8.as_pointer()), align=8)
            rows.append(builder.fptrunc(values, f8))
        t = [shuffle(rows[2 * q], rows[2 * q + 1], m) for q in range(4) for m in _UNPACK]
        u = [shuffle(t[a], t[a + 2], m) for a in (0, 1, 4, 5) for m in _PAIRS]
        # u[0..3] hold rows 0-3 of columns (0, 4), (1, 5), (2, 6), (3, 7); u[4..7] rows 4-7
        for h, m in enumerate(_HALVES):
            for c in range(4):
                columns.setdefault(c0 + 4 * h + c, (u[c], u[c + 4], m))
    return [shuffle(*columns[i]) for i in range(D)]


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
        first = builder.mul(row, ir.Constant(row.type, D))
        lane = ir.VectorType(ir.FloatType(), L)
        if L == 8 and D >= 8:
            columns = _transposed_8x8_blocks(builder, src.data, first, D)
        else:
            columns = _transposed_by_one_shuffle(builder, src.data, first, D, L)
        for i, column in enumerate(columns):
            offset = builder.add(builder.mul(ir.Constant(width.type, i), width), col)
            target = builder.bitcast(builder.gep(dst.data, [offset]), lane.as_pointer())
            builder.store(column, target, align=4)
        return context.get_dummy_value()

    return types.none(X, row, xt, col, d, n), codegen


@overload(rows_to_lanes, inline="always", prefer_literal=True)
def _rows_to_lanes_overload(X, row, xt, col, d, n):
    return lambda X, row, xt, col, d, n: _rows_to_lanes(X, row, xt, col, d, n)


def add_record(S, at, X, row, d, width):
    """``S.flat[at + i] += X[row, i]`` for i < d, and ``S.flat[at + d] += 1.0`` (the
    record's count): one row of ``width`` ≥ d + 1 sums, whose entries past d + 1 get +0.0.
    ``d`` and ``width`` are integer constants, S and X C-contiguous float64. Compiled, it is
    one vector load, add and store per register of the row (the same roundings as scalar
    adds, which LLVM does not vectorise here)."""
    flat = S.reshape(-1)
    for i in range(d):
        flat[at + i] += X[row, i]
    flat[at + d] += 1.0
    for i in range(d + 1, width):
        flat[at + i] += 0.0


def add_record_counting_outside(S, at, X, row, d, width, limit):
    """:func:`add_record`, returning how many of the record's d values are not finite or
    exceed ``limit`` in magnitude (``not |x| <= limit``, as :func:`.scan.count_outside`:
    true for NaN, and for ±inf under a finite limit). Compiled, the count is a vector
    compare and a popcount on the values the add loaded anyway, so a pass that accumulates
    also checks."""
    add_record(S, at, X, row, d, width)
    outside = 0
    for i in range(d):
        outside += not (abs(X[row, i]) <= limit)
    return outside


def _record_arguments_ok(S, X, d, width) -> bool:
    if not (isinstance(d, types.IntegerLiteral) and isinstance(width, types.IntegerLiteral)):
        return False
    if width.literal_value < d.literal_value + 1:
        return False
    for array in (S, X):
        if not (isinstance(array, types.Array) and array.layout == "C"):
            return False
        if array.dtype != types.float64:
            return False
    return X.ndim == 2


def _emit_add_record(context, builder, signature, args, D, W):
    """Emit :func:`add_record`; returns the loaded record, a <D x double>."""
    dst = context.make_array(signature.args[0])(context, builder, args[0])
    src = context.make_array(signature.args[2])(context, builder, args[2])
    vec = ir.VectorType(ir.DoubleType(), D)
    wide = ir.VectorType(ir.DoubleType(), W)
    start = builder.gep(src.data, [builder.mul(args[3], ir.Constant(args[3].type, D))])
    values = builder.load(builder.bitcast(start, vec.as_pointer()), align=8)
    index = ir.IntType(32)
    lanes = list(range(D)) + [D] * (W - D)  # the record, then lanes of an undefined vector
    row = builder.shuffle_vector(
        values, ir.Constant(vec, ir.Undefined), ir.Constant(ir.VectorType(index, W), lanes)
    )
    for lane in range(D, W):  # the count, then zeros
        value = ir.Constant(ir.DoubleType(), 1.0 if lane == D else 0.0)
        row = builder.insert_element(row, value, index(lane))
    target = builder.bitcast(builder.gep(dst.data, [args[1]]), wide.as_pointer())
    builder.store(builder.fadd(builder.load(target, align=8), row), target, align=8)
    return values


@intrinsic
def _add_record(typingctx, S, at, X, row, d, width):
    if not _record_arguments_ok(S, X, d, width):
        return None
    D, W = d.literal_value, width.literal_value

    def codegen(context, builder, signature, args):
        _emit_add_record(context, builder, signature, args, D, W)
        return context.get_dummy_value()

    return types.none(S, types.intp, X, types.intp, d, width), codegen


@overload(add_record, inline="always", prefer_literal=True)
def _add_record_overload(S, at, X, row, d, width):
    return lambda S, at, X, row, d, width: _add_record(S, at, X, row, d, width)


@intrinsic
def _add_record_counting_outside(typingctx, S, at, X, row, d, width, limit):
    if not _record_arguments_ok(S, X, d, width) or limit != types.float64:
        return None
    D, W = d.literal_value, width.literal_value

    def codegen(context, builder, signature, args):
        values = _emit_add_record(context, builder, signature, args, D, W)
        vec = values.type
        fabs = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vec, [vec]), f"llvm.fabs.v{D}f64"
        )
        magnitude = builder.call(fabs, [values])
        index = ir.IntType(32)
        bound = builder.insert_element(ir.Constant(vec, ir.Undefined), args[6], index(0))
        bound = builder.shuffle_vector(
            bound, ir.Constant(vec, ir.Undefined), ir.Constant(ir.VectorType(index, D), [0] * D)
        )
        outside = builder.fcmp_unordered(">", magnitude, bound)  # unordered: true for NaN
        bits = builder.zext(builder.bitcast(outside, ir.IntType(D)), ir.IntType(64))
        popcount = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(64), [ir.IntType(64)]), "llvm.ctpop.i64"
        )
        return builder.call(popcount, [bits])

    return types.int64(S, types.intp, X, types.intp, d, width, types.float64), codegen


@overload(add_record_counting_outside, inline="always", prefer_literal=True)
def _add_record_counting_outside_overload(S, at, X, row, d, width, limit):
    return lambda S, at, X, row, d, width, limit: _add_record_counting_outside(
        S, at, X, row, d, width, limit
    )


def prefetch(X, row, col, keep):
    """Ask the CPU to bring the cache line of ``X[row, col]`` (an offset ``row·width + col``
    into C-contiguous X, so ``col`` may pass the row's end) closer: into every cache level
    for ``keep`` 3, down to L2 for 2 (LLVM's locality; an integer constant). A hint: no
    effect on results, and no fault for an address past the end. Compiled, it is one
    prefetch instruction; without the JIT, nothing."""


@intrinsic
def _prefetch(typingctx, X, row, col, keep):
    if not isinstance(X, types.Array) or X.ndim != 2 or X.layout != "C":
        return None
    if not isinstance(keep, types.IntegerLiteral) or keep.literal_value not in (0, 1, 2, 3):
        return None
    level = keep.literal_value

    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        width = cgutils.unpack_tuple(builder, arr.shape)[1]
        offset = builder.add(builder.mul(args[1], width), args[2])
        address = builder.bitcast(builder.gep(arr.data, [offset]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [address, i32(0), i32(level), i32(1)])  # read, data cache
        return context.get_dummy_value()

    return types.none(X, types.intp, types.intp, keep), codegen


@overload(prefetch, inline="always", prefer_literal=True)
def _prefetch_overload(X, row, col, keep):
    return lambda X, row, col, keep: _prefetch(X, row, col, keep)
